"""Plots of a result that people look at: the log joint per chain, trace and rank
plots split into readable panels, the agreement of chains on each topic or
cluster, and the top words of each topic.

Every function takes an :class:`arviz.InferenceData` (what :func:`gibbsjax.sample`,
:class:`gibbsjax.LDA` and ``gibbsjax run`` produce, or ``az.from_netcdf`` reads
back) and returns the matplotlib ``Figure``; ``gibbsjax plot --kind KIND`` calls
them.

* :func:`plot_lp`: ``sample_stats.lp`` per chain against the sweep, one colour
  per chain, with each chain's density beside it (chains stuck in different
  modes sit at different levels).
* :func:`plot_trace`: densities and traces; a variable with many components
  (LDA's ``topic_share``) is split into panels of at most ``max_per_panel``.
* :func:`plot_rank`: ArviZ's rank plot (``lp`` included).
* :func:`plot_agreement`: a chains × components heatmap of the ``agreement``
  group's distance to the reference chain, reproduced cells marked.
* :func:`plot_top_words`: the top words of each topic (or cluster, or class)
  as horizontal bars, one small panel each.
* :func:`plot_stable_topics`: the topics that recur across chains, as bars of
  the share of chains that hold each, with spread and R-hat.
* :func:`plot_stability`: the table of :func:`gibbsjax.choose_num_topics`
  (stability, held-out perplexity and coherence against K).

Runs with many chains are plotted from a random sample of at most
``max_chains`` chains (a fixed ``seed``, so the same picture every time); the
figure says so.  Statistics printed in titles (R-hat, verdicts) use every
chain.  matplotlib and ArviZ are imported inside the functions: ``import
gibbsjax`` stays light.

>>> import numpy as np
>>> from gibbsjax.diagnostics import to_inference_data
>>> rng = np.random.default_rng(0)
>>> idata = to_inference_data({"mu": rng.normal(size=(4, 50))},
...                           sample_stats={"lp": rng.normal(size=(4, 50))})
>>> variable_names(idata)
['mu', 'lp']
>>> fig = plot_lp(idata)
>>> len(fig.axes)
2
"""

from __future__ import annotations

from gibbsjax.plots.chains import plot_lp, plot_rank, plot_trace
from gibbsjax.plots.common import MAX_CHAINS, variable_names
from gibbsjax.plots.topics import plot_agreement, plot_stability, plot_stable_topics, plot_top_words

__all__ = [
    "plot_lp",
    "plot_trace",
    "plot_rank",
    "plot_agreement",
    "plot_top_words",
    "plot_stable_topics",
    "plot_stability",
    "variable_names",
    "MAX_CHAINS",
]
