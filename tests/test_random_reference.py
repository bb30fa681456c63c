"""Deterministic reference checks of gibbsjax.random, in float64 NumPy.

The statistical tests in test_random.py check moments; a wrong constant that shifts a
distribution by a fraction of a standard error passes them.  Here every draw is recomputed
from the same random words by an independent float64 NumPy implementation, and must agree
to rounding:

* Threefry-2x32 (20 rounds): Random123's published known-answer vectors, JAX's own
  ``threefry_2x32`` and ``jax.random.bits`` / ``split``;
* normals and uniforms from those words;
* gamma by Marsaglia & Tsang (2000) given the same normals and uniforms (d = a - 1/3,
  c = 1/sqrt(9 d), accept if log U < z^2/2 + d - d v + d log v), boosted by U^(1/a) for a < 1;
* beta, log-space Dirichlet (log G_k - logsumexp log G) and categorical (inverse CDF of one
  uniform).

Only the stream layout (which counter feeds which variate, documented in random.py) is
taken from the library; every formula is recomputed here.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import erfinv, logsumexp

from gibbsjax import random as gr

MASK = 0xFFFFFFFF
ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)  # Salmon et al. (2011), Threefry-2x32


def np_threefry2x32(key, x0, x1, rounds=20):
    """Threefry-2x32 in uint64 NumPy arithmetic, masked to 32 bits (written from the paper)."""
    k0, k1 = (int(k) & MASK for k in key)
    ks = [k0, k1, (k0 ^ k1 ^ 0x1BD11BDA) & MASK]
    x0 = (np.asarray(x0, np.uint64) + np.uint64(ks[0])) & np.uint64(MASK)
    x1 = (np.asarray(x1, np.uint64) + np.uint64(ks[1])) & np.uint64(MASK)
    for i in range(rounds):
        r = np.uint64(ROTATIONS[i % 8])
        x0 = (x0 + x1) & np.uint64(MASK)
        x1 = ((x1 << r) | (x1 >> (np.uint64(32) - r))) & np.uint64(MASK)
        x1 = x1 ^ x0
        if i % 4 == 3:
            j = i // 4 + 1
            x0 = (x0 + np.uint64(ks[j % 3])) & np.uint64(MASK)
            x1 = (x1 + np.uint64(ks[(j + 1) % 3]) + np.uint64(j)) & np.uint64(MASK)
    return x0, x1


# Random123 kat_vectors, "threefry2x32 20": counter (2 words), key (2 words), result (2 words).
KAT = [
    ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x243F6A88, 0x85A308D3), (0x13198A2E, 0x03707344), (0xC4923A9C, 0x483DF7A0)),
]
# ... and the 13-round vectors, to check that the round structure (not only 20) is right.
KAT13 = [
    ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x9D1C5EC6, 0x8BD50731)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0xFD36D048, 0x2D17272C)),
    ((0x243F6A88, 0x85A308D3), (0x13198A2E, 0x03707344), (0xBA3E4725, 0xF27D669E)),
]


@pytest.mark.parametrize("ctr, key, expected", KAT)
def test_library_threefry_matches_random123_known_answers(ctr, key, expected):
    k = [jnp.asarray(v, jnp.uint32) for v in key]
    x = [jnp.asarray(v, jnp.uint32) for v in ctr]
    got = jax.jit(gr.threefry2x32)(k[0], k[1], x[0], x[1])
    assert [int(g) for g in got] == list(expected)


@pytest.mark.parametrize("ctr, key, expected", KAT + KAT13)
def test_numpy_reference_threefry_matches_random123_known_answers(ctr, key, expected):
    rounds = 13 if (ctr, key, expected) in KAT13 else 20
    got = np_threefry2x32(key, [ctr[0]], [ctr[1]], rounds=rounds)
    assert [int(g[0]) for g in got] == list(expected)


def test_library_threefry_matches_jax_and_the_reference_on_many_inputs():
    rng = np.random.default_rng(0)
    key = rng.integers(0, 2**32, size=2, dtype=np.uint32)
    x0, x1 = rng.integers(0, 2**32, size=(2, 1000), dtype=np.uint32)
    ours = jax.jit(gr.threefry2x32)(jnp.uint32(key[0]), jnp.uint32(key[1]), jnp.asarray(x0), jnp.asarray(x1))
    from jax.extend.random import threefry_2x32

    theirs = threefry_2x32(jnp.asarray(key), jnp.concatenate([jnp.asarray(x0), jnp.asarray(x1)]))
    np.testing.assert_array_equal(np.asarray(ours[0]), np.asarray(theirs[:1000]))
    np.testing.assert_array_equal(np.asarray(ours[1]), np.asarray(theirs[1000:]))
    ref = np_threefry2x32(key, x0, x1)
    np.testing.assert_array_equal(np.asarray(ours[0]), ref[0])
    np.testing.assert_array_equal(np.asarray(ours[1]), ref[1])


def test_jax_random_bits_and_split_are_threefry_of_the_element_index():
    """With partitionable Threefry, jax.random.bits(key, (n,), uint32)[i] = w0 ^ w1 and
    split(key, n)[i] = (w0, w1) for (w0, w1) = threefry2x32(key_data(key), (0, i))."""
    import contextlib

    n = 64
    # Partitionable Threefry is the default since jax 0.5; older switches may disappear.
    partitionable = getattr(jax, "threefry_partitionable", None)
    with partitionable(True) if partitionable is not None else contextlib.nullcontext():
        assert jax.config.jax_threefry_partitionable
        key = jax.random.key(20260123)
        kd = np.asarray(jax.random.key_data(key))
        w0, w1 = np_threefry2x32(kd, np.zeros(n), np.arange(n))
        bits = np.asarray(jax.random.bits(key, (n,), jnp.uint32))
        split = np.asarray(jax.random.key_data(jax.random.split(key, n)))
    np.testing.assert_array_equal(bits, (w0 ^ w1).astype(np.uint32))
    np.testing.assert_array_equal(split, np.stack([w0, w1], -1).astype(np.uint32))


# --------------------------------------------------------------------------- variates from words
def words(key, stream, n):
    """The library's documented stream layout: counter (STREAM_BASE + stream, element index)."""
    kd = np.asarray(jax.random.key_data(key))
    return np_threefry2x32(kd, np.full(n, gr._STREAM_BASE + stream), np.arange(n))


def variate_pairs(key, logical, n):
    """float64: logical stream s -> two variates from (hi, lo) word pairs of streams 2s, 2s + 1."""
    w0, w1 = words(key, 2 * logical, n)
    v0, v1 = words(key, 2 * logical + 1, n)
    return (w0, w1), (v0, v1)


def top53(pair):
    hi, lo = (np.asarray(w, np.uint64) for w in pair)
    return ((hi << np.uint64(21)) | (lo >> np.uint64(11))).astype(np.int64)


def normal64(pair):
    v = (2.0 * top53(pair) + (1.0 - 2.0**53)) / 2.0**53
    return np.sqrt(2.0) * erfinv(v)


def uniform64_open(pair):
    hi, lo = (np.asarray(w, np.float64) for w in pair)
    return (hi * 2.0**32 + lo + 0.5) * 2.0**-64


def np_log_gamma(key, a):
    """log Gamma(a, 1) draws by Marsaglia & Tsang in float64, element i from counter i."""
    a = np.asarray(a, np.float64).ravel()
    n = a.size
    small = a < 1
    shape = np.where(small, a + 1.0, a)
    d = shape - 1.0 / 3.0
    c = 1.0 / np.sqrt(9.0 * d)
    x = np.full(n, np.nan)
    r = 0
    while np.isnan(x).any():
        zp, up = variate_pairs(key, 1 + r, n)
        z, u = normal64(zp), uniform64_open(up)
        v = (1.0 + c * z) ** 3
        with np.errstate(invalid="ignore", divide="ignore"):
            accept = (v > 0) & (np.log(u) < 0.5 * z * z + d - d * v + d * np.log(v))
        take = np.isnan(x) & accept
        x[take] = np.log(d[take]) + np.log(v[take])
        r += 1
        assert r < 50
    u0 = uniform64_open(variate_pairs(key, 0, n)[0])
    return np.where(small, x + np.log(u0) / np.where(small, a, 1.0), x)


A_GRID = np.array([0.05, 0.3, 0.9, 1.0, 1.7, 2.5, 7.0, 50.0, 1e3, 3e4])


def test_gamma_float64_equals_marsaglia_tsang_given_the_same_normals_and_uniforms():
    a = np.repeat(A_GRID, 200)
    key = jax.random.key(7)
    ref = np_log_gamma(key, a)
    with jax.enable_x64(True):
        lg = np.asarray(gr.log_gamma(key, jnp.asarray(a), dtype=jnp.float64))
        g = np.asarray(gr.gamma(key, jnp.asarray(a), dtype=jnp.float64))
    np.testing.assert_allclose(lg, ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g, np.exp(ref), rtol=1e-11)


def test_gamma_float32_agrees_with_the_float64_reference():
    """float32 variates come from one word each: top 24 bits for the normal, (w + 1/2) 2^-32
    for the uniform.  Recomputed in float64 from those words, the draws agree to float32
    rounding (the rejection decisions coincide)."""
    a = np.repeat(A_GRID[1:], 100)
    n = a.size
    key = jax.random.key(11)
    shape = np.where(a < 1, a + 1.0, a)
    d = shape - 1.0 / 3.0
    c = 1.0 / np.sqrt(9.0 * d)
    x = np.full(n, np.nan)
    r = 0
    while np.isnan(x).any():
        w0, w1 = words(key, 2 * (1 + r), n)
        z = np.sqrt(2.0) * erfinv((2.0 * (w0 >> np.uint64(8)).astype(np.float64) + 1 - 2.0**24) / 2.0**24)
        u = (w1.astype(np.float64) + 0.5) * 2.0**-32
        v = (1.0 + c * z) ** 3
        with np.errstate(invalid="ignore", divide="ignore"):
            accept = (v > 0) & (np.log(u) < 0.5 * z * z + d - d * v + d * np.log(v))
        take = np.isnan(x) & accept
        x[take] = d[take] * v[take]
        r += 1
    u0 = (words(key, 0, n)[0].astype(np.float64) + 0.5) * 2.0**-32
    ref = np.where(a < 1, x * u0 ** (1.0 / a), x)
    got = np.asarray(gr.gamma(key, jnp.asarray(a, jnp.float32)), np.float64)
    np.testing.assert_allclose(got, ref, rtol=2e-5)


def test_beta_float64_is_the_ratio_of_the_reference_gammas():
    a = np.array([0.2, 0.5, 1.0, 2.0, 3.5, 40.0])
    b = np.array([3.0, 0.7, 1.0, 6.0, 0.1, 25.0])
    a_, b_ = np.repeat(a, 50), np.repeat(b, 50)
    key = jax.random.key(3)
    lg = np_log_gamma(key, np.concatenate([a_, b_]))  # a's elements first, then b's
    la, lb = lg[: a_.size], lg[a_.size:]
    ref = np.exp(la - np.logaddexp(la, lb))
    with jax.enable_x64(True):
        got = np.asarray(gr.beta(key, jnp.asarray(a_), jnp.asarray(b_), dtype=jnp.float64))
    np.testing.assert_allclose(got, ref, rtol=1e-11, atol=1e-300)


def test_log_dirichlet_float64_normalises_the_reference_log_gammas():
    alpha = np.array([[1e-3, 0.5, 2.0, 7.0], [3.0, 1.0, 0.05, 0.2], [10.0, 20.0, 30.0, 40.0]])
    batch = (5, 3)
    key = jax.random.key(5)
    full = np.broadcast_to(alpha, batch + (4,))
    lg = np_log_gamma(key, full).reshape(full.shape)  # row-major element index
    ref = lg - logsumexp(lg, axis=-1, keepdims=True)
    with jax.enable_x64(True):
        got = np.asarray(gr.log_dirichlet(key, jnp.asarray(alpha), shape=batch, dtype=jnp.float64))
        p = np.asarray(gr.dirichlet(key, jnp.asarray(alpha), shape=batch, dtype=jnp.float64))
    np.testing.assert_allclose(got, ref, rtol=1e-11, atol=1e-10)
    np.testing.assert_allclose(p, np.exp(ref), rtol=1e-10, atol=1e-300)


def np_categorical(u, logits):
    """Inverse CDF: the k with S_(k-1) <= u W < S_k for the running sums S of exp(logits - max)."""
    w = np.exp(logits - logits.max(-1, keepdims=True))
    cum = np.cumsum(w, -1)
    k = np.sum(cum <= (u * cum[..., -1])[..., None], axis=-1)
    last = logits.shape[-1] - 1 - np.argmax(np.isfinite(logits[..., ::-1]), axis=-1)
    return np.minimum(k, last)


@pytest.mark.parametrize("num_categories", [5, 300])
def test_categorical_float64_is_the_inverse_cdf_of_one_uniform(num_categories):
    rng = np.random.default_rng(num_categories)
    logits = rng.normal(0, 2, size=(4, num_categories))
    logits[:, 1] = -np.inf  # never drawn
    n = 2000
    key = jax.random.key(13)
    u = top53(variate_pairs(key, 0, n * 4)[0]) / 2.0**53  # one uniform per draw, row-major
    ref = np_categorical(u.reshape(n, 4), np.broadcast_to(logits, (n, 4, num_categories)))
    with jax.enable_x64(True):
        got = np.asarray(gr.categorical(key, jnp.asarray(logits), shape=(n, 4)))
    np.testing.assert_array_equal(got, ref)
    assert not np.any(got == 1)


def test_categorical_float32_uses_the_top_24_bits_of_one_word():
    logits = np.log(np.array([0.1, 0.25, 0.05, 0.6]))
    n = 5000
    key = jax.random.key(17)
    u = (words(key, 0, n)[0] >> np.uint64(8)).astype(np.float64) / 2.0**24
    ref = np_categorical(u, np.broadcast_to(logits, (n, 4)))
    got = np.asarray(gr.categorical(key, jnp.asarray(logits, jnp.float32), shape=(n,)))
    np.testing.assert_array_equal(got, ref)
