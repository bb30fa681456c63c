"""The naive Bayes models' specs: their ``[data]`` reader, post-processing and SBC cases (:mod:`gibbsjax.models.naive_bayes`).
"""

from __future__ import annotations

import functools

import jax.numpy as jnp

from gibbsjax.models import one_label as ol
from gibbsjax.models.naive_bayes import data, dirichlet_multinomial, uncollapsed
from gibbsjax.specs.one_label import one_label_postprocess, one_label_report

def _config_data(section, base_dir):
    """``[data]``: a corpus (``corpus`` / ``file``; see :func:`gibbsjax.sources.read_corpus`)
    with ``hide_labels``, ``split_seed`` and ``num_classes`` passed to :func:`data`."""
    from gibbsjax.sources import read_corpus

    keys = ("hide_labels", "split_seed", "num_classes")
    corpus = read_corpus(section, base_dir, keys)
    return data(corpus, **{k: section[k] for k in keys if k in section})


def _postprocess(idata, kernel, d, extras):
    return one_label_postprocess(idata, d, align=False)  # observed labels identify the classes


def _sbc_case(factory, labels_name, theta_name):
    """SBC example: three classes, three words, six documents of which three are labelled; ranks
    the merged labels and θ (observed labels identify the classes: no relabelling)."""
    from gibbsjax.corpus import Corpus

    docs = [[0, 0, 1], [2, 2], [0, 1, 2, 0], [1], [1, 2], [0]]
    corpus = Corpus.from_token_lists([[str(w) for w in doc] for doc in docs], vocab=["0", "1", "2"],
                                     labels=[0, -1, -1, 2, -1, 1], label_names=["x", "y", "z"])
    fns = {"labels": lambda s, d: ol.merge_labels(getattr(s, labels_name), d.labels),
           "theta": lambda s, d: jnp.exp(getattr(s, theta_name))}
    return factory((2.0, 3.0, 1.5), 0.7), data(corpus), fns


def _specs():
    from gibbsjax.spec import ModelSpec

    return (ModelSpec("naive_bayes.dirichlet_multinomial", dirichlet_multinomial, _config_data, _postprocess,
                      one_label_report, ("pi",),
                      "Dirichlet-multinomial naive Bayes, pi collapsed, some labels observed (Resnik & Hardisty 2010)",
                      sbc_case=functools.partial(_sbc_case, dirichlet_multinomial, "labels", "log_theta")),
            ModelSpec("naive_bayes.uncollapsed", uncollapsed, _config_data, _postprocess, one_label_report, ("pi",),
                      "Dirichlet-multinomial naive Bayes with pi drawn: labels drawn all at once, documents can "
                      "be split over devices (Resnik & Hardisty 2010)",
                      sbc_case=functools.partial(_sbc_case, uncollapsed, "z", "log_beta")))


#: this module's models for ``gibbsjax run`` (see :class:`gibbsjax.spec.ModelSpec`)
SPECS = _specs()
