"""Geweke's (2004) "Getting it right" joint-distribution test of a kernel (:func:`geweke_test`).

Reference: J. Geweke (2004), "Getting it right: joint distribution tests of posterior
simulators", JASA 99(467):799-804.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from scipy import stats

from gibbsjax._checks import check_int as _check_int
from gibbsjax.kernel import Kernel
from gibbsjax.testing.common import (BonferroniVerdict, TestFunction, as_key, check_kernel, data_template, element_names,
                                     float_dtype, strong_dtype)


@dataclass(frozen=True, repr=False)
class GewekeResult(BonferroniVerdict):
    """Outcome of :func:`geweke_test`; one entry per (scalar) test function.

    Parameters
    ----------
    names : tuple of str
        Test-function names; array-valued functions give one name per element
        (``"theta[0, 1]"``), squares of recorded values are named ``"x^2"``.
    mean_mc, se_mc : numpy.ndarray
        Mean and standard error from the marginal-conditional simulator.
    mean_sc, se_sc : numpy.ndarray
        Mean and standard error from the successive-conditional simulator.
    z, p_values : numpy.ndarray
        ``(mean_mc - mean_sc) / sqrt(se_mc**2 + se_sc**2)`` and its two-sided
        normal p-value.
    alpha : float
        Family-wise level; each p-value is compared with ``alpha / m``
        (Bonferroni over the ``m`` test functions).
    num_chains, num_steps : int
        Successive-conditional chains and steps per chain.
    num_prior_draws : int
        Marginal-conditional draws.
    kernel_name : str, default "kernel"
        The kernel's name, for the summary.

    Examples
    --------
    >>> from gibbsjax.models import normal
    >>> from gibbsjax.testing import geweke_test
    >>> kernel = normal.semiconjugate(mu0=0.5, sigma0=1.5, a0=3.0, b0=2.0)
    >>> result = geweke_test(kernel, normal.data([0.1, 0.4, -0.3]), num_chains=200, num_steps=20, seed=0)
    >>> type(result).__name__
    'GewekeResult'
    """

    names: tuple[str, ...]
    mean_mc: np.ndarray
    se_mc: np.ndarray
    mean_sc: np.ndarray
    se_sc: np.ndarray
    z: np.ndarray
    p_values: np.ndarray
    alpha: float
    num_chains: int
    num_steps: int
    num_prior_draws: int
    kernel_name: str = "kernel"

    def summary(self, max_rows: int | None = 40) -> str:
        """A table of all test functions (failing rows marked ``<-- FAIL``).

        Parameters
        ----------
        max_rows : int or None, default 40
            With more functions, only the ``max_rows`` smallest p-values are shown
            (``None``: all).

        Returns
        -------
        str
            The table, with a header saying whether the test passed.

        Examples
        --------
        >>> import numpy as np
        >>> r = GewekeResult(names=("theta",), mean_mc=np.array([0.01]), se_mc=np.array([0.02]),
        ...                  mean_sc=np.array([-0.01]), se_sc=np.array([0.03]), z=np.array([0.55]),
        ...                  p_values=np.array([0.58]), alpha=0.01, num_chains=200, num_steps=50,
        ...                  num_prior_draws=200)
        >>> print(r.summary())
        Geweke joint-distribution test of 'kernel': PASSED
          marginal-conditional: 200 independent draws; successive-conditional: 200 chains x 50 steps
          Bonferroni: p > alpha/m = 0.01/1 = 0.01 required; min p = 0.58
          function     mean_MC     se_MC     mean_SC     se_SC        z         p
          theta           0.01      0.02       -0.01      0.03     0.55  5.80e-01
        """
        m = self.num_functions
        status = "PASSED" if self.passed else f"FAILED ({len(self.failures)} of {m})"
        lines = [
            f"Geweke joint-distribution test of {self.kernel_name!r}: {status}",
            f"  marginal-conditional: {self.num_prior_draws} independent draws; "
            f"successive-conditional: {self.num_chains} chains x {self.num_steps} steps",
            f"  Bonferroni: p > alpha/m = {self.alpha:g}/{m} = {self.threshold:.3g} "
            f"required; min p = {self.min_p:.3g}",
        ]
        rows = np.arange(m)
        if max_rows is not None and m > max_rows:
            rows = np.sort(np.argsort(self.p_values, kind="stable")[:max_rows])
            lines.append(f"  (showing the {max_rows} smallest p-values of {m})")
        width = max([len("function")] + [len(self.names[i]) for i in rows])
        lines.append(
            f"  {'function':<{width}} {'mean_MC':>11} {'se_MC':>9} {'mean_SC':>11} "
            f"{'se_SC':>9} {'z':>8} {'p':>9}"
        )
        for i in rows:
            mark = "  <-- FAIL" if self.failed[i] else ""
            lines.append(
                f"  {self.names[i]:<{width}} {self.mean_mc[i]:>11.4g} {self.se_mc[i]:>9.3g} "
                f"{self.mean_sc[i]:>11.4g} {self.se_sc[i]:>9.3g} {self.z[i]:>8.2f} "
                f"{self.p_values[i]:>9.2e}{mark}"
            )
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"GewekeResult(passed={self.passed}, num_functions={self.num_functions}, "
            f"min_p={self.min_p:.3g}, alpha={self.alpha:g})"
        )



def default_test_functions(kernel: Kernel, data: Any) -> dict[str, TestFunction]:
    """The default Geweke test functions: every recorded value and its square.

    For each entry ``k`` of ``kernel.record(state, data)`` this returns ``k``
    (first moments, elementwise) and ``k^2`` (second moments).  Extend it with
    your own functions of parameters *and data*, which often add power.

    Parameters
    ----------
    kernel : Kernel
        The kernel.
    data : pytree
        Its data.

    Returns
    -------
    dict
        ``{name: g(state, data)}``.

    Examples
    --------
    >>> fns = default_test_functions(kernel, data)            # doctest: +SKIP
    >>> fns["mu_ybar"] = lambda s, d: s.mu * d.y.mean()       # doctest: +SKIP
    >>> geweke_test(kernel, data, fns).assert_passes()        # doctest: +SKIP

    (``kernel`` and ``data`` as in :func:`geweke_test`'s example, with a state
    that has a field ``mu`` and data with a field ``y``.)
    """
    check_kernel(kernel)
    state_shape = jax.eval_shape(kernel.sample_prior, jax.random.key(0), data)
    recorded = jax.eval_shape(kernel.record, state_shape, data)
    if not isinstance(recorded, Mapping):
        raise TypeError("kernel.record must return a dict of arrays")
    fns: dict[str, TestFunction] = {}
    for name in recorded:
        fns[name] = lambda s, d, _n=name: kernel.record(s, d)[_n]
        fns[f"{name}^2"] = lambda s, d, _n=name: jnp.square(
            jnp.asarray(kernel.record(s, d)[_n], dtype=float_dtype())
        )
    return fns


def geweke_test(
    kernel: Kernel,
    data: Any,
    test_functions: Mapping[str, TestFunction] | None = None,
    *,
    num_chains: int = 1000,
    num_steps: int = 200,
    num_prior_draws: int | None = None,
    seed: int | jax.Array = 0,
    alpha: float = 1e-3,
) -> GewekeResult:
    """Geweke's (2004) "Getting it right" joint-distribution test of a kernel.

    Two simulators of the joint distribution ``p(theta, y)`` are compared
    through the means of test functions ``g(theta, y)``:

    * **marginal-conditional**: ``theta ~ kernel.sample_prior``, then
      ``y ~ kernel.simulate_data(theta)``; independent exact draws.
    * **successive-conditional**: start at a marginal-conditional draw
      ``(theta0, y0)`` and repeat ``theta <- kernel.step(theta, y)`` (one Gibbs
      sweep on the current data), ``y <- kernel.simulate_data(theta)``.  If the
      sweep leaves ``p(theta | y)`` invariant this transition leaves the joint
      invariant.

    Because every successive-conditional chain *starts* at an exact joint draw
    and the transition leaves the joint invariant, **every** state of every
    chain is distributed as the joint (no burn-in, no mixing assumption).  We
    therefore run ``num_chains`` independent chains (vmapped; ``lax.scan`` over
    steps), average ``g`` over each chain's ``num_steps`` states, and take the
    standard error from the across-chain variance of those chain averages:
    exact and simple, no spectral-density estimate needed.  Slow mixing of the
    joint chain only costs power, never validity.

    For each scalar test function ``z = (mean_MC - mean_SC) /
    sqrt(se_MC**2 + se_SC**2)`` with a two-sided normal p-value; the test
    passes iff every p-value exceeds ``alpha / m`` (Bonferroni over the ``m``
    scalar test functions), so a correct kernel fails with probability at most
    about ``alpha``.

    Parameters
    ----------
    kernel : Kernel
        A :class:`~gibbsjax.kernel.Kernel` with ``sample_prior`` and
        ``simulate_data``.
    data : pytree
        A data pytree used as a *template*: ``simulate_data`` must return a
        pytree of the same structure and array shapes.  Array leaves are
        re-simulated; non-array leaves (Python ints, strings...) are kept
        fixed from the template.
    test_functions : dict, optional
        ``{name: g(state, data)}``; ``g`` returns a scalar or an array (each
        element is a separate test function).  Default:
        :func:`default_test_functions` (every leaf of ``kernel.record``
        elementwise and its square).  Functions of both parameters and data
        (e.g. ``theta * mean(y)``) add power against some bugs.
    num_chains : int, default 1000
        Successive-conditional chains.
    num_steps : int, default 200
        Gibbs sweeps per chain.  The default 1000 x 200 costs ``2e5`` sweeps;
        enough to catch gross errors in small models.  Subtle errors need more.
    num_prior_draws : int, optional
        Marginal-conditional draws; default ``num_chains * num_steps`` (drawn
        in ``num_steps`` vmapped batches of ``num_chains``; a value that is not
        a multiple of ``num_chains`` is rounded up to one).
    seed : int or jax.Array, default 0
        An int or a JAX PRNG key.
    alpha : float, default 1e-3
        Family-wise significance level (rare false alarms in test suites, still
        very powerful against real bugs given the sample sizes).

    Returns
    -------
    GewekeResult
        ``passed``, ``summary()``, ``assert_passes()`` and the statistics.

    Notes
    -----
    Computation follows the global float precision: float64 when x64 is
    enabled (``jax.config.update("jax_enable_x64", True)`` or the
    ``jax.enable_x64(True)`` context), else float32; the final statistics are
    always computed in numpy float64.

    Examples
    --------
    theta ~ N(0, 1), y ~ N(theta, 1), so theta | y ~ N(y / 2, 1 / 2):

    >>> import jax, jax.numpy as jnp
    >>> from gibbsjax.kernel import Kernel
    >>> k = Kernel(
    ...     init=lambda key, y: jax.random.normal(key),
    ...     step=lambda key, th, y: y / 2 + jnp.sqrt(0.5) * jax.random.normal(key),
    ...     record=lambda th, y: {"theta": th},
    ...     sample_prior=lambda key, y: jax.random.normal(key),
    ...     simulate_data=lambda key, th, y: th + jax.random.normal(key))
    >>> result = geweke_test(k, jnp.zeros(()), num_chains=200, num_steps=50)
    >>> result.names, result.passed
    (('theta', 'theta^2'), True)
    >>> result.assert_passes()   # AssertionError with the summary table if not
    >>> print(result)            # doctest: +SKIP
    """
    check_kernel(kernel)
    num_chains = _check_int("num_chains", num_chains, 2)
    num_steps = _check_int("num_steps", num_steps, 1)
    if num_prior_draws is None:
        num_batches = num_steps
    else:
        num_prior_draws = _check_int("num_prior_draws", num_prior_draws, 2)
        num_batches = -(-num_prior_draws // num_chains)
    batch = num_chains
    if not (isinstance(alpha, (int, float)) and 0.0 < alpha < 1.0):
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if test_functions is None:
        test_functions = default_test_functions(kernel, data)
    if not isinstance(test_functions, Mapping) or len(test_functions) == 0:
        raise ValueError("test_functions must be a non-empty dict {name: g(state, data)}")
    for name, g in test_functions.items():
        if not isinstance(name, str) or not callable(g):
            raise ValueError(
                f"test_functions must map names (str) to callables g(state, data); got {name!r}: {g!r}"
            )
    key = as_key(seed)
    fdtype = float_dtype()

    combine, dynamic_of = data_template(data)

    names_shapes: list[tuple[str, tuple[int, ...]]] = []

    def g_vector(state, dyn):
        d = combine(dyn)
        parts = []
        for name, g in test_functions.items():
            value = jnp.asarray(g(state, d))
            parts.append(jnp.ravel(value).astype(fdtype))
        return jnp.concatenate(parts)

    def mc_draw(k):
        k_theta, k_y = jax.random.split(k)
        theta = kernel.sample_prior(k_theta, data)
        theta = jax.tree_util.tree_map(lambda x: strong_dtype(jnp.asarray(x)), theta)
        dyn = dynamic_of(kernel.simulate_data(k_y, theta, data))
        return theta, dyn

    def like(new, old, what):
        if jax.tree_util.tree_structure(new) != jax.tree_util.tree_structure(old):
            raise ValueError(f"{what} changed the state's structure")
        return jax.tree_util.tree_map(
            lambda n, o: lax.convert_element_type(jnp.asarray(n), o.dtype), new, old
        )

    def batch_moments(k):
        keys = jax.random.split(k, batch)
        gs = jax.vmap(lambda kk: g_vector(*mc_draw(kk)))(keys)  # (batch, m)
        m = jnp.mean(gs, axis=0)
        return m, jnp.sum(jnp.square(gs - m), axis=0)

    def chain_mean(k):
        k0, k_run = jax.random.split(k)
        theta0, dyn0 = mc_draw(k0)
        g0 = g_vector(theta0, dyn0)

        def body(carry, t):
            theta, dyn, acc = carry
            k_step, k_sim = jax.random.split(jax.random.fold_in(k_run, t))
            theta = like(kernel.step(k_step, theta, combine(dyn)), theta, "kernel.step")
            dyn = dynamic_of(kernel.simulate_data(k_sim, theta, combine(dyn)))
            return (theta, dyn, acc + (g_vector(theta, dyn) - g0)), None

        (_, _, acc), _ = lax.scan(
            body, (theta0, dyn0, jnp.zeros_like(g0)), jnp.arange(num_steps)
        )
        return g0 + acc / num_steps  # shifted sums: less float32 cancellation

    @jax.jit
    def run(key):
        k_mc, k_sc = jax.random.split(key)
        batch_keys = jax.vmap(lambda b: jax.random.fold_in(k_mc, b))(jnp.arange(num_batches))
        means, m2s = lax.map(batch_moments, batch_keys)
        chain_means = jax.vmap(chain_mean)(jax.random.split(k_sc, num_chains))
        return means, m2s, chain_means

    # Names and shapes of the test functions (abstract evaluation only).
    theta_s, dyn_s = jax.eval_shape(mc_draw, jax.random.key(0))
    out_shapes = jax.eval_shape(
        lambda s, dy: {n: jnp.asarray(g(s, combine(dy))) for n, g in test_functions.items()},
        theta_s,
        dyn_s,
    )
    for name in test_functions:
        names_shapes.append((name, tuple(out_shapes[name].shape)))
    names = tuple(n for name, shape in names_shapes for n in element_names(name, shape))

    means, m2s, chain_means = (np.asarray(a, dtype=np.float64) for a in run(key))

    # Marginal-conditional: combine equal-size batches (Chan et al.) in float64.
    n_mc = num_batches * batch
    mean_mc = means.mean(axis=0)
    m2 = m2s.sum(axis=0) + batch * np.sum(np.square(means - mean_mc), axis=0)
    se_mc = np.sqrt(m2 / (n_mc - 1) / n_mc)
    # Successive-conditional: independent chains, each an unbiased average.
    mean_sc = chain_means.mean(axis=0)
    se_sc = chain_means.std(axis=0, ddof=1) / math.sqrt(num_chains)

    diff = mean_mc - mean_sc
    se = np.sqrt(se_mc**2 + se_sc**2)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, diff / np.where(se > 0, se, 1.0), np.where(diff == 0, 0.0, np.inf))
    z = np.where(np.isfinite(mean_mc) & np.isfinite(mean_sc), z, np.nan)
    p = 2.0 * stats.norm.sf(np.abs(z))
    return GewekeResult(
        names=names,
        mean_mc=mean_mc,
        se_mc=se_mc,
        mean_sc=mean_sc,
        se_sc=se_sc,
        z=z,
        p_values=p,
        alpha=float(alpha),
        num_chains=num_chains,
        num_steps=num_steps,
        num_prior_draws=n_mc,
        kernel_name=getattr(kernel, "name", "kernel"),
    )
