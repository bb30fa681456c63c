"""What the tests of :mod:`gibbsjax.testing` share: the Bonferroni verdict over many p-values,
the checks of a kernel and its data, keys and dtypes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from gibbsjax._checks import check_seed as _check_seed


TestFunction = Callable[[Any, Any], Any]


class BonferroniVerdict:
    """The verdict shared by :class:`GewekeResult` and :class:`SBCResult`: one p-value per
    scalar test function (``names``, ``p_values``), Bonferroni-corrected at ``alpha``.

    Examples
    --------
    >>> from gibbsjax.testing import GewekeResult, SBCResult
    >>> from gibbsjax.testing.common import BonferroniVerdict
    >>> issubclass(GewekeResult, BonferroniVerdict), issubclass(SBCResult, BonferroniVerdict)
    (True, True)
    """

    @property
    def num_functions(self) -> int:
        """Number of scalar test functions ``m``."""
        return len(self.names)

    @property
    def threshold(self) -> float:
        """Bonferroni per-function threshold ``alpha / m``."""
        return self.alpha / max(self.num_functions, 1)

    @property
    def failed(self) -> np.ndarray:
        """Boolean mask of failing test functions (a NaN p-value fails)."""
        return ~(self.p_values > self.threshold)

    @property
    def failures(self) -> tuple[str, ...]:
        """Names of the failing test functions."""
        return tuple(n for n, f in zip(self.names, self.failed) if f)

    @property
    def passed(self) -> bool:
        """True iff every p-value exceeds ``alpha / m``."""
        return not bool(np.any(self.failed))

    @property
    def min_p(self) -> float:
        return float(np.min(self.p_values)) if self.num_functions else float("nan")

    def __str__(self) -> str:
        return self.summary()

    def assert_passes(self) -> None:
        """Raise ``AssertionError`` with the summary table unless :attr:`passed`.

        Raises
        ------
        AssertionError
            When some test function's p-value is below the corrected level.

        Examples
        --------
        >>> from gibbsjax.testing import chi_square_test
        >>> import numpy as np
        >>> chi_square_test(np.array([48, 52]), np.array([0.5, 0.5])).p_value > 0.001
        True
        """
        if not self.passed:
            raise AssertionError("\n" + self.summary())



def check_kernel(kernel: Any) -> None:
    """Check that a kernel has what the Geweke test and SBC need.

    Parameters
    ----------
    kernel : Kernel
        The kernel to check: it needs ``sample_prior``, ``simulate_data``, ``step`` and ``record``.

    Raises
    ------
    ValueError
        Naming the first missing function.

    Examples
    --------
    >>> from gibbsjax.models import normal
    >>> check_kernel(normal.semiconjugate(mu0=0.0, sigma0=1.0, a0=2.0, b0=2.0))
    """
    for attr in ("sample_prior", "simulate_data", "step", "record"):
        if getattr(kernel, attr, None) is None or not callable(getattr(kernel, attr)):
            raise ValueError(
                f"kernel has no {attr}; the Geweke test needs a Kernel with "
                "sample_prior(key, data) and simulate_data(key, state, data)"
            )




def data_template(data: Any):
    """Split a data template into re-simulated array leaves and fixed leaves.

    Parameters
    ----------
    data : pytree
        The data template: its array leaves are simulated, the other leaves kept.

    Returns
    -------
    tuple of callable
        ``(combine, dynamic_of)``: ``combine(arrays)`` rebuilds a data pytree from the array
        leaves; ``dynamic_of(new_data)`` checks that simulated data have the template's
        structure and shapes and returns their array leaves (cast to the template's dtypes).

    Examples
    --------
    >>> import numpy as np
    >>> combine, dynamic_of = data_template({"y": np.zeros(3), "n": 3})
    >>> combine([np.ones(3)])["n"]
    3
    """
    leaves, treedef = jax.tree_util.tree_flatten(data)
    dynamic_mask = [_is_array(leaf) for leaf in leaves]
    template = [jnp.asarray(leaf) for leaf, d in zip(leaves, dynamic_mask) if d]

    def combine(dyn):
        it = iter(dyn)
        return jax.tree_util.tree_unflatten(
            treedef, [next(it) if d else leaf for leaf, d in zip(leaves, dynamic_mask)]
        )

    def dynamic_of(new_data):
        new_leaves, new_treedef = jax.tree_util.tree_flatten(new_data)
        if new_treedef != treedef:
            raise ValueError(
                "kernel.simulate_data must return data with the structure of the `data` "
                f"template: expected {treedef}, got {new_treedef}"
            )
        out = []
        for leaf, tmpl in zip((l for l, d in zip(new_leaves, dynamic_mask) if d), template):
            leaf = jnp.asarray(leaf)
            if leaf.shape != tmpl.shape:
                raise ValueError(
                    "kernel.simulate_data must return arrays with the shapes of the `data` "
                    f"template: expected {tmpl.shape}, got {leaf.shape}"
                )
            out.append(lax.convert_element_type(leaf, tmpl.dtype))
        return out

    return combine, dynamic_of


def as_key(seed: Any) -> jax.Array:
    """A typed JAX key from a seed: an integer in [0, 2**32), a typed key or raw key data.

    Parameters
    ----------
    seed : int or jax.Array
        The seed.

    Returns
    -------
    jax.Array
        A typed key.

    Examples
    --------
    >>> import jax
    >>> jax.dtypes.issubdtype(as_key(0).dtype, jax.dtypes.prng_key)
    True
    """
    if isinstance(seed, jax.Array) and jax.dtypes.issubdtype(seed.dtype, jax.dtypes.prng_key):
        return seed
    if isinstance(seed, (jax.Array, np.ndarray)) and seed.shape == (2,) and seed.dtype == np.uint32:
        return jax.random.wrap_key_data(jnp.asarray(seed))
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return jax.random.key(_check_seed("seed", seed))  # [0, 2**32), as gibbsjax.sample takes it
    raise ValueError(f"seed must be an int or a JAX PRNG key, got {seed!r}")


def float_dtype():
    """The float type of this process's runs: float32, or float64 with x64 enabled.

    Returns
    -------
    numpy.dtype
        The dtype.

    Examples
    --------
    >>> float_dtype() in ("float32", "float64")
    True
    """
    return jnp.result_type(float)


def _is_array(x: Any) -> bool:
    return isinstance(x, (jax.Array, np.ndarray, np.generic))


def strong_dtype(x: jax.Array) -> jax.Array:
    """``x`` without JAX's weak typing, so that a scan carry's type is stable.

    Parameters
    ----------
    x : jax.Array
        An array, weakly typed or not.

    Returns
    -------
    jax.Array
        The same values, strongly typed.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> strong_dtype(jnp.asarray(1.0)).weak_type
    False
    """
    return lax.convert_element_type(x, x.dtype)


def element_names(name: str, shape: tuple[int, ...]) -> list[str]:
    """The names of the scalar elements of a test function's value.

    Parameters
    ----------
    name : str
        The test function's name (a trailing ``^2`` stays at the end).
    shape : tuple of int
        The shape of its value.

    Returns
    -------
    list of str
        One name per element, in C order.

    Examples
    --------
    >>> element_names("mu^2", (2,))
    ['mu[0]^2', 'mu[1]^2']
    """
    if shape == ():
        return [name]
    base, suffix = (name[:-2], "^2") if name.endswith("^2") else (name, "")
    return [f"{base}[{', '.join(map(str, idx))}]{suffix}" for idx in np.ndindex(*shape)]
