"""Which z-update, Dirichlet draw and warm-up an LDA kernel runs: the registry of z-updates.

The partially collapsed sampler's z-update samples one exact conditional,
p(z_i = k | z_−i, φ, w) ∝ φ_{k,w_i} (n_dk,−i + α), in one of several forms
(:data:`Z_UPDATES`): ``"dense"`` (the reference XLA scan,
:func:`~gibbsjax.models.lda.conditionals.sample_z_partially_collapsed`), ``"lanes"``
(:func:`~gibbsjax.models.lda.conditionals.sample_z_lanes`, the fastest pure-XLA update on a CPU),
``"native"`` (:func:`~gibbsjax.models.lda.native.sample_z_native`: C++ behind an XLA FFI call, the
fastest on a CPU where it is built) and ``"pallas"`` (the fused GPU kernel of :mod:`gibbsjax.models.lda.pallas`), ``"triton"`` (the same
kernel in Triton's language, called through ``jax-triton``: :mod:`gibbsjax.models.lda.fused_triton`,
which survives the removal of Pallas's deprecated Triton backend), ``"sparse"``
(:func:`~gibbsjax.models.lda.sparse.sample_z_sparse`, O(longest document + √K) per token instead
of O(K): for many topics) and ``"sparse_triton"`` (the same sparse update as one Triton kernel,
:func:`~gibbsjax.models.lda.fused_triton.sample_z_sparse_triton`, for a GPU); ``"auto"`` picks one
by backend (:func:`resolve_z_update`).  :data:`SAMPLE_Z` maps each resolved
name to its update, for the one-device kernels and the sharded one alike.  The Dirichlet rows
(φ; θ in the uncollapsed sampler) are drawn ``"sparse"`` or ``"dense"``
(:data:`~gibbsjax.models.lda.conditionals.DIRICHLET_ROWS`), ``"auto"`` picking one by backend
(:func:`resolve_dirichlet_draw`).  Both choices are made from measured speeds
(``PERFORMANCE.md``) and change how, never what, the kernels sample.

The warm-up (:data:`WARMUPS`, :func:`resolve_warmup`) does change what the warm-up sweeps
do (never the sampling sweeps): ``"exact"`` warms up with the sampling sweep, ``"fast"`` and
``"fast_grid"`` with the APPROXIMATE collapsed sweeps of :mod:`gibbsjax.models.lda.warmups`
(:data:`WARMUP_SWEEPS`), and ``"auto"`` picks by backend.
"""

from __future__ import annotations

import operator
import warnings

import jax

from gibbsjax._checks import check_choice, check_int
from gibbsjax.models.lda import fused_triton
from gibbsjax.models.lda import native
from gibbsjax.models.lda import pallas as fused
from gibbsjax.models.lda.conditionals import sample_z_collapsed, sample_z_lanes, sample_z_partially_collapsed
from gibbsjax.models.lda.layout import LDAData, LDAState
from gibbsjax.models.lda.sparse import sample_z_sparse
from gibbsjax.models.lda.warmups import sample_z_collapsed_frozen, sample_z_collapsed_parallel

__all__ = ["Z_UPDATES", "WARMUPS", "WARMUP_NAMES", "WARMUP_SWEEPS", "warmup_sweep", "resolve_warmup", "pallas_module", "resolve_z_update", "SAMPLE_Z",
           "DIRICHLET_DRAWS", "resolve_dirichlet_draw", "FALLBACK_WARNING", "FIXED_ALPHA_Z_UPDATES",
           "SPARSE_FROM_TOPICS_ON_CPU", "check_num_topics", "COLLAPSED_Z_UPDATES", "COLLAPSED_Z",
           "resolve_collapsed_z_update"]

def check_num_topics(K, name: str = "K") -> int:
    """The number of topics K of an LDA kernel, checked: the one rule every caller applies.

    The kernel factories check their ``K`` with it; :class:`gibbsjax.LDA` checks its
    ``num_topics`` with it too, under that name, before anything is built.

    Parameters
    ----------
    K : int
        The number of topics.
    name : str, default "K"
        The name the error message gives the value.

    Returns
    -------
    int
        ``K`` as a Python int.

    Raises
    ------
    ValueError
        Naming ``name``, when ``K`` is not an integer >= 1 (bools and floats refused).

    Examples
    --------
    >>> check_num_topics(3)
    3
    >>> check_num_topics(0, "num_topics")
    Traceback (most recent call last):
    ...
    ValueError: num_topics must be an integer >= 1, got 0
    """
    return check_int(name, K, 1)


#: z-updates of :func:`~gibbsjax.models.lda.partially_collapsed`, all sampling the same exact conditional
Z_UPDATES = ("auto", "dense", "lanes", "native", "pallas", "triton", "sparse", "sparse_triton")
#: from this many topics on, ``z_update="auto"`` on a CPU is ``"sparse"`` instead of ``"lanes"``
#: (:func:`resolve_z_update`; measured with ``benchmarks/lda_sparse.py``)
SPARSE_FROM_TOPICS_ON_CPU = 2000
#: how the LDA kernels draw their Dirichlet rows (φ; θ in the uncollapsed sampler), all exact
DIRICHLET_DRAWS = ("auto", "sparse", "dense", "native")
#: what the one-time warning says when a GPU run cannot use the fused z-update
FALLBACK_WARNING = (
    "gibbsjax LDA: neither fused z-update can run here ({why}); z_update='auto' falls back to the XLA "
    "scan 'dense', exact but about 37x slower in the z-update (3.5x per sweep) on an H100; "
    "pip install \"gibbsjax[gpu-triton]\" brings the Triton kernel back through jax-triton")
_warned_fallback: set = set()
#: warm-up transitions of the LDA kernels (``warmup``); ``"auto"`` is resolved by :func:`resolve_warmup`
WARMUPS = ("auto", "fast", "fast_grid", "exact")
#: what ``attrs["warmup"]`` says of each approximate warm-up (``"exact"`` runs the sampling sweep)
WARMUP_NAMES = {
    "fast": "fast: collapsed sweeps from the word-topic counts frozen at the start of each sweep "
            "(approximate; the same draws for any lanes, shards or devices; phi not drawn); sampling sweeps exact",
    "fast_grid": "fast_grid: document-parallel collapsed sweeps (approximate: word-topic counts refreshed after "
                 "every step of the lane grid, so the draws depend on the number of lanes; phi not drawn); "
                 "sampling sweeps exact",
}
#: the z-update each approximate warm-up runs (:mod:`gibbsjax.models.lda.warmups`)
WARMUP_SWEEPS = {"fast": sample_z_collapsed_frozen, "fast_grid": sample_z_collapsed_parallel}


def resolve_warmup(warmup: str = "auto", backend: str | None = None) -> str:
    """The warm-up an LDA kernel runs for ``warmup`` on ``backend`` (default: JAX's default backend).

    ``"auto"`` is ``"exact"`` on a GPU and ``"fast"`` elsewhere: on a GPU the exact fused
    sweeps reach a given fit sooner than the approximate ones; on a CPU the
    approximate collapsed sweeps are several times cheaper per sweep and reach the
    typical set in fewer sweeps (``benchmarks/warmup_study.py``).  ``"fast"``
    (:func:`~gibbsjax.models.lda.sample_z_collapsed_frozen`) gives the same draws
    for any layout; ``"fast_grid"``
    (:func:`~gibbsjax.models.lda.sample_z_collapsed_parallel`) depends on the
    number of lanes and shards.  Sampling sweeps are exact whatever the warm-up.

    Parameters
    ----------
    warmup : {"auto", "fast", "fast_grid", "exact"}, default "auto"
        The option asked for.
    backend : str, optional
        ``"cpu"``, ``"gpu"``, ...; default JAX's default backend.

    Returns
    -------
    str
        ``"fast"``, ``"fast_grid"`` or ``"exact"``.

    Raises
    ------
    ValueError
        For an unknown option.

    Examples
    --------
    >>> resolve_warmup("auto", backend="cpu"), resolve_warmup("auto", backend="gpu")
    ('fast', 'exact')
    >>> resolve_warmup("fast_grid")
    'fast_grid'
    """
    check_choice("warmup", warmup, WARMUPS)
    if warmup != "auto":
        return warmup
    return "exact" if (backend or jax.default_backend()) == "gpu" else "fast"


def warmup_sweep(warmup: str, z_update: str = "dense"):
    """The z-update of the approximate warm-up ``warmup`` (a key of :data:`WARMUP_SWEEPS`) for a
    kernel whose sampling z-update is ``z_update``: with ``"native"`` the frozen-count sweep
    (``"fast"``) runs in the native kernel (:func:`~gibbsjax.models.lda.native.sample_z_native_frozen`,
    the same approximate transition), else in XLA.

    >>> warmup_sweep("fast").__name__, warmup_sweep("fast", "native").__name__
    ('sample_z_collapsed_frozen', 'sample_z_native_frozen')
    """
    if warmup == "fast" and z_update == "native":
        return native.sample_z_native_frozen
    return WARMUP_SWEEPS[warmup]


def pallas_module():
    """The fused Pallas z-update module (:mod:`gibbsjax.models.lda.pallas`), or None where
    Pallas cannot be imported (:func:`gibbsjax.models.lda.pallas.importable`).

    >>> pallas_module() is None or pallas_module().__name__ == "gibbsjax.models.lda.pallas"
    True
    """
    return fused if fused.importable() else None


def resolve_z_update(z_update: str = "auto", backend: str | None = None, K: int | None = None) -> str:
    """The z-update :func:`~gibbsjax.models.lda.partially_collapsed` runs for ``z_update`` on ``backend``.

    ``"auto"`` picks the fastest measured option for the backend: on a CPU the native
    kernel (``"native"``, :mod:`gibbsjax.models.lda.native`: dense O(K) per token for few
    topics, sparse from :data:`~gibbsjax.models.lda.native.SPARSE_FROM_TOPICS`; faster than every
    pure-XLA update at every K measured, ``benchmarks/cpu_native.py``) where it is built and
    loaded, else (with a one-time warning saying so) the pure-XLA choice below; on a GPU the
    fused Pallas kernel (:mod:`gibbsjax.models.lda.pallas`) where it is
    available; else the same kernel through ``jax-triton`` (``"triton"``,
    :mod:`gibbsjax.models.lda.fused_triton`: for when jax removes Pallas's deprecated
    Triton backend; not yet measured on a GPU); else ``"dense"``, with a one-time
    warning that says what was lost; on a CPU without the native kernel ``"lanes"`` (several
    times faster there than ``"dense"``) below :data:`SPARSE_FROM_TOPICS_ON_CPU` (2,000) topics
    and ``"sparse"`` from there on.

    ``"sparse"`` (:func:`~gibbsjax.models.lda.sparse.sample_z_sparse`, O(S + √K) per token, S
    the grid's steps, a little above the longest document) against ``"lanes"`` (O(K)): whole
    sweeps with the CPU's φ draw, measured by ``benchmarks/lda_sparse.py`` (the table in
    ``benchmarks/README.md``).

    The crossover is at about K = 2.5 S; ``"auto"`` decides from K alone (the factories know K,
    not the corpus), at the K where ``"sparse"`` wins for documents up to a few hundred tokens and
    breaks even at ~400; below it, pass ``z_update="sparse"`` for short documents and many
    topics (K above about 2.5 S).  On a GPU ``"auto"`` keeps the fused kernel whatever K: the
    sparse updates (the XLA ``"sparse"`` and the Triton ``"sparse_triton"``) are not measured
    there yet; they are the candidates for K ≥ 1,000, where the dense fused kernel's O(K) per
    token dominates, and ``benchmarks/gpu_table.py`` prints the rows that decide it.

    Parameters
    ----------
    z_update : {"auto", "lanes", "dense", "native", "pallas", "triton", "sparse", "sparse_triton"}, default "auto"
        The option asked for.
    backend : str, optional
        ``"cpu"``, ``"gpu"``, ...; default JAX's default backend.
    K : int, optional
        The number of topics (the factories pass theirs): on a CPU ``"auto"`` is ``"sparse"``
        from :data:`SPARSE_FROM_TOPICS_ON_CPU` topics on; without K, ``"lanes"``.

    Returns
    -------
    str
        The z-update that runs (never ``"auto"``).

    Raises
    ------
    ValueError
        For an unknown option, for ``"pallas"`` where Pallas cannot be imported, for
        ``"triton"`` or ``"sparse_triton"`` where the ``triton`` package cannot, or for
        ``"native"`` where the native kernel is not available or the backend is not a CPU.

    Examples
    --------
    >>> resolve_z_update("auto", backend="cpu", K=100) == ("native" if native.available() else "lanes")
    True
    >>> resolve_z_update("dense")
    'dense'
    """
    check_choice("z_update", z_update, Z_UPDATES)
    backend = backend or jax.default_backend()
    if z_update == "auto":
        if backend == "cpu":
            if native.available():
                return "native"
            native.warn_unavailable()
            return "sparse" if _as_int(K) >= SPARSE_FROM_TOPICS_ON_CPU else "lanes"
        pallas = pallas_module() if backend == "gpu" else None
        if pallas is not None and pallas.available():
            return "pallas"
        if backend == "gpu" and fused_triton.jax_triton_importable():
            return "triton"
        if backend == "gpu":  # never silent: a GPU run without its fused kernel is much slower
            _warn_fallback(("jax.experimental.pallas with its Triton backend cannot be imported" if pallas is None
                            else "Pallas is importable but the default backend is not a GPU it can compile for")
                           + ", and jax_triton cannot be imported")
        return "dense"
    if z_update == "native":
        _check_native("z_update", backend)
    if z_update == "pallas" and pallas_module() is None:
        raise ValueError("z_update='pallas' needs Pallas (jax.experimental.pallas with its Triton backend, for "
                         "gibbsjax.models.lda.pallas), which cannot be imported here")
    if z_update in ("triton", "sparse_triton") and not fused_triton.triton_importable():
        raise ValueError(f"z_update={z_update!r} needs the 'triton' package (pip install \"gibbsjax[gpu-triton]\"; "
                         "compiled on a GPU with jax_triton, in Triton's interpreter elsewhere), which cannot "
                         "be imported here")
    return z_update


def _check_native(option: str, backend: str) -> None:
    """``ValueError`` where ``option="native"`` cannot run: the kernels are not built, or not a CPU."""
    if not native.available():
        raise ValueError(f"{option}='native' needs gibbsjax's native CPU kernels, which cannot run here: "
                         f"{native.unavailable_reason()}")
    if backend != "cpu":
        raise ValueError(f"{option}='native' runs on a CPU only; the default backend is {backend!r}")


def _as_int(K) -> int:
    """K as an int (a numpy integer too: a grid search's ``np.arange`` gives the same choice as a
    Python int); 0 for None or anything else, which the factories refuse by name afterwards."""
    try:
        return operator.index(K) if not isinstance(K, bool) else 0
    except TypeError:
        return 0


def _warn_fallback(why: str) -> None:
    """Warn once per reason that a GPU run falls back from the fused z-update."""
    if why not in _warned_fallback:
        _warned_fallback.add(why)
        warnings.warn(FALLBACK_WARNING.format(why=why), RuntimeWarning, stacklevel=4)


def resolve_dirichlet_draw(dirichlet_draw: str = "auto", backend: str | None = None) -> str:
    """The Dirichlet draw (:data:`~gibbsjax.models.lda.conditionals.DIRICHLET_ROWS`) an LDA kernel
    runs for ``dirichlet_draw`` on ``backend`` (default: JAX's default backend).

    ``"auto"`` picks the fastest measured draw: on a CPU ``"native"``
    (:func:`~gibbsjax.models.lda.native.log_dirichlet_native`, C++ behind an XLA FFI call, every row
    on its own threads) where it is built, else ``"sparse"`` (the project's sparse-count
    sampler in XLA: ``jax.random.gamma`` is slow on a CPU); ``"dense"`` (``jax.random.loggamma``
    on every entry) elsewhere (much faster there than the sparse-count sampler;
    ``benchmarks/random_primitives.py``).  All three are exact
    draws of the same distribution; they give different variates, so a GPU run and a CPU run of
    the same seed differ.

    Large K (1,000 to 10,000 topics): a sweep needs every φ_kw (the z-update's α-term totals
    Σ_k α φ_kw of every word involve all K·V entries), so it draws K·V gammas, 10⁸ at
    K = V = 10,000, whatever the z-update; no exact draw may skip an entry.  The same choice
    holds, because most of those n_kw are 0: ``"sparse"`` (the CPU's) draws the Gamma(η) variates
    of zero counts by the cheap exact small-shape sampler (log G(η) = log G(1 + η) + log(U)/η,
    G(1 + η) by exponential-envelope rejection) and only the nonzero counts by Marsaglia–Tsang;
    ``"dense"`` (the GPU's) draws every entry with XLA's sampler.  Both are exact: every entry
    is an independent exact Gamma(n_kw + η) variate in log space (no underflow of the tiny
    Gamma(η) ones), and independent gammas normalised per row are exactly Dirichlet.

    Parameters
    ----------
    dirichlet_draw : {"auto", "sparse", "dense", "native"}, default "auto"
        The kernel factory's ``dirichlet_draw``.
    backend : str, optional
        As in :func:`resolve_warmup`.

    Returns
    -------
    str
        ``"sparse"``, ``"dense"`` or ``"native"``.

    Raises
    ------
    ValueError
        For an unknown option, or ``"native"`` where the native kernel is not available or the
        backend is not a CPU.

    Examples
    --------
    >>> resolve_dirichlet_draw("auto", backend="gpu")
    'dense'
    >>> resolve_dirichlet_draw("auto", backend="cpu") == ("native" if native.available() else "sparse")
    True
    """
    check_choice("dirichlet_draw", dirichlet_draw, DIRICHLET_DRAWS)
    backend = backend or jax.default_backend()
    if dirichlet_draw == "native":
        _check_native("dirichlet_draw", backend)
    if dirichlet_draw != "auto":
        return dirichlet_draw
    if backend == "cpu":
        if native.available():
            return "native"
        native.warn_unavailable()
        return "sparse"
    return "dense"


def _sample_z_pallas(key, state: LDAState, d: LDAData, *, K: int, alpha: float):
    return fused.sample_z_pallas(key, state, d, K=K, alpha=alpha)


#: the z-update of each resolved ``z_update`` name (the update of ``z`` in a sweep)
def _sample_z_triton(key, state: LDAState, d: LDAData, *, K: int, alpha: float):
    return fused_triton.sample_z_triton(key, state, d, K=K, alpha=alpha)


def _sample_z_sparse_triton(key, state: LDAState, d: LDAData, *, K: int, alpha):
    return fused_triton.sample_z_sparse_triton(key, state, d, K=K, alpha=alpha)


#: z-updates whose α is a compile-time constant of a kernel: not with a learned α
FIXED_ALPHA_Z_UPDATES = ("pallas", "triton")
SAMPLE_Z = {"dense": sample_z_partially_collapsed, "lanes": sample_z_lanes, "pallas": _sample_z_pallas,
            "triton": _sample_z_triton, "sparse_triton": _sample_z_sparse_triton,
            "sparse": sample_z_sparse, "native": native.sample_z_native}

#: z-updates of the collapsed sampler (:func:`~gibbsjax.models.lda.collapsed`), both exact
COLLAPSED_Z_UPDATES = ("auto", "dense", "native")
COLLAPSED_Z = {"dense": sample_z_collapsed, "native": native.sample_z_collapsed_native}


def resolve_collapsed_z_update(z_update: str = "auto", backend: str | None = None, needs_phi: bool = False) -> str:
    """The collapsed sampler's z-update: ``"native"`` (C++, one chain per thread,
    :func:`~gibbsjax.models.lda.native.sample_z_collapsed_native`) or ``"dense"`` (the XLA
    reference, token by token, :func:`~gibbsjax.models.lda.sample_z_collapsed`).

    ``"auto"`` is ``"native"`` on a CPU where the native kernels run, unless ``needs_phi``
    (φ recorded per draw with fixed priors: the native kernel's state holds no φ,
    :mod:`gibbsjax.models.lda.topics_only`); otherwise ``"dense"``, with the one-time warning
    of :func:`~gibbsjax.models.lda.native.warn_unavailable` on a CPU without the kernels.

    Parameters
    ----------
    z_update : {"auto", "dense", "native"}, default "auto"
        The option asked for.
    backend : str, optional
        The backend (default: jax's default backend).
    needs_phi : bool, default False
        Whether the kernel records φ per draw with fixed α and η.

    Returns
    -------
    str
        ``"native"`` or ``"dense"``.

    Raises
    ------
    ValueError
        For an unknown option, or ``"native"`` where it cannot run (not built, not a CPU, or
        ``needs_phi``).

    Examples
    --------
    >>> resolve_collapsed_z_update("dense")
    'dense'
    >>> resolve_collapsed_z_update("auto", backend="cpu") == ("native" if native.available() else "dense")
    True
    """
    if z_update not in COLLAPSED_Z_UPDATES:
        raise ValueError(f"z_update of the collapsed sampler must be one of {COLLAPSED_Z_UPDATES}, got {z_update!r}")
    backend = backend or jax.default_backend()
    if z_update == "auto":
        if backend != "cpu" or needs_phi:
            return "dense"
        if native.available():
            return "native"
        native.warn_unavailable()
        return "dense"
    if z_update == "native":
        _check_native("z_update", backend)
        if needs_phi:
            raise ValueError("record_phi needs phi in the state, which the native collapsed sampler with fixed alpha "
                             "and eta does not keep (its draws are functions of z): use z_update='dense', or "
                             "lda.partially_collapsed, or the posterior means topic_word (E[phi | z, w] per chain)")
    return z_update
