"""gibbsjax: Gibbs samplers as pure JAX functions.

Samplers are :class:`Kernel` values (pure ``init`` / ``step`` / ``record``
functions); :func:`sample` runs many chains of one in parallel (``vmap``),
sweeps with ``lax.scan``, and returns ArviZ ``InferenceData``.

>>> import gibbsjax
>>> from gibbsjax.models import normal
>>> idata = gibbsjax.sample(normal.bivariate(0.8), seed=0, num_draws=100, progress=False)
>>> sorted(idata.posterior.data_vars)
['lp', 'x1', 'x2']
"""

from gibbsjax.topics.choose_k import choose_num_topics, stability_scorer
from gibbsjax.diagnostics import summary
from gibbsjax.topics.estimators import LDA
from gibbsjax.kernel import Kernel, sweep
from gibbsjax.reports import ChainDisagreementWarning
from gibbsjax.run import enable_compilation_cache, resume, sample
from gibbsjax.topics.stable import StableTopics, stable_topics

__all__ = ["LDA", "ChainDisagreementWarning", "Kernel", "StableTopics", "choose_num_topics", "enable_compilation_cache",
           "resume", "sample", "stability_scorer", "stable_topics", "summary", "sweep"]
__version__ = "0.1.0"


def __getattr__(name: str):
    """``gibbsjax.NotFittedError``: scikit-learn's when it is installed (imported only when asked),
    else gibbsjax's own subclass of ``ValueError`` and ``AttributeError``
    (:func:`gibbsjax.topics.estimator_base.not_fitted_error`)."""
    if name == "NotFittedError":
        from gibbsjax.topics.estimator_base import not_fitted_error

        return not_fitted_error()
    raise AttributeError(f"module 'gibbsjax' has no attribute {name!r}")
