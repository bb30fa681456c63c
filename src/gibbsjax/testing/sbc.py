"""Simulation-based calibration (Talts et al. 2018): :func:`sbc`, :func:`plot_sbc_ranks`.

Reference: S. Talts, M. Betancourt, D. Simpson, A. Vehtari & A. Gelman (2018), "Validating
Bayesian inference algorithms with simulation-based calibration", arXiv:1804.06788.
"""

from __future__ import annotations

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
from gibbsjax.testing.chi_square import chi_square_test


@dataclass(frozen=True, repr=False)
class SBCResult(BonferroniVerdict):
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

    Examples
    --------
    >>> from gibbsjax.models import normal
    >>> from gibbsjax.testing import sbc
    >>> kernel = normal.semiconjugate(mu0=0.5, sigma0=1.5, a0=3.0, b0=2.0)
    >>> result = sbc(kernel, normal.data([0.1, 0.4, -0.3]), num_replications=20, num_draws=20, seed=0)
    >>> type(result).__name__
    'SBCResult'
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
            As in :meth:`gibbsjax.testing.GewekeResult.summary`.

        Returns
        -------
        str
            The table (its header says whether the test passed).

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
    check_kernel(kernel)
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
    check_kernel(kernel)
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
    key = as_key(seed)
    fdtype = float_dtype()
    combine, dynamic_of = data_template(data)
    draws_per_chain = num_draws // num_chains

    def g_vector(state, dyn):
        d = combine(dyn)
        return jnp.concatenate(
            [jnp.ravel(jnp.asarray(g(state, d))).astype(fdtype) for g in test_functions.values()]
        )

    def strong(tree):
        return jax.tree_util.tree_map(lambda x: strong_dtype(jnp.asarray(x)), tree)

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
        n for name in test_functions for n in element_names(name, tuple(out_shapes[name].shape))
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
        The figure (``axes``' figure when given).

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
