"""Latent Dirichlet allocation by exact Gibbs sampling (Wang 2015, §4).

Model (Blei, Ng & Jordan 2003, in Wang's (2015) notation): topics
φ_k ~ Dir_V(η), document proportions θ_d ~ Dir_K(α), and for every token i of
document d a topic z_i | θ_d ~ Cat(θ_d) and a word w_i | z_i, φ ~ Cat(φ_{z_i}).

Three exact samplers, all with state ``LDAState(z, log_phi)``:

* :func:`collapsed` — Wang's (2015) sampler, θ and φ integrated out, token by token:
  p(z_i = k | z_−i, w) ∝ (n_kw,−i + η) / (n_k,−i + Vη) · (n_dk,−i + α)
  (Wang 2015, eq. 20; its factor 1/(n_d,−i + Kα) does not depend on k).  Every token
  sees every earlier update.  On a CPU its sweep runs in C++, one chain per thread
  (``z_update="native"``, the bucket form of Yao, Mimno & McCallum 2009 for many topics), with
  the state :class:`LDATopicState` (z only); elsewhere the XLA reference, vectorised over chains.
* :func:`partially_collapsed` (the default) — Magnusson, Jonsson, Villani &
  Broman (2018, JCGS 27(2)): each sweep draws φ_k ~ Dir(n_k· + η), then, θ
  integrated out, p(z_i = k | z_−i, φ, w) ∝ φ_{k,w_i} (n_dk,−i + α).  Given φ
  documents are independent, so all documents are updated in parallel and the
  tokens of a document in sequence: exact, not an approximation.
* :func:`uncollapsed` — θ_d ~ Dir(n_d· + α) and φ_k ~ Dir(n_k· + η), then every
  token at once: p(z_i = k | θ, φ, w) ∝ θ_{d,k} φ_{k,w_i} (all z are
  conditionally independent given θ and φ).  Fully parallel; mixes slower per
  sweep.  Natural on a GPU.

Ragged documents are packed into ``R`` *lanes* (``data``): an (S steps × R lanes) grid
where each lane holds whole documents one after another (:mod:`gibbsjax.models.lda.layout`
says how, and how the samplers visit it).

Options of the partially collapsed sampler: ``z_update`` picks how the
z-update runs — ``"native"`` (C++ behind an XLA FFI call, documents over every core, built by
``pip install``: the fastest on a CPU, :mod:`gibbsjax.models.lda.native`), ``"lanes"`` (each lane
carries its document's count row; cumulative sums by matrix products: the fastest pure-XLA one
on a CPU), ``"dense"`` (the
reference XLA scan), ``"pallas"`` (a fused GPU kernel,
:mod:`gibbsjax.models.lda.pallas`), ``"triton"`` (that kernel through jax-triton,
:mod:`gibbsjax.models.lda.fused_triton`), ``"sparse"`` (a document term over the document's
other tokens plus a per-word α-term, O(longest document + √K) per token instead of O(K):
for K in the thousands, :mod:`gibbsjax.models.lda.sparse`) — all the same exact conditional;
``"auto"`` chooses by backend (:func:`resolve_z_update`).  Every sampler takes
``warmup`` (:mod:`gibbsjax.models.lda.warmups`): ``"fast"`` runs APPROXIMATE
collapsed sweeps from the word–topic counts frozen at the start of each sweep during
warm-up only (``Kernel.warmup_step``; on a CPU they reach the typical set in fewer,
cheaper sweeps, and are discarded; their draws do not depend on the lanes, shards or
devices: :func:`sample_z_collapsed_frozen`); ``"fast_grid"`` the older APPROXIMATE
sweeps that refresh the counts after every step of the lane grid (the best fit per
second measured on a CPU, but layout-dependent: :func:`sample_z_collapsed_parallel`);
``"exact"`` warms up with the sampling sweep; ``"auto"`` (the default) is ``"exact"``
on a GPU and ``"fast"`` elsewhere (:func:`resolve_warmup`; with the native z-update its sweeps run
natively too).  Sampling sweeps are always
exact, and ``attrs["warmup"]`` records which warm-up ran.  Every sampler takes ``dirichlet_draw``: how the
Dirichlet rows (φ; θ too in the uncollapsed sampler) are drawn, ``"native"`` (C++, the fast one
on a CPU), ``"sparse"`` (the fastest pure-XLA one on a CPU) or ``"dense"`` (``jax.random.loggamma``,
the fast one on a GPU), the same exact distribution; ``"auto"`` chooses by backend
(:func:`resolve_dirichlet_draw`).

Learned priors (``learn_alpha``, ``asymmetric_alpha``, ``learn_eta``, ``alpha_prior``,
``eta_prior`` of every factory): α (symmetric, or one α_k per topic) and η get gamma
hyperpriors and are sampled within the sweep by exact slice-sampling updates of their
logs (θ, resp. φ, integrated out; :func:`sample_log_alpha`, :func:`sample_log_eta`),
recorded per draw as ``alpha`` and ``eta``; the state is then an
:class:`LDALearnedState` (``z, log_phi, log_alpha, log_eta``), so kernels with fixed
priors keep ``LDAState`` and their saved results.  ``learn_alpha="minka"`` estimates α
by Minka's fixed point during warm-up only (tomotopy's behaviour).

``lp`` (``sample_stats``) is log p(w, z) with θ and φ integrated out — the same
label-invariant quantity for every sampler.  ``posterior_mean`` holds, per
chain, E[φ | z, w] (``topic_word``, K × V) and E[θ | z, w] (``doc_topic``,
D × K), Rao-Blackwellised; ``posterior`` records each topic's share of tokens.

The package's modules import downward only (each from those above it in this list):

* :mod:`~gibbsjax.models.lda.layout`: ``LDAData``, packing into lanes, ``LDAState``, counts, uniforms;
* :mod:`~gibbsjax.models.lda.native`: the native CPU z-update and Dirichlet rows (C++, XLA FFI calls);
* :mod:`~gibbsjax.models.lda.conditionals`: the collapsed log joint, the φ draw and the z-updates;
* :mod:`~gibbsjax.models.lda.chain_launch`: one launch of a fused kernel for every chain, split
  along the chains over devices;
* :mod:`~gibbsjax.models.lda.pallas`: the fused GPU z-update (Pallas, Triton backend);
* :mod:`~gibbsjax.models.lda.fused_triton`: the same kernel in Triton's language, through ``jax-triton``
  (its source in :mod:`~gibbsjax.models.lda.fused_triton_kernel`, imported only when it runs);
* :mod:`~gibbsjax.models.lda.sparse`: the sparse exact z-update for many topics;
* :mod:`~gibbsjax.models.lda.z_updates`: which z-update and warm-up run (``resolve_z_update``,
  ``resolve_collapsed_z_update``), and the one check of K (:func:`check_num_topics`);
* :mod:`~gibbsjax.models.lda.topics_only`: the collapsed kernel with the native sweep and its state of topics only;
* :mod:`~gibbsjax.models.lda.slice_sampling`: slice sampling of a scalar (Neal 2003);
* :mod:`~gibbsjax.models.lda.priors`: learned α and η (slice sampling, Minka's fixed point);
* :mod:`~gibbsjax.models.lda.shard_layout`: a corpus's documents split into shards, each packed into a grid;
* :mod:`~gibbsjax.models.lda.shard`: the partially collapsed sampler with documents split over devices;
* :mod:`~gibbsjax.models.lda.records`: which words' φ and which documents' θ a kernel records per draw;
* :mod:`~gibbsjax.models.lda.kernels`: the factories and ``SAMPLERS``;
* :mod:`~gibbsjax.models.lda.inference`: new documents and held-out perplexity, φ fixed.

How a config builds LDA's data, its post-processing and its report live one layer up, in
:mod:`gibbsjax.specs.lda`.

This module exports the names a user of the samplers reaches for (``from gibbsjax.models.lda import
partially_collapsed``, ``lda.data(corpus)``); the tuning constants and the helpers behind them stay
in their modules (``lda.layout.tokens_in_corpus_order``, ``lda.conditionals.LOG_PHI_FLOOR``).
"""

from __future__ import annotations

from gibbsjax.models.lda.layout import (LANE_FRACTIONS, LDAData, LDAState, data, default_lanes, hashed_uniforms,
                                        initial_topics, token_uniforms, topic_counts, word_topic_counts)
from gibbsjax.models.lda.conditionals import (DIRICHLET_ROWS, log_joint_collapsed, sample_log_phi, sample_z_collapsed,
                                              sample_z_lanes, sample_z_partially_collapsed, sample_z_uncollapsed)
from gibbsjax.models.lda.sparse import sample_z_sparse
from gibbsjax.models.lda.warmups import sample_z_collapsed_frozen, sample_z_collapsed_parallel
from gibbsjax.models.lda.z_updates import (COLLAPSED_Z_UPDATES, DIRICHLET_DRAWS, SPARSE_FROM_TOPICS_ON_CPU, WARMUPS,
                                           Z_UPDATES, check_num_topics, resolve_collapsed_z_update,
                                           resolve_dirichlet_draw, resolve_warmup, resolve_z_update)
from gibbsjax.models.lda.topics_only import LDATopicState
from gibbsjax.models.lda.slice_sampling import slice_sample
from gibbsjax.models.lda.priors import (LEARN_ALPHA, LDALearnedState, LearnedPriors, learned_priors,
                                        log_joint_learned, minka_log_alpha, sample_log_alpha, sample_log_eta)
from gibbsjax.models.lda.kernels import SAMPLERS, collapsed, partially_collapsed, recorded_indices, uncollapsed
from gibbsjax.models.lda.inference import heldout_perplexity, infer_doc_topics

__all__ = [
    "LDAData",
    "LDAState",
    "data",
    "default_lanes",
    "LANE_FRACTIONS",
    "collapsed",
    "partially_collapsed",
    "uncollapsed",
    "SAMPLERS",
    "check_num_topics",
    "log_joint_collapsed",
    "topic_counts",
    "token_uniforms",
    "hashed_uniforms",
    "initial_topics",
    "sample_z_collapsed",
    "sample_z_partially_collapsed",
    "sample_z_uncollapsed",
    "sample_z_lanes",
    "sample_z_sparse",
    "sample_z_collapsed_frozen",
    "sample_z_collapsed_parallel",
    "resolve_z_update",
    "Z_UPDATES",
    "resolve_collapsed_z_update",
    "COLLAPSED_Z_UPDATES",
    "LDATopicState",
    "SPARSE_FROM_TOPICS_ON_CPU",
    "resolve_dirichlet_draw",
    "DIRICHLET_DRAWS",
    "DIRICHLET_ROWS",
    "word_topic_counts",
    "WARMUPS",
    "resolve_warmup",
    "sample_log_phi",
    "LDALearnedState",
    "LearnedPriors",
    "LEARN_ALPHA",
    "learned_priors",
    "slice_sample",
    "sample_log_alpha",
    "sample_log_eta",
    "minka_log_alpha",
    "log_joint_learned",
    "infer_doc_topics",
    "heldout_perplexity",
    "recorded_indices",
]

