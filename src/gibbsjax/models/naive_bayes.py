"""Dirichlet-multinomial naive Bayes (Resnik & Hardisty 2010).

Model, for K >= 2 classes (Resnik & Hardisty 2010, has K = 2, labels x ∈ {0, 1}):

    π ~ Dir(γ_π),   L_j | π ~ Cat(π),   θ_x ~ Dir(γ_θ) for every class x,
    W_j | L_j, θ ~ the words of document j, each drawn from Cat(θ_{L_j}).

π is integrated out (seed §2.1); θ is sampled; the labels of documents whose
label is observed are held fixed and the others are sampled.  This is exactly
the π-collapsed mixture of unigrams of Sarkar's lecture notes 21 with some labels observed,
so both use the same building blocks in :mod:`gibbsjax.models.one_label` (and :mod:`gibbsjax.conjugate`).

One sweep (:func:`dirichlet_multinomial`):

1. :func:`sample_theta`: θ_x | L, C ~ Dir(count(w ∈ C_x) + γ_θ), all classes at once.
2. :func:`sample_labels`: each unobserved L_j in turn, from

       P(L_j = x | L_{−j}, C, θ) = (C_x^{(−j)} + γ_π,x) / (N − 1 + Σ_x' γ_π,x')
                                     · Π_w θ_{x,w}^{W_jw} / Z_j,

   where C_x^{(−j)} counts the documents *other than j* with label x (observed
   and unobserved) and N is the number of documents.

Correction of the seed
----------------------
Seed 000 (§3.1) prints the prior factor as (C_x + γ_π,x − 1) / (C_0 + C_1 +
γ_π,1 + γ_π,0 − 1).  Integrating π out gives the Pólya-urn predictive

    P(L_j = x | L_{−j}) = ∫ π_x Dir(π; C^{(−j)} + γ_π) dπ
                        = (C_x^{(−j)} + γ_π,x) / (N − 1 + Σ γ_π),

with no "−1" in the numerator when the counts exclude document j (the "−1"s
are right only if C_x counts document j itself *and* j currently has label x,
which is not what Resnik & Hardisty's (2010) formula says).  The denominator does not depend
on x, so it cancels in the normalisation.  ``tests/test_naive_bayes.py`` shows
that the printed version gives the wrong posterior (exact enumeration).

Exactness
---------
θ | L is one conjugate draw per class, all classes at once (the θ_x are
conditionally independent).  With π collapsed the labels are *not*
conditionally independent given θ (they share the counts C), so the unobserved
labels are sampled in sequence -- a ``lax.scan`` over documents carrying the
class counts -- each from its exact full conditional given the newest values of
all the others.  No approximation is made.

π drawn instead (:func:`uncollapsed`)
-------------------------------------
The same model sampled with π kept: π | L ~ Dir(C + γ_π) and θ | L drawn as one
block, then every unobserved label at once from
P(L_j = x | π, θ) ∝ π_x Π_w θ_{x,w}^{W_jw} (the labels are conditionally
independent given π and θ, so this is an exact draw of their joint conditional).
It is the mixture of unigrams of :mod:`gibbsjax.models.mixtures` with some
labels observed, and shares its code (:func:`gibbsjax.models.one_label.unigram_functions`).
It mixes somewhat slower per sweep than the collapsed sampler but has no
sequential loop, so it splits its documents over devices (``sample(...,
devices=N)``, :mod:`gibbsjax.rows`), which the collapsed sampler cannot: its
labels are coupled through the counts.

Outputs
-------
``record`` stores, per draw, ``pi`` (class) = E[π | L] = (C_x + γ_π,x) / (N + Σγ_π),
the Rao-Blackwellised class proportions (small: its trace gives R-hat and ESS).
``accumulate`` adds up, on the device, ``theta`` (class, word) and ``doc_probs``
(doc, class) = P(L_j = x | L_{−j}, C, θ), the full conditional of every label
evaluated at each kept state (Rao-Blackwellised: their average estimates
P(L_j = x | data) with less noise than label frequencies; one-hot for observed
documents); the runner returns their per-chain means in the ``posterior_mean``
group, so a run never stores a K × V or D × K array per draw.  With observed
labels the classes are identified, so no alignment of chains is needed and
per-chain means can be averaged directly (with *no* observed label the model
is an unsupervised mixture whose classes are exchangeable: use
:mod:`gibbsjax.models.mixtures` for that).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

from gibbsjax import conjugate as cj
from gibbsjax.models import one_label as ol
from gibbsjax import random as gr
from gibbsjax import rows as rw
from gibbsjax._checks import check_concentration, init_checker, labels_checker
from gibbsjax.kernel import Kernel, sweep
from gibbsjax.models.one_label import Documents

__all__ = [
    "NaiveBayesState",
    "data",
    "dirichlet_multinomial",
    "uncollapsed",
    "sample_theta",
    "sample_labels",
    "label_conditionals",
]


class NaiveBayesState(NamedTuple):
    """One chain's state.

    Parameters
    ----------
    labels : jax.Array
        (D,) int32: L_j for every document (entries of observed documents are
        overwritten by the data's labels wherever they are used).
    log_theta : jax.Array
        (K, V): log θ_{x,w}.

    Examples
    --------
    >>> import jax
    >>> from gibbsjax.datasets import stdlib_docs
    >>> from gibbsjax.models import naive_bayes
    >>> d = naive_bayes.data(stdlib_docs(), hide_labels=0.5)
    >>> state = naive_bayes.dirichlet_multinomial().init(jax.random.key(0), d)
    >>> type(state).__name__, state._fields
    ('NaiveBayesState', ('labels', 'log_theta'))
    """

    labels: jax.Array
    log_theta: jax.Array


def data(corpus, *, num_classes: int | None = None, labels=None, hide_labels: float = 0.0,
         split_seed: int = 0) -> Documents:
    """Validate a labelled :class:`~gibbsjax.corpus.Corpus` for :func:`dirichlet_multinomial`.

    ``hide_labels`` hides a random fraction of the known labels (chosen with
    ``split_seed``) from the sampler, keeping them in ``true_labels`` so that
    accuracy on them can be measured (:func:`gibbsjax.evaluate.accuracy`).

    Parameters
    ----------
    corpus : Corpus
        The documents.
    num_classes : int, optional
        K, default ``len(corpus.label_names)`` (else the largest label + 1); >= 2.
    labels : array_like of int, optional
        Known labels (default ``corpus.labels``); ``-1`` marks a label to sample.
    hide_labels : float, default 0.0
        The fraction of known labels hidden from the sampler.
    split_seed : int, default 0
        The seed choosing them.

    Returns
    -------
    Documents
        The validated data.

    Raises
    ------
    ValueError
        Naming the argument (see :func:`gibbsjax.models.one_label.documents`).

    Examples
    --------
    >>> from gibbsjax.corpus import Corpus
    >>> c = Corpus.from_token_lists([["a", "b"], ["b", "b"], ["a"]], labels=[0, 1, -1])
    >>> data(c).latent.tolist()
    [2]
    """
    return ol.documents(corpus, observed=True, labels=labels, num_classes=num_classes,
                        hide_labels=hide_labels, split_seed=split_seed)


def _labels(state: NaiveBayesState, data: Documents) -> jax.Array:
    """Current labels with the observed ones taken from the data."""
    return ol.merge_labels(state.labels, data.labels)


def sample_theta(key, state: NaiveBayesState, data: Documents, *, gamma_theta: float) -> jax.Array:
    """θ_x | L, C ~ Dir(count(w ∈ C_x) + γ_θ) for every class x (Resnik & Hardisty 2010, §3.2).

    Parameters
    ----------
    key : jax.Array
        A PRNG key.
    state : NaiveBayesState
        The current state: its labels are read.
    data : Documents
        The documents.
    gamma_theta : float
        The concentration γ_θ.

    Returns
    -------
    jax.Array
        The new log θ: (K, V), one row per class.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> from gibbsjax.corpus import Corpus
    >>> d = data(Corpus.from_token_lists([["a", "a"], ["b", "b"], ["a"]], labels=[0, 1, -1]))
    >>> s = NaiveBayesState(labels=jnp.array([0, 1, 0]), log_theta=jnp.log(jnp.array([[0.9, 0.1], [0.1, 0.9]])))
    >>> log_theta = sample_theta(jax.random.key(0), s, d, gamma_theta=1.0)
    >>> log_theta.shape, [round(float(v), 4) for v in jnp.exp(log_theta).sum(axis=1)]
    ((2, 2), [1.0, 1.0])
    """
    counts = ol.word_counts(_labels(state, data), data, data.num_classes)
    return cj.sample_log_dirichlet_rows(key, counts, gamma_theta)


def sample_labels(key, state: NaiveBayesState, data: Documents, *, gamma_pi) -> jax.Array:
    """Each unobserved L_j in turn (Resnik & Hardisty 2010, §3.1, corrected).

    P(L_j = x | L_{−j}, C, θ) ∝ (C_x^{(−j)} + γ_π,x) · Π_w θ_{x,w}^{W_jw},
    C_x^{(−j)} = #{documents i ≠ j with L_i = x}.  Sequential (``lax.scan`` over
    the unobserved documents): collapsing π couples the labels through C.

    Parameters
    ----------
    key : jax.Array
        A PRNG key.
    state : NaiveBayesState
        The current state.
    data : Documents
        The documents.
    gamma_pi : float or jax.Array
        The concentration γ_π (one per class).

    Returns
    -------
    jax.Array
        (D,) int32: each document's new label.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> from gibbsjax.corpus import Corpus
    >>> s = NaiveBayesState(labels=jnp.array([0, 1, 0]), log_theta=jnp.log(jnp.array([[0.9, 0.1], [0.1, 0.9]])))
    >>> d = data(Corpus.from_token_lists([["a", "a"], ["b", "b"], ["a"]], labels=[0, 1, -1]))
    >>> labels = sample_labels(jax.random.key(0), s, d, gamma_pi=1.0)
    >>> labels.shape, labels.dtype, labels[:2].tolist()   # observed labels are kept
    ((3,), dtype('int32'), [0, 1])
    """
    alpha = cj.concentration_vector("gamma_pi", gamma_pi, data.num_classes)
    loglik = ol.doc_log_likelihood(state.log_theta, data)
    return ol.sample_labels_sequential(key, _labels(state, data), loglik, alpha, data.latent)


def label_conditionals(state: NaiveBayesState, data: Documents, *, gamma_pi) -> jax.Array:
    """P(L_j = x | L_{−j}, C, θ) for every document at once; one-hot for observed ones.

    Parameters
    ----------
    state : NaiveBayesState
        The current state.
    data : Documents
        The documents.
    gamma_pi : float or jax.Array
        The concentration γ_π.

    Returns
    -------
    jax.Array
        (D, K) probabilities.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> from gibbsjax.corpus import Corpus
    >>> d = data(Corpus.from_token_lists([["a", "a"], ["b", "b"], ["a"]], labels=[0, 1, -1]))
    >>> s = NaiveBayesState(labels=jnp.array([0, 1, 0]), log_theta=jnp.log(jnp.array([[0.9, 0.1], [0.1, 0.9]])))
    >>> p = label_conditionals(s, d, gamma_pi=1.0)   # document 2 ("a") is unlabelled: (1 + 1) 0.9 : (1 + 1) 0.1
    >>> [[round(float(v), 4) for v in row] for row in p]
    [[1.0, 0.0], [0.0, 1.0], [0.9, 0.1]]
    """
    alpha = cj.concentration_vector("gamma_pi", gamma_pi, data.num_classes)
    loglik = ol.doc_log_likelihood(state.log_theta, data)
    return ol.collapsed_label_probs(_labels(state, data), loglik, alpha, data.labels)


def dirichlet_multinomial(gamma_pi: float | tuple[float, ...] = 1.0, gamma_theta: float = 1.0) -> Kernel:
    """Gibbs sampler for Dirichlet-multinomial naive Bayes, π collapsed (Resnik & Hardisty 2010).

    The number of classes K comes from the data (:func:`data`).  Each sweep
    draws θ | L then the unobserved labels one by one (see the module docs for
    why this is exact).  Random start: unobserved labels uniform (θ is drawn from L first).

    Parameters
    ----------
    gamma_pi : float or tuple of float, default 1.0
        Dirichlet (Beta for K = 2) concentration of the class prior π: a number
        (symmetric) or one value per class (Resnik & Hardisty's (2010) γ_π = [γ_π0, γ_π1]).
    gamma_theta : float, default 1.0
        Symmetric Dirichlet concentration of every class's word distribution θ_x.

    Returns
    -------
    Kernel
        The sampler.

    Examples
    --------
    >>> import gibbsjax
    >>> from gibbsjax.corpus import Corpus
    >>> c = Corpus.from_token_lists([["a", "a"], ["b", "b"], ["a"], ["b"]], labels=[0, 1, -1, -1])
    >>> idata = gibbsjax.sample(dirichlet_multinomial(), data(c), seed=0, num_warmup=50,
    ...                         num_draws=200, progress=False)
    >>> p = idata.posterior_mean["doc_probs"].mean("chain").values
    >>> bool(p[2, 0] > 0.5 and p[3, 1] > 0.5)
    True
    """
    gamma_pi = check_concentration("gamma_pi", gamma_pi, ((), (None,)))
    gamma_theta = check_concentration("gamma_theta", gamma_theta)
    return _dirichlet_multinomial(gamma_pi, gamma_theta)


def _num_classes(data: Documents) -> int:
    """K of naive Bayes data; ``ValueError`` for other data or fewer than two classes."""
    if not isinstance(data, Documents):
        raise ValueError(f"data must be built by naive_bayes.data(corpus), got {type(data).__name__}")
    if data.num_classes < 2:
        raise ValueError(f"num_classes must be >= 2, the data have {data.num_classes}")
    return data.num_classes


@functools.lru_cache(maxsize=64)
def _dirichlet_multinomial(gamma_pi, gamma_theta: float) -> Kernel:
    num_classes = _num_classes

    def init(key, data: Documents):
        """Unobserved labels uniform at random; θ uniform (the first sweep redraws it from L)."""
        k = num_classes(data)
        labels = jax.random.randint(key, (data.num_docs,), 0, k, dtype=jnp.int32)
        log_theta = jnp.full((k, data.vocab_size), -jnp.log(data.vocab_size), jnp.result_type(float))
        return NaiveBayesState(ol.merge_labels(labels, data.labels), log_theta)

    def record(state, data: Documents):
        """pi = E[π | L] per draw."""
        k = num_classes(data)
        labels = _labels(state, data)
        alpha = cj.concentration_vector("gamma_pi", gamma_pi, k)
        counts = cj.class_counts(labels, k).astype(alpha.dtype)
        return {"pi": (counts + alpha) / (data.num_docs + alpha.sum())}

    def accumulate(state, data: Documents):
        """θ and P(L_j = x | rest), averaged over draws by the runner."""
        return {
            "theta": jnp.exp(state.log_theta),
            "doc_probs": label_conditionals(state, data, gamma_pi=gamma_pi),
        }

    def log_joint(state, data: Documents):
        """log p(C, L, θ) with π integrated out (Resnik & Hardisty 2010, eq. 19, normalised)."""
        k = num_classes(data)
        labels = _labels(state, data)
        alpha = cj.concentration_vector("gamma_pi", gamma_pi, k)
        return (
            cj.log_dirichlet_multinomial(cj.class_counts(labels, k), alpha)
            + jnp.sum(cj.log_dirichlet_density(state.log_theta, gamma_theta))
            + ol.token_log_likelihood(state.log_theta, labels, data)
        )

    def sample_prior(key, data: Documents):
        """π ~ Dir(γ_π), L_j ~ Cat(π) for every j, θ_x ~ Dir(γ_θ); π is not kept."""
        k = num_classes(data)
        k1, k2 = jax.random.split(key)
        alpha = cj.concentration_vector("gamma_pi", gamma_pi, k)
        log_pi, log_theta = cj.sample_log_dirichlets(
            k1, alpha, jnp.full((k, data.vocab_size), gamma_theta))
        labels = gr.categorical(k2, log_pi, shape=(data.num_docs,))
        return NaiveBayesState(labels, log_theta)

    def simulate_data(key, state: NaiveBayesState, data: Documents):
        """New observed labels and words given the unknowns (unobserved L and θ).

        Observed labels are data: given the unobserved ones, they follow the
        Pólya urn p(L_obs | L_unobs) = ∫ Π_obs π_{L_j} Dir(π; γ_π + C_unobs) dπ,
        drawn one observed document after another with
        P(L_j = x | earlier draws) ∝ C_x + γ_π,x (C counting the unobserved
        labels and the observed ones drawn so far).  Then every word
        W_ji ~ Cat(θ_{L_j}) at the same positions.  Which documents are observed
        stays fixed (it is part of the design, not of the model).
        """
        k = num_classes(data)
        k1, k2 = jax.random.split(key)
        alpha = cj.concentration_vector("gamma_pi", gamma_pi, k)
        observed = data.labels >= 0
        counts = jnp.zeros((k,), jnp.int32).at[state.labels].add(jnp.where(observed, 0, 1))

        def urn(counts, x):
            is_obs, key_j = x
            new = gr.categorical(key_j, jnp.log(counts.astype(alpha.dtype) + alpha))
            return counts.at[new].add(is_obs.astype(jnp.int32)), jnp.where(is_obs, new, -1)

        _, obs_labels = jax.lax.scan(urn, counts, (observed, jax.random.split(k1, data.num_docs)))
        labels = ol.merge_labels(state.labels, obs_labels)
        tokens = ol.simulate_tokens(k2, state.log_theta, labels, data)
        return Documents(tokens, data.doc_ids, data.doc_lengths, obs_labels, data.latent,
                         data.true_labels, data.vocab_size, data.num_classes, data.info)

    def coords(data: Documents):
        k = data.num_classes
        names = data.info.label_names if len(data.info.label_names) == k else tuple(range(k))
        return {"class": list(names), "word": list(data.vocab), "document": list(data.info.doc_names)}

    return Kernel(
        init=init,
        step=sweep(
            ("log_theta", functools.partial(sample_theta, gamma_theta=gamma_theta)),
            ("labels", functools.partial(sample_labels, gamma_pi=gamma_pi)),
        ),
        record=record,
        dims={"pi": ("class",), "theta": ("class", "word"), "doc_probs": ("document", "class")},
        log_joint=log_joint,
        coords=coords,
        sample_prior=sample_prior,
        simulate_data=simulate_data,
        name="naive_bayes.dirichlet_multinomial",
        accumulate=accumulate,
        shard=_cannot_shard,
        check_init=init_checker(log_simplex=("log_theta",)),
        check_state=labels_checker(labels=_num_classes),
    )


def _cannot_shard(data, devices=None, num_shards=None):
    raise ValueError(
        "naive_bayes.dirichlet_multinomial cannot split its documents over devices: with π integrated "
        "out the labels are coupled through the class counts and are drawn one document after another. "
        "Use naive_bayes.uncollapsed(...) (the same model with π drawn: labels drawn all at once, "
        "documents split over devices), or spread chains over the devices (shard='chains')")


def uncollapsed(gamma_pi: float | tuple[float, ...] = 1.0, gamma_theta: float = 1.0) -> Kernel:
    """Gibbs sampler for Dirichlet-multinomial naive Bayes with π drawn (not integrated out).

    The model of :func:`dirichlet_multinomial`; each sweep draws π | L and θ | L
    (one block), then every unobserved label at once given π and θ (exact: see
    the module docs).  It splits documents over devices (``devices=N`` with fewer
    chains than devices, or ``shard="data"``); each document's label is drawn as
    on one device.  Records ``pi`` (class) per draw; ``theta`` and ``doc_probs``
    = P(L_j = x | π, θ) are averaged on the device (``posterior_mean``).

    Parameters
    ----------
    gamma_pi : float or tuple of float, default 1.0
        Concentration of the class prior π, as in :func:`dirichlet_multinomial`.
    gamma_theta : float, default 1.0
        Symmetric Dirichlet concentration of every θ_x.

    Returns
    -------
    Kernel
        The sampler (for :func:`gibbsjax.sample`).

    Examples
    --------
    >>> from gibbsjax import sample
    >>> from gibbsjax.corpus import Corpus
    >>> c = Corpus.from_token_lists([["a", "a"], ["b", "b"], ["a"], ["b"]], labels=[0, 1, -1, -1])
    >>> idata = sample(uncollapsed(), data(c), seed=0, num_warmup=50, num_draws=200, progress=False)
    >>> p = idata.posterior_mean["doc_probs"].mean("chain")
    >>> bool(p[2, 0] > 0.5) and bool(p[3, 1] > 0.5)
    True
    """
    gamma_pi = check_concentration("gamma_pi", gamma_pi, ((), (None,)))
    gamma_theta = check_concentration("gamma_theta", gamma_theta)
    return _uncollapsed(gamma_pi, gamma_theta)


@functools.lru_cache(maxsize=64)
def _uncollapsed(gamma_pi, gamma_theta: float) -> Kernel:
    def num_classes(d: Documents) -> int:
        k = _num_classes(d)
        cj.concentration_vector("gamma_pi", gamma_pi, k)
        return k

    def functions(rows):
        """The kernel's functions on all documents (``rows`` None) or one device's (:mod:`gibbsjax.rows`)."""
        def mixture(d):
            return ol.unigram_functions(num_classes(d), gamma_pi, gamma_theta, False)(rows)

        def accumulate(state, d):
            acc = mixture(d)["accumulate"](state, d)
            return {"theta": acc["beta"], "doc_probs": acc["doc_probs"]}

        return {
            "init": lambda key, d: mixture(d)["init"](key, d),
            "step": lambda key, state, d: mixture(d)["step"](key, state, d),
            "record": lambda state, d: {"pi": jnp.exp(state.log_pi)},
            "log_joint": lambda state, d: mixture(d)["log_joint"](state, d),
            "accumulate": accumulate,
            "log_likelihood": lambda state, d: mixture(d)["log_likelihood"](state, d),
        }

    def coords(d: Documents):
        k = d.num_classes
        names = d.info.label_names if len(d.info.label_names) == k else tuple(range(k))
        return {"class": list(names), "word": list(d.vocab), "document": list(d.info.doc_names)}

    def sample_prior(key, d: Documents):
        """π ~ Dir(γ_π), θ_x ~ Dir(γ_θ), L_j ~ Cat(π) for every document j."""
        k = num_classes(d)
        k1, k2 = jax.random.split(key)
        log_pi, log_theta = cj.sample_log_dirichlets(
            k1, cj.concentration_vector("gamma_pi", gamma_pi, k), jnp.full((k, d.vocab_size), gamma_theta))
        return ol.UnigramState(log_pi, log_theta, gr.categorical(k2, log_pi, shape=(d.num_docs,)))

    def simulate_data(key, state: ol.UnigramState, d: Documents):
        """New observed labels L_j ~ Cat(π) (π is in the state, so they are independent of the
        unobserved ones), then every word W_ji ~ Cat(θ_{L_j}) at the same positions.  Which
        documents are observed stays fixed (part of the design, not of the model)."""
        k1, k2 = jax.random.split(key)
        observed = d.labels >= 0
        obs_labels = jnp.where(observed, gr.categorical(k1, state.log_pi, shape=(d.num_docs,)), -1)
        labels = ol.merge_labels(state.z, obs_labels)
        tokens = ol.simulate_tokens(k2, state.log_beta, labels, d)
        return Documents(tokens, d.doc_ids, d.doc_lengths, obs_labels, d.latent, d.true_labels, d.vocab_size,
                         d.num_classes, d.info)

    return rw.kernel(
        functions, check=num_classes, num_rows=lambda d: d.num_docs, padded=ol.pad_documents,
        state_specs=ol.UnigramState(rw.P(), rw.P(), rw.P(rw.AXIS)), row_accumulators=("doc_probs",),
        what="documents",
        dims={"pi": ("class",), "theta": ("class", "word"), "doc_probs": ("document", "class"),
              "w": ("document",)},
        coords=coords,
        observed_data=ol.observed_tokens,
        sample_prior=sample_prior,
        simulate_data=simulate_data,
        name="naive_bayes.uncollapsed",
        data_type=Documents,
        check_init=init_checker(log_simplex=("log_pi", "log_beta")),
        check_state=labels_checker(z=num_classes),
    )

