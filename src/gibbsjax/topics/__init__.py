"""The topic-model estimator :class:`gibbsjax.LDA` and what serves it: its base class and saved
files (:mod:`~gibbsjax.topics.estimator_base`), the fit pipeline (:mod:`~gibbsjax.topics.fit`),
inspection of a fitted model (:mod:`~gibbsjax.topics.inspection`), stable topics across
chains (:mod:`~gibbsjax.topics.stable`) and the choice of K (:mod:`~gibbsjax.topics.choose_k`).

An application over the samplers of :mod:`gibbsjax.models.lda`; no sampler imports it.
"""
