"""The applications' view of each model: how a config builds its data, its post-processing,
its report and its SBC case, one module per model family.

Each module exports ``SPECS``, the :class:`~gibbsjax.spec.ModelSpec` values that
:mod:`gibbsjax.config`'s registry looks names up in; the samplers themselves live one layer
down, in :mod:`gibbsjax.models`, and never import this package.
"""
