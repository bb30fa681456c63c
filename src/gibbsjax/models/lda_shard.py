"""Moved: the partially collapsed LDA sampler with documents sharded over devices now lives in
:mod:`gibbsjax.models.lda.shard` (the LDA package, issue 20).  This module re-exports its
public names so that ``from gibbsjax.models import lda_shard`` (``lda_shard.from_parts``,
``lda_shard.bytes_exchanged_per_sweep``, ...) keeps working; new code imports
``gibbsjax.models.lda.shard``.
"""

from __future__ import annotations

from gibbsjax.models.lda.shard import *  # noqa: F401,F403 (the moved public names)
from gibbsjax.models.lda.shard import __all__  # noqa: F401
