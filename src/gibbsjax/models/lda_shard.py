"""Moved: the partially collapsed LDA sampler with documents sharded over devices now lives in
:mod:`gibbsjax.models.lda.shard` (the LDA package, issue 20).  This module re-exports its
public names so that ``from gibbsjax.models import lda_shard`` (``lda_shard.from_parts``,
``lda_shard.bytes_exchanged_per_sweep``, ...) keeps working; new code imports
``gibbsjax.models.lda.shard``.
"""

from __future__ import annotations

from gibbsjax.models.lda.shard import (AXIS, LDAShardState, bytes_exchanged_per_sweep, collective_bytes, config_data,
                                       corpus_of, docs_in_corpus_order, from_parts, plan, shard_data, sharded_kernel,
                                       tokens_in_corpus_order)

__all__ = [
    "AXIS",
    "LDAShardState",
    "shard_data",
    "from_parts",
    "config_data",
    "corpus_of",
    "tokens_in_corpus_order",
    "docs_in_corpus_order",
    "sharded_kernel",
    "plan",
    "bytes_exchanged_per_sweep",
    "collective_bytes",
]
