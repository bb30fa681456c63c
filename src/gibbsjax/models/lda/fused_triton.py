"""The fused z-update of partially collapsed LDA as a Triton kernel called through ``jax-triton``.

The same sampler as :mod:`gibbsjax.models.lda.pallas`, written in Triton's own language
(``triton.language``) instead of Pallas, so that it survives the removal of Pallas's Triton
backend: jax 0.11 deprecates that backend ("will be removed in a future version") and points
to ``jax-triton``, the separately packaged way to call Triton kernels from JAX, which it
keeps.  ``z_update="triton"`` runs it; ``"auto"`` picks it on a GPU where the Pallas kernel
cannot run (:func:`gibbsjax.models.lda.resolve_z_update`).

Conditional (Magnusson, Jonsson, Villani & Broman 2018), given φ, documents in parallel and
the tokens of each document in sequence:

    p(z_i = k | z_−i, φ, w) ∝ φ_{k,w_i} (n_dk,−i + α),

drawn by inverse CDF from the uniforms of the XLA path (``lda.token_uniforms(key, d)``), so
the two can be compared draw by draw.  The kernel is the Pallas one's algorithm (one program
per block of ``LANES`` lanes, a first pass that builds each document's start-of-sweep count
row in registers, a second pass that draws the tokens in order with the row carried in
registers and reloaded when a lane starts a document; see :mod:`gibbsjax.models.lda.pallas`),
with two differences:

* **a chain axis.**  ``jax-triton`` has no batching rule, so the kernel takes every chain at
  once (z, u and φ with a leading chain axis; programs ``chain × blocks``) and ``jax.vmap``
  over chains is folded into that axis by :func:`jax.custom_batching.custom_vmap`: one kernel
  launch for all chains, as Pallas's batching gives;
* **the count table is zeroed before the kernel** (``zeroed_outputs``), so a document that no
  lane starts leaves zeros, not uninitialised memory.

Where it runs:

* on a GPU with ``jax-triton`` importable (``pip install "gibbsjax[gpu-triton]"``): compiled
  by Triton and launched by ``jax_triton.triton_call``;
* elsewhere, in **Triton's interpreter** (``triton.runtime.interpreter``, numpy on the host,
  the kernel's own source line by line) through :func:`jax.pure_callback`: slow, for tests,
  the same program.  That is how the test suite checks on a CPU that the kernel samples the
  exact conditional (exact enumeration, agreement with a float64 replay, a deliberately stale
  variant that fails both), and :func:`compile_for_gpu` compiles it to a CUDA binary for an
  H100 (sm_90) without a GPU, so that a kernel Triton cannot compile fails on a CPU too.

Not yet measured on a GPU: the Pallas kernel stays first where it runs (its throughput is in
``benchmarks/README.md``); this one takes over when Pallas's Triton backend is gone.
"""

from __future__ import annotations

import contextlib
import functools
import threading

import jax
import jax.numpy as jnp
import numpy as np

from gibbsjax._checks import check_int, check_positive
from gibbsjax.models.lda.chain_launch import (check_grid, default_num_warps, lanes_per_tile, next_power_of_2, one_launch,
                                              optional_modules, power_of_two_lanes)
from gibbsjax.models.lda.conditionals import LOG_PHI_FLOOR
from gibbsjax.models.lda.layout import token_uniforms

__all__ = ["triton_importable", "jax_triton_importable", "available", "default_lanes_per_program",
           "default_num_warps", "sample_z_triton", "fused_z_update_triton", "sample_z_sparse_triton",
           "compile_for_gpu", "kernels"]

#: elements of one program's tile in the interpreter: numpy runs a program's tile at once, so few, wide programs
_INTERPRET_TILE_ELEMENTS = 1 << 16


def _triton():
    """(triton, triton.language) or None where the ``triton`` package cannot be imported."""
    return optional_modules("triton", "triton.language")


def _jax_triton():
    """The ``jax_triton`` module, or None: it imports only with a GPU build of jaxlib."""
    found = optional_modules("jax_triton")
    return found and found[0]


def triton_importable() -> bool:
    """Whether the ``triton`` package imports here: the kernel can then run in Triton's
    interpreter, and :func:`compile_for_gpu` can compile it.

    >>> triton_importable() in (True, False)
    True
    """
    return _triton() is not None


def jax_triton_importable() -> bool:
    """Whether ``jax_triton`` imports here (it needs ``triton`` and a GPU build of jaxlib).

    >>> jax_triton_importable() in (True, False)
    True
    """
    return _triton() is not None and _jax_triton() is not None


def available() -> bool:
    """Whether the kernel can run compiled: ``jax_triton`` importable and the default backend a GPU.

    >>> isinstance(available(), bool)
    True
    """
    return jax.default_backend() == "gpu" and jax_triton_importable()


def default_lanes_per_program(K: int, interpret: bool = False) -> int:
    """Lanes per program: a power of two with lanes × K (padded) ≈ 2,048 compiled (the Pallas
    kernel's rule), ≈ 65,536 in the interpreter.

    >>> default_lanes_per_program(100), default_lanes_per_program(1000)
    (16, 2)
    """
    if interpret:
        return lanes_per_tile(next_power_of_2(K), _INTERPRET_TILE_ELEMENTS, None)
    return lanes_per_tile(next_power_of_2(K))


@functools.cache
def kernels(name: str = "z"):
    """(compiled, interpreted): a kernel of :mod:`~gibbsjax.models.lda.fused_triton_kernel`
    (``"z"``: ``z_kernel``, the dense fused z-update; ``"sparse"``: ``sparse_z_kernel``) wrapped by
    ``triton.jit`` (for ``jax_triton`` and :func:`compile_for_gpu`) and by Triton's interpreter
    (``triton.runtime.interpreter.InterpretedFunction``, numpy on the host): the same source."""
    triton, _ = _triton()
    from triton.runtime.interpreter import InterpretedFunction

    from gibbsjax.models.lda import fused_triton_kernel

    source = {"z": fused_triton_kernel.z_kernel, "sparse": fused_triton_kernel.sparse_z_kernel}[name]
    return triton.jit(source), InterpretedFunction(source)


class _HostArray:
    """A numpy array as Triton's interpreter expects a tensor (``data_ptr``, a storage to copy)."""

    _DTYPES = {np.dtype(np.float32): "fp32", np.dtype(np.int32): "i32"}

    def __init__(self, array):
        self.array = np.ascontiguousarray(array)
        self.dtype = self._DTYPES[self.array.dtype]

    def data_ptr(self):
        return self.array.ctypes.data

    def untyped_storage(self):  # the interpreter copies storages to the host: this one is there
        return self

    def cpu(self):
        return self

    def new_empty(self, *args, **kwargs):
        return self

    def set_(self, *args):
        return self

    def storage_offset(self):
        return 0

    def size(self):
        return self.array.shape

    def stride(self):
        return self.array.strides

    def copy_(self, other):
        return self


def _run_interpreted(*arrays, grid, constants, out_shape, name="z"):
    """A kernel in Triton's interpreter on host copies of the arrays; its outputs start at zero."""
    outputs = [_HostArray(np.zeros(shape.shape, shape.dtype)) for shape in out_shape]
    args = [_HostArray(np.asarray(a)) for a in arrays]
    with _interpreted_library():
        kernels(name)[1][grid](*args, *outputs, **constants)
    return tuple(output.array for output in outputs)


def _call(arrays, *, name, grid, constants, out_shape, interpret, num_warps):
    """Launch kernel ``name`` on ``arrays``: by ``jax_triton.triton_call`` (every output zeroed
    first), or in the interpreter through :func:`jax.pure_callback`."""
    if interpret:
        host = functools.partial(_run_interpreted, grid=grid, constants=constants, out_shape=out_shape, name=name)
        return jax.pure_callback(host, out_shape, *arrays)
    return _jax_triton().triton_call(*arrays, kernel=kernels(name)[0], out_shape=out_shape, grid=grid,
                                     num_warps=num_warps, num_stages=1, zeroed_outputs=tuple(range(len(out_shape))),
                                     name=f"lda_partially_collapsed_{name}", **constants)


def _folded(words, docs, phi_t, lanes, num_docs):
    """The chains' grids side by side: (fold, unfold, words, docs, starts, φᵀ, lanes, padded lanes).

    ``words``, ``docs`` (C, S, R); ``fold`` maps any (C, S, R) array to (S, L) (L: C·R padded to
    whole blocks of ``lanes``), ``unfold`` back; words are offset to rows of the stacked φᵀ
    (C·V, K), documents to rows of a stacked (C·(D + 1), K) table, −1 on padding slots;
    ``starts[s, b]`` = 1 where some lane of block b begins a document at step s."""
    chains, steps, num_lanes = words.shape
    vocab, k = phi_t.shape[1:]
    total = chains * num_lanes
    lanes = min(lanes, next_power_of_2(total))
    padded = -(-total // lanes) * lanes

    def fold(x, fill=0):
        x = jnp.moveaxis(x, 0, 1).reshape(steps, total)
        return jnp.pad(x, ((0, 0), (0, padded - total)), constant_values=fill)

    def unfold(x):
        return jnp.moveaxis(x[:, :total].reshape(steps, chains, num_lanes), 1, 0)

    chain = jnp.arange(chains, dtype=jnp.int32)[:, None, None]
    offset_docs = fold(jnp.where(docs < num_docs, docs + chain * (num_docs + 1), -1), fill=-1)
    begins = jnp.concatenate([jnp.ones((1, padded), bool), offset_docs[1:] != offset_docs[:-1]], axis=0)
    starts = jnp.any(begins.reshape(steps, padded // lanes, lanes), axis=2).astype(jnp.int32)
    return (fold, unfold, fold(words + chain * vocab), offset_docs, starts, phi_t.reshape(chains * vocab, k),
            lanes, padded)


@contextlib.contextmanager
def _interpreted_library():
    """Triton's library functions written in Triton (``tl.cumsum``, ``tl.max``, ``tl.sum``, ...)
    as the interpreter runs them, while one kernel runs.  Triton wraps them for its compiler when it
    is imported without ``TRITON_INTERPRET=1``, and the interpreter then refuses to call them; here
    they are wrapped for the interpreter (which still recognises their sums and maxima and runs
    them as numpy's).  The interpreter's patches of ``triton.language`` that these functions need
    are made once for the whole kernel, not at each of their calls as Triton's own interpreted
    device functions do (the cost of those is in ``benchmarks/README.md``), and undone
    when the kernel ends, so that a later compilation in the same process sees Triton as it was."""
    _, tl = _triton()
    from triton.runtime import interpreter
    from triton.runtime.jit import JITFunction

    class Interpreted(interpreter.InterpretedFunction):
        def __call__(self, *args, **kwargs):
            try:
                return self.rewrite()(*args, **kwargs)
            except Exception as err:
                raise interpreter.InterpreterError(repr(err)) from err

    with _LIBRARY_LOCK:
        saved = {name: value for name, value in vars(tl).items() if isinstance(value, JITFunction)}
        scopes = []
        try:
            patched = set()
            for value in saved.values():  # the modules of triton.language each function sees, patched once
                seen = frozenset(id(m) for m in value.fn.__globals__.values() if m is tl or m is tl.core)
                if seen and seen not in patched:
                    patched.add(seen)
                    scopes.append(interpreter._patch_lang(value.fn))
            for name, value in saved.items():
                setattr(tl, name, Interpreted(value.fn))
            yield
        finally:
            for name, value in saved.items():
                setattr(tl, name, value)
            for scope in reversed(scopes):
                scope.restore()


_LIBRARY_LOCK = threading.Lock()


def _launch(z, u, phi_t, words, docs, *, K, alpha, lanes, num_docs, interpret, stale, num_warps):
    """One launch of the dense kernel for every chain, the chains' lanes side by side (:func:`_folded`).

    z, u, words, docs (C, S, R), padding slots' document ``num_docs`` (D); φᵀ (C, V, K).
    Returns the new z (C, S, R) and the final count tables (C, D + 1, K), row D zero."""
    chains, steps, _ = z.shape
    fold, unfold, words, docs, starts, phi, lanes, padded = _folded(words, docs, phi_t, lanes, num_docs)
    constants = dict(STEPS=steps, LANES_TOTAL=padded, K=K, KP=next_power_of_2(K), LANES=lanes,
                     ALPHA=float(alpha), STALE=bool(stale))
    shapes = (jax.ShapeDtypeStruct((steps, padded), jnp.int32),
              jax.ShapeDtypeStruct((chains * (num_docs + 1), K), jnp.int32))
    z_new, ndk = _call((words, docs, starts, fold(z), fold(u), phi), name="z", grid=(padded // lanes,),
                       constants=constants, out_shape=shapes, interpret=interpret, num_warps=num_warps)
    return unfold(z_new), ndk.reshape(chains, num_docs + 1, K)


def _launch_sparse(z, u_part, u_draw, cand, mass, phi_t, words, docs, *, K, lanes, num_docs, interpret,
                   keep_current, num_warps):
    """One launch of the sparse kernel for every chain (:func:`_folded`): the new z (C, S, R)."""
    steps = z.shape[1]
    fold, unfold, words, docs, starts, phi, lanes, padded = _folded(words, docs, phi_t, lanes, num_docs)
    constants = dict(STEPS=steps, LANES_TOTAL=padded, K=K, W=next_power_of_2(steps), LANES=lanes,
                     KEEP_CURRENT=bool(keep_current))
    arrays = (words, docs, starts, fold(z), fold(u_part), fold(u_draw), fold(cand), fold(mass), phi)
    (z_new,) = _call(arrays, name="sparse", grid=(padded // lanes,), constants=constants,
                     out_shape=(jax.ShapeDtypeStruct((steps, padded), jnp.int32),), interpret=interpret,
                     num_warps=num_warps)
    return (unfold(z_new),)


#: the launches' sharding rules (Shardy's notation): every array has the chain axis c first
_CHAIN_RULES = {"z": "c s r, c s r, c v k, c s r, c s r -> c s r, c d k",
                "sparse": "c s r, c s r, c s r, c s r, c s r, c v k, c s r, c s r -> c s r"}


@functools.cache
def _batched(options):
    """:func:`_launch` (``options["kernel"] == "z"``) or :func:`_launch_sparse` for these static
    options, one launch for all chains: ``jax.vmap`` folded into the chain axis (``jax_triton``
    has no batching rule of its own) and, compiled, split along the chains over devices
    (:func:`gibbsjax.models.lda.chain_launch.one_launch`)."""
    options = dict(options)
    name = options.pop("kernel")
    base = {"z": _launch, "sparse": _launch_sparse}[name]

    def launch(*args):  # positional only: custom_partitioning binds its arguments by position
        return base(*args, **options)

    return one_launch(launch, _CHAIN_RULES[name], partition=not options["interpret"])


def _checked(state, d, K, interpret):
    """(interpret, K) after the checks both Triton z-updates share."""
    if _triton() is None:
        raise ValueError("z_update='triton' needs the 'triton' package (pip install \"gibbsjax[gpu-triton]\"); "
                         "use lda.sample_z_partially_collapsed")
    check_grid(state, d, K)
    if interpret is None:
        interpret = not available()
    if not interpret and _jax_triton() is None:
        raise ValueError("the compiled Triton z-update needs jax_triton (pip install \"gibbsjax[gpu-triton]\") "
                         "and a GPU build of jaxlib")
    return bool(interpret), K


def fused_z_update_triton(key, state, d, *, K, alpha, interpret=None, lanes_per_program=None, stale=False,
                          num_warps=None):
    """(new z (S, R) int32, final n_dk ((D + 1) × K) int32) by the Triton kernel.

    ``interpret``: ``None`` runs compiled where :func:`available` and in Triton's interpreter
    elsewhere; ``True`` forces the interpreter.  ``stale`` (tests only) keeps the start-of-sweep
    count rows: NOT exact.  ``num_warps``: Triton's (default :func:`default_num_warps`).

    >>> import jax
    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models import lda
    >>> d = lda.data(Corpus.from_token_lists([["a", "b", "a"], ["b", "c"]]))
    >>> state = lda.partially_collapsed(2).init(jax.random.key(0), d)   # D = 2 documents, K = 2
    >>> z, ndk = fused_z_update_triton(jax.random.key(1), state, d, K=2, alpha=0.1)
    >>> ndk.shape, int(ndk.sum())   # (D + 1, K); 5 tokens
    ((3, 2), 5)
    """
    interpret, K = _checked(state, d, K, interpret)
    alpha = check_positive("alpha", alpha)
    if lanes_per_program is None:
        lanes_per_program = default_lanes_per_program(K, interpret=interpret)
    lanes = power_of_two_lanes(lanes_per_program)
    num_docs = d.doc_lengths.shape[0]
    log_phi = state.log_phi
    scaled = jnp.maximum(log_phi - jnp.max(log_phi, axis=0, keepdims=True), LOG_PHI_FLOOR)
    phi_t = jnp.exp(scaled).T  # (V, K), as the XLA path
    u = token_uniforms(key, d)
    options = (("kernel", "z"), ("K", K), ("alpha", alpha), ("lanes", lanes), ("num_docs", num_docs),
               ("interpret", interpret), ("stale", bool(stale)), ("num_warps", check_int("num_warps", num_warps or default_num_warps(K, lanes), 1)))
    z_new, ndk = _batched(options)(state.z[None], u[None], phi_t[None], d.words[None], d.docs[None])
    return jnp.where(d.mask, z_new[0], 0), ndk[0]


def sample_z_triton(key, state, d, *, K: int, alpha: float, interpret=None, lanes_per_program=None):
    """The partially collapsed z-update by the Triton kernel (new z, (S, R) int32; padding 0).

    Samples p(z_i = k | z_−i, φ, w) ∝ φ_{k,w_i} (n_dk,−i + α), documents in parallel and each
    document's tokens in order, from the uniforms of
    :func:`gibbsjax.models.lda.sample_z_partially_collapsed` (draws agree with it except where
    u·total falls within float32 rounding of a cumulative boundary).  Compiled on a GPU with
    ``jax_triton``; in Triton's interpreter elsewhere (``interpret=None``).

    >>> import jax
    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models import lda
    >>> d = lda.data(Corpus.from_token_lists([["a", "b", "a"], ["b", "c"]]))
    >>> state = lda.partially_collapsed(2).init(jax.random.key(0), d)
    >>> sample_z_triton(jax.random.key(1), state, d, K=2, alpha=0.1).shape   # (S, R): 3 steps, 2 lanes
    (3, 2)
    """
    return fused_z_update_triton(key, state, d, K=K, alpha=alpha, interpret=interpret,
                                 lanes_per_program=lanes_per_program)[0]


def sample_z_sparse_triton(key, state, d, *, K: int, alpha, interpret=None, lanes_per_program=None,
                           keep_current: bool = False, num_warps=None):
    """The sparse exact z-update (:func:`gibbsjax.models.lda.sample_z_sparse`, for many topics) as
    one Triton kernel: the same mixture, the same uniforms and α-term candidates, one program per
    block of lanes instead of a ``lax.scan`` of (R × S) XLA operations per grid step.

    Token i of document d with word w takes the topic of another token j of d, picked with
    probability ∝ φ_{z_j,w}, with probability A / (A + B_w) (A = Σ_{j≠i} φ_{z_j,w}), else a draw
    from its word's α-term α_k φ_{k,w} (of total B_w), drawn for every token beforehand in XLA
    (:func:`~gibbsjax.models.lda.sparse.draw_alpha_term`).  In the kernel each lane holds its
    current document's topics in a window of W = the grid's steps rounded up to a power of two
    (≥ the longest document), so a token costs W gathers of φ, not K: for K well above the
    longest document (at K = 10,000 and documents of about 100 tokens, 256 against 16,384).
    Draws agree with :func:`~gibbsjax.models.lda.sample_z_sparse` except where a uniform falls
    within float32 rounding of a boundary.  Compiled on a GPU with ``jax_triton`` (not yet
    measured there); in Triton's interpreter elsewhere.  ``keep_current``: a deliberately WRONG
    variant for the tests (n_dk instead of n_dk,−i in the document term).

    >>> import jax
    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models import lda
    >>> d = lda.data(Corpus.from_token_lists([["a", "b", "a"], ["b", "c"]]))
    >>> state = lda.partially_collapsed(2).init(jax.random.key(0), d)
    >>> z = sample_z_sparse_triton(jax.random.key(1), state, d, K=2, alpha=0.1)
    >>> z.shape, bool(((z >= 0) & (z < 2)).all())
    ((3, 2), True)
    """
    from gibbsjax.models.lda.conditionals import phi_by_word
    from gibbsjax.models.lda.sparse import alpha_term_tables, draw_alpha_term

    interpret, K = _checked(state, d, K, interpret)
    steps = d.words.shape[0]
    window = next_power_of_2(steps)
    if lanes_per_program is None:
        lanes_per_program = (lanes_per_tile(window, _INTERPRET_TILE_ELEMENTS, None) if interpret
                             else lanes_per_tile(window))
    lanes = power_of_two_lanes(lanes_per_program)
    k_part, k_draw = jax.random.split(key)
    u_part, u_draw = token_uniforms(k_part, d), token_uniforms(k_draw, d)
    phi_t = phi_by_word(state.log_phi)  # (V, K), each word's largest entry 1
    cumulative = alpha_term_tables(phi_t, alpha)
    candidates = draw_alpha_term(phi_t, alpha, cumulative, d.words, u_draw)
    mass = cumulative[:, -1][d.words]  # B_w of each token's word
    options = (("kernel", "sparse"), ("K", K), ("lanes", lanes), ("num_docs", d.doc_lengths.shape[0]),
               ("interpret", interpret), ("keep_current", bool(keep_current)),
               ("num_warps", check_int("num_warps", num_warps or default_num_warps(window, lanes), 1)))
    (z_new,) = _batched(options)(state.z[None], u_part[None], u_draw[None], candidates[None], mass[None],
                                 phi_t[None], d.words[None], d.docs[None])
    return jnp.where(d.mask, z_new[0], 0)


def compile_for_gpu(K: int, *, kernel: str = "z", steps: int = 64, lanes_total: int = 1024, lanes_per_program=None,
                    num_warps=None, capability: int = 90) -> dict:
    """Compile a kernel (``"z"``: the dense fused z-update; ``"sparse"``: :func:`sample_z_sparse_triton`'s)
    with Triton for an NVIDIA GPU of compute ``capability`` (90: H100), without a GPU (Triton's
    compiler and its bundled ``ptxas``), with the settings a run at this K and grid (``steps``)
    uses by default.  Returns Triton's stages (``"ttir"``, ``"ttgir"``, ``"ptx"``, ``"cubin"``, ...),
    ``"shared"`` (bytes of shared memory) and ``"resources"`` (registers, stack and local memory
    per thread, from the bundled ``cuobjdump``, or None without it); raises where Triton cannot
    compile the kernel.

    >>> sorted(compile_for_gpu(100))[:3]
    ['cubin', 'llir', 'ptx']
    """
    triton, _ = _triton()
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    if kernel == "z":
        lanes = lanes_per_program or default_lanes_per_program(K)
        tile = next_power_of_2(K)
        constants = dict(K=K, KP=tile, ALPHA=0.1, STALE=False)
        floats = ("u_ptr", "phi_ptr")
    else:
        tile = next_power_of_2(steps)
        lanes = lanes_per_program or lanes_per_tile(tile)
        constants = dict(K=K, W=tile, KEEP_CURRENT=False)
        floats = ("u_part_ptr", "u_draw_ptr", "mass_ptr", "phi_ptr")
    constants.update(STEPS=steps, LANES_TOTAL=-(-lanes_total // lanes) * lanes, LANES=lanes)
    jitted = kernels(kernel)[0]
    signature = {name: ("*fp32" if name in floats else "*i32") for name in jitted.arg_names if name not in constants}
    signature.update({name: "constexpr" for name in constants})
    # every array 16-byte aligned, as jax_triton tells Triton (its binary may then vectorise alike)
    aligned = {(i,): [["tt.divisibility", 16]] for i, name in enumerate(jitted.arg_names) if name not in constants}
    with _LIBRARY_LOCK:  # never while the interpreter has patched triton.language
        compiled = triton.compile(ASTSource(fn=jitted, signature=signature, constexprs=constants, attrs=aligned),
                                  target=GPUTarget("cuda", capability, 32),
                                  options={"num_warps": num_warps or default_num_warps(tile, lanes), "num_stages": 1,
                                           "enable_fp_fusion": True})  # as jax_triton.triton_call compiles
    return {**compiled.asm, "shared": compiled.metadata.shared, "resources": _resources(compiled.asm["cubin"])}


def _resources(cubin: bytes):
    """{"REG": ..., "STACK": ..., "LOCAL": ...} of the kernel in ``cubin``, read by the ``cuobjdump``
    Triton bundles, or None where it is missing."""
    import os
    import re
    import subprocess
    import tempfile

    triton, _ = _triton()
    tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    if not os.path.exists(tool):
        return None
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "kernel.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        text = subprocess.run([tool, "--dump-resource-usage", path], capture_output=True, text=True,
                              check=True).stdout
    return {name: int(value) for name, value in re.findall(r"\b(REG|STACK|LOCAL):(\d+)", text)}
