"""Effective samples per second: gibbsjax Gibbs with a slice step vs NumPyro NUTS, eight schools.

Model (Rubin 1981; gibbsjax.models.eight_schools): y_j ~ N(θ_j, σ_j²), θ_j ~ N(μ, τ²),
μ ~ N(0, 5²), τ ~ half-Cauchy(5), on the eight schools' data; 4 chains each, run side by side
in one process.

* gibbsjax: ``eight_schools.hierarchical()``, the collapsed sweep (log τ | y by a slice step,
  then μ | τ, y and θ | μ, τ, y exactly); also its random-walk Metropolis step for log τ and
  the centred sweep (θ, μ exact, log τ | θ, μ by a slice step), for comparison.
* NumPyro: NUTS on the non-centred parameterisation (θ = μ + τ η, η ~ N(0, 1)), the form
  that NUTS samples without divergences; ``chain_method="vectorized"``.

"first": wall time of a system's first call in the process, compilation included, until the
draws are in hand; "steady": a second call with another seed, compiled code reused.  ESS is
ArviZ's bulk ESS, the minimum over μ, τ and the eight θ_j.  Posterior means are printed with
their Monte Carlo standard errors, next to the exact ones (one-dimensional quadrature over log τ).

Run:  python benchmarks/eight_schools.py [--draws 20000] [--warmup 1000]
Needs the bench extra (pip install -e ".[bench]") for NumPyro.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import arviz as az  # noqa: E402
import jax  # noqa: E402
import numpy as np  # noqa: E402

import gibbsjax  # noqa: E402
from gibbsjax.models import eight_schools  # noqa: E402

MU_LOC, MU_SCALE, TAU_SCALE = 0.0, 5.0, 5.0
CHAINS = 4
_Y = np.asarray(eight_schools.RUBIN_Y, np.float32)
_SIGMA = np.asarray(eight_schools.RUBIN_SIGMA, np.float32)
NAMES = ("mu", "tau", "theta")


def exact_means(y, sigma, mu_loc=MU_LOC, mu_scale=MU_SCALE, tau_scale=TAU_SCALE) -> dict[str, np.ndarray]:
    """Exact posterior means of μ, τ and θ by quadrature over u = log τ (float64, numpy).

    p(u | y) ∝ p(τ) τ N(y; μ0 1, diag(σ² + τ²) + s_μ² 1 1ᵀ); given τ, μ and θ are normal
    (Gelman et al., BDA3 §5.4), so E[μ | y] = ∫ E[μ | τ, y] p(u | y) du and so on.
    """
    y, sigma = np.asarray(y, np.float64), np.asarray(sigma, np.float64)
    u = np.linspace(-25.0, 12.0, 400_001)
    tau = np.exp(u)
    v = sigma[None] ** 2 + tau[:, None] ** 2
    cov_det_terms = np.sum(np.log(v), 1)
    prec = 1.0 / mu_scale**2 + np.sum(1.0 / v, 1)
    m = (mu_loc / mu_scale**2 + np.sum(y / v, 1)) / prec
    quad = np.sum((y - m[:, None]) ** 2 / v, 1) + (m - mu_loc) ** 2 / mu_scale**2
    log_post = -np.log1p((tau / tau_scale) ** 2) + u - 0.5 * cov_det_terms - 0.5 * np.log(prec) - 0.5 * quad
    w = np.exp(log_post - log_post.max())
    w /= w.sum()
    shrink = tau[:, None] ** 2 / v
    theta = m[:, None] + shrink * (y - m[:, None])
    return {"mu": np.sum(w * m), "tau": np.sum(w * tau), "theta": w @ theta}


def min_bulk_ess(samples: dict[str, np.ndarray]) -> float:
    ds = az.convert_to_dataset({k: np.asarray(v) for k, v in samples.items()})
    ess = az.ess(ds, method="bulk")
    return float(min(float(ess[k].min()) for k in samples))


def means_and_mcse(samples: dict[str, np.ndarray]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Posterior means and ArviZ's MCSE of the mean, per variable (chains first)."""
    ds = az.convert_to_dataset({k: np.asarray(v) for k, v in samples.items()})
    se = az.mcse(ds, method="mean")
    return {k: (np.asarray(samples[k]).mean(axis=(0, 1)), np.asarray(se[k].values)) for k in samples}


def run_gibbsjax(seed, draws, warmup, **options):
    kernel = eight_schools.hierarchical(MU_LOC, MU_SCALE, TAU_SCALE, **options)
    t = time.perf_counter()
    idata = gibbsjax.sample(kernel, eight_schools.rubin_1981(), seed=seed, num_chains=CHAINS,
                            num_warmup=warmup, num_draws=draws, progress=False)
    elapsed = time.perf_counter() - t
    return elapsed, {k: idata.posterior[k].values for k in NAMES}


def make_numpyro(draws, warmup, chains=CHAINS):
    """NumPyro's MCMC with NUTS on the non-centred eight-schools model."""
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import MCMC, NUTS

    def model(y, sigma):
        mu = numpyro.sample("mu", dist.Normal(MU_LOC, MU_SCALE))
        tau = numpyro.sample("tau", dist.HalfCauchy(TAU_SCALE))
        with numpyro.plate("school", y.shape[0]):
            eta = numpyro.sample("eta", dist.Normal(0.0, 1.0))
            theta = numpyro.deterministic("theta", mu + tau * eta)
            numpyro.sample("y", dist.Normal(theta, sigma), obs=y)

    return MCMC(NUTS(model), num_warmup=warmup, num_samples=draws, num_chains=chains,
                chain_method="vectorized", progress_bar=False)


def run_numpyro(mcmc, seed):
    t = time.perf_counter()
    # the same array objects in every call: NumPyro 0.22's vectorized chains fail on a second
    # run() whose arguments are new arrays of the same values
    mcmc.run(jax.random.PRNGKey(seed), y=_Y, sigma=_SIGMA)
    samples = mcmc.get_samples(group_by_chain=True)
    samples = {k: np.asarray(samples[k]) for k in NAMES}
    elapsed = time.perf_counter() - t
    return elapsed, samples


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--draws", type=int, default=20000)
    p.add_argument("--warmup", type=int, default=1000)
    args = p.parse_args(argv)

    variants = {
        "gibbsjax slice": {},
        "gibbsjax Metropolis": {"tau_step": "metropolis"},
        "gibbsjax centred": {"collapsed": False},
    }
    rows = []
    t, s = run_gibbsjax(1, args.draws, args.warmup)
    rows.append(("gibbsjax slice", "first (with compile)", t, s))
    mcmc = make_numpyro(args.draws, args.warmup)
    t, s = run_numpyro(mcmc, 1)
    rows.append(("NumPyro NUTS", "first (with compile)", t, s))
    for name, options in variants.items():
        if name != "gibbsjax slice":
            run_gibbsjax(3, args.draws, args.warmup, **options)  # compile
        t, s = run_gibbsjax(2, args.draws, args.warmup, **options)
        rows.append((name, "steady state", t, s))
    t, s = run_numpyro(mcmc, 2)
    rows.append(("NumPyro NUTS", "steady state", t, s))

    exact = exact_means(eight_schools.RUBIN_Y, eight_schools.RUBIN_SIGMA)
    print(f"eight schools, {CHAINS} chains, {args.warmup} warm-up + {args.draws} draws per chain; "
          f"jax {jax.__version__}, {jax.devices()[0].platform}, {os.cpu_count()} CPU cores")
    print(f"{'system':20s} {'call':21s} {'time s':>8s} {'min ESS':>9s} {'ESS/s':>9s}  "
          f"{'E[mu] ± mcse':>15s}  {'E[tau] ± mcse':>15s}")
    rate = {}
    for name, call, t, s in rows:
        ess = min_bulk_ess(s)
        rate[(name, call)] = ess / t
        m = means_and_mcse(s)
        print(f"{name:20s} {call:21s} {t:8.3f} {ess:9.0f} {ess / t:9.0f}  "
              f"{m['mu'][0]:7.3f} ± {m['mu'][1]:.3f}  {m['tau'][0]:7.3f} ± {m['tau'][1]:.3f}")
    print(f"{'exact (quadrature)':52s} {'':9s}  {exact['mu']:7.3f}          {exact['tau']:7.3f}")
    print()
    nuts = rate[("NumPyro NUTS", "steady state")]
    for name in variants:
        print(f"ratio ESS/s {name} / NumPyro NUTS, steady state: {rate[(name, 'steady state')] / nuts:8.2f}x")
    print(f"ratio ESS/s gibbsjax slice / NumPyro NUTS, first call:   "
          f"{rate[('gibbsjax slice', 'first (with compile)')] / rate[('NumPyro NUTS', 'first (with compile)')]:8.2f}x")


if __name__ == "__main__":
    main()
