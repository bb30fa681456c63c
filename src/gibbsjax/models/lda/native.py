"""The native CPU kernels of LDA: the partially collapsed z-update and the Dirichlet rows in C++,
called from inside the jitted sweep as XLA FFI custom calls.

``z_update="native"`` (:func:`sample_z_native`) samples the same conditional as every other
z-update of :func:`~gibbsjax.models.lda.partially_collapsed`,
p(z_i = k | z_−i, φ, w) ∝ φ_{k,w_i} (n_dk,−i + α_k), documents in parallel and each document's
tokens in order (exact: documents are independent given φ; Magnusson, Jonsson, Villani &
Broman, JCGS 2018).  Per token it is O(K) for few topics (a running sum and a search) and, from
:data:`SPARSE_FROM_TOPICS` topics on, O(K_d + K/32 + 32) (K_d the topics present in the
document): the weight splits into a document part φ̃_kw n_dk over the document's topics and a word
part α_k φ̃_kw, whose block sums are tabled once per sweep for every word.  A token's uniform is
:func:`~gibbsjax.models.lda.layout.token_uniforms`'s, so the draws depend on the key, the
document and the position only: not on the number of threads, lanes or devices, and equal to the
XLA z-updates' except where float32 sums round differently.

``dirichlet_draw="native"`` (:func:`log_dirichlet_native`) draws log Dir(n + c) rows exactly:
log-gammas of shape below 1 by G(a) = G(1 + a) U^(1/a) with G(1 + a) from an exponential envelope,
shapes of at least 1 by Marsaglia–Tsang, normalised in log space; its random numbers are
SplitMix64 at counter (round, entry) under the call's key.

Both run on the threads :func:`set_num_threads` sets (default: the CPUs this process may use),
over chains × documents (z) or chains × rows (Dirichlet).  The library is built by
``pip install`` (``src/gibbsjax/_native/lda_cpu.cc``); where it is missing or cannot be loaded,
:func:`available` is False, ``"auto"`` picks the pure-XLA updates with a one-time warning saying
what was lost (:func:`warn_unavailable`), and asking for ``"native"`` is a ``ValueError``.
``GIBBSJAX_NATIVE=0`` turns the native kernels off.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.machinery
import os
import pathlib
import warnings

import jax
import jax.numpy as jnp
import numpy as np


__all__ = ["available", "unavailable_reason", "warn_unavailable", "sample_z_native", "sample_z_native_frozen",
           "sample_z_collapsed_native",
           "log_dirichlet_native", "log_dm_sum", "topic_counts", "COLLAPSED_SPARSE_FROM_TOPICS",
           "set_num_threads", "num_threads", "SPARSE_FROM_TOPICS", "UNAVAILABLE_WARNING", "library_path"]

#: from this many topics on, the native z-update uses its sparse form (document topics + word table)
SPARSE_FROM_TOPICS = 64
#: from this many topics on, the native collapsed z-update uses its sparse (bucket) form
COLLAPSED_SPARSE_FROM_TOPICS = 32
#: what the one-time warning says when the native kernels cannot run on a CPU
UNAVAILABLE_WARNING = (
    "gibbsjax LDA: the native CPU kernels cannot run here ({why}); z_update='auto' and dirichlet_draw='auto' "
    "use the pure-XLA updates instead: exact, but several times slower per sweep on a CPU. Reinstall with a C++ "
    "compiler on the PATH (pip install --force-reinstall --no-deps .) to build them.")
_ABI = 4
_LIB_STEM = "_lda_cpu"
_TARGETS = {"gibbsjax_lda_z_pc": "GibbsjaxLdaZPc", "gibbsjax_lda_z_collapsed": "GibbsjaxLdaZCollapsed",
            "gibbsjax_log_dirichlet": "GibbsjaxLogDirichlet",
            "gibbsjax_log_dm_sum": "GibbsjaxLogDmSum", "gibbsjax_lda_counts": "GibbsjaxLdaCounts",
            "gibbsjax_threefry2x32": "GibbsjaxThreefry2x32"}
_warned: set = set()


def library_path() -> pathlib.Path | None:
    """The built kernel library inside the package (``gibbsjax/_native/_lda_cpu*.so``).

    Returns
    -------
    pathlib.Path or None
        The file, or None where ``pip install`` did not build it.

    Examples
    --------
    >>> p = library_path()
    >>> p is None or p.name.startswith("_lda_cpu")
    True
    """
    folder = pathlib.Path(__file__).resolve().parents[2] / "_native"
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = folder / f"{_LIB_STEM}{suffix}"
        if path.is_file():
            return path
    return None


@functools.lru_cache(maxsize=1)
def _load() -> tuple[ctypes.CDLL | None, str]:
    """(the loaded library with its FFI targets registered, "") or (None, why not)."""
    if os.environ.get("GIBBSJAX_NATIVE", "1").strip().lower() in ("0", "false", "no", "off"):
        return None, "GIBBSJAX_NATIVE=0 turns them off"
    path = library_path()
    if path is None:
        return None, "the library gibbsjax/_native/_lda_cpu*.so was not built at install time"
    try:
        ffi = jax.ffi
    except AttributeError:  # jax older than the FFI module
        return None, f"jax {jax.__version__} has no jax.ffi"
    try:
        lib = ctypes.cdll.LoadLibrary(str(path))
        if lib.gibbsjax_native_abi() != _ABI:
            return None, f"{path.name} is from another gibbsjax version (reinstall gibbsjax)"
        for name, symbol in _TARGETS.items():
            ffi.register_ffi_target(name, ffi.pycapsule(getattr(lib, symbol)), platform="cpu")
    except (OSError, AttributeError, ValueError, RuntimeError) as err:
        return None, f"{path.name} cannot be loaded: {err}"
    lib.gibbsjax_set_num_threads(_default_threads())
    if os.environ.get("GIBBSJAX_NATIVE_THREEFRY", "1").strip().lower() not in ("0", "false", "no", "off"):
        _lower_threefry_natively()
    return lib, ""


def _threefry_call(k1, k2, x1, x2):
    """The threefry2x32 primitive's four uint32 operands hashed by the C++ kernel: each operand of one
    element is passed as it is (shared), any other broadcast to the result's shape."""
    shape = jnp.broadcast_shapes(*(jnp.shape(a) for a in (k1, k2, x1, x2)))
    size = int(np.prod(shape, dtype=np.int64))
    ops = [jnp.reshape(a, (1,)) if a.size == 1 else jnp.broadcast_to(a, shape).reshape(size)
           for a in (k1, k2, x1, x2)]
    out = jax.ShapeDtypeStruct((size,), jnp.uint32)
    o1, o2 = jax.ffi.ffi_call("gibbsjax_threefry2x32", (out, out))(*ops)
    return o1.reshape(shape), o2.reshape(shape)


def _lower_threefry_natively() -> None:
    """Lower jax.random's hash (``jax.extend.random.threefry2x32_p``) on the CPU to the C++ kernel: the
    same bits as jax's own lowering (a loop of XLA operations), so every key and variate is unchanged,
    but no loop for XLA to compile at each of a program's random call sites.  For the whole process, from the first use of the native kernels on; ``GIBBSJAX_NATIVE_THREEFRY=0``
    (or ``GIBBSJAX_NATIVE=0``) leaves jax's lowering in place."""
    from jax.extend.random import threefry2x32_p
    from jax.interpreters import mlir

    mlir.register_lowering(threefry2x32_p, mlir.lower_fun(_threefry_call, multiple_results=True), platform="cpu")


def _default_threads() -> int:
    """GIBBSJAX_NUM_THREADS if set, else the CPUs this process may run on."""
    given = os.environ.get("GIBBSJAX_NUM_THREADS", "").strip()
    if given:
        try:
            return max(1, int(given))
        except ValueError:
            raise ValueError(f"GIBBSJAX_NUM_THREADS must be a positive integer, got {given!r}") from None
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def available() -> bool:
    """Whether the native CPU kernels are built, loaded and allowed here.

    Returns
    -------
    bool
        True where ``z_update="native"`` and ``dirichlet_draw="native"`` can run.

    Examples
    --------
    >>> isinstance(available(), bool)
    True
    """
    return _load()[0] is not None


def unavailable_reason() -> str:
    """Why the native CPU kernels cannot run here.

    Returns
    -------
    str
        The reason, or "" when :func:`available` is True.

    Examples
    --------
    >>> (unavailable_reason() == "") == available()
    True
    """
    return _load()[1]


def warn_unavailable() -> None:
    """Warn once per reason that a CPU run uses the pure-XLA updates instead of the native kernels.

    ``"auto"`` calls it when it picks the pure-XLA updates on a CPU; where the kernels are
    available it says nothing.

    Examples
    --------
    >>> warn_unavailable() if available() else None
    """
    why = unavailable_reason()
    if why and why not in _warned:
        _warned.add(why)
        warnings.warn(UNAVAILABLE_WARNING.format(why=why), RuntimeWarning, stacklevel=4)


def set_num_threads(n: int) -> None:
    """Use ``n`` threads in the native kernels (the draws are the same for every ``n``).

    Parameters
    ----------
    n : int
        At least 1.

    Raises
    ------
    ValueError
        For ``n`` < 1, or where the kernels are not available.

    Examples
    --------
    >>> if available():
    ...     before = num_threads(); set_num_threads(1); set_num_threads(before)
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    lib = _require()
    lib.gibbsjax_set_num_threads(int(n))


def num_threads() -> int:
    """The threads the native kernels use.

    Returns
    -------
    int
        At least 1 (1 where the kernels are not available).

    Examples
    --------
    >>> num_threads() >= 1
    True
    """
    lib = _load()[0]
    return int(lib.gibbsjax_num_threads()) if lib is not None else 1


def _require():
    lib, why = _load()
    if lib is None:
        raise ValueError(f"the native CPU kernels are not available: {why}")
    return lib


def _key_words(key):
    """The 64-bit key (two uint32 words) a native kernel hashes with: the pair of
    :func:`~gibbsjax.models.lda.layout.token_uniforms` (works for every PRNG implementation)."""
    return jax.random.bits(key, (2,), jnp.uint32)


def sample_z_native(key, state, d, *, K: int, alpha, keep_own: bool = False, sparse_from: int | None = None):
    """The partially collapsed z-update in C++: p(z_i = k | z_−i, φ, w) ∝ φ_{k,w_i} (n_dk,−i + α_k).

    The same conditional, visiting order and uniforms as
    :func:`~gibbsjax.models.lda.sample_z_partially_collapsed` (see the module docs).

    Parameters
    ----------
    key : jax.Array
        PRNG key (of the sweep).
    state : LDAState or LDALearnedState
        The current state.
    d : LDAData
        The packed corpus.
    K : int
        Number of topics.
    alpha : float or jax.Array
        α: a number, a traced scalar, or (K,) one per topic.
    keep_own : bool, default False
        For tests only: a planted WRONG variant that leaves each token's own topic in its
        document's count (n_dk instead of n_dk,−i), so that the exactness tests can show they fail.
    sparse_from : int, optional
        The number of topics from which the sparse form runs (default :data:`SPARSE_FROM_TOPICS`;
        the tests set it to check both forms at every K).

    Returns
    -------
    jax.Array
        (S, R) int32: the new topics (padding: 0).

    Examples
    --------
    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models.lda import data, partially_collapsed
    >>> d = data(Corpus.from_token_lists([["a", "b", "a"], ["c", "b"]]))
    >>> s = partially_collapsed(2, z_update="dense").init(jax.random.key(0), d)
    >>> z = sample_z_native(jax.random.key(1), s, d, K=2, alpha=0.1) if available() else s.z
    >>> z.shape == d.words.shape
    True
    """
    return _z_call(key, state.z, state.log_phi, d, K=K, alpha=alpha, keep_own=keep_own, sparse_from=sparse_from)


def sample_z_collapsed_native(key, state, d, *, K: int, alpha, eta, keep_own: bool = False,
                              sparse_from: int | None = None):
    """The collapsed z-update in C++: p(z_i = k | z_−i, w) ∝ (n_kw,−i + η)(n_dk,−i + α_k)/(n_k,−i + Vη).

    Every token sees every earlier update of its chain (Griffiths & Steyvers 2004), in the bucket
    form of Yao, Mimno & McCallum (KDD 2009): the weight splits into a part over the topics the
    word holds, a part over the topics the document holds and a part over every topic, whose sums
    are kept up to date, so a token costs the word's and the document's topics, not K; below
    :data:`COLLAPSED_SPARSE_FROM_TOPICS` topics every topic's weight is summed instead.  One chain is
    one sequence on one thread (documents in row order, each document's tokens in order), chains in
    parallel; each token's uniform is the partially collapsed update's (keyed by document and
    position), so the draws depend on the key only: not on the threads, nor on the lanes.

    Parameters
    ----------
    key, state, d, K, alpha
        As in :func:`sample_z_native` (only the state's ``z`` is read).
    eta : float or jax.Array
        η: a number or a traced scalar.
    keep_own : bool, default False
        For tests only: a planted WRONG variant that draws each token with its own topic still
        counted (n_kw, n_dk and n_k instead of their values without token i), so that the
        exactness tests can show they fail.
    sparse_from : int, optional
        The number of topics from which the sparse form runs (default
        :data:`COLLAPSED_SPARSE_FROM_TOPICS`; below it every topic's weight is summed, with the
        word–topic counts word-major); the tests set it to check both forms at every K.

    Returns
    -------
    jax.Array
        The new topics, as :func:`sample_z_native` returns them.

    Examples
    --------
    >>> from gibbsjax.datasets import abc_corpus
    >>> from gibbsjax.models.lda import collapsed, data
    >>> d = data(abc_corpus())
    >>> s = collapsed(2, z_update="dense").init(jax.random.key(0), d)
    >>> z = sample_z_collapsed_native(jax.random.key(1), s, d, K=2, alpha=0.1, eta=0.01) if available() else s.z
    >>> z.shape == d.words.shape
    True
    """
    _require()
    i32 = jnp.int32
    z = state.z
    alpha_k = jnp.broadcast_to(jnp.asarray(alpha, jnp.float32), (K,))
    eta_1 = jnp.reshape(jnp.asarray(eta, jnp.float32), (1,))
    call = jax.ffi.ffi_call("gibbsjax_lda_z_collapsed", jax.ShapeDtypeStruct(z.shape, i32),
                            vmap_method="expand_dims")
    return call(_key_words(key), z.astype(i32), alpha_k, eta_1, d.words.astype(i32), d.docs.astype(i32),
                d.doc_lengths.astype(i32), d.doc_ids.astype(i32), d.word_counts.astype(i32),
                keep_own=np.int64(bool(keep_own)),
                sparse_from=np.int64(COLLAPSED_SPARSE_FROM_TOPICS if sparse_from is None else sparse_from))


def _z_call(key, z, log_phi, d, *, K, alpha, keep_own=False, sparse_from=None, nkw=None, eta=None):
    """The FFI call of the z-update; with ``nkw`` (and ``eta``) the frozen-count warm-up instead of φ."""
    _require()
    alpha_k = jnp.broadcast_to(jnp.asarray(alpha, jnp.float32), (K,))
    i32 = jnp.int32
    frozen = nkw is not None
    counts = nkw.astype(i32) if frozen else jnp.zeros((1, 1), i32)
    eta_1 = jnp.reshape(jnp.asarray(eta if frozen else 0.0, jnp.float32), (1,))
    call = jax.ffi.ffi_call("gibbsjax_lda_z_pc", jax.ShapeDtypeStruct(z.shape, i32), vmap_method="expand_dims")
    return call(_key_words(key), z.astype(i32), log_phi.astype(jnp.float32), alpha_k,
                d.words.astype(i32), d.docs.astype(i32), d.doc_lengths.astype(i32), d.doc_ids.astype(i32),
                counts, eta_1,
                sparse_from=np.int64(SPARSE_FROM_TOPICS if sparse_from is None else sparse_from),
                keep_own=np.int64(bool(keep_own)), frozen_counts=np.int64(frozen))


def sample_z_native_frozen(key, state, d, *, K: int, alpha, eta, word_topic=None, sparse_from: int | None = None):
    """APPROXIMATE (for warm-up only): :func:`~gibbsjax.models.lda.sample_z_collapsed_frozen` in C++.

    Every token i gets p(z_i = k) ∝ (n_kw,−i + η)/(n_k,−i + Vη) · (n_dk,−i + α_k), n_kw and n_k
    the word–topic counts at the START of the sweep (frozen for the whole sweep) with only token i's
    own old topic taken out, n_dk following its own document in sequence; each token's uniform keyed
    by its document and position.  It does not leave the posterior invariant (each token ignores
    the other documents' updates of this sweep; Newman et al. 2009 call such updates AD-LDA), so the
    kernels run it as their warm-up only (``warmup="fast"``); its draws depend on neither the lanes
    nor the devices.  The native z-update's machinery (dense or sparse form, every thread) with
    φ̂_kw = (n_kw + η)/(n_k + Vη) in place of a drawn φ.

    Parameters
    ----------
    key : jax.Array
        PRNG key (of the sweep).
    state : LDAState or LDALearnedState
        The current state (its ``log_phi`` is not read).
    d, K, alpha
        As in :func:`sample_z_native`.
    eta : float or jax.Array
        η: a number or a traced scalar.
    word_topic : tuple of jax.Array, optional
        (n_kw (K, V), n_k (K,)) of the whole corpus, when ``d`` holds only part of it (a shard);
        n_k is recomputed from n_kw.
    sparse_from : int, optional
        As for :func:`sample_z_native`.

    Returns
    -------
    jax.Array
        (S, R) int32: the topics after the warm-up sweep, as :func:`sample_z_native` returns them.

    Examples
    --------
    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models.lda import data, partially_collapsed
    >>> s0 = partially_collapsed(2, z_update="dense")
    >>> d = data(Corpus.from_token_lists([["a", "b", "a"], ["c", "b"]]))
    >>> s = s0.init(jax.random.key(0), d)
    >>> z = sample_z_native_frozen(jax.random.key(1), s, d, K=2, alpha=0.1, eta=0.01) if available() else s.z
    >>> z.shape == d.words.shape
    True
    """
    nkw = topic_counts(state.z, d, K)[1] if word_topic is None else word_topic[0]
    return _z_call(key, state.z, state.log_phi, d, K=K, alpha=alpha, sparse_from=sparse_from, nkw=nkw, eta=eta)


def log_dirichlet_native(key, counts, concentration, dtype=None):
    """log p ~ log Dir(counts + concentration) along the last axis, in C++ (exact).

    Every entry is an independent log Gamma(n + c) variate (shapes below 1: G(1 + a) U^(1/a),
    G(1 + a) by an exponential envelope; the others: Marsaglia–Tsang), each row normalised in
    log space.  The same distribution as :func:`gibbsjax.random.log_dirichlet_counts`, other
    variates.

    Parameters
    ----------
    key : jax.Array
        PRNG key.
    counts : array_like
        Nonnegative integer counts, shape ``(..., C)``.
    concentration : array_like
        Positive: a scalar or ``(C,)``.
    dtype : dtype, optional
        The float type of the result (default: that of ``concentration``, float32 for Python
        numbers; the draw itself is float32).

    Returns
    -------
    jax.Array
        Log-probabilities of ``counts``' shape.

    Examples
    --------
    >>> if available():
    ...     p = jnp.exp(log_dirichlet_native(jax.random.key(0), jnp.array([[3, 0, 1]]), 0.5))
    ...     assert abs(float(p.sum()) - 1) < 1e-5
    """
    _require()
    counts = jnp.asarray(counts)
    shape = counts.shape
    cols = shape[-1]
    rows = int(np.prod(shape[:-1], dtype=np.int64))
    conc = jnp.broadcast_to(jnp.asarray(concentration, jnp.float32), (cols,))
    call = jax.ffi.ffi_call("gibbsjax_log_dirichlet", jax.ShapeDtypeStruct((rows, cols), jnp.float32),
                            vmap_method="expand_dims")
    out = call(_key_words(key), counts.astype(jnp.int32).reshape(rows, cols), conc).reshape(shape)
    if dtype is None:
        given = jnp.asarray(concentration).dtype
        dtype = given if jnp.issubdtype(given, jnp.floating) else jnp.float32
    return out.astype(dtype)


def log_dm_sum(counts, concentration):
    """Σ over rows of Σ_j [log Γ(n_j + c_j) − log Γ(c_j)] − [log Γ(N + C) − log Γ(C)] (N and C the row's
    sums of counts and concentrations), in C++: the count-dependent part of the Dirichlet-multinomial
    log likelihood of every row, summed (the collapsed LDA log joint,
    :func:`~gibbsjax.models.lda.log_joint_collapsed`).  Only the nonzero counts are evaluated, in float64,
    and the rows are summed in order, so an empty row adds exactly 0 and the sum does not depend on the
    number of threads.

    Parameters
    ----------
    counts : array_like
        Nonnegative integer counts, shape ``(rows, C)``.
    concentration : array_like
        Positive: a scalar or ``(C,)``.

    Returns
    -------
    jax.Array
        float32 scalar.

    Examples
    --------
    >>> from jax.scipy.special import gammaln
    >>> if available():
    ...     got = float(log_dm_sum(jnp.array([[2, 0, 5], [0, 0, 0]]), 0.5))
    ...     want = float(gammaln(2.5) + gammaln(5.5) - 2 * gammaln(0.5) - gammaln(8.5) + gammaln(1.5))
    ...     assert abs(got - want) < 1e-4
    """
    _require()
    counts = jnp.asarray(counts)
    if counts.ndim != 2:
        raise ValueError(f"counts must be a (rows, C) table, got shape {counts.shape}")
    conc = jnp.broadcast_to(jnp.asarray(concentration, jnp.float32), (counts.shape[1],))
    call = jax.ffi.ffi_call("gibbsjax_log_dm_sum", jax.ShapeDtypeStruct((), jnp.float32),
                            vmap_method="expand_dims")
    return call(counts.astype(jnp.int32), conc)


def topic_counts(z, d, K: int):
    """(n_dk (D + 1, K), n_kw (K, V), n_k (K,)) of the topics ``z`` on the grid, in C++: the tables of
    :func:`~gibbsjax.models.lda.layout.topic_counts` (padding slots left out), equal entry for entry,
    without XLA's scatter-adds (a chain's counts in one pass; chains on every thread).

    Parameters
    ----------
    z : jax.Array
        (S, R) int32 topics.
    d : LDAData
        The packed corpus.
    K : int
        Number of topics.

    Returns
    -------
    tuple of jax.Array
        int32 (D + 1, K), (K, V) and (K,).

    Examples
    --------
    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models.lda import data, layout
    >>> d = data(Corpus.from_token_lists([["a", "b", "a"], ["c", "b"]]))
    >>> z = jnp.where(d.mask, 1, 0)
    >>> if available():
    ...     assert all(bool((a == b).all()) for a, b in zip(topic_counts(z, d, 2), layout.topic_counts(z, d, 2)))
    """
    _require()
    i32 = jnp.int32
    rows, v = d.doc_lengths.shape[0] + 1, d.word_counts.shape[0]
    call = jax.ffi.ffi_call("gibbsjax_lda_counts", (jax.ShapeDtypeStruct((rows, K), i32),
                                                    jax.ShapeDtypeStruct((K, v), i32)), vmap_method="expand_dims")
    ndk, nkw = call(z.astype(i32), d.words.astype(i32), d.docs.astype(i32))
    return ndk, nkw, jnp.sum(ndk, axis=0)
