"""Rank-normalised split R-hat, bulk and tail ESS, MCSE and HDI in float64, fast at any chain count.

The statistics of Vehtari, Gelman, Simpson, Carpenter & Bürkner (2021),
"Rank-normalization, folding, and localization: an improved R-hat for assessing
convergence of MCMC", Bayesian Analysis 16(2), with the conventions ArviZ uses
(so :func:`gibbsjax.diagnostics.summary` shows the numbers ``arviz.summary``
shows for float64 draws):

* chains are split in half (the middle draw of an odd count left out);
* rank normalisation: pooled average ranks ``r`` of the ``S`` split draws,
  ``z = Phi^-1((r - 3/8) / (S + 1/4))``; folding: ``|x - median|``;
* R-hat: the larger of the R-hat of ``z`` and of the normalised folded draws;
* ESS: Geyer's initial monotone sequence on the chain-averaged autocorrelations
  (Vehtari et al. eq. 10), bulk on ``z``, tail the smaller ESS of the indicators
  ``x <= q05`` and ``x <= q95``; ``tau`` floored at ``1 / log10(S)``;
* MCSE of the mean ``sd / sqrt(ESS(x))`` and of the sd by the delta method.

Everything is computed in float64 whatever the input dtype: with float32 ranks
(SciPy 1.18 returns them for float32 input) ``(r - 3/8) / (S + 1/4)`` rounds to
1 for the top ranks from about 2**23 draws on and the normal scores become
infinite.  At many chains the cost is memory traffic.  Draws that are float32
numbers of one sign within a narrow range (what a sampler records: 32 M draws of
a posterior take a few million distinct float32 values) are not sorted but
counted: their float32 bits, read as integers, are ordered like the values, so
one ``bincount`` gives the sorted distinct values and their counts, the normal
scores are computed once per distinct value (folded ones after merging the two
halves about the median), and one gather per score puts them in the draws'
order.  Other draws take one 64-bit sort per quantity (values and positions
packed in one key, no ``argsort``), the folded draws sorted by merging the two
halves of that order.  Autocovariances come from direct lag sums while few lags
are needed (FFT otherwise), centred once for R-hat and bulk ESS, and scratch
arrays are reused between quantities (:func:`workspace`).  Given float64 draws the results
agree with ArviZ's to about 1e-12 (not bit for bit: sums run in another order).

>>> import numpy as np
>>> x = np.random.default_rng(0).normal(size=(4, 200))
>>> bool(abs(rank_rhat(x) - 1) < 0.02), bool(ess_bulk(x) > 400)
(True, True)
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

__all__ = ["rank_rhat", "ess_bulk", "ess_tail", "column_summary", "column_summaries", "workspace",
           "SUMMARY_DIAGNOSTICS"]

#: the diagnostic columns of :func:`column_summary`, in ``arviz.summary``'s order
SUMMARY_DIAGNOSTICS = ("mcse_mean", "mcse_sd", "ess_bulk", "ess_tail", "r_hat")

_DIRECT_LAGS = 24        # autocovariance lags summed directly before switching to one FFT
_SMALL = 1 << 15         # below this many values a plain stable argsort is cheaper than packed keys
_FFT_ROWS = 2048         # chains transformed at a time (bounds the FFT's memory)


# ----------------------------------------------------------------------------- sorting and ranks
class _Work:
    """Scratch arrays kept between quantities: at many chains, fresh arrays of a few hundred MB
    cost more (page faults) than the arithmetic done in them."""

    def __init__(self):
        self._bufs: dict[str, np.ndarray] = {}
        self._tables: dict[int, np.ndarray] = {}
        self._arange = np.arange(0, dtype=np.uint64)

    def get(self, tag: str, n: int, dtype=np.float64) -> np.ndarray:
        dtype = np.dtype(dtype)
        buf = self._bufs.get(tag)
        if buf is None or buf.nbytes < n * dtype.itemsize:
            buf = self._bufs[tag] = np.empty(n * dtype.itemsize, dtype=np.uint8)
        return buf[: n * dtype.itemsize].view(dtype)

    def arange(self, n: int) -> np.ndarray:
        """``0..n-1`` as uint64 (kept)."""
        if self._arange.size < n:
            self._arange = np.arange(n, dtype=np.uint64)
        return self._arange[:n]

    def table(self, n: int) -> np.ndarray:
        """Normal scores of the ranks ``1..n`` without ties (kept for the next quantity)."""
        from scipy.special import ndtri

        if n not in self._tables:
            self._tables = {n: ndtri((np.arange(1, n + 1, dtype=np.float64) - 0.375) / (n + 0.25))}
        return self._tables[n]


# ----------------------------------------------------------------------------- ranks by counting
_COUNT_RANGE = 1         # count values when their float32 keys span at most this many times the draws (+ 2**20)


class _Runs:
    """Ascending values given as their distinct ``values`` and how often each occurs (``counts``):
    what the sorted draws are when they were counted rather than sorted."""

    def __init__(self, values: np.ndarray, counts: np.ndarray):
        self.values = values
        self.counts = counts
        self.cum = np.cumsum(counts)
        self.size = int(self.cum[-1])

    def __getitem__(self, k: int) -> float:
        k = k + self.size if k < 0 else k
        return float(self.values[int(np.searchsorted(self.cum, k, side="right"))])

    def count(self, v: float, side: str) -> int:
        """``np.searchsorted`` of the expanded values: how many are below ``v`` (``"left"``) or at most ``v``."""
        j = int(np.searchsorted(self.values, v, side=side))
        return int(self.cum[j - 1]) if j else 0

    def hdi(self, width: int) -> tuple[float, float]:
        """The first narrowest ``[s[i], s[i + width]]``: it starts where a run of equal values starts."""
        starts = self.cum - self.counts
        starts = starts[starts + width < self.size]
        end = np.searchsorted(self.cum, starts + width, side="right")
        lo = int(np.argmin(self.values[end] - self.values[: starts.size]))
        return float(self.values[lo]), float(self.values[end[lo]])


def _at(s, k: int) -> float:
    return s[k] if isinstance(s, _Runs) else float(s[k])


def _count(s, v: float, side: str) -> int:
    return s.count(v, side) if isinstance(s, _Runs) else int(np.searchsorted(s, v, side=side))


def _float32_keys(v: np.ndarray, work: _Work, raw: np.ndarray | None, exact: bool):
    """Offsets of the float32 keys of the float64 values ``v`` from the smallest key (intp, ``v``'s
    order, increasing with the value), and how to turn offsets back into values (sign, base),
    or None where the values are not all float32 numbers of one sign (``raw``: ``v`` as float32;
    ``exact``: ``v`` known to hold float32 numbers) or their keys span too wide a range to count.

    A positive float32's bits, read as an integer, grow with its value; a negative one's shrink
    (the sign bit set): one subtraction orders either."""
    n = v.size
    if raw is None:
        raw = work.get("z", n, np.float32)                    # (free until the scores go there)
        np.copyto(raw, v, casting="same_kind")
        if not exact:
            same = work.get("zf", n, bool)
            np.equal(raw, v, out=same)
            if not same.all():
                return None
    bits = raw.view(np.int32)
    lo, hi = int(bits.min()), int(bits.max())
    if not (lo > 0 or hi < 0) or lo == -(1 << 31):           # zero (-0.0 too) or both signs
        return None
    if hi - lo >= _COUNT_RANGE * n + (1 << 20):
        return None
    offset = work.get("flip", n, np.intp)                   # intp once, for bincount and take
    if lo > 0:
        np.subtract(bits, lo, out=offset, dtype=np.intp)
        return offset, 1, lo
    np.subtract(hi, bits, out=offset, dtype=np.intp)
    return offset, -1, hi


def _key_values(offsets: np.ndarray, sign: int, base: int) -> np.ndarray:
    """float64 values of key offsets from :func:`_float32_keys`."""
    return (base + sign * offsets.astype(np.int64)).astype(np.int32).view(np.float32).astype(np.float64)


def _run_scores(values: np.ndarray, counts: np.ndarray, n: int) -> np.ndarray:
    """Normal scores of ``values`` (ascending, equal neighbours allowed) occurring ``counts`` times
    among ``n``: each equal group gets the score of its average rank."""
    from scipy.special import ndtri

    new = np.empty(values.size, bool)
    new[0] = True
    np.not_equal(values[1:], values[:-1], out=new[1:])
    if new.all():
        size, group = counts, None
    else:
        first = np.flatnonzero(new)
        size = np.add.reduceat(counts, first)
        group = np.cumsum(new) - 1
    start = np.cumsum(size) - size                           # 0-based rank of each group's first value
    scores = ndtri(((2 * start + size + 1) / 2.0 - 0.375) / (n + 0.25))
    return scores if group is None else scores[group]


def _counted(v: np.ndarray, work: _Work, raw: np.ndarray | None, exact: bool):
    """The sorted values of ``v`` (1-d float64) as :class:`_Runs`, found by counting their float32
    keys instead of sorting, with what :func:`_counted_scores` and :func:`_all_runs` need;
    None where :func:`_float32_keys` finds no keys to count."""
    found = _float32_keys(v, work, raw, exact)
    if found is None:
        return None
    offset, sign, base = found
    counts = np.bincount(offset)
    where = np.flatnonzero(counts)                           # key offsets of the distinct values
    runs = _Runs(_key_values(where, sign, base), counts[where])
    return runs, offset, where, (sign, base)


def _counted_scores(runs: _Runs, m: float, offset: np.ndarray, where: np.ndarray, work: _Work):
    """Normal scores and folded normal scores (about ``m``) of the counted values, in their order
    (two contiguous arrays), and the range of the normal scores."""
    u, c, n = runs.values, runs.counts, runs.size
    z = _run_scores(u, c, n)
    k = int(np.searchsorted(u, m, side="left"))
    folded = np.concatenate((m - u[:k][::-1], u[k:] - m))   # two ascending runs: a stable sort merges them
    order = np.argsort(folded, kind="stable")
    zf = np.empty(u.size)
    zf[order] = _run_scores(folded[order], np.concatenate((c[:k][::-1], c[k:]))[order], n)
    zf[:k] = zf[:k][::-1].copy()                            # back to the order of u
    table = work.get("table", int(where[-1]) + 1)
    out = _Scores(work.get("z", offset.size), work.get("zf", offset.size))
    for values, target in ((z, out.real), (zf, out.imag)):
        table[where] = values
        np.take(table, offset, out=target)
    return out, float(z[-1] - z[0])


def _all_runs(x: np.ndarray, runs: _Runs, where: np.ndarray, key: tuple[int, int]):
    """Runs of every draw of ``x`` (chain, draw) given the runs of its split chains (odd draw count:
    the middle draws were left out); None when a middle draw is not a float32 number of their sign."""
    sign, base = key
    middle = x[:, x.shape[1] // 2]
    f = middle.astype(np.float32)
    bits = f.view(np.int32).astype(np.int64)
    if not np.array_equal(f, middle) or not (np.all(bits > 0) if sign > 0 else np.all((bits < 0) & (bits > -(1 << 31)))):
        return None
    offsets, at = np.unique(np.concatenate((where, sign * (bits - base))), return_inverse=True)
    counts = np.bincount(at, weights=np.concatenate((runs.counts, np.ones(f.size)))).astype(np.int64)
    return _Runs(_key_values(offsets, sign, base), counts)


class _Scores(NamedTuple):
    """Normal scores (``real``) and folded normal scores (``imag``), each contiguous."""

    real: np.ndarray
    imag: np.ndarray

    def reshape(self, *shape):
        return _Scores(self.real.reshape(*shape), self.imag.reshape(*shape))


# ----------------------------------------------------------------------------- sorting and ranks
def _sort_order(v: np.ndarray, work: _Work) -> tuple[np.ndarray, np.ndarray]:
    """Positions that sort ``v`` (1-d float64, no NaN) ascending, tied values in any order,
    and the sorted values.

    For many values: the top bits of an order-preserving integer key with the
    position in the low bits, sorted as one uint64 (a plain sort, much faster
    than ``argsort``).  Where the key keeps every bit of the values (float32
    draws, for instance) the sorted values come back from the keys; otherwise
    runs whose truncated keys collide but whose values differ are sorted exactly.
    """
    n = v.size
    if n < _SMALL:
        order = np.argsort(v, kind="stable")
        return order, v[order]
    bits = max(1, (n - 1).bit_length())
    low = np.uint64((1 << bits) - 1)
    key = work.get("key", 2 * n, np.uint64)[:n]      # room for the complex scores later
    flip = work.get("flip", n, np.int64)
    lossless = not np.bitwise_and(v.view(np.uint64), low, out=key).any()   # low bits of every value zero
    # order-preserving key: negative floats have every bit flipped, others the sign bit set
    np.right_shift(v.view(np.int64), 63, out=flip)
    np.bitwise_or(flip, np.int64(-(1 << 63)), out=flip)
    np.bitwise_xor(v.view(np.uint64), flip.view(np.uint64), out=key)
    np.bitwise_and(key, ~low, out=key)
    np.bitwise_or(key, work.arange(n), out=key)
    key.sort()
    order = work.get("order", n, np.intp)
    np.bitwise_and(key, low, out=order.view(np.uint64))
    s = work.get("sorted", n)
    if lossless:
        np.bitwise_and(key, ~low, out=key)
        np.invert(key, out=flip.view(np.uint64))
        np.right_shift(flip, 63, out=flip)
        np.bitwise_or(flip, np.int64(-(1 << 63)), out=flip)
        np.bitwise_xor(key, flip.view(np.uint64), out=s.view(np.uint64))
        np.bitwise_and(s.view(np.uint64), ~low, out=s.view(np.uint64))       # negatives: low bits back to 0
        return order, s
    np.take(v, order, out=s)
    bad = s[1:] < s[:-1]
    if bad.any():  # only inside runs of equal truncated keys
        top = key >> np.uint64(bits)
        run = np.cumsum(np.concatenate(([True], top[1:] != top[:-1]))) - 1
        at = np.flatnonzero(np.isin(run, np.unique(run[1:][bad])))
        sub = order[at]
        order[at] = sub[np.argsort(v[sub], kind="stable")]
        np.take(v, order, out=s)
    return order, s


def _sorted_scores(s: np.ndarray, work: _Work, out: np.ndarray) -> np.ndarray:
    """Normal scores ``Phi^-1((r - 3/8) / (S + 1/4))`` of the ascending values ``s`` into ``out``,
    ``r`` their average ranks (ties share the score of their average rank)."""
    from scipy.special import ndtri

    n = s.size
    new = work.get("new", n - 1, bool)
    np.not_equal(s[1:], s[:-1], out=new)
    first = np.flatnonzero(new)
    if first.size == n - 1:
        out[...] = work.table(n)
        return out
    first += 1
    first = np.concatenate(([0], first))                # where each run of ties starts
    size = np.diff(np.append(first, n))
    # scores grow with the rank: set each run's first, then carry it forward over the run
    out.fill(-np.inf)
    out[first] = ndtri(((2 * first + size + 1) / 2.0 - 0.375) / (n + 0.25))   # average 1-based rank
    np.maximum.accumulate(out, out=out)
    return out


def _z_and_folded(v: np.ndarray, median: float, work: _Work, order: np.ndarray, s: np.ndarray):
    """Normal scores of ``v`` and of ``|v - median|`` (both in ``v``'s order, as the real and
    imaginary parts of one complex array), given the positions ``order`` that sort ``v`` and
    the sorted values ``s``.

    The folded values are sorted by merging the two monotone halves of ``s``, and
    both scores reach ``v``'s order in one scatter.
    """
    n = v.size
    k = int(np.searchsorted(s, median, side="left"))
    folded = work.get("folded", n)
    low, high = folded[:k], folded[k:]
    np.subtract(median, s[:k][::-1], out=low)           # ascending: |v - median| below the median
    np.subtract(s[k:], median, out=high)
    at = np.searchsorted(low, high, side="right")
    at += work.arange(high.size).view(np.intp)
    from_high = work.get("from_high", n, bool)
    from_high[...] = False
    from_high[at] = True
    merged = work.get("flip", n)                        # (free once the sort is done)
    merged[from_high] = high
    np.logical_not(from_high, out=from_high)
    merged[from_high] = low
    zf = _sorted_scores(merged, work, work.get("folded", n))
    both = work.get("key", n, np.complex128)           # (z, folded z) by sorted position of v
    zs = _sorted_scores(s, work, merged)
    both.real = zs
    spread = zs[-1] - zs[0]
    tmp = merged
    np.compress(from_high, zf, out=tmp[:k])
    both.imag[:k] = tmp[:k][::-1]
    np.logical_not(from_high, out=from_high)
    np.compress(from_high, zf, out=tmp[: n - k])
    both.imag[k:] = tmp[: n - k]
    out = work.get("scores", n, np.complex128)
    out[order] = both
    return out, spread


def _chains(x: np.ndarray, work: _Work, tag: str) -> np.ndarray:
    """Split chains of ``x`` (chain, draw) as (chain, 2, draw // 2): first and second halves
    (the middle draw of an odd count left out); a view when the draw count is even."""
    c, n = x.shape
    half = n // 2
    if n % 2 == 0:
        return x.reshape(c, 2, half)
    out = work.get(tag, c * 2 * half).reshape(c, 2, half)
    out[:, 0], out[:, 1] = x[:, :half], x[:, n - half:]
    return out


# ----------------------------------------------------------------------------- R-hat and ESS
def _centred(y: np.ndarray, work: _Work):
    """Means over the last axis and ``y`` minus them (a scratch array)."""
    means = y.mean(axis=-1)
    d = work.get("flip", y.size).reshape(y.shape)
    np.subtract(y, means[..., None], out=d)
    return means, d


def _rhat_basic(y: np.ndarray, work: _Work, centred=None) -> float:
    """Classic R-hat of chains ``y`` (..., draw): every leading index is a chain."""
    n = y.shape[-1]
    means, d = _centred(y, work) if centred is None else centred
    chains = means.size
    flat = d.reshape(-1)
    within = np.dot(flat, flat) / ((n - 1) * chains)
    between = n * np.var(means, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.sqrt((np.float64(between) / within + n - 1) / n))


def _larger(bulk: float, tail: float) -> float:
    """The larger of two R-hats; NaN in ``bulk`` wins, NaN in ``tail`` loses (as ArviZ's ``max``)."""
    return tail if tail > bulk else bulk


class _Autocov:
    """Chain-averaged autocovariance of ``d`` (..., draw; centred per chain), lag by lag."""

    def __init__(self, d: np.ndarray):
        self.n = d.shape[-1]
        self.chains = d.size // self.n
        self.d = d.reshape(self.chains, self.n)
        self.lags: list[float] = []
        self.full: np.ndarray | None = None

    def __call__(self, t: int) -> float:
        if self.full is not None:
            return float(self.full[t])
        if t < len(self.lags):
            return self.lags[t]
        if t >= _DIRECT_LAGS:
            self.full = self._fft()
            return float(self.full[t])
        d, n = self.d, self.n
        while len(self.lags) <= t:
            lag = len(self.lags)
            self.lags.append(float(np.einsum("ij,ij->", d[:, : n - lag], d[:, lag:])) / (n * self.chains))
        return self.lags[t]

    def _fft(self) -> np.ndarray:
        from scipy.fft import irfft, next_fast_len, rfft

        n = self.n
        size = next_fast_len(2 * n)
        power = np.zeros(size // 2 + 1)
        for lo in range(0, self.chains, _FFT_ROWS):
            f = rfft(self.d[lo:lo + _FFT_ROWS], n=size, axis=1)
            power += (f.real**2 + f.imag**2).sum(axis=0)
        return irfft(power, n=size)[:n] / (n * self.chains)


def _ess(y: np.ndarray, work: _Work, spread: float | None = None, centred=None) -> float:
    """ESS of chains ``y`` (..., draw; every leading index a chain), float64 without NaN:
    Geyer's initial monotone sequence.  ``spread``: ``max(y) - min(y)`` when the caller knows it;
    ``centred``: :func:`_centred` of ``y`` when the caller has it."""
    n = y.shape[-1]
    total = y.size
    if spread is None:
        spread = np.max(y) - np.min(y)
    if spread < np.finfo(np.float64).resolution:
        return float(total)
    means, d = _centred(y, work) if centred is None else centred
    acov = _Autocov(d)
    mean_var = acov(0) * n / (n - 1.0)
    var_plus = mean_var * (n - 1.0) / n + (np.var(means, ddof=1) if means.size > 1 else 0.0)

    def rho(t: int) -> float:
        with np.errstate(divide="ignore", invalid="ignore"):
            return float(1.0 - (mean_var - acov(t)) / np.float64(var_plus))

    pairs = [1.0 + rho(1)]              # rho_0 + rho_1, rho_2 + rho_3, ...
    if math.isnan(pairs[0]):
        return float("nan")
    # Geyer's initial positive sequence: pairs while their sum stays positive
    t, even = 1, 1.0
    while t < n - 3 and pairs[-1] > 0:
        even = rho(t + 1)
        pairs.append(even + rho(t + 2))
        t += 2
    kept = len(pairs) - 1               # pairs 0 .. kept-1 enter tau in full, made monotone
    # the even lag of the pair that ended the sequence counts when positive or its pair is not negative
    last = 1.0 if kept == 0 else (even if (pairs[-1] >= 0 or even > 0) else 0.0)
    tau = -1.0 + 2.0 * float(np.sum(np.minimum.accumulate(np.asarray(pairs[:kept])))) + last
    tau = max(tau, 1.0 / math.log10(total))
    return total / tau


def _dev2_spread(s, mean: float) -> float:
    """``max - min`` of ``(v - mean)**2`` over the ascending values ``s`` (an array or :class:`_Runs`)."""
    s = s.values if isinstance(s, _Runs) else s
    k = int(np.searchsorted(s, mean))
    near = [(s[i] - mean) ** 2 for i in (k - 1, k) if 0 <= i < s.size]
    return float(max((s[0] - mean) ** 2, (s[-1] - mean) ** 2) - min(near))


def _median_sorted(s) -> float:
    n = s.size
    return _at(s, n // 2) if n % 2 else float((_at(s, n // 2 - 1) + _at(s, n // 2)) / 2.0)


def _quantile_sorted(s: np.ndarray, p: float) -> float:
    """Quantile ``p`` of the ascending values ``s``, linear interpolation (Hyndman & Fan type 7)."""
    n = s.size
    if n == 1:
        return _at(s, 0)
    h = n * p + (1.0 - p)
    k = int(np.floor(min(max(h, 1.0), n - 1.0)))
    g = min(max(h - k, 0.0), 1.0)
    return float((1.0 - g) * np.float64(_at(s, k - 1)) + g * np.float64(_at(s, k)))


def _float32(x) -> np.ndarray | None:
    """``x`` when it holds float32 draws, else None."""
    x = np.asarray(x)
    return x if x.dtype == np.float32 else None


def _valid(x: np.ndarray, min_chains: int) -> bool:
    return x.shape[0] >= min_chains and x.shape[1] >= 4 and not np.isnan(x).any()


def _ranked(x: np.ndarray, median: str, work: _Work, raw: np.ndarray | None = None):
    """Split chains of ``x`` (chain, 2, draw // 2), their sorted values, their normal scores
    (``.real``) and folded normal scores (``.imag``), each shaped like the split chains, the
    range of the normal scores, and the sorted values of all draws (None where not at hand);
    the fold is about the median of the split draws (``median="split"``) or of all draws.
    Sorted values are arrays or :class:`_Runs`.

    Many float32 numbers (``raw``: ``x``'s draws as float32, when they were) are ranked by
    counting their keys, others by sorting."""
    xs = _chains(x, work, "split")
    v = xs.reshape(-1)
    even = x.shape[1] % 2 == 0
    counted = None
    if v.size >= _SMALL:
        raw32 = np.ascontiguousarray(raw).reshape(-1) if raw is not None and even else None
        counted = _counted(v, work, raw32, raw is not None)
    if counted is None:
        order, s = _sort_order(v, work)
        m = _median_sorted(s) if median == "split" or even else float(np.median(x))
        scores, spread = _z_and_folded(v, m, work, order, s)
        return xs, s, scores.reshape(xs.shape), spread, s if even else None
    s, offset, where, key = counted
    s_all = s if even else _all_runs(x, s, where, key)
    if median == "split" or even:
        m = _median_sorted(s)
    else:
        m = _median_sorted(s_all) if s_all is not None else float(np.median(x))
    scores, spread = _counted_scores(s, m, offset, where, work)
    return xs, s, scores.reshape(xs.shape), spread, s_all


def _rhat_of(scores: np.ndarray, work: _Work) -> float:
    return _larger(_rhat_basic(scores.real, work), _rhat_basic(scores.imag, work))


def rank_rhat(x, *, work: _Work | None = None) -> float:
    """Rank-normalised split R-hat of one quantity's draws ``x`` (chain, draw), float64.

    Parameters
    ----------
    x : array_like, shape (chain, draw)
        One quantity's draws.
    work : optional
        Scratch space from :func:`workspace`, kept between calls.

    Returns
    -------
    float
        The R-hat; NaN for fewer than 2 chains or 4 draws or a NaN draw
        (``arviz.rhat``'s conventions; constant chains give ``inf`` or NaN).

    Examples
    --------
    >>> import numpy as np
    >>> round(rank_rhat(np.arange(400.0).reshape(4, 100)), 1)     # chains far apart
    4.6
    """
    raw = _float32(x)
    x = np.ascontiguousarray(x, dtype=np.float64)
    if not _valid(x, 2):
        return float("nan")
    work = _Work() if work is None else work
    return _rhat_of(_ranked(x, "split", work, raw)[2], work)


def ess_bulk(x, *, work: _Work | None = None) -> float:
    """Bulk ESS (ESS of the rank-normalised split chains) of draws ``x`` (chain, draw), float64.

    Parameters
    ----------
    x, work
        As in :func:`rank_rhat`.

    Returns
    -------
    float
        The bulk ESS; NaN for fewer than 4 draws or a NaN draw.

    Examples
    --------
    >>> import numpy as np
    >>> bool(ess_bulk(np.random.default_rng(1).normal(size=(2, 500))) > 700)
    True
    """
    raw = _float32(x)
    x = np.ascontiguousarray(x, dtype=np.float64)
    if not _valid(x, 1):
        return float("nan")
    work = _Work() if work is None else work
    _, _, scores, spread, _ = _ranked(x, "split", work, raw)
    return _ess(scores.real, work, spread)


def _tail(x: np.ndarray, s_all, work: _Work, tag: str = "run") -> float:
    ess = []
    for p in (0.05, 0.95):
        q = _quantile_sorted(s_all, p)
        below = work.get(tag, x.size).reshape(x.shape)
        np.less_equal(x, q, out=below)
        split = _chains(below, work, "folded")
        ess.append(_ess(split, work, None if x.shape[1] % 2 else float(0 < _count(s_all, q, "right") < x.size)))
    return ess[1] if ess[1] < ess[0] else ess[0]


def ess_tail(x, *, work: _Work | None = None) -> float:
    """Tail ESS: the smaller ESS of the indicators ``x <= q05`` and ``x <= q95`` (split chains).

    Parameters
    ----------
    x : array_like, shape (chain, draw)
        One quantity's draws (as in :func:`rank_rhat`).
    work : optional
        As in :func:`rank_rhat` (scratch space, kept between calls).

    Returns
    -------
    float
        The tail ESS, in float64; NaN for fewer than 4 draws or a NaN draw.

    Examples
    --------
    >>> import numpy as np
    >>> bool(ess_tail(np.random.default_rng(1).normal(size=(2, 500))) > 500)
    True
    """
    x = np.ascontiguousarray(x, dtype=np.float64)
    if not _valid(x, 1):
        return float("nan")
    return _tail(x, np.sort(x, axis=None), _Work() if work is None else work)


def column_summary(x, *, hdi_prob: float = 0.94, work: _Work | None = None) -> dict[str, float]:
    """``arviz.summary``'s columns for one quantity's draws ``x`` (chain, draw), all in float64.

    Parameters
    ----------
    x : array_like, shape (chain, draw)
        One quantity's draws.
    hdi_prob : float, default 0.94
        Probability of the highest-density interval.
    work : optional
        As in :func:`rank_rhat`.

    Returns
    -------
    dict of str to float
        ``mean``, ``sd``, ``hdi_lower``, ``hdi_upper`` (the narrowest interval
        holding ``floor(hdi_prob * draws)`` + 1 draws) and
        :data:`SUMMARY_DIAGNOSTICS`.  The diagnostics are NaN for fewer than 4
        draws or a NaN draw, R-hat also for one chain.

    Examples
    --------
    >>> import numpy as np
    >>> row = column_summary(np.random.default_rng(2).normal(size=(4, 500)))
    >>> sorted(row) == sorted(["mean", "sd", "hdi_lower", "hdi_upper", *SUMMARY_DIAGNOSTICS])
    True
    """
    work = _Work() if work is None else work
    x = np.asarray(x)
    raw = _float32(x)
    if x.ndim != 2:
        raise ValueError(f"draws must have shape (chain, draw), got {x.shape}")
    if x.dtype != np.float64 or not x.flags.c_contiguous:
        copy = work.get("x", x.size).reshape(x.shape)
        np.copyto(copy, x)
        x = copy
    nan = float("nan")
    out = dict.fromkeys(["mean", "sd", "hdi_lower", "hdi_upper", *SUMMARY_DIAGNOSTICS], nan)
    size = x.size
    if size == 0 or np.isnan(x).any():
        return out
    valid = _valid(x, 1)
    if valid:
        xs, s, scores, spread, s_all = _ranked(x, "all", work, raw)
        if s_all is None:
            s_all = np.sort(x, axis=None)
    else:
        s_all = np.sort(x, axis=None)
    # scratch for the squared deviations and the tail indicators: the scores' arrays once R-hat
    # and bulk ESS are done with them (counted), else arrays the sort left free
    spare = ("zf", "z") if valid and isinstance(scores, _Scores) else ("key", "run")
    if valid:
        z = _centred(scores.real, work)                 # for R-hat and bulk ESS both
        if x.shape[0] >= 2:
            bulk = _rhat_basic(scores.real, work, z)
        out["ess_bulk"] = _ess(scores.real, work, spread, z)
        if x.shape[0] >= 2:
            out["r_hat"] = _larger(bulk, _rhat_basic(scores.imag, work))
    mean = np.float64(x.mean())
    dev2 = work.get(spare[0], size).reshape(x.shape)
    np.subtract(x, mean, out=dev2)
    np.square(dev2, out=dev2)
    total = np.float64(dev2.sum())
    out["mean"] = float(mean)
    if size > 1:
        out["sd"] = float(np.sqrt(total / (size - 1)))
    if valid:
        out["ess_tail"] = _tail(x, s_all, work, spare[1])
        with np.errstate(divide="ignore", invalid="ignore"):
            out["mcse_mean"] = float(np.sqrt(total / (size - 1) / np.float64(_ess(xs, work, _at(s, -1) - _at(s, 0)))))
            evar = total / size
            square_mean = np.einsum("ij,ij->", dev2, dev2) / size
            ess_sd = _ess(_chains(dev2, work, "folded"), work, _dev2_spread(s, mean))
            varvar = (square_mean - evar**2) / np.float64(ess_sd)
            out["mcse_sd"] = float(np.sqrt(varvar / evar / 4))
    width = int(np.floor(hdi_prob * s_all.size))
    if width >= s_all.size:
        raise ValueError(f"hdi_prob={hdi_prob} leaves no interval among {s_all.size} draws")
    if isinstance(s_all, _Runs):
        out["hdi_lower"], out["hdi_upper"] = s_all.hdi(width)
        return out
    gaps = work.get("order", s_all.size - width)
    np.subtract(s_all[width:], s_all[: s_all.size - width], out=gaps)
    lo = int(np.argmin(gaps))
    out["hdi_lower"], out["hdi_upper"] = float(s_all[lo]), float(s_all[lo + width])
    return out


def column_summaries(columns, *, hdi_prob: float = 0.94) -> list[dict[str, float]]:
    """:func:`column_summary` of every array in ``columns`` (each (chain, draw)), in order.

    Quantities of a million draws or more are summarised on up to 4 threads, one
    per two CPU cores (NumPy's sorts and array arithmetic run outside the GIL,
    but memory bandwidth is shared), each with its own scratch space; smaller
    ones, or all on fewer than 4 cores, one after the other.

    Parameters
    ----------
    columns : sequence of array_like
        Draws of each quantity, each (chain, draw).
    hdi_prob : float, default 0.94
        Probability of the highest-density interval.

    Returns
    -------
    list of dict of str to float
        One :func:`column_summary` per quantity, in order.

    Examples
    --------
    >>> import numpy as np
    >>> rows = column_summaries([np.zeros((2, 10)), np.ones((2, 10))])
    >>> [row["mean"] for row in rows]
    [0.0, 1.0]
    """
    import os
    import threading
    from concurrent.futures import ThreadPoolExecutor

    columns = list(columns)
    big = [np.size(c) >= 1_000_000 for c in columns]
    workers = min(4, (os.cpu_count() or 1) // 2, sum(big))
    if workers < 2:
        work = _Work()
        return [column_summary(c, hdi_prob=hdi_prob, work=work) for c in columns]
    local = threading.local()

    def one(column):
        if not hasattr(local, "work"):
            local.work = _Work()
        return column_summary(column, hdi_prob=hdi_prob, work=local.work)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(one, columns))


def workspace() -> _Work:
    """Scratch space for :func:`column_summary` over many quantities (reuses its arrays).

    Returns
    -------
    object
        Scratch space to pass as ``work`` to this module's functions.

    Examples
    --------
    >>> import numpy as np
    >>> work = workspace()
    >>> x = np.random.default_rng(3).normal(size=(2, 100))
    >>> rank_rhat(x, work=work) == rank_rhat(x)
    True
    """
    return _Work()
