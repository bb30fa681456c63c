"""Statistical tests for checking samplers: your own kernels and ours.

* :func:`geweke_test`: Geweke's (2004) "Getting it right" joint-distribution
  test of a :class:`~gibbsjax.kernel.Kernel` that has ``sample_prior`` and
  ``simulate_data``.  It checks that the Gibbs sweep leaves the posterior
  invariant *without* knowing the posterior.
* :func:`moment_zscores` / :func:`assert_moments`: compare MCMC draws with
  known exact moments (mean, variance, standard deviation, correlation) in
  units of Monte Carlo standard error, which accounts for autocorrelation.
* :func:`chi_square_test`: Pearson's chi-square test of the frequencies of a
  discrete state against exact probabilities, pooling sparse bins.
* :func:`sbc` / :func:`plot_sbc_ranks`: simulation-based calibration (Talts
  et al. 2018): ranks of prior draws among posterior draws given data
  simulated from them, tested for uniformity, with rank histograms.

All of these are *statistical* tests: a correct sampler fails them with a small
probability (controlled by ``alpha`` or ``n_se``).  Use fixed seeds in test
suites so that results are reproducible.

References: J. Geweke (2004), "Getting it right: joint distribution tests of
posterior simulators", JASA 99(467):799-804.  S. Talts, M. Betancourt,
D. Simpson, A. Vehtari & A. Gelman (2018), "Validating Bayesian inference
algorithms with simulation-based calibration", arXiv:1804.06788.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from gibbsjax._checks import check_int as _check_int
from gibbsjax._checks import check_seed as _check_seed
from jax import lax
from scipy import stats

from gibbsjax.kernel import Kernel

__all__ = [
    "GewekeResult",
    "geweke_test",
    "default_test_functions",
    "MomentCheck",
    "moment_zscores",
    "assert_moments",
    "ChiSquareResult",
    "chi_square_test",
    "SBCResult",
    "sbc",
    "recorded_test_functions",
    "sorted_values",
    "co_clustered_pairs",
    "plot_sbc_ranks",
]

TestFunction = Callable[[Any, Any], Any]


# --------------------------------------------------------------------------
# Geweke joint-distribution test
# --------------------------------------------------------------------------


class _BonferroniVerdict:
    """The verdict shared by :class:`GewekeResult` and :class:`SBCResult`: one p-value per
    scalar test function (``names``, ``p_values``), Bonferroni-corrected at ``alpha``."""

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
        """Raise ``AssertionError`` with the summary table unless :attr:`passed`."""
        if not self.passed:
            raise AssertionError("\n" + self.summary())


@dataclass(frozen=True, repr=False)
class GewekeResult(_BonferroniVerdict):
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
    _check_kernel(kernel)
    state_shape = jax.eval_shape(kernel.sample_prior, jax.random.key(0), data)
    recorded = jax.eval_shape(kernel.record, state_shape, data)
    if not isinstance(recorded, Mapping):
        raise TypeError("kernel.record must return a dict of arrays")
    fns: dict[str, TestFunction] = {}
    for name in recorded:
        fns[name] = lambda s, d, _n=name: kernel.record(s, d)[_n]
        fns[f"{name}^2"] = lambda s, d, _n=name: jnp.square(
            jnp.asarray(kernel.record(s, d)[_n], dtype=_float_dtype())
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
    _check_kernel(kernel)
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
    key = _as_key(seed)
    fdtype = _float_dtype()

    combine, dynamic_of = _data_template(data)

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
        theta = jax.tree_util.tree_map(lambda x: _strong(jnp.asarray(x)), theta)
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
    names = tuple(n for name, shape in names_shapes for n in _element_names(name, shape))

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


def _check_kernel(kernel: Any) -> None:
    for attr in ("sample_prior", "simulate_data", "step", "record"):
        if getattr(kernel, attr, None) is None or not callable(getattr(kernel, attr)):
            raise ValueError(
                f"kernel has no {attr}; the Geweke test needs a Kernel with "
                "sample_prior(key, data) and simulate_data(key, state, data)"
            )




def _data_template(data: Any):
    """Split a data template into re-simulated array leaves and fixed leaves.

    Returns ``(combine, dynamic_of)``: ``combine(arrays)`` rebuilds a data pytree
    from the array leaves; ``dynamic_of(new_data)`` checks that simulated data
    have the template's structure and shapes and returns their array leaves
    (cast to the template's dtypes).
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


def _as_key(seed: Any) -> jax.Array:
    if isinstance(seed, jax.Array) and jax.dtypes.issubdtype(seed.dtype, jax.dtypes.prng_key):
        return seed
    if isinstance(seed, (jax.Array, np.ndarray)) and seed.shape == (2,) and seed.dtype == np.uint32:
        return jax.random.wrap_key_data(jnp.asarray(seed))
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return jax.random.key(_check_seed("seed", seed))  # [0, 2**32), as gibbsjax.sample takes it
    raise ValueError(f"seed must be an int or a JAX PRNG key, got {seed!r}")


def _float_dtype():
    return jnp.result_type(float)


def _is_array(x: Any) -> bool:
    return isinstance(x, (jax.Array, np.ndarray, np.generic))


def _strong(x: jax.Array) -> jax.Array:
    # Drop weak typing so that the scan carry's type is stable.
    return lax.convert_element_type(x, x.dtype)


def _element_names(name: str, shape: tuple[int, ...]) -> list[str]:
    if shape == ():
        return [name]
    base, suffix = (name[:-2], "^2") if name.endswith("^2") else (name, "")
    return [f"{base}[{', '.join(map(str, idx))}]{suffix}" for idx in np.ndindex(*shape)]


# --------------------------------------------------------------------------
# Moments in units of Monte Carlo standard error
# --------------------------------------------------------------------------


class MomentCheck(NamedTuple):
    """One moment comparison: ``z = (estimate - expected) / mcse``.

    Parameters
    ----------
    label : str
        What was compared, e.g. ``"mean(x)"``.
    estimate : float
        The MCMC estimate.
    expected : float
        The exact value.
    mcse : float
        The Monte Carlo standard error of the estimate.
    z : float
        ``(estimate - expected) / mcse``.
    """

    label: str
    estimate: float
    expected: float
    mcse: float
    z: float

    def __str__(self) -> str:
        return (
            f"{self.label}: estimate {self.estimate:.6g}, expected {self.expected:.6g}, "
            f"MCSE {self.mcse:.3g}, z = {self.z:.2f}"
        )


def moment_zscores(
    draws: Any,
    *,
    mean: Any = None,
    var: Any = None,
    sd: Any = None,
    corr: Any = None,
    name: str | None = None,
) -> list[MomentCheck]:
    """Compare MCMC draws with exact moments in units of Monte Carlo standard error.

    Each requested moment is estimated per element of the event and compared
    with its exact value:

    * ``mean``: the sample mean; MCSE from ``arviz.mcse(method="mean")``,
      i.e. ``sd / sqrt(ESS)``, which accounts for autocorrelation.
    * ``var``: the mean of ``(x - xbar)**2``; MCSE of that mean (the
      estimation of ``xbar`` does not matter to first order).
    * ``sd``: ``sqrt(var)``; MCSE by the delta method, ``MCSE(var) / (2 sd)``.
    * ``corr``: the sample correlation of every pair of event elements; MCSE of
      the mean of its influence function ``z_i z_j - r (z_i**2 + z_j**2) / 2``
      of the standardised draws.

    Expected values broadcast against the event shape; NaN entries are
    skipped.  MCSEs are themselves estimates: use several chains and a few
    hundred effective draws or more.

    Parameters
    ----------
    draws : array_like or xarray.DataArray
        Shape ``(chain, draw, *event)``: a numpy/JAX array or an ArviZ variable
        (``idata.posterior["x"]``, with ``chain`` and ``draw`` dims).
    mean, var, sd : array_like, optional
        Exact moments per event element.
    corr : array_like, optional
        The exact correlations, a full ``(k, k)`` matrix over the flattened event
        (or a scalar when ``k == 2``).
    name : str, optional
        The variable's name in the labels (default the DataArray's name or ``"x"``).

    Returns
    -------
    list of MomentCheck
        Rows ``(label, estimate, expected, mcse, z)``.

    Raises
    ------
    ValueError
        For draws of the wrong shape (fewer than 4 draws per chain, no event).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).normal(2.0, 3.0, size=(4, 1000))
    >>> for check in moment_zscores(x, mean=2.0, sd=3.0):
    ...     print(check.label, round(check.z, 2))
    mean(x) -0.95
    sd(x) -0.15
    """
    x, label = _as_chain_draw(draws, name)
    num_chain, num_draw = x.shape[:2]
    event = x.shape[2:]
    flat = x.reshape(num_chain, num_draw, -1)
    k = flat.shape[-1]
    labels = _element_names(label, event)
    xbar = flat.mean(axis=(0, 1))
    dev = flat - xbar
    dev2 = np.square(dev)
    checks: list[MomentCheck] = []

    def add(lbl, est, exp, se):
        checks.append(MomentCheck(lbl, _scalar(est), _scalar(exp), _scalar(se), _z(est, exp, se)))

    if mean is not None:
        expected = _broadcast("mean", mean, event)
        for i in range(k):
            if np.isfinite(expected[i]):
                add(f"mean({labels[i]})", xbar[i], expected[i], _mcse_mean(flat[..., i]))
    var_est = dev2.mean(axis=(0, 1))
    if var is not None or sd is not None:
        var_se = np.array([_mcse_mean(dev2[..., i]) for i in range(k)])
    if var is not None:
        expected = _broadcast("var", var, event)
        for i in range(k):
            if np.isfinite(expected[i]):
                add(f"var({labels[i]})", var_est[i], expected[i], var_se[i])
    if sd is not None:
        expected = _broadcast("sd", sd, event)
        sd_est = np.sqrt(var_est)
        for i in range(k):
            if np.isfinite(expected[i]):
                se = var_se[i] / (2.0 * sd_est[i]) if sd_est[i] > 0 else 0.0
                add(f"sd({labels[i]})", sd_est[i], expected[i], se)
    if corr is not None:
        if k < 2:
            raise ValueError("corr needs draws with at least two event elements, shape (chain, draw, k)")
        c = np.asarray(corr, dtype=np.float64)
        if c.ndim == 0:
            if k != 2:
                raise ValueError(f"a scalar corr needs exactly 2 event elements, got {k}")
            c = np.array([[1.0, c.item()], [c.item(), 1.0]])
        if c.shape != (k, k):
            raise ValueError(
                f"corr must be a ({k}, {k}) matrix over the flattened event, got shape {c.shape}"
            )
        with np.errstate(divide="ignore", invalid="ignore"):
            std = dev / np.sqrt(var_est)
        for i in range(k):
            for j in range(i + 1, k):
                if not np.isfinite(c[i, j]):
                    continue
                prod = std[..., i] * std[..., j]
                r = prod.mean()
                psi = prod - 0.5 * r * (np.square(std[..., i]) + np.square(std[..., j]))
                add(f"corr({labels[i]}, {labels[j]})", r, c[i, j], _mcse_mean(psi))
    if not checks:
        raise ValueError("give at least one of mean, var, sd, corr")
    return checks


def assert_moments(
    draws: Any,
    *,
    mean: Any = None,
    var: Any = None,
    sd: Any = None,
    corr: Any = None,
    n_se: float = 4.0,
    name: str | None = None,
) -> list[MomentCheck]:
    """Assert that draws match exact moments within ``n_se`` Monte Carlo SEs.

    The default ``n_se=4`` gives a false-alarm probability of about ``6e-5``
    per comparison.

    Parameters
    ----------
    draws : array_like or xarray.DataArray
        Shape ``(chain, draw, *event)``, as in :func:`moment_zscores`.
    mean, var, sd, corr : array_like, optional
        Exact moments, as in :func:`moment_zscores`.
    n_se : float, default 4.0
        The largest allowed ``|z|``.
    name : str, optional
        The variable's name in the labels.

    Returns
    -------
    list of MomentCheck
        The checks, when all pass.

    Raises
    ------
    AssertionError
        Listing every comparison (estimate, expected, MCSE, z) if any
        ``|z| > n_se`` (or a z-score is NaN).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).normal(2.0, 3.0, size=(4, 1000))
    >>> _ = assert_moments(x, mean=2.0, var=9.0)
    >>> assert_moments(x, mean=2.5)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    AssertionError: ...
    """
    if not (n_se > 0):
        raise ValueError(f"n_se must be positive, got {n_se!r}")
    checks = moment_zscores(draws, mean=mean, var=var, sd=sd, corr=corr, name=name)
    bad = [c for c in checks if not abs(c.z) <= n_se]
    if bad:
        lines = [f"{len(bad)} of {len(checks)} moment checks off by more than {n_se:g} MCSE:"]
        lines += [f"  {c}" + ("  <-- FAIL" if c in bad else "") for c in checks]
        raise AssertionError("\n".join(lines))
    return checks


def _as_chain_draw(draws: Any, name: str | None) -> tuple[np.ndarray, str]:
    if hasattr(draws, "groups") and callable(getattr(draws, "groups")):
        raise TypeError("pass one variable, e.g. idata.posterior['x'], not an InferenceData")
    if hasattr(draws, "dims") and hasattr(draws, "transpose"):  # xarray.DataArray
        if "chain" not in draws.dims or "draw" not in draws.dims:
            raise ValueError(f"a DataArray needs 'chain' and 'draw' dims, got {draws.dims}")
        if name is None and getattr(draws, "name", None) is not None:
            name = str(draws.name)
        draws = draws.transpose("chain", "draw", ...).values
    x = np.asarray(draws, dtype=np.float64)
    if x.ndim < 2:
        raise ValueError(f"draws must have shape (chain, draw, ...), got shape {x.shape}")
    if x.shape[0] < 1 or x.shape[1] < 4:
        raise ValueError(f"draws need at least 1 chain and 4 draws, got shape {x.shape}")
    if x.size == 0:
        raise ValueError(f"draws has no event elements, shape {x.shape}")
    return x, name or "x"


def _broadcast(arg: str, value: Any, event: tuple[int, ...]) -> np.ndarray:
    v = np.asarray(value, dtype=np.float64)
    try:
        return np.broadcast_to(v, event).ravel()
    except ValueError:
        raise ValueError(f"{arg} of shape {v.shape} does not broadcast to the event shape {event}") from None


def _mcse_mean(x: np.ndarray) -> float:
    import arviz as az  # lazy: importing arviz is slow and noisy

    return _scalar(az.mcse(np.asarray(x, dtype=np.float64), method="mean"))


def _scalar(x: Any) -> float:
    """A Python float from a number or a one-element array of any rank (numpy, JAX, xarray).

    ``float()`` of a one-element array that is not 0-d is deprecated in numpy
    (an error in numpy 2.5); ``.item()`` works for every rank.
    """
    arr = np.asarray(getattr(x, "values", x), dtype=np.float64)
    if arr.size != 1:
        raise ValueError(f"expected a single number, got an array of shape {arr.shape}")
    return arr.item()


def _z(est: float, exp: float, se: float) -> float:
    est, exp, se = _scalar(est), _scalar(exp), _scalar(se)
    if se > 0 and np.isfinite(se):
        return float((est - exp) / se)
    if se == 0 and est == exp:
        return 0.0
    return float("nan") if not np.isfinite(est) else float("inf")


# --------------------------------------------------------------------------
# Chi-square goodness of fit for discrete states
# --------------------------------------------------------------------------


class ChiSquareResult(NamedTuple):
    """Pearson chi-square statistic, degrees of freedom and p-value.

    Parameters
    ----------
    statistic : float
        Pearson's statistic.
    dof : int
        Degrees of freedom.
    p_value : float
        The upper-tail p-value.
    """

    statistic: float
    dof: int
    p_value: float


def chi_square_test(counts: Any, probs: Any, *, min_expected: float = 5.0) -> ChiSquareResult:
    """Pearson chi-square test of observed state counts against exact probabilities.

    Bins whose expected count ``n * probs[i]`` is below ``min_expected`` are
    pooled into one bin; if that bin is itself below ``min_expected`` it is
    merged with the smallest remaining bin.  A visit to a state of probability
    zero gives ``statistic=inf, p_value=0``.

    The chi-square distribution of the statistic assumes *independent* draws.
    With MCMC, take the counts from independent chains (e.g. the last state of
    each of many independent chains, vmapped), not from all draws of one
    autocorrelated chain, which would make the test far too liberal.

    Parameters
    ----------
    counts : array_like
        ``counts[i]`` is how often state ``i`` was seen (flattened).
    probs : array_like
        ``probs[i]`` its exact probability (same shape).
    min_expected : float, default 5.0
        The smallest expected count of a bin before pooling.

    Returns
    -------
    ChiSquareResult
        ``(statistic, dof, p_value)``; unpacks as a triple.

    Raises
    ------
    ValueError
        If fewer than two bins remain after pooling.

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([0.5, 0.3, 0.15, 0.05])
    >>> states = np.random.default_rng(0).choice(4, size=2000, p=p)
    >>> stat, dof, pval = chi_square_test(np.bincount(states, minlength=4), p)
    >>> dof, pval > 1e-3
    (3, True)
    """
    c = np.asarray(counts, dtype=np.float64).ravel()
    p = np.asarray(probs, dtype=np.float64).ravel()
    if np.shape(counts) != np.shape(probs):
        raise ValueError(
            f"counts and probs must have the same shape, got {np.shape(counts)} and {np.shape(probs)}"
        )
    if c.size < 2:
        raise ValueError("need at least two states")
    if not np.all(np.isfinite(c)) or np.any(c < 0):
        raise ValueError("counts must be finite and non-negative")
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError("probs must be finite and non-negative")
    total_p = p.sum()
    if abs(total_p - 1.0) > 1e-4:
        raise ValueError(f"probs must sum to 1, got {total_p:.6g}")
    if not min_expected > 0:
        raise ValueError(f"min_expected must be positive, got {min_expected!r}")
    p = p / total_p
    n = c.sum()
    if n <= 0:
        raise ValueError("counts are all zero")
    if np.any((p == 0) & (c > 0)):
        return ChiSquareResult(float("inf"), int(np.count_nonzero(p > 0)) - 1, 0.0)
    expected = n * p
    keep = expected >= min_expected
    obs = list(c[keep])
    exp = list(expected[keep])
    pooled_o, pooled_e = c[~keep].sum(), expected[~keep].sum()
    if pooled_e > 0:
        if pooled_e >= min_expected or not exp:
            obs.append(pooled_o)
            exp.append(pooled_e)
        else:
            j = int(np.argmin(exp))
            obs[j] += pooled_o
            exp[j] += pooled_e
    if len(exp) < 2:
        raise ValueError(
            f"fewer than two bins with expected count >= {min_expected:g} after pooling; "
            f"collect more than {int(n)} draws"
        )
    o, e = np.array(obs), np.array(exp)
    statistic = float(np.sum(np.square(o - e) / e))
    dof = len(e) - 1
    return ChiSquareResult(statistic, dof, float(stats.chi2.sf(statistic, dof)))


# --------------------------------------------------------------------------
# Simulation-based calibration
# --------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class SBCResult(_BonferroniVerdict):
    """Outcome of :func:`sbc`; one column of ranks per (scalar) test function.

    Parameters
    ----------
    names : tuple of str
        Test-function names, one per scalar (``"mu[1]"``).
    ranks : numpy.ndarray
        ``(num_replications, m)`` int: rank of the true value among the
        ``num_draws`` posterior draws of each replication, in ``0..num_draws``
        (ties broken uniformly at random).
    num_draws : int
        Posterior draws per replication ``L`` (chains x draws per chain).
    num_bins : int
        Rank-histogram bins used by the chi-square uniformity test.
    statistics, p_values : numpy.ndarray
        Pearson chi-square statistic of each function's binned ranks against
        the exact bin probabilities of a uniform rank on ``0..L``, and its p-value.
    alpha : float
        Family-wise level; each p-value is compared with ``alpha / m``.
    kernel_name : str, default "kernel"
        The kernel's name, for the summary.
    """

    names: tuple[str, ...]
    ranks: np.ndarray
    num_draws: int
    num_bins: int
    statistics: np.ndarray
    p_values: np.ndarray
    alpha: float
    kernel_name: str = "kernel"

    @property
    def num_replications(self) -> int:
        """Number of replications (rows of ``ranks``)."""
        return int(self.ranks.shape[0])

    def bin_probabilities(self) -> np.ndarray:
        """Exact probability of each bin for a uniform rank on ``0..num_draws``.

        Returns
        -------
        numpy.ndarray
            ``(num_bins,)`` probabilities.

        Examples
        --------
        >>> import numpy as np
        >>> s = SBCResult(names=("mu",), ranks=np.array([[0], [1], [2], [3], [3]]), num_draws=3, num_bins=2,
        ...               statistics=np.array([0.2]), p_values=np.array([0.65]), alpha=0.01)
        >>> s.bin_probabilities()  # ranks 0..3 in two bins of two
        array([0.5, 0.5])
        """
        edges = _rank_bin_of(np.arange(self.num_draws + 1), self.num_draws, self.num_bins)
        return np.bincount(edges, minlength=self.num_bins) / (self.num_draws + 1)

    def bin_counts(self) -> np.ndarray:
        """Rank-histogram counts.

        Returns
        -------
        numpy.ndarray
            Shape ``(m, num_bins)``.

        Examples
        --------
        >>> import numpy as np
        >>> s = SBCResult(names=("mu",), ranks=np.array([[0], [1], [2], [3], [3]]), num_draws=3, num_bins=2,
        ...               statistics=np.array([0.2]), p_values=np.array([0.65]), alpha=0.01)
        >>> s.bin_counts()
        array([[2, 3]])
        """
        bins = _rank_bin_of(self.ranks, self.num_draws, self.num_bins)
        return np.stack([np.bincount(bins[:, j], minlength=self.num_bins) for j in range(self.num_functions)])

    def summary(self, max_rows: int | None = 40) -> str:
        """A table of every function's chi-square statistic and p-value (failures marked).

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
        >>> s = SBCResult(names=("mu",), ranks=np.array([[0], [1], [2], [3], [3]]), num_draws=3, num_bins=2,
        ...               statistics=np.array([0.2]), p_values=np.array([0.65]), alpha=0.01)
        >>> print(s.summary())
        Simulation-based calibration of 'kernel': PASSED
          5 replications, ranks among 3 posterior draws, 2 bins
          Bonferroni: p > alpha/m = 0.01/1 = 0.01 required; min p = 0.65
          function  mean rank      chi2         p
          mu             1.80      0.20  6.50e-01
          (a uniform rank has mean 1.5)
        """
        m = self.num_functions
        status = "PASSED" if self.passed else f"FAILED ({len(self.failures)} of {m})"
        lines = [
            f"Simulation-based calibration of {self.kernel_name!r}: {status}",
            f"  {self.num_replications} replications, ranks among {self.num_draws} posterior draws, "
            f"{self.num_bins} bins",
            f"  Bonferroni: p > alpha/m = {self.alpha:g}/{m} = {self.threshold:.3g} required; "
            f"min p = {self.min_p:.3g}",
        ]
        rows = np.arange(m)
        if max_rows is not None and m > max_rows:
            rows = np.sort(np.argsort(self.p_values, kind="stable")[:max_rows])
            lines.append(f"  (showing the {max_rows} smallest p-values of {m})")
        width = max([len("function")] + [len(self.names[i]) for i in rows])
        lines.append(f"  {'function':<{width}} {'mean rank':>10} {'chi2':>9} {'p':>9}")
        expected_mean = self.num_draws / 2
        for i in rows:
            mark = "  <-- FAIL" if self.failed[i] else ""
            lines.append(
                f"  {self.names[i]:<{width}} {self.ranks[:, i].mean():>10.2f} "
                f"{self.statistics[i]:>9.2f} {self.p_values[i]:>9.2e}{mark}"
            )
        lines.append(f"  (a uniform rank has mean {expected_mean:g})")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"SBCResult(passed={self.passed}, num_functions={self.num_functions}, "
            f"num_replications={self.num_replications}, min_p={self.min_p:.3g}, alpha={self.alpha:g})"
        )



def _rank_bin_of(ranks: np.ndarray, num_draws: int, num_bins: int) -> np.ndarray:
    """Bin of rank r in 0..L: floor(r B / (L + 1)); equal bins when B divides L + 1."""
    return (np.asarray(ranks, dtype=np.int64) * num_bins) // (num_draws + 1)


def recorded_test_functions(kernel: Kernel, data: Any) -> dict[str, TestFunction]:
    """Every value of ``kernel.record``, elementwise: the default :func:`sbc` functions.

    Parameters
    ----------
    kernel : Kernel
        The kernel.
    data : pytree
        Its data.

    Returns
    -------
    dict
        ``{name: g(state, data)}``, one per recorded value.

    Examples
    --------
    >>> import jax
    >>> from gibbsjax.models import normal
    >>> sorted(recorded_test_functions(normal.semiconjugate(), normal.data([98.0, 99.0])))
    ['mu', 'sigma2']
    """
    _check_kernel(kernel)
    state_shape = jax.eval_shape(kernel.sample_prior, jax.random.key(0), data)
    recorded = jax.eval_shape(kernel.record, state_shape, data)
    if not isinstance(recorded, Mapping):
        raise TypeError("kernel.record must return a dict of arrays")
    return {name: (lambda s, d, _n=name: kernel.record(s, d)[_n]) for name in recorded}


def sorted_values(x: jax.Array) -> jax.Array:
    """The values of ``x`` flattened and sorted: a test function that relabelling leaves unchanged.

    Mixture components and hidden states are exchangeable a posteriori, so an SBC or Geweke test
    of a model with labels ranks label-invariant quantities such as this one.

    Parameters
    ----------
    x : jax.Array
        Values of exchangeable components.

    Returns
    -------
    jax.Array
        The values, flattened and sorted.

    Examples
    --------
    >>> sorted_values(jnp.array([[3.0, 1.0], [2.0, 0.0]])).tolist()
    [0.0, 1.0, 2.0, 3.0]
    """
    return jnp.sort(jnp.ravel(x))


def co_clustered_pairs(z: jax.Array) -> jax.Array:
    """The number of pairs i < j with equal labels ``z[i] == z[j]``: invariant under relabelling.

    Parameters
    ----------
    z : jax.Array
        Integer labels.

    Returns
    -------
    jax.Array
        The number of pairs, a scalar.

    Examples
    --------
    >>> int(co_clustered_pairs(jnp.array([0, 1, 0, 0])))
    3
    """
    return jnp.sum(jnp.triu(z[:, None] == z[None, :], 1))


def sbc(
    kernel: Kernel,
    data: Any,
    test_functions: Mapping[str, TestFunction] | None = None,
    *,
    num_replications: int = 500,
    num_draws: int = 99,
    num_chains: int = 1,
    num_warmup: int = 50,
    thin: int = 1,
    num_bins: int | None = None,
    seed: int | jax.Array = 0,
    alpha: float = 1e-3,
) -> SBCResult:
    """Simulation-based calibration (Talts, Betancourt, Simpson, Vehtari & Gelman, 2018).

    For each of ``num_replications`` replications (all run at once, vmapped):

    1. draw parameters ``theta ~ kernel.sample_prior`` and data
       ``y ~ kernel.simulate_data(theta)`` (arrays shaped like the ``data``
       template, as in :func:`geweke_test`);
    2. run ``num_chains`` chains of the sampler on ``y`` from ``kernel.init``:
       ``num_warmup`` sweeps, then ``num_draws // num_chains`` draws per chain,
       one every ``thin`` sweeps;
    3. for every scalar test function ``g(state, y)``, record the rank of
       ``g(theta, y)`` among the ``L = num_draws`` posterior draws: the number
       of draws below it, plus a uniformly random share of the draws equal to
       it (so discrete quantities get exact uniform ranks too).

    If the sampler draws from the exact posterior, ``theta`` and the ``L``
    draws are exchangeable given ``y``, so each rank is uniform on ``0..L``.
    Each function's ranks are binned (``num_bins`` bins; bin of rank r is
    ``floor(r * num_bins / (L + 1))``) and compared with the exact bin
    probabilities by Pearson's chi-square test; the test passes iff every
    p-value exceeds ``alpha / m`` (Bonferroni over the ``m`` scalar functions).

    Unlike :func:`geweke_test`, SBC checks the whole inference as a user runs
    it: initialisation, warm-up and mixing included.  Too little warm-up or
    strongly autocorrelated draws also make ranks non-uniform (raise
    ``num_warmup`` / ``thin``).  Quantities whose labels can switch between
    modes (mixture components) need label-invariant test functions, such as
    sorted values or the log-likelihood of the data.

    Parameters
    ----------
    kernel : Kernel
        A :class:`~gibbsjax.kernel.Kernel` with ``sample_prior`` and ``simulate_data``.
    data : pytree
        A data template: array leaves are re-simulated, others kept fixed.
    test_functions : dict, optional
        ``{name: g(state, data)}`` with scalar or array values (each element
        is ranked separately).  Default: every recorded value
        (:func:`recorded_test_functions`).
    num_replications : int, default 500
        Replications.
    num_draws : int, default 99
        Posterior draws per replication (a multiple of ``num_chains``).
    num_chains : int, default 1
        Chains per replication.
    num_warmup : int, default 50
        Warm-up sweeps per chain.
    thin : int, default 1
        Sweeps between kept draws.
    num_bins : int, optional
        Histogram bins for the uniformity test; default the largest divisor
        of ``num_draws + 1`` that is at most 20 and leaves at least 10
        replications per bin on average.
    seed : int or jax.Array, default 0
        An int or a JAX PRNG key (replication ``i`` uses ``fold_in(key, i)``).
    alpha : float, default 1e-3
        Family-wise significance level.

    Returns
    -------
    SBCResult
        ``passed``, ``summary()``, ``assert_passes()``, ``ranks``;
        :func:`plot_sbc_ranks` draws the rank histograms.

    Examples
    --------
    theta ~ N(0, 1), y ~ N(theta, 1), so theta | y ~ N(y / 2, 1 / 2):

    >>> import jax, jax.numpy as jnp
    >>> from gibbsjax.kernel import Kernel
    >>> k = Kernel(
    ...     init=lambda key, y: jnp.zeros(()),
    ...     step=lambda key, th, y: y / 2 + jnp.sqrt(0.5) * jax.random.normal(key),
    ...     record=lambda th, y: {"theta": th},
    ...     sample_prior=lambda key, y: jax.random.normal(key),
    ...     simulate_data=lambda key, th, y: th + jax.random.normal(key))
    >>> result = sbc(k, jnp.zeros(()), num_replications=200, num_draws=19, num_warmup=2)
    >>> result.names, result.ranks.shape, result.passed
    (('theta',), (200, 1), True)
    """
    _check_kernel(kernel)
    num_replications = _check_int("num_replications", num_replications, 2)
    num_draws = _check_int("num_draws", num_draws, 1)
    num_chains = _check_int("num_chains", num_chains, 1)
    num_warmup = _check_int("num_warmup", num_warmup, 0)
    thin = _check_int("thin", thin, 1)
    if num_draws % num_chains:
        raise ValueError(
            f"num_draws must be a multiple of num_chains = {num_chains}, got {num_draws}"
        )
    if num_bins is None:
        cap = max(2, min(20, num_replications // 10))
        num_bins = max(b for b in range(1, cap + 1) if (num_draws + 1) % b == 0)
        if num_bins < 2:  # num_draws + 1 prime and > cap: unequal bins are fine too
            num_bins = min(cap, num_draws + 1)
    else:
        num_bins = _check_int("num_bins", num_bins, 2)
        if num_bins > num_draws + 1:
            raise ValueError(f"num_bins must be at most num_draws + 1 = {num_draws + 1}, got {num_bins}")
    if not (isinstance(alpha, (int, float)) and not isinstance(alpha, bool) and 0.0 < alpha < 1.0):
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if test_functions is None:
        test_functions = recorded_test_functions(kernel, data)
    if not isinstance(test_functions, Mapping) or len(test_functions) == 0:
        raise ValueError("test_functions must be a non-empty dict {name: g(state, data)}")
    for name, g in test_functions.items():
        if not isinstance(name, str) or not callable(g):
            raise ValueError(
                f"test_functions must map names (str) to callables g(state, data); got {name!r}: {g!r}"
            )
    key = _as_key(seed)
    fdtype = _float_dtype()
    combine, dynamic_of = _data_template(data)
    draws_per_chain = num_draws // num_chains

    def g_vector(state, dyn):
        d = combine(dyn)
        return jnp.concatenate(
            [jnp.ravel(jnp.asarray(g(state, d))).astype(fdtype) for g in test_functions.values()]
        )

    def strong(tree):
        return jax.tree_util.tree_map(lambda x: _strong(jnp.asarray(x)), tree)

    def like(new, old):
        if jax.tree_util.tree_structure(new) != jax.tree_util.tree_structure(old):
            raise ValueError("kernel.step changed the state's structure")
        return jax.tree_util.tree_map(
            lambda n, o: lax.convert_element_type(jnp.asarray(n), o.dtype), new, old
        )

    def replication(k):
        k_prior, k_sim, k_chains = jax.random.split(k, 3)
        theta = strong(kernel.sample_prior(k_prior, data))
        dyn = dynamic_of(kernel.simulate_data(k_sim, theta, data))
        y = combine(dyn)
        g_true = g_vector(theta, dyn)

        def chain(kc):
            k_init, k_run = jax.random.split(kc)
            state = strong(kernel.init(k_init, y))

            def advance(t, s):
                return like(kernel.step(jax.random.fold_in(k_run, t), s, y), s)

            state = lax.fori_loop(0, num_warmup, advance, state)

            def draw(carry, i):
                s, below, equal = carry
                start = num_warmup + i * thin
                s = lax.fori_loop(start, start + thin, advance, s)
                g = g_vector(s, dyn)
                return (s, below + (g < g_true), equal + (g == g_true)), None

            zeros = jnp.zeros(g_true.shape, jnp.int32)
            (_, below, equal), _ = lax.scan(draw, (state, zeros, zeros), jnp.arange(draws_per_chain))
            return below, equal

        below, equal = jax.vmap(chain)(jax.random.split(k_chains, num_chains))
        return below.sum(0), equal.sum(0)

    @jax.jit
    def run(key):
        keys = jax.vmap(lambda i: jax.random.fold_in(key, i))(jnp.arange(num_replications))
        return jax.vmap(replication)(keys)

    theta_s = jax.eval_shape(kernel.sample_prior, jax.random.key(0), data)
    out_shapes = jax.eval_shape(
        lambda s, d: {n: jnp.asarray(g(s, d)) for n, g in test_functions.items()}, theta_s, data
    )
    names = tuple(
        n for name in test_functions for n in _element_names(name, tuple(out_shapes[name].shape))
    )

    below, equal = (np.asarray(a, dtype=np.int64) for a in run(key))
    # Ties (discrete quantities): the true value's position among the equal draws is uniform.
    tie_rng = np.random.default_rng(np.asarray(jax.random.key_data(key)).ravel().tolist())
    ranks = below + np.floor(tie_rng.random(equal.shape) * (equal + 1)).astype(np.int64)

    probs = np.bincount(
        _rank_bin_of(np.arange(num_draws + 1), num_draws, num_bins), minlength=num_bins
    ) / (num_draws + 1)
    bins = _rank_bin_of(ranks, num_draws, num_bins)
    stats_, pvals = [], []
    for j in range(ranks.shape[1]):
        res = chi_square_test(np.bincount(bins[:, j], minlength=num_bins), probs)
        stats_.append(res.statistic)
        pvals.append(res.p_value)
    return SBCResult(
        names=names,
        ranks=ranks,
        num_draws=num_draws,
        num_bins=num_bins,
        statistics=np.asarray(stats_, dtype=np.float64),
        p_values=np.asarray(pvals, dtype=np.float64),
        alpha=float(alpha),
        kernel_name=getattr(kernel, "name", "kernel"),
    )


def plot_sbc_ranks(result: SBCResult, names: Any = None, *, ncols: int = 4, band: float = 0.99, axes=None):
    """Rank histograms of an :class:`SBCResult`, one panel per test function.

    Each panel shows the binned ranks with the expected count (line) and the
    central ``band`` interval of a bin's count under uniformity (grey;
    binomial, so about ``1 - band`` of the bins fall outside by chance).
    Histograms that sag in the middle (∪) mean posteriors too narrow, a hump
    (∩) too wide, a slope a biased posterior.

    Parameters
    ----------
    result : SBCResult
        The result of :func:`sbc`.
    names : str or list of str, optional
        A subset of ``result.names`` (default all, at most 16 panels).
    ncols : int, default 4
        Panels per row.
    band : float, default 0.99
        The probability of the grey band, in (0, 1).
    axes : array of matplotlib.axes.Axes, optional
        Axes to draw in (default: a new figure).

    Returns
    -------
    matplotlib.figure.Figure
        The figure.

    Examples
    --------
    >>> fig = plot_sbc_ranks(result, ["theta"])     # doctest: +SKIP
    """
    import matplotlib.pyplot as plt  # lazy: only for plotting

    if names is None:
        names = list(result.names[:16])
    elif isinstance(names, str):
        names = [names]
    index = []
    for n in names:
        if n not in result.names:
            raise ValueError(f"names: {n!r} is not a test function of this result; have {result.names[:10]}...")
        index.append(result.names.index(n))
    if not 0 < band < 1:
        raise ValueError(f"band must be in (0, 1), got {band!r}")
    counts = result.bin_counts()
    probs = result.bin_probabilities()
    n = result.num_replications
    lo = stats.binom.ppf((1 - band) / 2, n, probs)
    hi = stats.binom.ppf(1 - (1 - band) / 2, n, probs)
    if axes is None:
        ncols = max(1, min(int(ncols), len(index)))
        nrows = -(-len(index) // ncols)
        fig, axes = plt.subplots(nrows, ncols, figsize=(3.2 * ncols, 2.4 * nrows), squeeze=False)
        axes = list(np.ravel(axes))
    else:
        axes = list(np.ravel(axes))
        fig = axes[0].figure
    x = np.arange(result.num_bins)
    for ax, j in zip(axes, index):
        ax.fill_between(x, lo, hi, step="mid", color="0.85", label=f"{band:.0%} band")
        ax.bar(x, counts[j], width=0.9, color="C0" if not result.failed[j] else "C3")
        ax.step(x, n * probs, where="mid", color="k", lw=1)
        ax.set_title(f"{result.names[j]}  (p = {result.p_values[j]:.2g})", fontsize=9)
        ax.set_xticks([])
    for ax in axes[len(index):]:
        ax.set_visible(False)
    fig.tight_layout()
    return fig
