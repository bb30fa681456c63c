"""Moved: the fused Pallas z-update of the partially collapsed LDA sampler now lives in
:mod:`gibbsjax.models.lda.pallas` (the LDA package, issue 20).  This module re-exports its
public names so that ``from gibbsjax.models import lda_pallas`` keeps working; new code
imports ``gibbsjax.models.lda.pallas``.
"""

from __future__ import annotations

from gibbsjax.models.lda.pallas import (available, default_lanes_per_program, fused_z_update, importable,
                                        sample_z_pallas, sample_z_pallas_with_counts)

__all__ = ["available", "importable", "default_lanes_per_program", "sample_z_pallas", "sample_z_pallas_with_counts",
           "fused_z_update"]
