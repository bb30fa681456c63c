"""The LDA kernels: the factories :func:`partially_collapsed`, :func:`uncollapsed` and
:func:`collapsed`, their registry :data:`SAMPLERS`, and what a kernel records per draw.

Each factory checks its arguments and returns a :class:`~gibbsjax.kernel.Kernel` (cached
per arguments) whose sweep composes the conditionals of
:mod:`gibbsjax.models.lda.conditionals` (and, with learned priors, of
:mod:`gibbsjax.models.lda.priors`) with :func:`gibbsjax.kernel.sweep`;
``Kernel.shard`` of the partially collapsed kernel with fixed priors is
:func:`gibbsjax.models.lda.shard.plan`.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from gibbsjax import conjugate as cj
from gibbsjax import random as gr
from gibbsjax._checks import check_positive, init_checker
from gibbsjax.kernel import Kernel, sweep
from gibbsjax.models.lda import native
from gibbsjax.models.lda import shard as lda_shard
from gibbsjax.models.lda.conditionals import log_joint_collapsed, sample_log_phi, sample_z_uncollapsed
from gibbsjax.models.lda.buckets import num_real_docs
from gibbsjax.models.lda.layout import (LDAData, LDAState, initial_log_phi, initial_topics, num_docs_of, topic_counts,
                                        vocab_size_of, word_topic_counts)
from gibbsjax.models.lda.likelihood import with_log_likelihood
from gibbsjax.models.lda.priors import (LDALearnedState, LearnedPriors, learned_priors, log_joint_learned,
                                        minka_log_alpha, sample_log_alpha, sample_log_eta)
from gibbsjax.models.lda.topics_only import topics_only
from gibbsjax.models.lda.records import check_recorded, recorded_ids, recorded_indices
from gibbsjax.models.lda.z_updates import (COLLAPSED_Z, FIXED_ALPHA_Z_UPDATES, SAMPLE_Z, WARMUP_NAMES, WARMUP_SWEEPS,
                                           check_num_topics, resolve_collapsed_z_update, resolve_dirichlet_draw,
                                           resolve_warmup, resolve_z_update, warmup_sweep)

__all__ = ["partially_collapsed", "uncollapsed", "collapsed", "SAMPLERS", "build_kernel", "recorded_indices",
           "recorded_ids"]


# ============================================================================ kernels
def _check(K, alpha, eta) -> tuple[int, float, float]:
    return check_num_topics(K), check_positive("alpha", alpha), check_positive("eta", eta)


def _words_given_phi(key, state: LDAState, d: LDAData):
    """w_i ~ Cat(φ_{z_i}): the likelihood given (z, φ)."""
    return gr.categorical(key, state.log_phi[state.z])


_MINKA_WARMUP_NAME = (
    "Minka's fixed-point estimate of alpha after every warm-up sweep (a point estimate, as tomotopy's "
    "optimisation; alpha is then fixed for the sampling sweeps)"
)


def _with_concentrations(sample, *, alpha: bool, eta: bool, **static):
    """``sample`` as an update of a learned state: α and/or η read from the state (exp of its logs)."""
    def update(key, state, d):
        kw = dict(static)
        if alpha:
            kw["alpha"] = jnp.exp(state.log_alpha)
        if eta:
            kw["eta"] = jnp.exp(state.log_eta)
        return sample(key, state, d, **kw)

    update.__name__ = getattr(sample, "__name__", "update")
    return update


def _learned_kernel(K: int, alpha: float, eta: float, sampler: str, z_update: str, warmup: str,
                    priors: LearnedPriors, dirichlet_draw: str) -> Kernel:
    """The kernel of :func:`build_kernel` with α and/or η in the state (:class:`LDALearnedState`).

    One sweep, for ``partially_collapsed`` and ``uncollapsed``:
    log η | z (φ integrated out) → log φ | z, η → z | φ, α → log α | z (θ integrated out);
    for ``collapsed``: z | α, η → log α | z → log η | z → log φ | z, η.
    Every update samples its full conditional given the state it sees, or (the slice
    updates) is a transition that leaves that conditional invariant, so each leaves
    p(z, φ, α, η | w) invariant and so does the sweep: α ⟂ (φ, η, w) | z with θ never in
    the state, so p(α | z) is α's full conditional; η | z with φ integrated out followed
    at once by φ | z, η is one blocked draw of (η, φ) from p(η, φ | z, w), the old φ
    unused; z's conditionals are the fixed-prior ones at the current α, η.
    """
    sample_alpha = priors.alpha == "sample"
    counts = native.topic_counts if "native" in (z_update, dirichlet_draw) else topic_counts  # equal tables
    phi = ("log_phi", _with_concentrations(sample_log_phi, alpha=False, eta=True, K=K, draw=dirichlet_draw))
    extra_alpha = [("log_alpha", functools.partial(sample_log_alpha, K=K, prior=priors.alpha_prior))] \
        if sample_alpha else []
    extra_eta = [("log_eta", functools.partial(sample_log_eta, K=K, prior=priors.eta_prior))] if priors.eta else []
    if sampler == "collapsed":
        z = ("z", _with_concentrations(COLLAPSED_Z[z_update], alpha=True, eta=True, K=K))
        step = sweep(z, *extra_alpha, *extra_eta, phi)
    else:
        z = ("z", _with_concentrations(SAMPLE_Z[z_update], alpha=True, eta=False, K=K)
             if sampler == "partially_collapsed" else
             _with_concentrations(sample_z_uncollapsed, alpha=True, eta=False, K=K, draw=dirichlet_draw))
        step = sweep(*extra_eta, phi, z, *extra_alpha)
    # Warm-up: the approximate z-sweeps ("fast", "fast_grid") or the sampling sweep, the learned
    # concentrations updated as in sampling, and Minka's fixed point for α if asked.
    minka = [("log_alpha", functools.partial(minka_log_alpha, K=K))] if priors.alpha == "minka" else []
    warmup_step, names = None, []
    if warmup in WARMUP_SWEEPS:
        fast = ("z", _with_concentrations(warmup_sweep(warmup, z_update), alpha=True, eta=True, K=K))
        warmup_step = sweep(fast, *extra_alpha, *extra_eta, *minka)
        names.append(WARMUP_NAMES[warmup])
    elif minka:
        warmup_step = sweep(step, *minka)
    if minka:
        names.append(_MINKA_WARMUP_NAME)
    alpha_shape = (K,) if priors.asymmetric else ()

    def init(key, d: LDAData):
        k1, _ = jax.random.split(key)  # the second key drew the initial φ once; z keeps its stream
        z = initial_topics(k1, d, K)
        log_alpha = jnp.full(alpha_shape, math.log(alpha), jnp.float32)
        log_eta = jnp.asarray(math.log(eta), jnp.float32)
        log_phi = initial_log_phi(word_topic_counts(z, d, K), eta)  # unread: every sweep draws φ first
        return LDALearnedState(z, log_phi, log_alpha.astype(log_phi.dtype), log_eta.astype(log_phi.dtype))

    def record(state: LDALearnedState, d: LDAData):
        _, _, nk = counts(state.z, d, K)
        out = {"topic_share": nk.astype(jnp.float32) / jnp.sum(d.doc_lengths)}
        if sample_alpha:
            out["alpha"] = jnp.exp(state.log_alpha)
        if priors.eta:
            out["eta"] = jnp.exp(state.log_eta)
        return out

    def accumulate(state: LDALearnedState, d: LDAData):
        ndk, nkw, nk = counts(state.z, d, K)
        v = vocab_size_of(d)
        a, e = jnp.exp(state.log_alpha), jnp.exp(state.log_eta)
        out = {"topic_word": (nkw + e) / (nk[:, None] + v * e),
               "doc_topic": (ndk[:-1] + a) / (d.doc_lengths[:, None] + jnp.sum(jnp.broadcast_to(a, (K,))))}
        if priors.alpha != "fixed":
            out["alpha"] = a
        if priors.eta:
            out["eta"] = e
        return out

    def sample_prior(key, d: LDAData):
        k_hyper, k1, k3 = jax.random.split(key, 3)
        dtype = jnp.zeros(()).dtype
        # α (or α_k) ~ Gamma(shape, rate) and η ~ Gamma(shape, rate) in one log-gamma draw;
        # a fixed concentration takes its given value
        num_alpha = int(np.prod(alpha_shape))
        shapes = np.array([priors.alpha_prior[0]] * num_alpha + [priors.eta_prior[0]])
        rates = np.array([priors.alpha_prior[1]] * num_alpha + [priors.eta_prior[1]])
        fixed = np.array([not sample_alpha] * num_alpha + [not priors.eta])
        given = np.array([math.log(alpha)] * num_alpha + [math.log(eta)])
        draws = gr.log_gamma(k_hyper, jnp.asarray(shapes, dtype), dtype=dtype) - jnp.asarray(np.log(rates), dtype)
        logs = jnp.where(jnp.asarray(fixed), jnp.asarray(given, dtype), draws)
        log_alpha, log_eta = logs[:num_alpha].reshape(alpha_shape), logs[num_alpha]
        # θ_d ~ Dir(α) and φ_k ~ Dir(η) from one log-gamma draw (normalised row by row)
        rows, v = num_docs_of(d) + 1, vocab_size_of(d)
        a = jnp.broadcast_to(jnp.exp(log_alpha), (rows, K)).reshape(-1)
        lg = gr.log_gamma(k1, jnp.concatenate([a, jnp.full((K * v,), jnp.exp(log_eta))]), dtype=dtype)
        log_theta, log_phi = lg[:rows * K].reshape(rows, K), lg[rows * K:].reshape(K, v)
        log_theta = log_theta - jax.nn.logsumexp(log_theta, axis=-1, keepdims=True)
        log_phi = log_phi - jax.nn.logsumexp(log_phi, axis=-1, keepdims=True)
        z = gr.categorical(k3, log_theta[d.docs])
        return LDALearnedState(jnp.where(d.mask, z, 0).astype(jnp.int32), log_phi, log_alpha, log_eta)

    def simulate_data(key, state: LDALearnedState, d: LDAData):
        words = jnp.where(d.mask, _words_given_phi(key, state, d), 0).astype(jnp.int32)
        return d._replace(words=words, word_counts=cj.counts(words, (vocab_size_of(d),), d.mask))

    dims = {"topic_share": ("topic",), "topic_word": ("topic", "word"), "doc_topic": ("document", "topic")}
    if priors.alpha != "fixed":
        dims["alpha"] = ("topic",) if priors.asymmetric else ()
    if priors.eta:
        dims["eta"] = ()
    return with_log_likelihood(Kernel(
        init=init,
        step=step,
        record=record,
        dims=dims,
        log_joint=functools.partial(log_joint_learned, K=K, priors=priors),
        sample_prior=sample_prior,
        simulate_data=simulate_data,
        name=f"lda.{sampler}",
        accumulate=accumulate,
        warmup_step=warmup_step,
        warmup_name="; ".join(names),
        label_dims=("topic",),
        sizes=functools.partial(_sizes, K),
        shard=functools.partial(_cannot_shard, f"lda.{sampler} with learned priors"),
        check_init=init_checker(labels={"z": K}, log_simplex=("log_phi",), log_positive=("log_alpha", "log_eta")),
    ), K, None, counts)


def _sizes(K: int, d: LDAData) -> dict[str, int]:
    """``Kernel.sizes`` of the LDA kernels: K, V and D (the corpus's documents, without a bucket's
    padding: the results are cut to it) as Python ints (nothing traced)."""
    return {"topic": int(K), "word": int(vocab_size_of(d)), "document": num_real_docs(d)}


def _cannot_shard(name: str, *args, **kwargs):
    """``Kernel.shard`` of the LDA kernels that cannot split their documents over devices."""
    raise ValueError(
        f"{name} cannot split its documents over devices: only lda.partially_collapsed with fixed alpha and "
        "eta, recording no phi or theta per draw, can (the collapsed sampler visits tokens in one sequence; "
        "the uncollapsed one draws theta by document row; learned priors need count histograms of every "
        "device); spread chains instead (num_chains a multiple of devices)")


@functools.lru_cache(maxsize=64)
def build_kernel(K: int, alpha: float, eta: float, sampler: str, z_update: str = "dense",
                 warmup: str = "exact", priors: LearnedPriors | None = None, dirichlet_draw: str = "sparse") -> Kernel:
    """The LDA kernel of ``sampler`` (``"partially_collapsed"``, ``"uncollapsed"`` or ``"collapsed"``)
    from checked arguments (``z_update``, ``warmup``, ``dirichlet_draw`` resolved, ``priors`` from
    :func:`learned_priors` or None), cached per arguments: what the factories build, before any
    per-draw records.

    >>> build_kernel(3, 0.1, 0.01, "partially_collapsed", "lanes", "exact", None, "sparse") is partially_collapsed(
    ...     3, z_update="lanes", warmup="exact", dirichlet_draw="sparse")
    True
    """
    if priors is not None:
        return _learned_kernel(K, alpha, eta, sampler, z_update, warmup, priors, dirichlet_draw)
    counts = native.topic_counts if "native" in (z_update, dirichlet_draw) else topic_counts  # equal tables
    phi = ("log_phi", functools.partial(sample_log_phi, K=K, eta=eta, draw=dirichlet_draw))
    if sampler == "collapsed":
        # z | w with θ and φ integrated out; then φ | z, w (a valid extra block:
        # φ is not in z's conditional), which keeps log φ in the state for
        # simulation and makes the state a joint draw of (z, φ).
        step = sweep(("z", functools.partial(COLLAPSED_Z[z_update], K=K, alpha=alpha, eta=eta)), phi)
    else:
        sample_z = (functools.partial(SAMPLE_Z[z_update], K=K, alpha=alpha) if sampler == "partially_collapsed"
                    else functools.partial(sample_z_uncollapsed, K=K, alpha=alpha, draw=dirichlet_draw))
        step = sweep(phi, ("z", sample_z))
    # Warm-up only: z by approximate collapsed sweeps; log φ is left as it is,
    # since every sampling sweep draws φ | z before anything uses it.
    warmup_step = None
    if warmup in WARMUP_SWEEPS:
        warmup_step = sweep(("z", functools.partial(warmup_sweep(warmup, z_update), K=K, alpha=alpha, eta=eta)))

    def init(key, d: LDAData):
        k1, _ = jax.random.split(key)  # the second key drew the initial φ once; z keeps its stream
        z = initial_topics(k1, d, K)
        return LDAState(z, initial_log_phi(word_topic_counts(z, d, K), eta))  # unread: every sweep draws φ first

    def record(state: LDAState, d: LDAData):
        _, _, nk = counts(state.z, d, K)
        return {"topic_share": nk.astype(jnp.float32) / jnp.sum(d.doc_lengths)}

    def accumulate(state: LDAState, d: LDAData):
        ndk, nkw, nk = counts(state.z, d, K)
        v = vocab_size_of(d)
        topic_word = (nkw + eta) / (nk[:, None] + v * eta)
        doc_topic = (ndk[:-1] + alpha) / (d.doc_lengths[:, None] + K * alpha)
        return {"topic_word": topic_word, "doc_topic": doc_topic}

    def sample_prior(key, d: LDAData):
        k1, k2, k3 = jax.random.split(key, 3)
        log_theta = gr.log_dirichlet(k1, jnp.full((num_docs_of(d) + 1, K), alpha))
        log_phi = gr.log_dirichlet(k2, jnp.full((K, vocab_size_of(d)), eta))
        z = gr.categorical(k3, log_theta[d.docs])
        return LDAState(jnp.where(d.mask, z, 0).astype(jnp.int32), log_phi)

    def simulate_data(key, state: LDAState, d: LDAData):
        words = jnp.where(d.mask, _words_given_phi(key, state, d), 0).astype(jnp.int32)
        return d._replace(words=words, word_counts=cj.counts(words, (vocab_size_of(d),), d.mask))

    if sampler == "partially_collapsed":
        shard = functools.partial(lda_shard.plan, K=K, alpha=alpha, eta=eta, z_update=z_update, warmup=warmup,
                                  dirichlet_draw=dirichlet_draw)
    else:
        shard = functools.partial(_cannot_shard, f"lda.{sampler}")
    kernel = with_log_likelihood(Kernel(
        init=init,
        check_init=init_checker(labels={"z": K}, log_simplex=("log_phi",)),
        step=step,
        record=record,
        dims={"topic_share": ("topic",), "topic_word": ("topic", "word"), "doc_topic": ("document", "topic")},
        shard=shard,
        log_joint=functools.partial(log_joint_collapsed, K=K, alpha=alpha, eta=eta,
                                    native_sums=counts is not topic_counts),
        sample_prior=sample_prior,
        simulate_data=simulate_data,
        name=f"lda.{sampler}",
        accumulate=accumulate,
        warmup_step=warmup_step,
        warmup_name=WARMUP_NAMES.get(warmup, ""),
        label_dims=("topic",),
        sizes=functools.partial(_sizes, K),
    ), K, alpha, counts)
    # the native collapsed sweep reads z only: a state without φ (gibbsjax.models.lda.topics_only)
    return topics_only(kernel, K, alpha, eta, warmup) if sampler == "collapsed" and z_update == "native" else kernel


# ============================================================================ the posterior, per draw
@functools.lru_cache(maxsize=64)
def _kernel_recording(K, alpha, eta, sampler, z_update, warmup, priors, record_phi, record_theta,
                      dirichlet_draw) -> Kernel:
    """:func:`build_kernel`, recording φ of some words and the θ conditionals of some documents per draw."""
    kernel = build_kernel(K, alpha, eta, sampler, z_update, warmup, priors, dirichlet_draw)
    if record_phi is None and record_theta is None:
        return kernel
    base_record = kernel.record

    def alpha_of(state):
        return jnp.exp(state.log_alpha) if isinstance(state, LDALearnedState) else alpha

    def record(state, d: LDAData):
        out = dict(base_record(state, d))
        if record_phi is not None:
            out["phi"] = jnp.exp(state.log_phi[:, recorded_ids(record_phi, d.word_counts, "record_phi")])
        if record_theta is not None:
            ndk, _, _ = topic_counts(state.z, d, K)
            docs = recorded_ids(record_theta, d.doc_lengths, "record_theta")
            out["theta_concentration"] = ndk[docs].astype(jnp.float32) + alpha_of(state)
        return out

    def coords(d: LDAData):
        out = {}
        if record_phi is not None:
            out["phi_word"] = recorded_indices(record_phi, np.asarray(d.word_counts))
        if record_theta is not None:
            lengths = np.asarray(d.doc_lengths)[:num_real_docs(d)]  # without a bucket's padding
            out["theta_document"] = recorded_indices(record_theta, lengths, "record_theta")
        return out

    dims = dict(kernel.dims)
    dims.update({"phi": ("topic", "phi_word"), "theta_concentration": ("theta_document", "topic")})
    cannot = functools.partial(_cannot_shard, f"lda.{sampler} recording phi or theta per draw (record_phi, "
                                              "record_theta)")
    return kernel._replace(record=record, dims=dims, coords=coords, shard=cannot)


def partially_collapsed(K: int, alpha: float = 0.1, eta: float = 0.01, *, z_update: str = "auto",
                        warmup: str = "auto", learn_alpha: str = "fixed", asymmetric_alpha: bool = False,
                        learn_eta: bool = False, alpha_prior=(1.0, 1.0), eta_prior=(1.0, 1.0),
                        record_phi=None, record_theta=None, dirichlet_draw: str = "auto") -> Kernel:
    """The default LDA sampler: φ drawn, θ integrated out, documents in parallel.

    Exact (Magnusson et al. 2018): given φ, the documents' topic assignments are
    independent, so updating all documents at once while each document's
    tokens go in sequence samples every token from its full conditional
    p(z_i = k | z_−i, φ, w) ∝ φ_{k,w_i} (n_dk,−i + α).  One sweep is
    ``sweep(("log_phi", sample_log_phi), ("z", <z-update>))``.

    Parameters
    ----------
    K : int
        Number of topics.
    alpha : float, default 0.1
        Symmetric Dirichlet concentration of θ (the starting value when learned).
    eta : float, default 0.01
        Symmetric Dirichlet concentration of φ (the starting value when learned).
    z_update : {"auto", "native", "lanes", "dense", "pallas", "triton", "sparse", "sparse_triton"}, default "auto"
        How the conditional is computed (the same conditional and visiting order in every case):
        ``"native"`` (:func:`~gibbsjax.models.lda.native.sample_z_native`, C++ over every core: the fast
        one on a CPU), ``"dense"`` (:func:`sample_z_partially_collapsed`), ``"lanes"``
        (:func:`sample_z_lanes`, the fastest pure-XLA one on a CPU), ``"pallas"`` (the fused GPU kernel),
        ``"triton"`` (it through jax-triton), ``"sparse"`` (:func:`~gibbsjax.models.lda.sample_z_sparse`,
        O(longest document + √K) per token; ``"sparse_triton"``: it as one Triton kernel) or
        ``"auto"`` (the fastest measured for the backend and K: :func:`resolve_z_update`).  With a
        learned α, ``"auto"`` never picks a fused GPU kernel (its α is a compile-time constant).
    warmup : {"auto", "fast", "fast_grid", "exact"}, default "auto"
        What warm-up sweeps run (sampling sweeps are always exact; ``attrs["warmup"]`` says
        which ran): ``"fast"``, APPROXIMATE collapsed sweeps from the counts frozen at each
        sweep's start (:func:`sample_z_collapsed_frozen`; cheaper than exact sweeps on a CPU,
        the same draws for any lanes, shards or devices); ``"fast_grid"``, APPROXIMATE sweeps
        refreshing the counts per step of the lane grid (:func:`sample_z_collapsed_parallel`;
        the best fit per second measured on a CPU, but its draws depend on the lanes and
        shards); ``"exact"``, the sampling sweep; ``"auto"``: ``"exact"`` on a GPU, else
        ``"fast"`` (:func:`resolve_warmup`).
    learn_alpha : {"fixed", "sample", "minka"}, default "fixed"
        ``"sample"``: α is sampled in every sweep from p(α | z), θ integrated out
        (:func:`sample_log_alpha`), and recorded per draw as ``alpha`` in the posterior
        (R-hat in the summary); ``"minka"``: Minka's fixed-point estimate of α after
        every warm-up sweep (:func:`minka_log_alpha`, tomotopy's behaviour; a point
        estimate, fixed while sampling).
    asymmetric_alpha : bool, default False
        One α_k per topic (dim ``topic``, aligned with the topics) instead of one
        symmetric α (needs a learned α).
    learn_eta : bool, default False
        The symmetric η is sampled from p(η | z, w), φ integrated out
        (:func:`sample_log_eta`), just before φ | z, η, and recorded as ``eta``.
    alpha_prior, eta_prior : tuple of float, default (1.0, 1.0)
        (shape, rate) of the gamma hyperprior of α (of each α_k) and of η; the default
        is an exponential with mean 1.
    record_phi : "all", int or sequence of int, optional
        φ for some words, recorded per draw as ``phi`` (dims ``topic``, ``phi_word``):
        ``"all"`` (K × V per draw: only when that fits), an int M (the M most frequent
        words of the corpus, ties to the lower word id; a topic's own top words are not
        known before sampling) or a sequence of word ids.  Credible intervals of φ_kw
        come from these draws.
    record_theta : "all", int or sequence of int, optional
        The documents whose θ_d is kept per draw: ``"all"``, an int n (the first n
        documents) or a sequence of document indices.  θ is integrated out of the
        samplers, so each draw records the parameters of its exact conditional,
        ``theta_concentration`` = n_d· + α (dims ``theta_document``, ``topic``);
        :func:`~gibbsjax.specs.lda.theta_draws` (and :func:`~gibbsjax.specs.lda.postprocess`,
        which ``gibbsjax run`` and :class:`gibbsjax.LDA` apply) turn them into draws
        θ_d ~ Dir(n_d· + α), one per recorded draw: jointly with z, a draw from the
        posterior of θ_d.
    dirichlet_draw : {"auto", "native", "sparse", "dense"}, default "auto"
        How φ ~ Dir(n_k· + η) is drawn (the same exact distribution every way):
        ``"native"`` (:func:`~gibbsjax.models.lda.native.log_dirichlet_native`, C++: the fast one on
        a CPU), ``"sparse"`` (:func:`gibbsjax.random.log_dirichlet_counts`, the fastest pure-XLA one
        on a CPU), ``"dense"`` (``jax.random.loggamma``, the fast one on a GPU) or ``"auto"``
        (by backend: :func:`resolve_dirichlet_draw`).

    Returns
    -------
    gibbsjax.kernel.Kernel
        The sampler, for :func:`gibbsjax.sample`; with learned priors its state is an
        :class:`LDALearnedState`.

    Notes
    -----
    Per-draw records are thinned with the run's ``thin``; the ``phi_word`` and
    ``theta_document`` coordinates hold the word ids and document indices
    (post-processing names them).  Learned concentrations also appear per chain in
    ``posterior_mean`` (``alpha``, ``eta``); ``lp`` then adds their log hyperprior
    densities (on the log scale).  An invalid option is a ``ValueError`` naming it.

    Examples
    --------
    >>> import gibbsjax
    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models.lda import data
    >>> c = Corpus.from_token_lists([["a", "b", "a"], ["c", "b", "c"], ["b", "a", "a"]])
    >>> idata = gibbsjax.sample(partially_collapsed(2), data(c), seed=0, num_warmup=20,
    ...                         num_draws=20, progress=False)
    >>> idata.posterior_mean["topic_word"].shape
    (4, 2, 3)
    """
    priors = learned_priors(learn_alpha, asymmetric_alpha, learn_eta, alpha_prior, eta_prior)
    learned_alpha = priors is not None and priors.alpha != "fixed"
    if learned_alpha and z_update in FIXED_ALPHA_Z_UPDATES:
        raise ValueError(f"z_update={z_update!r} needs a fixed alpha (a compile-time constant of the fused kernel); "
                         "with learn_alpha use z_update='auto', 'dense' or 'lanes'")
    z_update = resolve_z_update(z_update, K=K)
    if learned_alpha and z_update in FIXED_ALPHA_Z_UPDATES:
        z_update = "dense"
    warmup = resolve_warmup(warmup)
    return _kernel_recording(*_check(K, alpha, eta), "partially_collapsed", z_update, warmup, priors,
                             *check_recorded(record_phi, record_theta), resolve_dirichlet_draw(dirichlet_draw))


def uncollapsed(K: int, alpha: float = 0.1, eta: float = 0.01, *, warmup: str = "auto",
                learn_alpha: str = "fixed", asymmetric_alpha: bool = False, learn_eta: bool = False,
                alpha_prior=(1.0, 1.0), eta_prior=(1.0, 1.0), record_phi=None, record_theta=None,
                dirichlet_draw: str = "auto") -> Kernel:
    """θ and φ drawn, then every token at once (exact: z are independent given θ, φ).

    Parameters
    ----------
    K : int
        Number of topics.
    alpha, eta : float, default 0.1 and 0.01
        Symmetric Dirichlet concentrations of θ and φ (the starting values when learned).
    warmup, learn_alpha, asymmetric_alpha, learn_eta, alpha_prior, eta_prior, record_phi, record_theta
        As for :func:`partially_collapsed`.
    dirichlet_draw : {"auto", "sparse", "dense"}, default "auto"
        How θ and φ are drawn, as for :func:`partially_collapsed`.

    Returns
    -------
    gibbsjax.kernel.Kernel
        The sampler, for :func:`gibbsjax.sample`.

    Examples
    --------
    >>> kernel = uncollapsed(10, alpha=0.5)
    """
    warmup = resolve_warmup(warmup)
    priors = learned_priors(learn_alpha, asymmetric_alpha, learn_eta, alpha_prior, eta_prior)
    return _kernel_recording(*_check(K, alpha, eta), "uncollapsed", "dense", warmup, priors,
                             *check_recorded(record_phi, record_theta), resolve_dirichlet_draw(dirichlet_draw))


def collapsed(K: int, alpha: float = 0.1, eta: float = 0.01, *, z_update: str = "auto", warmup: str = "auto",
              learn_alpha: str = "fixed", asymmetric_alpha: bool = False, learn_eta: bool = False,
              alpha_prior=(1.0, 1.0), eta_prior=(1.0, 1.0), record_phi=None, record_theta=None,
              dirichlet_draw: str = "auto") -> Kernel:
    """The collapsed sampler (Griffiths & Steyvers 2004): z | w token by token, θ and φ integrated out.

    With ``z_update="native"`` (the default on a CPU where the native kernels run) the sweep runs in
    C++, one chain per thread, and with fixed α and η the state holds z only
    (:mod:`gibbsjax.models.lda.topics_only`); ``"dense"`` is the XLA reference (slow on big corpora),
    whose state also holds φ, drawn from φ | z, w after each sweep.

    Parameters
    ----------
    K : int
        Number of topics.
    alpha, eta : float, default 0.1 and 0.01
        Symmetric Dirichlet concentrations of θ and φ (the starting values when learned).
    z_update : {"auto", "native", "dense"}, default "auto"
        How the z sweep runs (:func:`~gibbsjax.models.lda.resolve_collapsed_z_update`).
    warmup : {"auto", "fast", "fast_grid", "exact"}, default "auto"
        As for :func:`partially_collapsed`; ``"auto"`` with the native z-update is ``"exact"`` (its
        exact sweep costs what the approximate ones cost).
    learn_alpha, asymmetric_alpha, learn_eta, alpha_prior, eta_prior, record_phi, record_theta
        As for :func:`partially_collapsed`.
    dirichlet_draw : {"auto", "sparse", "dense", "native"}, default "auto"
        How φ is drawn where the state holds it, as for :func:`partially_collapsed`.

    Returns
    -------
    gibbsjax.kernel.Kernel
        The sampler, for :func:`gibbsjax.sample`.

    Examples
    --------
    >>> kernel = collapsed(10, learn_alpha="sample", learn_eta=True)
    """
    priors = learned_priors(learn_alpha, asymmetric_alpha, learn_eta, alpha_prior, eta_prior)
    z_update = resolve_collapsed_z_update(z_update, needs_phi=priors is None and record_phi is not None)
    warmup = "exact" if warmup == "auto" and z_update == "native" else resolve_warmup(warmup)
    return _kernel_recording(*_check(K, alpha, eta), "collapsed", z_update, warmup, priors,
                             *check_recorded(record_phi, record_theta), resolve_dirichlet_draw(dirichlet_draw))


SAMPLERS = {
    "partially_collapsed": partially_collapsed,
    "collapsed": collapsed,
    "uncollapsed": uncollapsed,
}
