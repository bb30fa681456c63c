"""LDA's learned priors: α and η with gamma hyperpriors, sampled in the sweep.

With ``learn_alpha``/``learn_eta`` (see :func:`~gibbsjax.models.lda.partially_collapsed`) the state is an
:class:`LDALearnedState`: the concentrations join the sweep.  Hyperpriors are gamma
distributions on every concentration, α ~ Gamma(a_α, b_α) (per topic: α_k iid) and
η ~ Gamma(a_η, b_η), shape a and rate b.  The conditionals below are exact given the
other state components at the point of the sweep where they run:

* log α | z, with θ integrated out (θ is never part of the state):
  p(α | z) ∝ p(α) Π_d Γ(Σα)/Γ(n_d + Σα) Π_k Γ(n_dk + α_k)/Γ(α_k);
  α ⟂ (φ, η, w) given z, so this is α's full conditional.
* log η | z, with φ integrated out:
  p(η | z, w) ∝ p(η) Π_k Γ(Vη)/Γ(n_k + Vη) Π_w Γ(n_kw + η)/Γ(η),
  always immediately followed by φ | z, η: the pair is one blocked draw of (η, φ) from
  p(η, φ | z, w) (the old φ is not used), which leaves the posterior invariant and
  mixes far better than η | φ (φ's V·K entries pin η down).

Both are sampled by slice sampling on the log concentration (Neal 2003, Ann. Statist.
31(3) 705-767, §4: stepping out, shrinkage; :mod:`~gibbsjax.models.lda.slice_sampling`),
with the Jacobian of the log transform: the density of u = log α is p(α = e^u | ·) e^u.  Log densities are sums over
histograms of the counts (how many documents have n_dk = n, ...), so an evaluation
costs O(longest document), not O(D·K) or O(K·V), and differences of log Γ are formed
without cancelling two large numbers (:func:`log_rising_shift`), so they stay accurate in
float32 on big corpora.

Also :func:`minka_log_alpha`, Minka's fixed point for α (a point estimate, for warm-up only),
and :func:`log_joint_learned`, the log joint of a learned state.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import digamma, gammaln

from gibbsjax import conjugate as cj
from gibbsjax._checks import check_choice, check_positive
from gibbsjax.models.lda.layout import LDAData, num_docs_of, topic_counts, vocab_size_of
from gibbsjax.models.lda.slice_sampling import SLICE_MAX_SHRINKS, SLICE_MAX_STEPS_OUT, SLICE_WIDTH, slice_sample

__all__ = [
    "LDALearnedState",
    "LearnedPriors",
    "LEARN_ALPHA",
    "SLICE_WIDTH",
    "SLICE_MAX_STEPS_OUT",
    "SLICE_MAX_SHRINKS",
    "HISTOGRAM_CAP",
    "MINKA_ITERATIONS",
    "MINKA_MIN_ALPHA",
    "learned_priors",
    "slice_sample",
    "log_rising_shift",
    "rising_sum",
    "CountSummary",
    "count_summary",
    "summary_terms",
    "sample_log_alpha",
    "sample_log_eta",
    "minka_log_alpha",
    "log_joint_learned",
]

class LDALearnedState(NamedTuple):
    """The LDA state when α or η is learned (kernels with fixed priors keep :class:`LDAState`).

    A concentration that is not learned stays at its given value.

    Parameters
    ----------
    z, log_phi : jax.Array
        As in :class:`~gibbsjax.models.lda.LDAState`.
    log_alpha : jax.Array
        log α: shape () symmetric, (K,) one per topic.
    log_eta : jax.Array
        log η, shape ().

    Examples
    --------
    >>> import jax
    >>> from gibbsjax.datasets import abc_corpus
    >>> from gibbsjax.models import lda
    >>> d = lda.data(abc_corpus())
    >>> state = lda.partially_collapsed(2, learn_eta=True).init(jax.random.key(0), d)
    >>> type(state).__name__
    'LDALearnedState'
    """

    z: jax.Array
    log_phi: jax.Array
    log_alpha: jax.Array
    log_eta: jax.Array


class LearnedPriors(NamedTuple):
    """Which concentrations a kernel learns, and their gamma hyperpriors; built by :func:`learned_priors`.

    Parameters
    ----------
    alpha : {"fixed", "sample", "minka"}
        Slice-sampled in every sweep, or Minka's fixed point during warm-up only, then fixed.
    asymmetric : bool
        One α_k per topic instead of one α.
    eta : bool
        Whether η is sampled.
    alpha_prior, eta_prior : tuple of float
        (shape, rate) of the gamma hyperprior of α (of each α_k) and of η.

    Examples
    --------
    >>> from gibbsjax.models.lda.priors import learned_priors
    >>> priors = learned_priors(learn_eta=True)
    >>> type(priors).__name__, priors._fields
    ('LearnedPriors', ('alpha', 'asymmetric', 'eta', 'alpha_prior', 'eta_prior'))
    """

    alpha: str = "fixed"
    asymmetric: bool = False
    eta: bool = False
    alpha_prior: tuple[float, float] = (1.0, 1.0)
    eta_prior: tuple[float, float] = (1.0, 1.0)


#: ways to learn α (``learn_alpha``): keep it, sample it, or Minka's fixed point during warm-up
LEARN_ALPHA = ("fixed", "sample", "minka")
#: count histograms (:func:`count_summary`) have bins 0..min(S, HISTOGRAM_CAP); larger counts are listed
HISTOGRAM_CAP = 4096
#: Minka fixed-point iterations per warm-up sweep, and the floor it keeps α_k above
MINKA_ITERATIONS = 5
MINKA_MIN_ALPHA = 1e-5
#: from here on :func:`log_rising_shift` uses Stirling's series (its truncation error < 3e-10)
_STIRLING_MIN = 8.0


def learned_priors(learn_alpha: str = "fixed", asymmetric_alpha: bool = False, learn_eta: bool = False,
                   alpha_prior=(1.0, 1.0), eta_prior=(1.0, 1.0)) -> LearnedPriors | None:
    """Validate the learned-prior options of the LDA factories.

    Parameters
    ----------
    learn_alpha, asymmetric_alpha, learn_eta, alpha_prior, eta_prior
        As for :func:`~gibbsjax.models.lda.partially_collapsed`.

    Returns
    -------
    LearnedPriors or None
        ``None`` when nothing is learned.

    Raises
    ------
    ValueError
        For an unknown ``learn_alpha``, a flag that is not a bool, ``asymmetric_alpha``
        with a fixed α, or a hyperprior that is not a pair of positive numbers.

    Examples
    --------
    >>> learned_priors()
    >>> learned_priors("sample", learn_eta=True, eta_prior=[2, 20]).eta_prior
    (2.0, 20.0)
    """
    learn_alpha = check_choice("learn_alpha", learn_alpha, LEARN_ALPHA)
    for name, flag in (("asymmetric_alpha", asymmetric_alpha), ("learn_eta", learn_eta)):
        if not isinstance(flag, (bool, np.bool_)):
            raise ValueError(f"{name} must be True or False, got {flag!r}")
    if asymmetric_alpha and learn_alpha == "fixed":
        raise ValueError("asymmetric_alpha=True needs a learned alpha (learn_alpha='sample' or 'minka'): "
                         "a fixed alpha is one symmetric concentration")
    priors = []
    for name, value in (("alpha_prior", alpha_prior), ("eta_prior", eta_prior)):
        if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != 2:
            raise ValueError(f"{name} must be a pair (shape, rate) of a gamma hyperprior, got {value!r}")
        priors.append((check_positive(f"{name}[0] (shape)", value[0]), check_positive(f"{name}[1] (rate)", value[1])))
    if learn_alpha == "fixed" and not learn_eta:
        return None
    return LearnedPriors(learn_alpha, bool(asymmetric_alpha), bool(learn_eta), *priors)


def _stirling_tail(x):
    """log Γ(x) − [(x − ½) log x − x + ½ log 2π] for x ≥ 8: 1/(12x) − 1/(360x³) + 1/(1260x⁵)."""
    r = 1.0 / (x * x)
    return (1.0 / 12.0 - r * (1.0 / 360.0 - r / 1260.0)) / x


def _log_ratio(p, q, delta):
    """log(p / q) for p = q + δ > 0, q > 0: log1p(δ / q) near 1, a difference of logs far from it."""
    r = delta / q
    return jnp.where(r > -0.5, jnp.log1p(r), jnp.log(p) - jnp.log(q))


def _stirling_shift(y0, y1, delta):
    """log Γ(y1) − log Γ(y0) for y0, y1 = y0 + δ ≥ 8, by Stirling's series written as a
    difference, (y0 − ½) log(y1/y0) + δ (log y1 − 1) + t(y1) − t(y0): every term is of the
    size of the result, whereas two log Γ of size y log y, subtracted, would lose it to
    float32 rounding on long documents."""
    return (y0 - 0.5) * _log_ratio(y1, y0, delta) + delta * (jnp.log(y1) - 1.0) \
        + _stirling_tail(y1) - _stirling_tail(y0)


def log_rising_shift(n, a0, delta, a):
    """[log Γ(n + a) − log Γ(a)] − [log Γ(n + a0) − log Γ(a0)] for counts n ≥ 0 and a0 > 0,
    a = a0 + δ > 0 (both given, each accurately): the change of the log rising factorial, the
    Pólya term of one count n; exactly 0 for n = 0.  Scalar parameters with counts of any
    shape, or parameters of shape (G,) with counts (G, L), one group per row.

    Below m = 8 it is the sum Σ_{j<n} log((a + j)/(a0 + j)) (cumulative sums of 8 terms);
    from 8 on, Stirling differences (:func:`_stirling_shift`) at n + a0 and at a0 + m,
    with the same m terms for log Γ(a + m) − log Γ(a): accurate to float32 rounding of
    the result's own size.

    >>> from scipy.special import gammaln as lg
    >>> v = log_rising_shift(jnp.float32(5000.0), jnp.float32(0.1), jnp.float32(0.002), jnp.float32(0.102))
    >>> bool(abs(float(v) - (lg(5000.102) - lg(0.102) - lg(5000.1) + lg(0.1))) < 1e-6)
    True
    """
    a0, delta, a = jnp.asarray(a0), jnp.asarray(delta), jnp.asarray(a)
    n = jnp.asarray(n)
    if a0.ndim == 0:  # one group
        out = log_rising_shift(n.reshape(1, -1), a0[None], jnp.reshape(delta, (1,)), jnp.reshape(a, (1,)))
        return out.reshape(n.shape)
    m = int(_STIRLING_MIN)
    a0, delta, a = a0[:, None], delta[:, None], a[:, None]  # (G, 1)
    j = jnp.arange(m, dtype=jnp.result_type(a0, delta))
    steps = jnp.cumsum(_log_ratio(a + j, a0 + j, delta), axis=-1)  # (G, m)
    rising = jnp.concatenate([jnp.zeros_like(steps[:, :1]), steps], axis=-1)  # (G, m + 1): n = 0..m
    small = n < m
    nf = jnp.where(small, m, n).astype(j.dtype)
    large = _stirling_shift(nf + a0, nf + a, delta) - _stirling_shift(a0 + m, a + m, delta) + rising[:, m:]
    index = jnp.broadcast_to(jnp.clip(n, 0, m).astype(jnp.int32), large.shape)
    return jnp.where(small, jnp.take_along_axis(rising, index, axis=-1), large)


def rising_sum(*groups):
    """Σ over groups (n, w, a0, δ, a) of Σ_l w_l · :func:`log_rising_shift` (n_l; a0, δ, a):
    the Pólya terms of several count tables, each with its parameters and weights (how often
    each count occurs, with a sign), in one call, so a density is one compiled expression."""
    length = max(int(g[0].shape[0]) for g in groups)
    dtype = jnp.result_type(*(g[2] for g in groups))

    def pad(x, dt):
        x = jnp.asarray(x, dt)
        return jnp.pad(x, (0, length - x.shape[0]))

    n = jnp.stack([pad(g[0], jnp.int32) for g in groups])
    w = jnp.stack([pad(g[1], dtype) for g in groups])
    a0, delta, a = (jnp.stack([jnp.asarray(g[i], dtype) for g in groups]) for i in (2, 3, 4))
    return jnp.sum(w * log_rising_shift(n, a0, delta, a))


class CountSummary(NamedTuple):
    """A table of non-negative counts with row labels, as histograms: ``hist[r, n]`` entries of
    row r equal n (n ≤ cap), and the (at most ``max_big``) entries above cap listed with their rows
    (``big``, ``big_row``; unused slots hold count 0).

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> from gibbsjax.models.lda.priors import count_summary
    >>> summary = count_summary(jnp.array([0, 1, 1, 5]), jnp.array([0, 0, 1, 1]), num_rows=2, cap=2, max_big=1)
    >>> summary.hist.tolist(), summary.big.tolist(), summary.big_row.tolist()
    ([[1, 1, 0], [0, 1, 0]], [5], [1])
    """

    hist: jax.Array
    big: jax.Array
    big_row: jax.Array


def _summary_sizes(d: LDAData) -> tuple[int, int]:
    """(cap, max_big): every count here is at most the longest document ≤ S, or a word's count;
    at most S·R / (cap + 1) entries of a table summing to N ≤ S·R can exceed cap."""
    s, r = d.words.shape
    cap = min(s, HISTOGRAM_CAP)
    return cap, max(1, (s * r) // (cap + 1))


def count_summary(values, rows, num_rows: int, cap: int, max_big: int) -> CountSummary:
    """Count histograms per row for the counts up to ``cap``, and the larger counts listed apart.

    Parameters
    ----------
    values : jax.Array
        The counts (non-negative integers).
    rows : jax.Array
        The row of each count, in ``[0, num_rows)``.
    num_rows : int
        The number of rows.
    cap : int
        The largest count kept in the histograms.
    max_big : int
        How many counts above ``cap`` there can be at most.

    Returns
    -------
    CountSummary
        ``hist`` (``num_rows`` × ``cap + 1``), and ``big`` and ``big_row``, the counts above
        ``cap`` and their rows (padded with 0 and -1).
    """
    small = values <= cap
    hist = cj.counts((rows, jnp.where(small, values, 0)), (num_rows, cap + 1), small)
    if max_big == 0:  # no entry can exceed cap
        empty = jnp.zeros((0,), values.dtype)
        return CountSummary(hist, empty, empty.astype(jnp.int32))
    (idx,) = jnp.nonzero(~small, size=max_big, fill_value=0)
    used = jnp.arange(max_big) < jnp.sum(~small)
    return CountSummary(hist, jnp.where(used, values[idx], 0), jnp.where(used, rows[idx], -1))


def summary_terms(summary: CountSummary, row=None):
    """(counts, weights) listing a table's entries (of one ``row``, or all): every count
    0..cap with how many entries have it, then each count above cap once."""
    cap = summary.hist.shape[-1] - 1
    hist = summary.hist.sum(axis=0) if row is None else summary.hist[row]
    in_row = summary.big > 0 if row is None else summary.big_row == row
    return (jnp.concatenate([jnp.arange(cap + 1, dtype=jnp.int32), summary.big.astype(jnp.int32)]),
            jnp.concatenate([hist, in_row.astype(hist.dtype)]))


def _doc_topic_summaries(state, d: LDAData, K: int) -> tuple[CountSummary, CountSummary]:
    """Summaries of n_dk (rows: topics) and of the document lengths n_d (one row)."""
    ndk, _, _ = topic_counts(state.z, d, K)
    cap, max_big = _summary_sizes(d)
    if cap >= d.words.shape[0]:  # n_dk ≤ n_d ≤ S: every count fits the histogram
        max_big = 0
    counts = ndk[:-1]
    topics = jnp.broadcast_to(jnp.arange(K, dtype=jnp.int32), counts.shape)
    by_topic = count_summary(counts.reshape(-1), topics.reshape(-1), K, cap, max_big)
    lengths = count_summary(d.doc_lengths, jnp.zeros_like(d.doc_lengths), 1, cap, max_big)
    return by_topic, lengths


def _log_prior_shift(u, u0, prior):
    """log of the Gamma(shape, rate) density of e^u times the Jacobian e^u, minus the same at u0:
    shape (u − u0) − rate (e^u − e^u0)."""
    shape, rate = prior
    return shape * (u - u0) - rate * jnp.exp(u0) * jnp.expm1(u - u0)


def sample_log_alpha(key, state: LDALearnedState, d: LDAData, *, K: int, prior=(1.0, 1.0)):
    """log α | z, θ integrated out, by slice sampling (:func:`slice_sample`):
    p(α | z) ∝ Gamma(α; a, b) Π_d Γ(Σα)/Γ(n_d + Σα) Π_k Γ(n_dk + α_k)/Γ(α_k), on u = log α
    (density times the Jacobian e^u).

    ``state.log_alpha`` of shape () is one symmetric α (α_k = α for every k); of shape
    (K,) one α_k per topic, a ~ Gamma(shape, rate) each independently (equivalently
    Σα ~ Gamma(K·shape, rate) and α/Σα ~ Dir(shape, ..., shape), a base measure), updated
    one coordinate after another (each coordinate's conditional given the others).

    Parameters
    ----------
    key : jax.Array
        PRNG key.
    state : LDALearnedState
        The current state (its topics and log α are read).
    d : LDAData
        The packed corpus (:func:`~gibbsjax.models.lda.data`).
    K : int
        Number of topics.
    prior : tuple of float, default (1.0, 1.0)
        (shape, rate) of α's gamma hyperprior.

    Returns
    -------
    jax.Array
        The new log α, of ``state.log_alpha``'s shape.

    Examples
    --------
    >>> from gibbsjax.models import lda
    >>> from gibbsjax.corpus import Corpus
    >>> d = lda.data(Corpus.from_token_lists([["a", "b", "a"], ["c", "b"]]))
    >>> s = lda.partially_collapsed(2, learn_alpha="sample").init(jax.random.key(0), d)
    >>> sample_log_alpha(jax.random.key(1), s, d, K=2).shape
    ()
    """
    by_topic, lengths = _doc_topic_summaries(state, d, K)
    u0 = state.log_alpha
    if u0.ndim == 0:
        alpha0 = jnp.exp(u0)

        tokens, docs = summary_terms(by_topic), summary_terms(lengths, row=0)

        def ratio(u):
            delta, a = alpha0 * jnp.expm1(u - u0), jnp.exp(u)
            return _log_prior_shift(u, u0, prior) + rising_sum(
                (*tokens, alpha0, delta, a), (docs[0], -docs[1], K * alpha0, K * delta, K * a))

        return slice_sample(key, u0, ratio)

    def one_topic(log_alpha, x):
        k, key_k = x
        alpha = jnp.exp(log_alpha)
        uk, ak = log_alpha[k], alpha[k]
        total = jnp.sum(alpha)
        others = total - ak

        tokens = summary_terms(by_topic, row=k)

        def ratio(u):
            delta, a = ak * jnp.expm1(u - uk), jnp.exp(u)
            return _log_prior_shift(u, uk, prior) + rising_sum(
                (*tokens, ak, delta, a), (docs[0], -docs[1], total, delta, others + a))

        return log_alpha.at[k].set(slice_sample(key_k, uk, ratio)), None

    docs = summary_terms(lengths, row=0)
    log_alpha, _ = jax.lax.scan(one_topic, u0, (jnp.arange(K), jax.random.split(key, K)))
    return log_alpha


def sample_log_eta(key, state: LDALearnedState, d: LDAData, *, K: int, prior=(1.0, 1.0)):
    """log η | z, w, φ integrated out, by slice sampling (:func:`slice_sample`):
    p(η | z, w) ∝ Gamma(η; a, b) Π_k Γ(Vη)/Γ(n_k + Vη) Π_w Γ(n_kw + η)/Γ(η), on u = log η.

    It does not look at φ, so a sweep must draw φ | z, η right after it: together they
    draw (η, φ) from p(η, φ | z, w) as one block.

    Parameters
    ----------
    key, state, d, K
        As in :func:`sample_log_alpha` (log η is read, not log α).
    prior : tuple of float, default (1.0, 1.0)
        (shape, rate) of η's gamma hyperprior.

    Returns
    -------
    jax.Array
        The new log η, shape ().

    Examples
    --------
    >>> from gibbsjax.models.lda import data, partially_collapsed
    >>> from gibbsjax.corpus import Corpus
    >>> d = data(Corpus.from_token_lists([["a", "b", "a"], ["c", "b"]]))
    >>> s = partially_collapsed(2, learn_eta=True).init(jax.random.key(0), d)
    >>> sample_log_eta(jax.random.key(1), s, d, K=2).shape
    ()
    """
    _, nkw, nk = topic_counts(state.z, d, K)
    v = vocab_size_of(d)
    cap, max_big = _summary_sizes(d)
    flat = nkw.reshape(-1)
    words = count_summary(flat, jnp.zeros_like(flat), 1, cap, max_big)
    u0 = state.log_eta
    eta0 = jnp.exp(u0)

    cells = summary_terms(words)

    def ratio(u):
        delta, e = eta0 * jnp.expm1(u - u0), jnp.exp(u)
        return _log_prior_shift(u, u0, prior) + rising_sum(
            (*cells, eta0, delta, e), (nk, -jnp.ones(K), v * eta0, v * delta, v * e))

    return slice_sample(key, u0, ratio)


def minka_log_alpha(key, state: LDALearnedState, d: LDAData, *, K: int, iterations: int = MINKA_ITERATIONS):
    """NOT a Gibbs update (a point estimate, for warm-up only): Minka's fixed point for the
    Dirichlet-multinomial maximum likelihood α given z (Minka 2000, "Estimating a Dirichlet
    distribution", eq. 55), ``iterations`` times:
    α_k ← α_k Σ_d [ψ(n_dk + α_k) − ψ(α_k)] / Σ_d [ψ(n_d + Σα) − ψ(Σα)]
    (symmetric, shape (): α ← α Σ_dk [ψ(n_dk + α) − ψ(α)] / (K Σ_d [ψ(n_d + Kα) − ψ(Kα)])),
    kept ≥ :data:`MINKA_MIN_ALPHA`.  tomotopy's α optimisation.

    Parameters
    ----------
    key : jax.Array or None
        Unused (the signature of a sweep's update).
    state, d, K
        As in :func:`sample_log_alpha`.
    iterations : int, default :data:`MINKA_ITERATIONS`
        Fixed-point iterations.

    Returns
    -------
    jax.Array
        The new log α (``state.log_alpha``'s shape).

    Examples
    --------
    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models import lda
    >>> d = lda.data(Corpus.from_token_lists([["a", "b", "a"], ["c", "b"]]))
    >>> s = lda.partially_collapsed(2, learn_alpha="minka", asymmetric_alpha=True).init(jax.random.key(0), d)
    >>> minka_log_alpha(None, s, d, K=2).shape
    (2,)
    """
    del key
    by_topic, lengths = _doc_topic_summaries(state, d, K)
    symmetric = state.log_alpha.ndim == 0
    ns = jnp.arange(by_topic.hist.shape[-1])
    big_topic = jnp.maximum(by_topic.big_row, 0)
    doc_n, doc_w = summary_terms(lengths, row=0)

    def iterate(log_alpha, _):
        alpha = jnp.broadcast_to(jnp.exp(log_alpha), (K,))
        total = jnp.sum(alpha)
        den = jnp.sum(doc_w * (digamma(doc_n + total) - digamma(total)))
        a = alpha[:, None]
        num = jnp.sum(by_topic.hist * (digamma(ns + a) - digamma(a)), axis=1)
        a_big = alpha[big_topic]
        big = jnp.where(by_topic.big_row >= 0, digamma(by_topic.big + a_big) - digamma(a_big), 0.0)
        num = num + jax.ops.segment_sum(big, big_topic, num_segments=K)
        # den is 0 only when ψ(n_d + Σα) − ψ(Σα) rounds to 0 (Σα ≫ n_d): α then stays (not 0/0 = NaN)
        new = jnp.where(den > 0, alpha * num / jnp.where(den > 0, den, 1.0), alpha)
        if symmetric:
            new = jnp.sum(new) / K
        return jnp.log(jnp.maximum(new, MINKA_MIN_ALPHA)).astype(log_alpha.dtype), None

    log_alpha, _ = jax.lax.scan(iterate, state.log_alpha, None, length=iterations)
    return log_alpha


def log_joint_learned(state: LDALearnedState, d: LDAData, *, K: int, priors: LearnedPriors):
    """log p(w, z | α, η) (θ, φ integrated out; α may differ per topic) plus, for each
    sampled concentration, its hyperprior as a density of the log concentration (the
    coordinates the sampler moves): log Gamma(e^u; a, b) + u.

    Parameters
    ----------
    state : LDALearnedState
        The state.
    d : LDAData
        The packed corpus.
    K : int
        Number of topics.
    priors : LearnedPriors
        Which concentrations are sampled, and their hyperpriors.

    Returns
    -------
    jax.Array
        Scalar.

    Examples
    --------
    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models.lda import data, partially_collapsed
    >>> d = data(Corpus.from_token_lists([["a", "b", "a"], ["c", "b"]]))
    >>> s = partially_collapsed(2, learn_eta=True).init(jax.random.key(0), d)
    >>> one = log_joint_learned(s, d, K=2, priors=learned_priors(learn_eta=True, eta_prior=(1.0, 1.0)))
    >>> two = log_joint_learned(s, d, K=2, priors=learned_priors(learn_eta=True, eta_prior=(2.0, 1.0)))
    >>> bool(abs((two - one) - s.log_eta) < 1e-3)   # Gamma(2, 1) over Gamma(1, 1): the factor e^u, u = log η
    True
    """
    ndk, nkw, nk = topic_counts(state.z, d, K)
    v = vocab_size_of(d)
    alpha = jnp.broadcast_to(jnp.exp(state.log_alpha), (K,))
    eta = jnp.exp(state.log_eta)
    total = jnp.sum(alpha)
    nd = d.doc_lengths.astype(alpha.dtype)
    doc_part = jnp.sum(gammaln(ndk[:-1] + alpha)) - jnp.sum(gammaln(nd + total))
    doc_part += num_docs_of(d) * (gammaln(total) - jnp.sum(gammaln(alpha)))
    topic_part = jnp.sum(gammaln(nkw + eta)) - jnp.sum(gammaln(nk + v * eta))
    topic_part += K * (gammaln(v * eta) - v * gammaln(eta))
    out = doc_part + topic_part

    def log_prior(u, prior):
        shape, rate = prior
        return jnp.sum(shape * math.log(rate) - math.lgamma(shape) + shape * u - rate * jnp.exp(u))

    if priors.alpha == "sample":
        out += log_prior(state.log_alpha, priors.alpha_prior)
    if priors.eta:
        out += log_prior(state.log_eta, priors.eta_prior)
    return out
