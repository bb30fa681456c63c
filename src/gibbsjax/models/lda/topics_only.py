"""The collapsed sampler with the native z-update: a state of topics only.

``lda.collapsed(K, z_update="native")`` (the default on a CPU where the native kernels run, with
fixed α and η and no φ recorded per draw) samples p(z | w) with θ and φ integrated out, token by
token in C++ (:func:`~gibbsjax.models.lda.native.sample_z_collapsed_native`), one chain per
thread.  Its state is :class:`LDATopicState` (``z`` only): the collapsed z-update never reads φ,
and every summary of a draw (topic shares, the Rao-Blackwellised means E[φ | z, w] and
E[θ | z, w], the collapsed log joint) is a function of z, so the sweep draws no K × V table of φ
it would not use.  The other z-updates of :func:`~gibbsjax.models.lda.collapsed` keep
``LDAState(z, log_phi)`` and draw φ | z, w as an extra block.

Geweke's test needs data given the state: with φ integrated out, w | z is drawn exactly by
φ ~ Dir(η) (the prior: without w, φ is independent of z) and then w_i ~ Cat(φ_{z_i}).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

from gibbsjax import conjugate as cj
from gibbsjax import random as gr
from gibbsjax._checks import init_checker
from gibbsjax.kernel import Kernel, sweep
from gibbsjax.models.lda import native
from gibbsjax.models.lda.layout import LDAData, initial_topics, num_docs_of, vocab_size_of
from gibbsjax.models.lda.likelihood import with_log_likelihood
from gibbsjax.models.lda.z_updates import WARMUP_NAMES, WARMUP_SWEEPS, warmup_sweep

__all__ = ["LDATopicState", "topics_only"]


class LDATopicState(NamedTuple):
    """The state of the collapsed sampler with the native z-update: the topics of the tokens.

    Parameters
    ----------
    z : jax.Array
        (S, R) int32: every slot's topic (padding: 0).

    Examples
    --------
    >>> LDATopicState(jnp.zeros((2, 3), jnp.int32)).z.shape
    (2, 3)
    """

    z: jax.Array


def topics_only(kernel: Kernel, K: int, alpha: float, eta: float, warmup: str) -> Kernel:
    """``kernel`` (the fixed-prior collapsed kernel of :func:`~gibbsjax.models.lda.kernels.build_kernel`,
    whose record, means and log joint read z only) with the native z-update and the state
    :class:`LDATopicState` (its pointwise log likelihood with E[φ | z, w] for φ).

    Parameters
    ----------
    kernel : gibbsjax.kernel.Kernel
        The collapsed kernel with fixed priors.
    K : int
        Number of topics.
    alpha, eta : float
        The concentrations.
    warmup : str
        A resolved warm-up (:func:`~gibbsjax.models.lda.resolve_warmup`): ``"fast"`` runs the native
        frozen-count sweeps during warm-up, ``"exact"`` the sampling sweep.

    Returns
    -------
    gibbsjax.kernel.Kernel
        The kernel.

    Examples
    --------
    >>> from gibbsjax.models.lda import collapsed
    >>> kernel = collapsed(3, z_update="native") if native.available() else None
    """
    z_update = functools.partial(native.sample_z_collapsed_native, K=K, alpha=alpha, eta=eta)
    warmup_step = None
    if warmup in WARMUP_SWEEPS:
        warmup_step = sweep(("z", functools.partial(warmup_sweep(warmup, "native"), K=K, alpha=alpha, eta=eta)))

    def init(key, d: LDAData):
        k1, _ = jax.random.split(key)  # z from the same stream as the other samplers' initial topics
        return LDATopicState(initial_topics(k1, d, K))

    def sample_prior(key, d: LDAData):
        k1, k3 = jax.random.split(key)
        log_theta = gr.log_dirichlet(k1, jnp.full((num_docs_of(d) + 1, K), alpha))
        z = gr.categorical(k3, log_theta[d.docs])
        return LDATopicState(jnp.where(d.mask, z, 0).astype(jnp.int32))

    def simulate_data(key, state: LDATopicState, d: LDAData):
        k_phi, k_w = jax.random.split(key)
        v = vocab_size_of(d)
        log_phi = gr.log_dirichlet(k_phi, jnp.full((K, v), eta))
        words = jnp.where(d.mask, gr.categorical(k_w, log_phi[state.z]), 0).astype(jnp.int32)
        return d._replace(words=words, word_counts=cj.counts(words, (v,), d.mask))

    return with_log_likelihood(kernel, K, alpha, native.topic_counts, eta=eta)._replace(
        init=init,
        step=sweep(("z", z_update)),
        sample_prior=sample_prior,
        simulate_data=simulate_data,
        check_init=init_checker(labels={"z": K}),
        warmup_step=warmup_step,
        warmup_name=WARMUP_NAMES.get(warmup, ""),
    )
