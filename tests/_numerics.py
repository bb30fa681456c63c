"""Which float rounding this machine does: the fingerprint that stored outputs are recorded with.

A Gibbs sampler is a chaotic map of its state: a last-bit difference in one sum sends a chain on
another path.  Compiled code rounds differently on different CPUs (XLA's CPU backend vectorises
reductions as wide as the CPU's vector unit, AVX2 or AVX-512, so its sums associate differently;
OpenBLAS picks its kernels by CPU at run time), so a long run prints other numbers there with the
same code, seed, Python, jax and numpy.  Outputs stored with exact numbers (the README's demo
excerpt, the notebooks' stored outputs) are compared exactly only where :func:`fingerprint` equals
the one recorded with them.

The fingerprint hashes the bits of a few probes that round differently when the vector width, the
instruction selection or the BLAS kernels do: float32 sums, prefix sums and a matrix product
compiled by XLA, log-gamma and gamma draws, and numpy's float32 and float64 matrix products.
"""

from __future__ import annotations

import hashlib
import platform
from functools import lru_cache
from pathlib import Path


def _simd() -> str:
    """The widest x86 vector extension the CPU reports (empty where /proc/cpuinfo says nothing)."""
    try:
        flags = set(Path("/proc/cpuinfo").read_text().split())
    except OSError:
        return ""
    return next((name for name in ("avx512f", "avx2", "avx", "sse4_2") if name in flags), "")


@lru_cache(maxsize=1)
def fingerprint() -> str:
    """12 hex digits that differ where this machine's float rounding (XLA's CPU code, numpy's BLAS)
    differs, prefixed by the machine and its widest vector extension (for people to read).

    >>> fingerprint() == fingerprint() and len(fingerprint().rsplit("-", 1)[1]) == 12
    True
    """
    import jax
    import jax.numpy as jnp
    import numpy as np

    @jax.jit
    def probes(key):
        k1, k2, k3 = jax.random.split(key, 3)
        x = jax.random.uniform(k1, (4099,), jnp.float32)
        m = jax.random.uniform(k2, (37, 129), jnp.float32)
        return (jnp.sum(x), jnp.cumsum(x)[-7:], jnp.sum(m, axis=1), jnp.sum(jnp.exp(m) * m, axis=0),
                m @ m.T, jax.scipy.special.gammaln(x[:64] * 10 + 0.01),
                jax.random.gamma(k3, x[:256] + 0.05), jax.nn.logsumexp(m, axis=1))

    h = hashlib.sha256()
    for out in probes(jax.random.key(0)):
        h.update(np.asarray(out).tobytes())
    rng = np.random.default_rng(0)
    a = rng.random((67, 131))
    h.update((a @ a.T).tobytes())
    h.update((a.astype(np.float32) @ a.T.astype(np.float32)).tobytes())
    return "-".join(filter(None, (platform.machine(), _simd(), h.hexdigest()[:12])))
