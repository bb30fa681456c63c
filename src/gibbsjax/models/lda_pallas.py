"""Moved: the fused Pallas z-update of the partially collapsed LDA sampler now lives in
:mod:`gibbsjax.models.lda.pallas` (the LDA package, issue 20).  This module re-exports its
public names so that ``from gibbsjax.models import lda_pallas`` keeps working; new code
imports ``gibbsjax.models.lda.pallas``.
"""

from __future__ import annotations

from gibbsjax.models.lda.pallas import *  # noqa: F401,F403 (the moved public names)
from gibbsjax.models.lda.pallas import __all__  # noqa: F401
