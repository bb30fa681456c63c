"""Summary of many chains: ``gibbsjax.summary`` against ``arviz.summary``, side by side.

The body-temperature model (seed 003, Example 2; ``configs/body-temperature.toml``)
run with 16,384 chains x 2,000 draws (3 quantities: mu, sigma2 and lp, about
33 M draws each), then summarised twice on the same InferenceData:

* ``gibbsjax.summary(idata)``: every R-hat, ESS and MCSE in float64
  (:mod:`gibbsjax.chain_stats`);
* ``arviz.summary`` of the posterior and of ``lp`` as ArviZ computes them
  (float32 draws as stored; skip with ``--no-arviz``).

Prints the time of each call, their ratio, and whether every diagnostic is
finite.  Wall times, compile time of the sampler excluded (sampling is not timed).

Run:  python benchmarks/many_chains_summary.py [--chains 16384] [--draws 2000] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402


def draws(chains: int, num_draws: int, seed: int = 2026):
    """InferenceData of the body-temperature model, ``chains`` x ``num_draws``."""
    import gibbsjax
    from gibbsjax.datasets import body_temperature
    from gibbsjax.models import normal

    y = body_temperature()["temperature_f"]
    return gibbsjax.sample(normal.semiconjugate(98.6, 0.5, 1e-3, 1e-3), normal.data(y), seed=seed,
                           num_chains=chains, num_warmup=100, num_draws=num_draws, progress=False)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chains", type=int, default=16_384)
    parser.add_argument("--draws", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=1, help="time each summary this many times (best kept)")
    parser.add_argument("--no-arviz", action="store_true", help="skip arviz.summary (24 s or more at 16,384 chains)")
    parser.add_argument("--json", default=None, help="write the figures here")
    args = parser.parse_args(argv)

    import arviz as az
    import xarray as xr

    import gibbsjax

    t = time.perf_counter()
    idata = draws(args.chains, args.draws)
    sampled = time.perf_counter() - t
    size = args.chains * args.draws
    print(f"body temperature: {args.chains:,} chains x {args.draws:,} draws = {size:,} draws per quantity "
          f"(sampled in {sampled:.1f} s)")

    def best(fn):
        times, out = [], None
        for _ in range(args.repeat):
            t = time.perf_counter()
            out = fn()
            times.append(time.perf_counter() - t)
        return min(times), out

    ours_s, ours = best(lambda: gibbsjax.summary(idata))
    diag = ["mcse_mean", "mcse_sd", "ess_bulk", "ess_tail", "r_hat"]
    finite = bool(np.isfinite(ours[diag].to_numpy()).all())
    report = {"chains": args.chains, "draws": args.draws, "quantities": list(ours.index),
              "gibbsjax_s": ours_s, "gibbsjax_finite": finite, "cpu_count": os.cpu_count()}
    print(ours.to_string())
    print(f"\n{'':<18}{'seconds':>9}{'all finite':>12}")
    print(f"{'gibbsjax.summary':<18}{ours_s:>9.2f}{str(finite):>12}")
    if not args.no_arviz:
        def theirs():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return pd_concat(az.summary(idata.posterior), az.summary(xr.Dataset({"lp": idata.sample_stats["lp"]})))

        az_s, ref = best(theirs)
        az_finite = bool(np.isfinite(ref[diag].to_numpy()).all())
        report.update(arviz_s=az_s, arviz_finite=az_finite, ratio=az_s / ours_s)
        print(f"{'arviz.summary':<18}{az_s:>9.2f}{str(az_finite):>12}")
        print(f"ratio arviz / gibbsjax: {az_s / ours_s:.1f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return report


def pd_concat(a, b):
    import pandas as pd

    return pd.concat([a, b])


if __name__ == "__main__":
    main()
