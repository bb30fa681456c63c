"""The normal models' specs: their ``[data]`` reader and SBC cases (:mod:`gibbsjax.models.normal`).
"""

from __future__ import annotations

import numpy as np

from gibbsjax.models.normal import bivariate, data, semiconjugate

def _config_data(section, base_dir):
    """``[data]``: one numeric column (``dataset`` / ``file`` / ``values``, with ``column``)."""
    from gibbsjax.sources import read_column

    return data(read_column(section, base_dir))


def _sbc_semiconjugate():
    """SBC example: generic hyperparameters (non-zero prior mean), five observations."""
    return (semiconjugate(mu0=1.4, sigma0=0.7, a0=3.3, b0=1.8), data(np.array([0.3, 1.9, 1.1, 2.4, 0.8])),
            None)


def _sbc_bivariate():
    return bivariate(0.6), None, None


def _specs():
    from gibbsjax.spec import ModelSpec

    return (
        ModelSpec("normal.bivariate", bivariate,
                  description="bivariate normal with correlation rho (Wang 2015, Example 1); no data",
                  sbc_case=_sbc_bivariate),
        ModelSpec("normal.semiconjugate", semiconjugate, _config_data,
                  description="normal with unknown mean and variance, semi-conjugate priors (Wang 2015, Example 2)",
                  sbc_case=_sbc_semiconjugate),
    )


#: this module's models for ``gibbsjax run`` (see :class:`gibbsjax.spec.ModelSpec`)
SPECS = _specs()
