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
infinite.  At many chains the cost is memory traffic: one 64-bit sort per
quantity (values and positions packed in one key, no ``argsort``), the folded
draws sorted by merging the two halves of that order, autocovariances from
direct lag sums while few lags are needed (FFT otherwise), and scratch arrays
reused between quantities (:func:`workspace`).  Given float64 draws the results
agree with ArviZ's to about 1e-12 (not bit for bit: sums run in another order).

>>> import numpy as np
>>> x = np.random.default_rng(0).normal(size=(4, 200))
>>> bool(abs(rank_rhat(x) - 1) < 0.02), bool(ess_bulk(x) > 400)
(True, True)
"""

from __future__ import annotations

import math

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


def _rhat_basic(y: np.ndarray, work: _Work) -> float:
    """Classic R-hat of chains ``y`` (..., draw): every leading index is a chain."""
    n = y.shape[-1]
    means, d = _centred(y, work)
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


def _ess(y: np.ndarray, work: _Work, spread: float | None = None) -> float:
    """ESS of chains ``y`` (..., draw; every leading index a chain), float64 without NaN:
    Geyer's initial monotone sequence.  ``spread``: ``max(y) - min(y)`` when the caller knows it."""
    n = y.shape[-1]
    total = y.size
    if spread is None:
        spread = np.max(y) - np.min(y)
    if spread < np.finfo(np.float64).resolution:
        return float(total)
    means, d = _centred(y, work)
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


def _dev2_spread(s: np.ndarray, mean: float) -> float:
    """``max - min`` of ``(v - mean)**2`` over the ascending values ``s``."""
    k = int(np.searchsorted(s, mean))
    near = [(s[i] - mean) ** 2 for i in (k - 1, k) if 0 <= i < s.size]
    return float(max((s[0] - mean) ** 2, (s[-1] - mean) ** 2) - min(near))


def _median_sorted(s: np.ndarray) -> float:
    n = s.size
    return float(s[n // 2]) if n % 2 else float((s[n // 2 - 1] + s[n // 2]) / 2.0)


def _quantile_sorted(s: np.ndarray, p: float) -> float:
    """Quantile ``p`` of the ascending values ``s``, linear interpolation (Hyndman & Fan type 7)."""
    n = s.size
    if n == 1:
        return float(s[0])
    h = n * p + (1.0 - p)
    k = int(np.floor(min(max(h, 1.0), n - 1.0)))
    g = min(max(h - k, 0.0), 1.0)
    return float((1.0 - g) * s[k - 1] + g * s[k])


def _valid(x: np.ndarray, min_chains: int) -> bool:
    return x.shape[0] >= min_chains and x.shape[1] >= 4 and not np.isnan(x).any()


def _ranked(x: np.ndarray, median: str, work: _Work):
    """Split chains of ``x`` (chain, 2, draw // 2), their sorted values, their normal scores
    (real part) and folded normal scores (imaginary part), each shaped like the split chains,
    and the range of the normal scores; the fold is about the median of the split draws
    (``median="split"``) or of all draws."""
    xs = _chains(x, work, "split")
    v = xs.reshape(-1)
    order, s = _sort_order(v, work)
    m = _median_sorted(s) if median == "split" or x.shape[1] % 2 == 0 else float(np.median(x))
    scores, spread = _z_and_folded(v, m, work, order, s)
    return xs, s, scores.reshape(xs.shape), spread


def _rhat_of(scores: np.ndarray, work: _Work) -> float:
    return _larger(_rhat_basic(scores.real, work), _rhat_basic(scores.imag, work))


def rank_rhat(x, *, work: _Work | None = None) -> float:
    """Rank-normalised split R-hat of one quantity's draws ``x`` (chain, draw), float64.

    NaN for fewer than 2 chains or 4 draws or a NaN draw (``arviz.rhat``'s
    conventions; constant chains give ``inf`` or NaN).

    >>> import numpy as np
    >>> round(rank_rhat(np.arange(400.0).reshape(4, 100)), 1)     # chains far apart
    4.6
    """
    x = np.ascontiguousarray(x, dtype=np.float64)
    if not _valid(x, 2):
        return float("nan")
    work = _Work() if work is None else work
    return _rhat_of(_ranked(x, "split", work)[2], work)


def ess_bulk(x, *, work: _Work | None = None) -> float:
    """Bulk ESS (ESS of the rank-normalised split chains) of draws ``x`` (chain, draw), float64;
    NaN for fewer than 4 draws or a NaN draw.

    >>> import numpy as np
    >>> bool(ess_bulk(np.random.default_rng(1).normal(size=(2, 500))) > 700)
    True
    """
    x = np.ascontiguousarray(x, dtype=np.float64)
    if not _valid(x, 1):
        return float("nan")
    work = _Work() if work is None else work
    _, _, scores, spread = _ranked(x, "split", work)
    return _ess(scores.real, work, spread)


def _tail(x: np.ndarray, s_all: np.ndarray, work: _Work) -> float:
    ess = []
    for p in (0.05, 0.95):
        q = _quantile_sorted(s_all, p)
        below = work.get("run", x.size).reshape(x.shape)
        np.less_equal(x, q, out=below)
        split = _chains(below, work, "folded")
        ess.append(_ess(split, work, None if x.shape[1] % 2 else float(0 < np.searchsorted(s_all, q, "right") < x.size)))
    return ess[1] if ess[1] < ess[0] else ess[0]


def ess_tail(x, *, work: _Work | None = None) -> float:
    """Tail ESS: the smaller ESS of the indicators ``x <= q05`` and ``x <= q95`` (split chains),
    float64; NaN for fewer than 4 draws or a NaN draw.

    >>> import numpy as np
    >>> bool(ess_tail(np.random.default_rng(1).normal(size=(2, 500))) > 500)
    True
    """
    x = np.ascontiguousarray(x, dtype=np.float64)
    if not _valid(x, 1):
        return float("nan")
    return _tail(x, np.sort(x, axis=None), _Work() if work is None else work)


def column_summary(x, *, hdi_prob: float = 0.94, work: _Work | None = None) -> dict[str, float]:
    """``arviz.summary``'s columns for one quantity's draws ``x`` (chain, draw), all in float64:
    ``mean``, ``sd``, ``hdi_lower``, ``hdi_upper`` (the narrowest interval holding
    ``floor(hdi_prob * draws)`` + 1 draws) and :data:`SUMMARY_DIAGNOSTICS`.

    The diagnostics are NaN for fewer than 4 draws or a NaN draw, R-hat also for one chain.
    ``work`` (from :func:`workspace`) keeps scratch arrays between calls.

    >>> import numpy as np
    >>> row = column_summary(np.random.default_rng(2).normal(size=(4, 500)))
    >>> sorted(row) == sorted(["mean", "sd", "hdi_lower", "hdi_upper", *SUMMARY_DIAGNOSTICS])
    True
    """
    work = _Work() if work is None else work
    x = np.asarray(x)
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
        xs, s, scores, spread = _ranked(x, "all", work)
        s_all = s if x.shape[1] % 2 == 0 else np.sort(x, axis=None)
    else:
        s_all = np.sort(x, axis=None)
    mean = np.float64(x.mean())
    dev2 = work.get("key", size).reshape(x.shape)      # (free once the scores are in place)
    np.subtract(x, mean, out=dev2)
    np.square(dev2, out=dev2)
    total = np.float64(dev2.sum())
    out["mean"] = float(mean)
    if size > 1:
        out["sd"] = float(np.sqrt(total / (size - 1)))
    if valid:
        if x.shape[0] >= 2:
            out["r_hat"] = _rhat_of(scores, work)
        out["ess_bulk"] = _ess(scores.real, work, spread)
        out["ess_tail"] = _tail(x, s_all, work)
        with np.errstate(divide="ignore", invalid="ignore"):
            out["mcse_mean"] = float(np.sqrt(total / (size - 1) / np.float64(_ess(xs, work, s[-1] - s[0]))))
            evar = total / size
            square_mean = np.einsum("ij,ij->", dev2, dev2) / size
            ess_sd = _ess(_chains(dev2, work, "folded"), work, _dev2_spread(s, mean))
            varvar = (square_mean - evar**2) / np.float64(ess_sd)
            out["mcse_sd"] = float(np.sqrt(varvar / evar / 4))
    width = int(np.floor(hdi_prob * s_all.size))
    if width >= s_all.size:
        raise ValueError(f"hdi_prob={hdi_prob} leaves no interval among {s_all.size} draws")
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
    """Scratch space for :func:`column_summary` over many quantities (reuses its arrays)."""
    return _Work()
