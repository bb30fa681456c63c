"""Statistical tests for checking samplers: your own kernels and ours.

* :func:`geweke_test`: Geweke's (2004) "Getting it right" joint-distribution
  test of a :class:`~gibbsjax.kernel.Kernel` that has ``sample_prior`` and
  ``simulate_data``.  It checks that the Gibbs sweep leaves the posterior
  invariant *without* knowing the posterior.
* :func:`moment_zscores` / :func:`assert_moments`: compare MCMC draws with
  known exact moments (mean, variance, standard deviation, correlation) in
  units of Monte Carlo standard error, which accounts for autocorrelation.
* :func:`chi_square_test`: Pearson's chi-square test of the frequencies of a
  discrete state against exact probabilities, pooling sparse bins.
* :func:`sbc` / :func:`plot_sbc_ranks`: simulation-based calibration (Talts
  et al. 2018): ranks of prior draws among posterior draws given data
  simulated from them, tested for uniformity, with rank histograms.

All of these are *statistical* tests: a correct sampler fails them with a small
probability (controlled by ``alpha`` or ``n_se``).  Use fixed seeds in test
suites so that results are reproducible.

References: J. Geweke (2004), "Getting it right: joint distribution tests of
posterior simulators", JASA 99(467):799-804.  S. Talts, M. Betancourt,
D. Simpson, A. Vehtari & A. Gelman (2018), "Validating Bayesian inference
algorithms with simulation-based calibration", arXiv:1804.06788.
"""


from gibbsjax.testing.chi_square import ChiSquareResult, chi_square_test
from gibbsjax.testing.geweke import GewekeResult, default_test_functions, geweke_test
from gibbsjax.testing.moments import MomentCheck, assert_moments, moment_zscores
from gibbsjax.testing.sbc import (SBCResult, co_clustered_pairs, plot_sbc_ranks, recorded_test_functions, sbc,
                                  sorted_values)

__all__ = [
    "GewekeResult",
    "geweke_test",
    "default_test_functions",
    "MomentCheck",
    "moment_zscores",
    "assert_moments",
    "ChiSquareResult",
    "chi_square_test",
    "SBCResult",
    "sbc",
    "recorded_test_functions",
    "sorted_values",
    "co_clustered_pairs",
    "plot_sbc_ranks",
]
