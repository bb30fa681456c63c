"""Effective samples per second: gibbsjax Gibbs vs NumPyro NUTS, body temperature model.

Model (seed 003, Example 2): y_i ~ N(μ, σ²), μ ~ N(98.6, 0.5²), σ² ~ InvGamma(0.001, 0.001),
130 body temperatures; 4 chains each, run side by side in one process.

* "first result": wall time of the first call in the process, compilation included,
  until the draws are in hand (gibbsjax: an ArviZ InferenceData; NumPyro: samples).
* "steady state": a second call with another seed, compiled code reused.

ESS is ArviZ's bulk ESS, the minimum over μ and σ².  Also a plain numpy loop of the
same two conditionals, one chain after another, as a floor.

Run:  python benchmarks/normal.py [--draws 20000] [--warmup 1000]
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
from gibbsjax.datasets import body_temperature  # noqa: E402
from gibbsjax.models import normal  # noqa: E402

MU0, SIGMA0, A0, B0 = 98.6, 0.5, 1e-3, 1e-3
CHAINS = 4


def min_bulk_ess(samples: dict[str, np.ndarray]) -> float:
    ds = az.convert_to_dataset({k: np.asarray(v) for k, v in samples.items()})
    ess = az.ess(ds, method="bulk")
    return float(min(ess[k].item() for k in samples))


def run_gibbsjax(y, seed, draws, warmup, chunk_size=None):
    data = normal.data(y)
    kernel = normal.semiconjugate(MU0, SIGMA0, A0, B0)
    t = time.perf_counter()
    idata = gibbsjax.sample(kernel, data, seed=seed, num_chains=CHAINS, num_warmup=warmup,
                            num_draws=draws, progress=False, chunk_size=chunk_size)
    elapsed = time.perf_counter() - t
    post = idata.posterior
    return elapsed, {"mu": post["mu"].values, "sigma2": post["sigma2"].values}


def make_numpyro(y, draws, warmup):
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import MCMC, NUTS

    numpyro.set_host_device_count(1)

    def model(y):
        mu = numpyro.sample("mu", dist.Normal(MU0, SIGMA0))
        sigma2 = numpyro.sample("sigma2", dist.InverseGamma(A0, B0))
        numpyro.sample("y", dist.Normal(mu, jax.numpy.sqrt(sigma2)), obs=y)

    return MCMC(NUTS(model), num_warmup=warmup, num_samples=draws, num_chains=CHAINS,
                chain_method="vectorized", progress_bar=False)


def run_numpyro(mcmc, y, seed):
    t = time.perf_counter()
    mcmc.run(jax.random.PRNGKey(seed), y=y)
    samples = mcmc.get_samples(group_by_chain=True)
    samples = {k: np.asarray(v) for k, v in samples.items()}
    elapsed = time.perf_counter() - t
    return elapsed, samples


def run_numpy_loop(y, seed, draws, warmup):
    rng = np.random.default_rng(seed)
    n, ybar = len(y), y.mean()
    ss = np.sum((y - ybar) ** 2)
    out = {"mu": np.empty((CHAINS, draws)), "sigma2": np.empty((CHAINS, draws))}
    t = time.perf_counter()
    for c in range(CHAINS):
        s2 = ss / (n - 1) * np.exp(rng.uniform(-2, 2))
        for i in range(warmup + draws):
            omega = SIGMA0**2 / (s2 / n + SIGMA0**2)
            mu = rng.normal(omega * ybar + (1 - omega) * MU0, np.sqrt(omega * s2 / n))
            s2 = (B0 + 0.5 * (ss + n * (ybar - mu) ** 2)) / rng.gamma(A0 + 0.5 * n)
            if i >= warmup:
                out["mu"][c, i - warmup] = mu
                out["sigma2"][c, i - warmup] = s2
    return time.perf_counter() - t, out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--draws", type=int, default=20000)
    p.add_argument("--warmup", type=int, default=1000)
    p.add_argument("--numpy-draws", type=int, default=20000)
    args = p.parse_args()
    y = body_temperature()["temperature_f"]

    rows = []
    # first results (compilation included), each system's first call in this process
    t, s = run_gibbsjax(y, 1, args.draws, args.warmup)
    rows.append(("gibbsjax Gibbs", "first (with compile)", t, min_bulk_ess(s), s))
    mcmc = make_numpyro(y, args.draws, args.warmup)
    t, s = run_numpyro(mcmc, y, 1)
    rows.append(("NumPyro NUTS", "first (with compile)", t, min_bulk_ess(s), s))
    # steady state: compiled code reused, another seed
    t, s = run_gibbsjax(y, 2, args.draws, args.warmup)
    rows.append(("gibbsjax Gibbs", "steady state", t, min_bulk_ess(s), s))
    t, s = run_numpyro(mcmc, y, 2)
    rows.append(("NumPyro NUTS", "steady state", t, min_bulk_ess(s), s))
    # one chunk per phase instead of ~20 (no progress bar moves, Ctrl-C keeps less): what chunks cost
    run_gibbsjax(y, 3, args.draws, args.warmup, chunk_size=args.draws)  # compile this chunk length
    t, s = run_gibbsjax(y, 4, args.draws, args.warmup, chunk_size=args.draws)
    rows.append(("gibbsjax Gibbs", "steady, one chunk", t, min_bulk_ess(s), s))
    t, s = run_numpy_loop(y, 3, args.numpy_draws, args.warmup)
    rows.append(("numpy loop Gibbs", "(no compile)", t, min_bulk_ess(s), s))

    print(f"body temperature model, {CHAINS} chains, {args.warmup} warm-up + {args.draws} draws per chain "
          f"(numpy loop: {args.numpy_draws}); jax {jax.__version__}, {jax.devices()[0].platform}")
    print(f"{'system':18s} {'call':22s} {'time s':>8s} {'min ESS':>9s} {'ESS/s':>11s}  E[mu]    sd[mu]")
    rate = {}
    for name, call, t, ess, s in rows:
        rate[(name, call)] = ess / t
        print(f"{name:18s} {call:22s} {t:8.3f} {ess:9.0f} {ess / t:11.0f}  {s['mu'].mean():.4f}  {s['mu'].std():.4f}")
    g_first = rate[("gibbsjax Gibbs", "first (with compile)")]
    n_first = rate[("NumPyro NUTS", "first (with compile)")]
    g_steady = rate[("gibbsjax Gibbs", "steady state")]
    n_steady = rate[("NumPyro NUTS", "steady state")]
    first_t = {call: t for name, call, t, *_ in rows if call.startswith("first")}
    print()
    print(f"ratio ESS/s gibbsjax / NumPyro, steady state:       {g_steady / n_steady:8.1f}x")
    print(f"ratio ESS/s gibbsjax / NumPyro, steady, one chunk:  "
          f"{rate[('gibbsjax Gibbs', 'steady, one chunk')] / n_steady:8.1f}x")
    print(f"ratio ESS/s gibbsjax / NumPyro, first call:         {g_first / n_first:8.1f}x")
    g_t = rows[0][2]
    n_t = rows[1][2]
    print(f"time to first result gibbsjax / NumPyro:            {g_t / n_t:8.3f}  ({g_t:.2f} s vs {n_t:.2f} s)")
    print(f"ratio ESS/s gibbsjax steady / numpy loop:           {g_steady / rate[('numpy loop Gibbs', '(no compile)')]:8.1f}x")
    _ = first_t


if __name__ == "__main__":
    main()
