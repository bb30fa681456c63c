"""The mixture models' specs: their ``[data]`` readers, post-processing and SBC cases (:mod:`gibbsjax.models.mixtures`).
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np

from gibbsjax.corpus import Corpus
from gibbsjax.models.mixtures import bernoulli, bernoulli_data, unigram_data, unigrams, unigrams_collapsed
from gibbsjax.specs.one_label import one_label_postprocess, one_label_report

def _unigram_config_data(section, base_dir):
    """``[data]``: a corpus (``corpus`` / ``file``; see :func:`gibbsjax.sources.read_corpus`)."""
    from gibbsjax.sources import read_corpus

    return unigram_data(read_corpus(section, base_dir))


def _bernoulli_config_data(section, base_dir):
    """``[data]``: a corpus as for the unigram mixture, with ``max_features``."""
    from gibbsjax.sources import read_corpus

    corpus = read_corpus(section, base_dir, ("max_features",))
    return bernoulli_data(corpus, max_features=section.get("max_features"))


def _postprocess(idata, kernel, d, extras):
    return one_label_postprocess(idata, d, align=True)


#: the small corpus of the SBC examples (word ids of four documents)
SBC_DOCS = ((0, 0, 1), (2, 2), (0, 1, 2, 0), (1,))


def _sbc_unigrams(factory):
    """SBC example: two clusters, three words, four documents; label-invariant test functions."""
    from gibbsjax.testing import co_clustered_pairs, sorted_values

    corpus = Corpus.from_token_lists([[str(w) for w in d] for d in SBC_DOCS], vocab=["0", "1", "2"])
    fns = {"co_clustered": lambda s, d: co_clustered_pairs(s.z),
           "beta_word0_sorted": lambda s, d: sorted_values(jnp.exp(s.log_beta[:, 0])),
           "beta_word2_sorted": lambda s, d: sorted_values(jnp.exp(s.log_beta[:, 2]))}
    return factory(2, alpha=(1.2, 2.5), lam=0.8), unigram_data(corpus), fns


def _sbc_bernoulli():
    """SBC example: two clusters, five binary vectors of three features."""
    from gibbsjax.testing import co_clustered_pairs, sorted_values

    d = bernoulli_data(np.array([[1, 0, 1], [1, 1, 0], [0, 0, 1], [0, 1, 1], [1, 1, 1]]))
    fns = {"co_clustered": lambda s, d: co_clustered_pairs(s.z),
           "p_sorted": lambda s, d: sorted_values(jnp.exp(s.log_p[:, 0])),
           "pi_sorted": lambda s, d: sorted_values(jnp.exp(s.log_pi))}
    return bernoulli(2, alpha=(1.6, 0.9), a=0.7, b=1.3), d, fns


def _specs():
    from gibbsjax.spec import ModelSpec

    def spec(name, factory, make_data, description, sbc_case):
        return ModelSpec(name, factory, make_data, _postprocess, one_label_report, ("pi",), description,
                         sbc_case=sbc_case)

    return (
        spec("mixtures.unigrams", unigrams, _unigram_config_data,
             "mixture of unigrams, uncollapsed (Sarkar's lecture notes 21; the CSE 5523 lecture notes 23 section 23.3)",
             functools.partial(_sbc_unigrams, unigrams)),
        spec("mixtures.unigrams_collapsed", unigrams_collapsed, _unigram_config_data,
             "mixture of unigrams with pi collapsed (Sarkar's lecture notes 21, section 21.2.2)",
             functools.partial(_sbc_unigrams, unigrams_collapsed)),
        spec("mixtures.bernoulli", bernoulli, _bernoulli_config_data,
             "mixture of binary feature vectors, Beta priors as pseudo-counts (Padó 2012)",
             _sbc_bernoulli),
    )


#: this module's models for ``gibbsjax run`` (see :class:`gibbsjax.spec.ModelSpec`)
SPECS = _specs()
