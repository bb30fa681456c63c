"""Fast, numerically safe, exact random draws for Gibbs conditionals.

Every sampler here is a pure function of a JAX PRNG key (``jax.random.key``)
and its parameters: jit- and vmap-compatible, parameters broadcast, and an
optional static ``shape`` (default: the broadcast shape of the parameters) and
``dtype``.  By default the draws follow the dtype of their floating-point
parameters (``jnp.result_type``, so Python numbers are weakly typed): float32
parameters give float32 draws, float64 parameters (``jax_enable_x64``) float64
draws; with no floating-point parameter, JAX's default float (float32, or
float64 in x64 mode).  ``float64`` needs ``jax_enable_x64``.  They
are exact in the sense that matters for MCMC: each is a correct sampling
algorithm (rejection with an exact fallback, inversion), limited only by
floating-point resolution.

Why not ``jax.random``?

* **Random bits.**  On CPU, ``jax.random.bits`` evaluates the Threefry-2x32
  hash (Salmon, Moraes, Dror & Shaw, "Parallel random numbers: as easy as
  1, 2, 3", SC 2011) in a rolled loop that writes its intermediates to memory,
  and keeps one 32-bit word of the two it computes.  We evaluate the same hash
  as plain element-wise integer arithmetic on (stream, element index)
  counters, which XLA fuses into the code that consumes the bits, and use both
  words: several times faster.  Keys of other implementations (``rbg``, ...)
  are turned into Threefry key material first.
* **Gamma.**  ``jax.random.gamma`` runs a rejection loop per element.  We run
  Marsaglia & Tsang's (2000) method vectorised: every pass of one loop proposes
  for all elements of a chunk at once, and the loop stops when each has
  accepted one (see :func:`gamma`).
* **Small shapes.**  Gamma draws with tiny shape underflow; we work in log space
  (:func:`log_gamma`, :func:`log_dirichlet`, :func:`beta`), so Dirichlet draws
  with concentrations like 1e-3 never give NaN or all-zero rows.
* **Categorical.**  One uniform per draw and an inverse CDF over cumulative
  weights, instead of Gumbel-max with one uniform per category.

Reproducibility: draws depend only on the key, the parameters, ``shape`` and
``dtype``.  They are *not* equal to what ``jax.random`` gives for the same key.
"""

from __future__ import annotations

import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

__all__ = [
    "threefry2x32",
    "uniform",
    "normal",
    "gamma",
    "log_gamma",
    "beta",
    "dirichlet",
    "log_dirichlet",
    "log_dirichlet_counts",
    "log_dirichlet_dense",
    "inverse_gamma",
    "normal_gamma",
    "categorical",
    "categorical_at",
]

# Marsaglia-Tsang proposals drawn for every element before the exact fallback
# loop takes over, and the number of elements processed together (the loop
# then reruns only its chunk).  A proposal is rejected with probability 4.8 %
# at shape 1, 1.8 % at 2, 0.06 % at 50.  The draws do not depend on the number
# of rounds (each is the first accepted proposal of its own streams), only the
# program does: every unrolled round is another copy of the proposal (a hash, an
# inverse error function, logs), compiled into every sampler that draws a gamma.
# 0 rounds (the loop makes every proposal, so one copy) measured as fast as 3 or
# faster on a CPU, and a sampler compiles in about half the time (figures in
# benchmarks/README.md, "Random-number primitives"); chunks of 8192 keep the
# intermediates in cache.
_ROUNDS = 0
_CHUNK = 8192


# ---------------------------------------------------------------------------
# Random bits
# ---------------------------------------------------------------------------

# Threefry-2x32 with 20 rounds (Salmon et al. 2011): rotation constants,
# applied in groups of four, alternating between the two groups.
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_KEY_PARITY = np.uint32(0x1BD11BDA)
# High counter word of our streams.  ``jax.random.split`` / ``bits`` use high
# words 0, 1, ... (the top of a flat element index), so starting elsewhere
# keeps our words apart from theirs even if a caller reuses a key by mistake.
_STREAM_BASE = 0x6A09E667


def _rotl(x, r):
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def threefry2x32(k0, k1, x0, x1):
    """The Threefry-2x32 block function (20 rounds; Salmon et al. 2011) on uint32 arrays.

    Element-wise on counters ``(x0, x1)`` under the key ``(k0, k1)`` (all broadcast
    together), as plain integer arithmetic that XLA fuses into the code reading the
    words.  The same function as ``jax.extend.random.threefry_2x32`` applied to the
    counters ``[x0, x1]`` (which pairs element i of the first half with element i of
    the second and returns both output halves concatenated), without its
    concatenation and without the rolled loop JAX lowers it to on a CPU: 2-3 times
    faster there, in half the compile time or less (``benchmarks/random_primitives.py``).

    Parameters
    ----------
    k0, k1 : jax.Array of uint32
        The two words of the key.
    x0, x1 : jax.Array of uint32
        The two words of each counter.

    Returns
    -------
    tuple of jax.Array
        The two uint32 output words of every counter.

    Examples
    --------
    Random123's known answer for the zero key and counter (``kat_vectors``):

    >>> zero = jnp.uint32(0)
    >>> [hex(int(w)) for w in threefry2x32(zero, zero, zero, zero)]
    ['0x6b200159', '0x99ba4efe']
    """
    ks = (k0, k1, k0 ^ k1 ^ _KEY_PARITY)
    x0 = x0 + ks[0]
    x1 = x1 + ks[1]
    for i in range(5):  # five groups of four rounds, each followed by a key injection
        for r in _ROTATIONS[i % 2]:
            x0 = x0 + x1
            x1 = _rotl(x1, r) ^ x0
        x0 = x0 + ks[(i + 1) % 3]
        x1 = x1 + ks[(i + 2) % 3] + np.uint32(i + 1)
    return x0, x1


def _key_pair(key):
    """The two uint32 words of Threefry key material for ``key``.

    Threefry keys (the default) are used as they are; keys of other
    implementations (``rbg``, ...) are turned into Threefry key material with
    ``jax.random.bits``.
    """
    typed = jnp.issubdtype(jnp.asarray(key).dtype, jax.dtypes.prng_key)
    if jnp.ndim(key) != (0 if typed else 1):
        raise ValueError(
            "expected a single PRNG key (e.g. jax.random.key(0)); use jax.vmap for a batch of keys")
    if str(jax.random.key_impl(key)) == "threefry2x32":
        data = jax.random.key_data(key)
    else:
        data = jax.random.bits(key, (2,), jnp.uint32)
    return data[0], data[1]


class _Bits:
    """Independent random words for the elements ``index`` (uint32 array), by stream.

    Word pair ``words(s)`` of element ``i`` is threefry2x32(key, (_STREAM_BASE + s, i)):
    a counter-based generator, so a draw depends only on the key, the stream
    and the element's index -- not on how the elements are chunked.
    Distinct streams (Python ints or traced integer scalars) are independent.
    """

    def __init__(self, key_pair, index):
        self.k0, self.k1 = key_pair
        self.index = index

    @classmethod
    def for_shape(cls, key_pair, shape):
        size = math.prod(shape)
        if size >= 2**32:
            raise ValueError(f"at most 2**32 - 1 draws per call, got shape {shape}")
        return cls(key_pair, lax.iota(jnp.uint32, size).reshape(shape))

    def words(self, stream):
        hi = jnp.asarray(stream, jnp.uint32) + np.uint32(_STREAM_BASE)
        return threefry2x32(self.k0, self.k1, jnp.broadcast_to(hi, self.index.shape), self.index)

    def variate_words(self, stream, dtype):
        """Bits for two independent variates of ``dtype`` from *logical* stream ``stream``.

        float32 takes one word per variate, float64 a (hi, lo) pair; logical
        stream s owns hash streams 2s and 2s + 1.
        """
        w0, w1 = self.words(2 * stream)
        if dtype == jnp.float32:
            return w0, w1
        v0, v1 = self.words(2 * stream + 1)
        return (w0, w1), (v0, v1)

    def uniforms(self, stream, dtype):
        """Two independent U(0, 1] arrays (never 0, so ``log`` is finite)."""
        return tuple(_open_uniform(w, dtype) for w in self.variate_words(stream, dtype))

    def normal_and_uniform(self, stream, dtype):
        """An independent N(0, 1) array and U(0, 1] array."""
        wz, wu = self.variate_words(stream, dtype)
        return _std_normal(wz, dtype), _open_uniform(wu, dtype)


def _top_bits(w, dtype):
    """The top 24 (float32) or 53 (float64) bits of a word / (hi, lo) pair, as a signed int."""
    if dtype == jnp.float32:
        return (w >> np.uint32(8)).astype(jnp.int32)
    hi, lo = w
    return (hi.astype(jnp.int64) << 21) | (lo >> np.uint32(11)).astype(jnp.int64)


def _open_uniform(w, dtype):
    """U(0, 1] from one uint32 word (float32) or a (hi, lo) pair (float64).

    ``(w + 1/2) / 2**32`` rounded to the float type: the smallest value is
    2**-33 (float32; log = -22.9), far below the 2**-24 of the usual
    mantissa-only construction, so ``log(U)`` keeps its exponential tail.
    """
    if dtype == jnp.float32:
        return (w.astype(jnp.float32) + np.float32(0.5)) * np.float32(2.0**-32)
    hi, lo = w
    x = hi.astype(jnp.float64) * 2.0**32 + lo.astype(jnp.float64)
    return (x + 0.5) * 2.0**-64


def _unit_interval(w, dtype):
    """U[0, 1) on the grid k / 2**p (p = 24 for float32, 53 for float64); never 1."""
    p = 24 if dtype == jnp.float32 else 53
    return _top_bits(w, dtype).astype(dtype) * np.asarray(2.0**-p, dtype)


def _std_normal(w, dtype):
    """N(0, 1) by inversion: sqrt(2) erfinv(V).

    V = (2k + 1 - 2**p) / 2**p for the top p bits k (p = 24 in float32, 53 in
    float64): a symmetric grid in (-1, 1) that excludes both ends and is exact
    in the float type, so |z| < 5.42 in float32 (8.3 in float64).
    """
    p = 24 if dtype == jnp.float32 else 53
    v = (2 * _top_bits(w, dtype) + (1 - 2**p)).astype(dtype) * np.asarray(2.0**-p, dtype)
    return np.asarray(np.sqrt(2.0), dtype) * lax.erf_inv(v)


# ---------------------------------------------------------------------------
# Argument handling
# ---------------------------------------------------------------------------


def _compute_dtype(dtype):
    """(compute dtype, output dtype): float64 when requested and enabled, else float32."""
    out = jax.dtypes.canonicalize_dtype(dtype)
    if not jnp.issubdtype(out, jnp.floating):
        raise TypeError(f"dtype must be a floating type, got {dtype}")
    return (jnp.dtype(jnp.float64) if out == jnp.float64 else jnp.dtype(jnp.float32)), out


def _default_dtype(dtype, *params):
    """``dtype``, or (``None``) the result type of the floating-point ``params``.

    Integer or absent parameters give JAX's default float type (float32, or
    float64 in x64 mode); so float64 parameters give float64 draws in x64 mode.
    """
    if dtype is not None:
        return jnp.dtype(dtype)
    # lists and tuples of numbers (mean=[0.0, 10.0]) as numpy arrays: jnp.result_type
    # takes arrays and scalars only
    params = [np.asarray(p) if isinstance(p, (list, tuple)) else p for p in params]
    floats = [p for p in params if jnp.issubdtype(jnp.result_type(p), jnp.floating)]
    if not floats:
        return jnp.dtype(jax.dtypes.canonicalize_dtype(jnp.float64))
    return jnp.dtype(jnp.result_type(*floats))


def _static_shape(shape):
    if shape is None:
        return None
    if isinstance(shape, int):
        return (shape,)
    return tuple(int(d) for d in shape)


def _broadcast_params(shape, cdtype, *params):
    """Cast params to ``cdtype`` and broadcast them to ``shape`` (default: their broadcast shape)."""
    params = [jnp.asarray(p, cdtype) for p in params]
    pshape = jnp.broadcast_shapes(*(p.shape for p in params))
    if shape is None:
        shape = pshape
    elif jnp.broadcast_shapes(shape, pshape) != shape:
        raise ValueError(f"parameters of shape {pshape} do not broadcast to shape {shape}")
    return shape, [jnp.broadcast_to(p, shape) for p in params]


# ---------------------------------------------------------------------------
# Marsaglia-Tsang gamma core
# ---------------------------------------------------------------------------


def _log1pmx(t):
    """log(1 + t) - t, accurate for small |t| as well (no cancellation)."""
    # With s = t / (2 + t):  log(1 + t) = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...)
    # and 2 s - t = -t s, so  log(1 + t) - t = -t s + 2 s^3 (1/3 + s^2/5 + ...).
    # For |t| < 0.1, |s| < 0.053 and the terms below reach double precision.
    s = t / (2 + t)
    s2 = s * s
    poly = 1 / 3 + s2 * (1 / 5 + s2 * (1 / 7 + s2 * (1 / 9 + s2 * (1 / 11 + s2 * (1 / 13 + s2 / 15)))))
    series = -t * s + 2 * s * s2 * poly
    return jnp.where(jnp.abs(t) < 0.1, series, jnp.log1p(t) - t)


def _first_accepted(propose, valid, rounds: int, dtype):
    """The first accepted proposal of every element of a rejection sampler.

    ``propose(r)`` returns round r's proposals, NaN where rejected.  Rounds 0..rounds−1
    run for every element; then a loop reruns ``propose(rounds + j)`` while some
    element has none accepted.  Elements not ``valid`` need none (0).
    """
    # NaN marks "no proposal accepted yet" (invalid elements need none).
    t = jnp.where(valid, jnp.nan, 0).astype(dtype)
    for r in reversed(range(rounds)):  # earlier rounds overwrite later ones
        t_r = propose(r)
        t = jnp.where(jnp.isnan(t_r), t, t_r)

    def some_rejected(state):
        return jnp.any(jnp.isnan(state[0]))

    def another_round(state):
        t, j = state
        return jnp.where(jnp.isnan(t), propose(rounds + j), t), j + 1

    t, _ = lax.while_loop(some_rejected, another_round, (t, jnp.uint32(0)))
    return t


def _gamma_chunk(bits, a, dtype, rounds, log, below_one=True):
    """Gamma(a, 1) draws (or their logs, if ``log``) for the elements of ``bits``.

    Marsaglia & Tsang (2000): for shape a' >= 1, with d = a' - 1/3 and
    c = 1 / sqrt(9 d), propose z ~ N(0, 1), v = (1 + c z)^3, and accept if
    v > 0 and log U < z^2/2 + d - d v + d log v; then d v ~ Gamma(a', 1).
    Writing t = c z (so 3 d t^2 = z^2/3 and d t^3 = c z^3/9) the bound is

        z^2/6 - c z^3/9 + 3 d (log(1 + t) - t),

    which has no terms of size d that cancel, so it stays accurate in float32
    for shapes up to 1e6 and beyond.  For a < 1 we draw G(a + 1) and multiply
    by U^(1/a) (their section 6), i.e. add log(U) / a to the log.

    ``rounds`` proposals are made for every element at once and each element
    keeps its first accepted one; then a while loop makes further proposals
    (from further streams) while some element has accepted none, so every
    draw is exactly the first accepted proposal of the scheme.  Where ``a`` is
    not a positive finite number the result is NaN.  ``below_one=False``: the
    caller has only shapes of at least 1 (or invalid ones), so the boost is left
    out of the program; a shape below 1 then gives NaN too.
    """
    valid = (a > 0) & jnp.isfinite(a) if below_one else (a >= 1) & jnp.isfinite(a)
    small = a < 1
    a_mt = jnp.where(valid, jnp.where(small, a + 1, a), 1)
    d = a_mt - 1 / 3
    c = lax.rsqrt(9 * d)

    def propose(r):
        """Proposal r (logical stream 1 + r): t where accepted, NaN where rejected."""
        z, u = bits.normal_and_uniform(1 + r, dtype)
        # Materialise z and u: otherwise XLA re-evaluates the hash and erfinv
        # inside every fusion that consumes them.
        z, u = lax.optimization_barrier((z, u))
        t = c * z
        positive = t > -1  # v = (1 + t)^3 > 0
        log_ratio = z * z * (1 / 6 - c * z / 9) + 3 * d * _log1pmx(jnp.where(positive, t, 0))
        return jnp.where(positive & (jnp.log(u) < log_ratio), t, jnp.nan)

    t = _first_accepted(propose, valid, rounds, dtype)

    def boost():
        u, _ = bits.uniforms(0, dtype)  # logical stream 0
        return jnp.where(small, jnp.log(u) / jnp.where(small, a, 1), 0)

    if below_one:
        log_boost = lax.cond(jnp.any(small & valid), boost, lambda: jnp.zeros_like(a))
    else:
        log_boost = jnp.zeros_like(a)
    if log:
        out = jnp.log(d) + 3 * jnp.log1p(t) + log_boost
    else:
        out = d * ((1 + t) * (1 + t) * (1 + t)) * jnp.exp(log_boost)
    return jnp.where(valid, out, jnp.nan)


def _gamma_draw(key_pair, a, dtype, log, rounds=_ROUNDS, chunk=_CHUNK):
    """Gamma(a, 1) draws (or logs) of ``a.shape``; element i uses counter i.

    At most ``chunk`` elements at a time (``lax.map`` over chunks), so that the
    intermediates stay in cache and the fallback loop reruns only its chunk.
    """
    shape = a.shape
    n = math.prod(shape)
    if n >= 2**32:
        raise ValueError(f"at most 2**32 - 1 draws per call, got shape {shape}")
    if n <= chunk:
        return _gamma_chunk(_Bits.for_shape(key_pair, shape), a, dtype, rounds, log)
    chunks = -(-n // chunk)
    # Balanced chunks, their size rounded up to a multiple of 128 (unaligned
    # sizes run several times slower on CPU); the last one is padded.
    size = -(-n // chunks // 128) * 128
    flat = jnp.pad(a.reshape(-1), (0, chunks * size - n), constant_values=1)
    index = lax.iota(jnp.uint32, chunks * size)

    def one(args):
        a_c, index_c = args
        return _gamma_chunk(_Bits(key_pair, index_c), a_c, dtype, rounds, log)

    out = lax.map(one, (flat.reshape(chunks, size), index.reshape(chunks, size)))
    return out.reshape(-1)[:n].reshape(shape)


# ---------------------------------------------------------------------------
# Public samplers
# ---------------------------------------------------------------------------


def uniform(key, shape=(), dtype=None):
    """Uniform draws on the half-open interval (0, 1].

    Never 0, so ``log(U)`` is always finite: the smallest value is 2**-33 in
    float32 (2**-65 in float64).

    Parameters
    ----------
    key : jax.Array
        A PRNG key (``jax.random.key``).
    shape : tuple of int, default ()
        The shape of the draws (static).
    dtype : dtype, optional
        The float type (default JAX's default float).

    Returns
    -------
    jax.Array
        Draws of shape ``shape``.

    Examples
    --------
    >>> import jax
    >>> from gibbsjax import random as gr
    >>> u = gr.uniform(jax.random.key(0), (3,))
    >>> bool(((u > 0) & (u <= 1)).all())
    True
    """
    return _uniform(key, shape=_static_shape(shape), dtype=_default_dtype(dtype))


@partial(jax.jit, static_argnames=("shape", "dtype"))
def _uniform(key, shape, dtype):
    cdtype, out = _compute_dtype(dtype)
    u, _ = _Bits.for_shape(_key_pair(key), shape).uniforms(0, cdtype)
    return u.astype(out)


def normal(key, mean=0.0, sd=1.0, shape=None, dtype=None):
    """Normal draws N(mean, sd^2), density ``exp(-(x - mean)^2 / (2 sd^2)) / (sd sqrt(2 pi))``.

    By inversion, ``sqrt(2) erfinv(V)`` with V uniform on a symmetric grid in
    (-1, 1) (24 bits in float32, so ``|z| < 5.42`` sd; 53 bits in float64).

    Parameters
    ----------
    key : jax.Array
        A PRNG key.
    mean, sd : array_like, default 0.0 and 1.0
        Mean and standard deviation (broadcast).
    shape : tuple of int, optional
        The shape of the draws (default: the broadcast shape of the parameters).
    dtype : dtype, optional
        The float type (default: that of the parameters).

    Returns
    -------
    jax.Array
        Draws of shape ``shape``.

    Examples
    --------
    >>> import jax
    >>> from gibbsjax import random as gr
    >>> gr.normal(jax.random.key(0), mean=[0.0, 10.0], sd=2.0).shape
    (2,)
    """
    return _normal(key, mean, sd, shape=_static_shape(shape), dtype=_default_dtype(dtype, mean, sd))


@partial(jax.jit, static_argnames=("shape", "dtype"))
def _normal(key, mean, sd, shape, dtype):
    cdtype, out = _compute_dtype(dtype)
    shape, (mean, sd) = _broadcast_params(shape, cdtype, mean, sd)
    z, _ = _Bits.for_shape(_key_pair(key), shape).variate_words(0, cdtype)
    return (mean + sd * _std_normal(z, cdtype)).astype(out)


def gamma(key, a, shape=None, dtype=None):
    """Gamma(shape a, rate 1) draws: density x^(a-1) exp(-x) / Gamma(a), x > 0.

    Marsaglia, G. & Tsang, W. W. (2000), "A simple method for generating gamma
    variables", ACM Trans. Math. Softw. 26(3), 363-372.  Vectorised: a
    ``lax.while_loop`` proposes for every element of a chunk at once, each
    element keeps its first accepted proposal, and the loop goes on while some
    element has accepted none (at shape 1, 4.8 % of proposals are rejected), so
    each draw is exactly the first accepted proposal of the rejection scheme,
    from counter streams of its own index.  For a < 1,
    G(a) = G(a + 1) U^(1/a).  For tiny a the result underflows to 0 in
    float32 (most draws are below 1e-38 when a = 1e-3); use :func:`log_gamma`
    when the scale matters.  Rate b: divide by b.  Returns NaN where a is not
    a positive finite number.

    Parameters
    ----------
    key : jax.Array
        A PRNG key.
    a : array_like
        The shape parameter(s), positive.
    shape : tuple of int, optional
        The shape of the draws (default ``a``'s shape).
    dtype : dtype, optional
        The float type (default: that of ``a``).

    Returns
    -------
    jax.Array
        Gamma(a, 1) draws; NaN where ``a`` is not a positive finite number.

    Examples
    --------
    >>> import jax
    >>> from gibbsjax import random as gr
    >>> x = gr.gamma(jax.random.key(0), 2.5, shape=(100_000,))
    >>> round(float(x.mean()), 1)   # E = a
    2.5
    """
    return _gamma(key, a, shape=_static_shape(shape), dtype=_default_dtype(dtype, a))


@partial(jax.jit, static_argnames=("shape", "dtype"))
def _gamma(key, a, shape, dtype):
    cdtype, out = _compute_dtype(dtype)
    shape, (a,) = _broadcast_params(shape, cdtype, a)
    return _gamma_draw(_key_pair(key), a, cdtype, log=False).astype(out)


def log_gamma(key, a, shape=None, dtype=None):
    """log G for G ~ Gamma(shape a, rate 1), computed without forming G.

    Same draws as :func:`gamma` for the same key (``exp(log_gamma(k, a))``
    equals ``gamma(k, a)`` up to rounding), but stable for tiny a:
    log G(a) = log G(a + 1) + log(U) / a.  Finite for a in [1e-4, 1e6] in
    float32 (and for far smaller a).  E[log G] = digamma(a),
    Var[log G] = trigamma(a).

    Parameters
    ----------
    key : jax.Array
        A PRNG key.
    a : array_like
        The shape parameter(s), positive.
    shape : tuple of int, optional
        The shape of the draws (default ``a``'s shape).
    dtype : dtype, optional
        The float type (default: that of ``a``).

    Returns
    -------
    jax.Array
        ``log G`` for G ~ Gamma(a, 1).

    Examples
    --------
    >>> import jax
    >>> from gibbsjax import random as gr
    >>> lg = gr.log_gamma(jax.random.key(0), 1e-3, shape=(4,))
    >>> bool(jax.numpy.isfinite(lg).all())
    True
    """
    return _log_gamma(key, a, shape=_static_shape(shape), dtype=_default_dtype(dtype, a))


@partial(jax.jit, static_argnames=("shape", "dtype"))
def _log_gamma(key, a, shape, dtype):
    cdtype, out = _compute_dtype(dtype)
    shape, (a,) = _broadcast_params(shape, cdtype, a)
    return _gamma_draw(_key_pair(key), a, cdtype, log=True).astype(out)


def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) draws: density x^(a-1) (1-x)^(b-1) / B(a, b), 0 < x < 1.

    X = G_a / (G_a + G_b) for independent Gamma(a, 1) and Gamma(b, 1),
    computed from their logs (``exp(la - logaddexp(la, lb))``), so it stays
    well defined for small a and b.

    Parameters
    ----------
    key : jax.Array
        A PRNG key.
    a, b : array_like
        The two positive shape parameters (broadcast).
    shape : tuple of int, optional
        The shape of the draws (default: the broadcast shape of ``a`` and ``b``).
    dtype : dtype, optional
        The float type (default: that of the parameters).

    Returns
    -------
    jax.Array
        Draws in (0, 1).

    Examples
    --------
    >>> import jax
    >>> from gibbsjax import random as gr
    >>> x = gr.beta(jax.random.key(0), 2.0, 6.0, shape=(100_000,))
    >>> round(float(x.mean()), 2)   # E = a / (a + b)
    0.25
    """
    return _beta(key, a, b, shape=_static_shape(shape), dtype=_default_dtype(dtype, a, b))


@partial(jax.jit, static_argnames=("shape", "dtype"))
def _beta(key, a, b, shape, dtype):
    cdtype, out = _compute_dtype(dtype)
    shape, (a, b) = _broadcast_params(shape, cdtype, a, b)
    lg = _gamma_draw(_key_pair(key), jnp.stack([a, b]), cdtype, log=True)
    return jnp.exp(lg[0] - jnp.logaddexp(lg[0], lg[1])).astype(out)


def log_dirichlet(key, alpha, shape=None, dtype=None):
    """Log-probabilities of a Dirichlet(alpha) draw, along the last axis.

    The Dirichlet density is ``Gamma(sum alpha) / prod Gamma(alpha_k) *
    prod p_k^(alpha_k - 1)`` on the simplex.  ``log p_k = log G_k - logsumexp(log G)``
    with ``log G_k`` = :func:`log_gamma` (alpha_k): finite and accurate even for
    concentrations like 1e-3 in float32, where most G_k underflow.

    Parameters
    ----------
    key : jax.Array
        A PRNG key.
    alpha : array_like
        Concentrations, shape ``(..., K)``, positive.
    shape : tuple of int, optional
        The batch shape (default ``alpha.shape[:-1]``).
    dtype : dtype, optional
        The float type (default: that of ``alpha``).

    Returns
    -------
    jax.Array
        Log-probabilities of shape ``shape + (K,)``.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> from gibbsjax import random as gr
    >>> lp = gr.log_dirichlet(jax.random.key(0), jnp.full(5, 1e-3))
    >>> round(float(jax.nn.logsumexp(lp)), 4)
    0.0
    """
    return _log_dirichlet(key, alpha, shape=_static_shape(shape), dtype=_default_dtype(dtype, alpha))


def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(alpha) draws along the last axis: ``exp(log_dirichlet(...))``.

    Density ``Gamma(sum alpha) / prod Gamma(alpha_k) * prod p_k^(alpha_k - 1)``,
    p on the simplex.  Computed in log space, so no NaN and no all-zero rows
    even with concentrations like 1e-3 in float32 (every row sums to 1).

    Parameters
    ----------
    key : jax.Array
        A PRNG key.
    alpha : array_like
        Concentrations, shape ``(..., K)``, positive.
    shape : tuple of int, optional
        The batch shape (default ``alpha.shape[:-1]``).
    dtype : dtype, optional
        The float type (default: that of ``alpha``).

    Returns
    -------
    jax.Array
        Probability vectors of shape ``shape + (K,)``.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> from gibbsjax import random as gr
    >>> p = gr.dirichlet(jax.random.key(0), jnp.ones(4), shape=(3,))
    >>> p.shape, bool(jnp.allclose(p.sum(-1), 1.0))
    ((3, 4), True)
    """
    return _dirichlet(key, alpha, shape=_static_shape(shape), dtype=_default_dtype(dtype, alpha))


def _log_dirichlet_draw(key, alpha, shape, cdtype):
    alpha = jnp.asarray(alpha, cdtype)
    if alpha.ndim < 1:
        raise ValueError("alpha must have at least one dimension (the categories)")
    k = alpha.shape[-1]
    batch = alpha.shape[:-1] if shape is None else shape
    if jnp.broadcast_shapes(batch, alpha.shape[:-1]) != batch:
        raise ValueError(f"alpha of shape {alpha.shape} does not broadcast to batch shape {batch}")
    full = batch + (k,)
    lg = _gamma_draw(_key_pair(key), jnp.broadcast_to(alpha, full), cdtype, log=True)
    return lg - jax.nn.logsumexp(lg, axis=-1, keepdims=True)


@partial(jax.jit, static_argnames=("shape", "dtype"))
def _log_dirichlet(key, alpha, shape, dtype):
    cdtype, out = _compute_dtype(dtype)
    return _log_dirichlet_draw(key, alpha, shape, cdtype).astype(out)


@partial(jax.jit, static_argnames=("shape", "dtype"))
def _dirichlet(key, alpha, shape, dtype):
    cdtype, out = _compute_dtype(dtype)
    return jnp.exp(_log_dirichlet_draw(key, alpha, shape, cdtype)).astype(out)


def inverse_gamma(key, a, b, shape=None, dtype=None):
    """InvGamma(shape a, scale b) draws: density b^a / Gamma(a) x^(-a-1) exp(-b/x), x > 0.

    X = b / G with G ~ Gamma(a, 1), computed as exp(log b - log G).
    E[X] = b / (a - 1) for a > 1; Var[X] = b^2 / ((a - 1)^2 (a - 2)) for a > 2.

    Parameters
    ----------
    key : jax.Array
        A PRNG key.
    a : array_like
        The shape parameter(s), positive.
    b : array_like
        The scale parameter(s), positive.
    shape : tuple of int, optional
        The shape of the draws (default: the broadcast shape of ``a`` and ``b``).
    dtype : dtype, optional
        The float type (default: that of the parameters).

    Returns
    -------
    jax.Array
        Positive draws.

    Examples
    --------
    >>> import jax
    >>> from gibbsjax import random as gr
    >>> x = gr.inverse_gamma(jax.random.key(0), 5.0, 8.0, shape=(100_000,))
    >>> round(float(x.mean()), 1)   # b / (a - 1)
    2.0
    """
    return _inverse_gamma(key, a, b, shape=_static_shape(shape), dtype=_default_dtype(dtype, a, b))


@partial(jax.jit, static_argnames=("shape", "dtype"))
def _inverse_gamma(key, a, b, shape, dtype):
    cdtype, out = _compute_dtype(dtype)
    shape, (a, b) = _broadcast_params(shape, cdtype, a, b)
    log_g = _gamma_draw(_key_pair(key), a, cdtype, log=True)
    return jnp.exp(jnp.log(b) - log_g).astype(out)


def normal_gamma(key, mu0, lam, a, b, shape=None, dtype=None):
    """Normal-gamma draws ``(mu, tau)``.

    tau ~ Gamma(shape a, rate b) (density ``b^a / Gamma(a) tau^(a-1) exp(-b tau)``),
    mu | tau ~ N(mu0, 1 / (lam tau)).  The standard deviation
    ``exp(-(log lam + log G - log b) / 2)`` is formed from log G, so mu is
    accurate even where tau underflows to 0; it is never NaN, and infinite
    only where ``|mu|`` really exceeds the float range (tiny a).

    Parameters
    ----------
    key : jax.Array
        A PRNG key.
    mu0 : array_like
        The prior mean of mu.
    lam : array_like
        The precision multiplier of mu given tau, positive.
    a, b : array_like
        Shape and rate of tau, positive.
    shape : tuple of int, optional
        The shape of the draws (default: the broadcast shape of the parameters).
    dtype : dtype, optional
        The float type (default: that of the parameters).

    Returns
    -------
    mu : jax.Array
        The means.
    tau : jax.Array
        The precisions.

    Examples
    --------
    >>> import jax
    >>> from gibbsjax import random as gr
    >>> mu, tau = gr.normal_gamma(jax.random.key(0), 0.0, 1.0, 3.0, 2.0, shape=(5,))
    >>> mu.shape, tau.shape
    ((5,), (5,))
    """
    return _normal_gamma(key, mu0, lam, a, b, shape=_static_shape(shape), dtype=_default_dtype(dtype, mu0, lam, a, b))


@partial(jax.jit, static_argnames=("shape", "dtype"))
def _normal_gamma(key, mu0, lam, a, b, shape, dtype):
    cdtype, out = _compute_dtype(dtype)
    shape, (mu0, lam, a, b) = _broadcast_params(shape, cdtype, mu0, lam, a, b)
    key_tau, key_mu = jax.random.split(key)
    log_tau = _gamma_draw(_key_pair(key_tau), a, cdtype, log=True) - jnp.log(b)
    z, _ = _Bits.for_shape(_key_pair(key_mu), shape).variate_words(0, cdtype)
    mu = mu0 + _std_normal(z, cdtype) * jnp.exp(-0.5 * (jnp.log(lam) + log_tau))
    return mu.astype(out), jnp.exp(log_tau).astype(out)


# ---------------------------------------------------------------------------
# Dirichlet draws with mostly small concentrations (sparse counts plus a prior)
# ---------------------------------------------------------------------------

# Fixed proposal rounds of the small-shape sampler before its exact fallback
# loop; each round costs one hash and three logs per element.  Chosen by
# measurement (benchmarks/random_primitives.py): 2 rounds beat 1 and 3 at
# shapes 0.01 to 0.1 on a 2-core CPU.
_SMALL_ROUNDS = 2
# Rounds of Marsaglia-Tsang for the shapes of at least 1 among them (the nonzero
# counts).  Every round is another copy of the proposal in the program: fewer
# rounds compile faster, and the draws do not depend on the number (each is the
# first accepted proposal of its own streams).  0 rounds are as fast as 2 on a
# CPU; the small shapes' rounds stay at 2 (figures in benchmarks/README.md,
# "Random-number primitives").
_LARGE_ROUNDS = 0


def _log_gamma_below_one(bits, a, dtype, rounds):
    """log G for G ~ Gamma(a, 1), 0 < a < 1, by G = G(1 + a) U^(1/a) with an exponential proposal.

    G(1 + a) has density x^a e^(-x) / Gamma(1 + a).  Propose x = (1 + a) E with
    E ~ Exp(1) (rate 1 / (1 + a), the best exponential envelope); the ratio of
    target to envelope is largest at x = 1 + a, and x is accepted with
    probability p = exp(a (1 + log E - E)).  Acceptance rate
    Gamma(1 + a) e^a / (1 + a)^(1 + a): 99.4 % at a = 0.01, 94.7 % at 0.1,
    over 68 % for every a < 1.  Given acceptance, V = U / p is again uniform and
    independent of E (U the acceptance uniform), so log V is the log U of the
    boost: log G = log(1 + a) + log E + log(V) / a.  Two words per proposal.

    ``rounds`` proposals are made for every element at once and each keeps
    its first accepted one; a while loop proposes again (further streams)
    while some element has accepted none: each draw is exactly the first
    accepted proposal.  Elements outside (0, 1) give NaN.
    """
    valid = (a > 0) & (a < 1)
    a_ok = jnp.where(valid, a, np.asarray(0.5, dtype))

    def propose(r):
        """log G where proposal r is accepted, NaN where rejected."""
        u_e, u_acc = bits.uniforms(r, dtype)
        e = -jnp.log(u_e)
        log_e = jnp.log(e)  # -inf where u_e rounds to 1: rejected below
        log_p = a_ok * (1 + log_e - e)
        log_u = jnp.log(u_acc)
        out = jnp.log1p(a_ok) + log_e + (log_u - log_p) / a_ok
        return jnp.where(log_u <= log_p, out, jnp.nan)

    g = _first_accepted(propose, valid, rounds, dtype)
    return jnp.where(valid, g, jnp.nan)


def _log_gamma_mixed(key, a, dtype, rounds=_SMALL_ROUNDS, chunk=_CHUNK):
    """log Gamma(a, 1) draws for a flat array ``a`` in which most shapes are below 1.

    Shapes below 1 take :func:`_log_gamma_below_one` (chunks of ``chunk``
    elements, ``lax.map``); the others are gathered (``jnp.nonzero``) and drawn
    by Marsaglia-Tsang (:func:`_gamma_chunk`) in chunks, as many as there are
    such elements (a loop with a traced trip count), then scattered back; where
    all of ``a`` fits in one chunk, both samplers run on every element instead
    and each keeps its own.  Each element's draw depends on the key and its own
    index only.
    """
    n = a.shape[0]
    if n >= 2**32:
        raise ValueError(f"at most 2**32 - 1 draws per call, got {n}")
    key_small, key_large = jax.random.split(key)
    pair_small, pair_large = _key_pair(key_small), _key_pair(key_large)
    small = a < 1
    if n <= chunk:
        # One chunk: both samplers on every element, each element's draw from its own index as
        # below (the same draws), without the gather, its search and the loops.  Below, the one
        # chunk of Marsaglia-Tsang covers all n elements too.
        index = lax.iota(jnp.uint32, n)
        out = _log_gamma_below_one(_Bits(pair_small, index), a, dtype, rounds)
        draw = _gamma_chunk(_Bits(pair_large, index), jnp.where(small, 1, a), dtype, _LARGE_ROUNDS, True,
                            below_one=False)
        return jnp.where(small, out, draw)
    chunks = -(-n // chunk)
    size = -(-n // chunks // 128) * 128
    chunks = -(-n // size)
    flat = jnp.pad(a, (0, chunks * size - n), constant_values=0.5)
    index = lax.iota(jnp.uint32, chunks * size)

    def one_small(args):
        a_c, index_c = args
        return _log_gamma_below_one(_Bits(pair_small, index_c), a_c, dtype, rounds)

    out = lax.map(one_small, (flat.reshape(chunks, size), index.reshape(chunks, size))).reshape(-1)[:n]
    # The other shapes (a ≥ 1, or invalid: NaN): Marsaglia-Tsang on their indices only.
    # The j-th of them sits where the running count of such elements first reaches
    # j + 1; the running count is a log-depth scan (XLA's CPU cumsum and jnp.nonzero
    # were several times slower), and each chunk finds its indices by binary search.
    large = ~small
    running = lax.associative_scan(jnp.add, large.astype(jnp.int32))
    num_large = running[-1]
    slots = lax.iota(jnp.int32, size) + 1

    def one_large(i, out):
        ids_c = jnp.searchsorted(running, i * size + slots, side="left").astype(jnp.int32)  # n: past the end
        a_c = jnp.take(a, ids_c, mode="fill", fill_value=1)
        draw = _gamma_chunk(_Bits(pair_large, ids_c.astype(jnp.uint32)), a_c, dtype, _LARGE_ROUNDS, True,
                            below_one=False)
        return out.at[ids_c].set(draw, mode="drop")

    return lax.fori_loop(0, (num_large + size - 1) // size, one_large, out)


def log_dirichlet_counts(key, counts, concentration, dtype=None):
    """Log-probabilities of Dirichlet(counts + concentration) draws along the last axis.

    The same distribution as ``log_dirichlet(key, counts + concentration)``
    (each row p ~ Dir(n + c), ``log p_k = log G_k - logsumexp(log G)``), with a
    gamma sampler built for the usual Gibbs case of sparse counts and a
    concentration below 1 (topic-word and document-topic rows of LDA): shapes
    below 1 are drawn by an exponential-envelope rejection sampler for
    G(1 + a) with a boost (one hash and three logs per proposal), and only the
    remaining shapes by Marsaglia-Tsang.  Exact like :func:`log_gamma`, not equal
    draw for draw to :func:`log_dirichlet`.

    Parameters
    ----------
    key : jax.Array
        A PRNG key.
    counts : array_like
        Nonnegative counts, shape ``(..., K)`` (any numeric dtype).
    concentration : array_like
        Positive, broadcasting to ``counts``.
    dtype : dtype, optional
        The float type (default: that of ``concentration``, float32 for Python numbers).

    Returns
    -------
    jax.Array
        Log-probabilities, of ``counts``' shape.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> from gibbsjax import random as gr
    >>> lp = gr.log_dirichlet_counts(jax.random.key(0), jnp.array([[0, 3, 0, 0], [5, 0, 1, 0]]), 0.01)
    >>> lp.shape, bool(jnp.allclose(jax.nn.logsumexp(lp, axis=-1), 0.0, atol=1e-5))
    ((2, 4), True)
    """
    return _log_dirichlet_counts(key, _category_counts(counts), concentration,
                                 dtype=_default_dtype(dtype, concentration))


def _category_counts(counts):
    counts = jnp.asarray(counts)
    if counts.ndim < 1:
        raise ValueError("counts must have at least one dimension (the categories)")
    return counts


def _dirichlet_rows(counts, concentration, dtype, log_gammas):
    """log p = log G − logsumexp(log G) along the last axis, log G_k = ``log_gammas(a, cdtype)`` of
    the shapes a = counts + concentration: the body of the Dirichlet-from-counts draws."""
    cdtype, out = _compute_dtype(dtype)
    a = counts.astype(cdtype) + jnp.asarray(concentration, cdtype)
    if a.shape != counts.shape:
        raise ValueError(f"concentration of shape {jnp.shape(concentration)} does not broadcast to counts "
                         f"of shape {counts.shape}")
    lg = log_gammas(a, cdtype)
    return (lg - jax.nn.logsumexp(lg, axis=-1, keepdims=True)).astype(out)


@partial(jax.jit, static_argnames=("dtype",))
def _log_dirichlet_counts(key, counts, concentration, dtype):
    return _dirichlet_rows(counts, concentration, dtype,
                           lambda a, cdtype: _log_gamma_mixed(key, a.reshape(-1), cdtype).reshape(a.shape))


def log_dirichlet_dense(key, counts, concentration, dtype=None):
    """Log-probabilities of Dirichlet(counts + concentration) draws along the last axis, by ``jax.random.loggamma``.

    XLA's own gamma sampler draws every entry.  The distribution of
    :func:`log_dirichlet_counts` (``log p_k = log G_k - logsumexp(log G)``,
    G_k ~ Gamma(n_k + c), independent), drawn the way that is fastest on a GPU
    and much slower than the sparse-count sampler on a CPU (``benchmarks/README.md``,
    "Random-number primitives"), so the LDA kernels pick one per backend
    (:func:`gibbsjax.models.lda.resolve_dirichlet_draw`).  Exact:
    ``jax.random.loggamma`` draws log G(a) for a < 1 as log G(a + 1) + log(U)/a
    (the boost), in log space, so tiny concentrations do not underflow.  Its
    variates depend on the array's shape, not on how the rows are laid out over
    devices.

    Parameters
    ----------
    key, counts, concentration, dtype
        As in :func:`log_dirichlet_counts` (the same distribution).

    Returns
    -------
    jax.Array
        Log-probabilities (``counts``' shape).

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> from gibbsjax.random import log_dirichlet_dense
    >>> lp = log_dirichlet_dense(jax.random.key(0), jnp.array([[0, 3, 0, 0], [5, 0, 1, 0]]), 0.01)
    >>> lp.shape, bool(jnp.allclose(jax.nn.logsumexp(lp, axis=-1), 0.0, atol=1e-5))
    ((2, 4), True)
    """
    return _log_dirichlet_dense(key, _category_counts(counts), concentration,
                                dtype=_default_dtype(dtype, concentration))


@partial(jax.jit, static_argnames=("dtype",))
def _log_dirichlet_dense(key, counts, concentration, dtype):
    return _dirichlet_rows(counts, concentration, dtype, lambda a, cdtype: jax.random.loggamma(key, a, dtype=cdtype))


# ---------------------------------------------------------------------------
# Categorical: inverse CDF with one uniform per draw
# ---------------------------------------------------------------------------

# Up to this many categories, one fused pass walks the categories in order
# (unrolled at trace time).  More categories are split into about sqrt(K)
# blocks of about sqrt(K): pick a block, then a category inside it.  Chosen by
# measurement (benchmarks/random_primitives.py).
_WALK_MAX = 128
# Up to this many categories the two-level search unrolls its block sums too
# (fast, but compile time grows with K); beyond, it reduces a padded copy.
_UNROLL_MAX = 512


def _walk(logits, m, target):
    """Inverse-CDF walk over the weights exp(logits - m) along the last axis.

    With S_k = w_0 + ... + w_k the running sum in order (non-decreasing in
    floating point, as every w_k >= 0), returns

    * ``count`` = #{k : S_k <= target}: the k with S_{k-1} <= target < S_k,
      whose weight is therefore positive (if target < S_{K-1});
    * ``last``: the last index with a finite logit (the clamp for a target
      that rounding pushed to or past the total);
    * ``below``/``above``: the largest S_k <= target (0 if none) and the
      smallest S_k > target (inf if none), for the residual.
    """
    running = jnp.zeros_like(target)
    count = jnp.zeros(target.shape, jnp.int32)
    last = jnp.zeros(m.shape, jnp.int32)  # per row of logits, not per draw
    below = jnp.zeros_like(target)
    above = jnp.full_like(target, jnp.inf)
    for k in range(logits.shape[-1]):
        x_k = logits[..., k]
        running = running + jnp.exp(x_k - m)
        le = running <= target
        count = count + le.astype(jnp.int32)
        last = jnp.where(x_k > -jnp.inf, k, last)
        below = jnp.where(le, running, below)
        above = jnp.where(le, above, jnp.minimum(above, running))
    return count, last, below, above


def _search(logits, u):
    """Index k with probability exp(logits_k) / sum exp(logits), by inversion of u in [0, 1).

    Returns ``(index, residual)``: ``residual`` is where u fell inside the chosen
    category's interval, as a fraction in [0, 1); given the index it is again
    uniform, which lets a two-level search reuse u.  Never returns an index of
    zero weight (-inf logit) when some weight is positive.  The weights are
    never materialised: exp(logits - max) is recomputed inside each pass, so
    the passes read only ``logits``.
    """
    n = logits.shape[-1]
    m = jnp.max(logits, axis=-1)
    m = jnp.where(jnp.isfinite(m), m, 0)  # rows of all -inf: weights 0, index 0

    if n > _WALK_MAX:
        # Two levels: blocks of `size` consecutive categories; pick a block by
        # its total weight, then a category inside it.
        size = math.ceil(math.sqrt(n))
        blocks = math.ceil(n / size)
        if n <= _UNROLL_MAX:
            # Block totals as running sums over columns: XLA fuses these
            # element-wise chains far better than many short reductions, and
            # no (..., K) intermediate is written (on CPU, writing one costs
            # more than the arithmetic).
            block_totals = []
            for j in range(blocks):
                total = jnp.zeros_like(m)
                for k in range(j * size, min((j + 1) * size, n)):
                    total = total + jnp.exp(logits[..., k] - m)
                block_totals.append(total)
            block_totals = jnp.stack(block_totals, axis=-1)
        else:
            # Many categories: reductions over the reshaped full blocks plus
            # the partial last one (compiles fast).
            full = n // size
            xb = logits[..., :full * size].reshape(logits.shape[:-1] + (full, size))
            block_totals = jnp.sum(jnp.exp(xb - m[..., None, None]), axis=-1)
            if full < blocks:
                rest = jnp.sum(jnp.exp(logits[..., full * size:] - m[..., None]), axis=-1)
                block_totals = jnp.concatenate([block_totals, rest[..., None]], axis=-1)
        block_logits = jnp.log(block_totals)
        block, u_inside = _search(block_logits, u)
        columns = block[..., None] * size + lax.iota(jnp.int32, size)
        inside = jnp.take_along_axis(logits, columns, axis=-1, mode="fill", fill_value=-jnp.inf)
        offset, residual = _search(inside, u_inside)
        return block * size + offset, residual

    total = jnp.sum(jnp.exp(logits - m[..., None]), axis=-1)
    target = u * total
    count, last, below, above = _walk(logits, m, target)
    index = jnp.minimum(count, last)
    one_minus = jnp.asarray(1 - jnp.finfo(target.dtype).epsneg, target.dtype)
    residual = jnp.clip((target - below) / (above - below), 0, one_minus)
    residual = jnp.where(count <= last, residual, one_minus)  # overshoot: last category
    return index, residual


def categorical(key, logits, axis=-1, shape=None):
    """Categorical draws from unnormalised log-weights, one uniform per draw.

    P(k) = exp(logits_k) / sum_j exp(logits_j) along ``axis``; ``-inf`` logits
    have probability 0 and are never returned.  Inverse CDF: with weights
    w = exp(logits - max), total W and U ~ U[0, 1), return the k with
    ``w_0 + ... + w_{k-1} <= U W < w_0 + ... + w_k``, clamped to the last index of
    positive weight (so rounding can never pick a zero-weight index).  U has
    24 bits in float32 (53 in float64), so probabilities are resolved to
    about 6e-8 of the total (float32 cumulative sums have the same limit).
    A row with no finite logit gives index 0; +inf and NaN logits are not supported.

    Parameters
    ----------
    key : jax.Array
        A PRNG key.
    logits : array_like
        Unnormalised log-weights.
    axis : int, default -1
        The category axis.
    shape : tuple of int, optional
        The shape of the draws (default: ``logits.shape`` without ``axis``; like
        ``jax.random.categorical``, it must broadcast with that batch shape).

    Returns
    -------
    jax.Array
        int32 category indices of shape ``shape``.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> from gibbsjax import random as gr
    >>> logits = jnp.log(jnp.array([0.2, 0.0, 0.8]))   # category 1 impossible
    >>> k = gr.categorical(jax.random.key(0), logits, shape=(10_000,))
    >>> bool((k != 1).all()), round(float((k == 2).mean()), 1)
    (True, 0.8)
    """
    return _categorical(key, logits, axis=int(axis), shape=_static_shape(shape))


@partial(jax.jit, static_argnames=("axis", "shape"))
def _categorical(key, logits, axis, shape):
    logits = jnp.asarray(logits)
    if not jnp.issubdtype(logits.dtype, jnp.floating):
        logits = logits.astype(jnp.float32)
    cdtype, _ = _compute_dtype(logits.dtype)
    logits = jnp.moveaxis(logits.astype(cdtype), axis, -1)
    batch = logits.shape[:-1]
    if shape is None:
        shape = batch
    elif jnp.broadcast_shapes(shape, batch) != shape:
        raise ValueError(f"logits batch shape {batch} does not broadcast to shape {shape}")
    # Align the batch dims with `shape` but do not broadcast: every pass
    # broadcasts element-wise, so rows shared by many draws are read, not copied.
    logits = logits.reshape((1,) * (len(shape) - len(batch)) + logits.shape)
    w, _ = _Bits.for_shape(_key_pair(key), shape).variate_words(0, cdtype)
    index, _ = _search(logits, _unit_interval(w, cdtype))
    return index.astype(jnp.int32)


def categorical_at(key, logits, index):
    """Rows of a larger :func:`categorical` draw: the draws at flat positions ``index``.

    ``categorical(key, logits_all)`` for a batch of rows (logits (N, K), draws (N,))
    gives row i the uniform of counter i under ``key``.  This gives row j of
    ``logits`` the uniform of counter ``index[j]``, so
    ``categorical_at(key, logits_all[idx], idx) == categorical(key, logits_all)[idx]``,
    bit for bit: a model whose rows are split over devices draws exactly what it draws
    on one device when each device passes its rows' global positions.

    Parameters
    ----------
    key : jax.Array
        A PRNG key.
    logits : array_like
        Unnormalised log-weights, shape ``(..., K)``.
    index : array_like
        Integers in [0, 2**32): each row's flat position, of the batch shape of ``logits``.

    Returns
    -------
    jax.Array
        int32 category indices of the batch shape.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> from gibbsjax import random as gr
    >>> logits = jnp.log(jax.random.dirichlet(jax.random.key(1), jnp.ones(4), (6,)))
    >>> full = gr.categorical(jax.random.key(0), logits)
    >>> part = gr.categorical_at(jax.random.key(0), logits[3:], jnp.arange(3, 6))
    >>> bool((part == full[3:]).all())
    True
    """
    logits = jnp.asarray(logits)
    index = jnp.asarray(index)
    if not jnp.issubdtype(index.dtype, jnp.integer):
        raise ValueError(f"index must hold integers, got dtype {index.dtype}")
    if index.shape != logits.shape[:-1]:
        raise ValueError(f"index has shape {index.shape}; it must be the batch shape of logits "
                         f"{logits.shape[:-1]} (logits: (..., categories))")
    return _categorical_at(key, logits, index)


@jax.jit
def _categorical_at(key, logits, index):
    if not jnp.issubdtype(logits.dtype, jnp.floating):
        logits = logits.astype(jnp.float32)
    cdtype, _ = _compute_dtype(logits.dtype)
    w, _ = _Bits(_key_pair(key), index.astype(jnp.uint32)).variate_words(0, cdtype)
    index, _ = _search(logits.astype(cdtype), _unit_interval(w, cdtype))
    return index.astype(jnp.int32)
