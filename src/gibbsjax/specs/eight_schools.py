"""The eight-schools model's spec: its ``[data]`` reader and SBC case (:mod:`gibbsjax.models.eight_schools`).
"""

from __future__ import annotations

import numpy as np

from gibbsjax.models.eight_schools import data, hierarchical, rubin_1981

def _config_data(section, base_dir):
    """``[data]``: ``y = [...]`` and ``sigma = [...]``; or ``dataset = "rubin_1981"``."""
    from gibbsjax.spec import ConfigError

    unknown = sorted(set(section) - {"y", "sigma", "dataset"})
    if unknown:
        raise ConfigError(f"[data] unknown key {unknown[0]!r}; expected y and sigma, or dataset")
    if "dataset" in section:
        if set(section) != {"dataset"} or section["dataset"] != "rubin_1981":
            raise ConfigError(f"[data] dataset must be \"rubin_1981\" (alone), got {section['dataset']!r}")
        return rubin_1981()
    missing = [k for k in ("y", "sigma") if k not in section]
    if missing:
        raise ConfigError(f"[data] missing key {missing[0]!r}: give y and sigma (or dataset = \"rubin_1981\")")
    try:
        return data(section["y"], section["sigma"])
    except ValueError as err:
        raise ConfigError(f"[data] {err}") from None


def _sbc_hierarchical():
    """SBC example: four schools, generic hyperparameters; test functions with finite moments
    are not needed for ranks, so every recorded value is ranked."""
    return (hierarchical(mu_loc=1.3, mu_scale=4.0, tau_scale=3.0),
            data(np.array([2.0, -1.0, 5.0, 0.5]), np.array([2.0, 3.0, 1.5, 4.0])), None)


def _specs():
    from gibbsjax.spec import ModelSpec

    return (
        ModelSpec("eight_schools.hierarchical", hierarchical, _config_data,
                  description="hierarchical normal model with known standard errors (Rubin 1981's eight schools); "
                              "log tau by a slice or Metropolis step",
                  sbc_case=_sbc_hierarchical),
    )


#: this module's models for ``gibbsjax run`` (see :class:`gibbsjax.spec.ModelSpec`)
SPECS = _specs()
