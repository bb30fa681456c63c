"""Where the time of one ``gibbsjax.sample`` call (and of one ``gibbsjax.LDA.fit``) goes, phase by phase.

Issue 22, point 5: "less outside the sweeps".  The default LDA path
(``gibbsjax.models.lda.partially_collapsed(K)`` through ``gibbsjax.sample``, and the estimator
``gibbsjax.LDA``) on a synthetic corpus (``gibbsjax.datasets.synthetic.lda_corpus``, V = 10,000,
α = 0.1, η = 0.01, documents of ~100 tokens).  Each is called twice: the first call's phases
include compilation, the second call's do not; both are printed.  Phases:

* ``generate`` (not part of the call) and ``pack`` (``lda.data``: the host packing, then the
  packed arrays put on the device), ``transfer``: the same packed arrays put on the device
  again (``jax.device_put`` of the host copies), so packing = pack - transfer;
* inside ``sample``: ``layout``/``checks``, ``memory check`` (``check_layout_memory``),
  ``place data``, ``init`` (``start``: keys and initial states), ``place run`` (states, sums),
  the ``warm-up sweeps`` and the ``sampling sweeps`` (each chunk's compiled call, waited for),
  ``records to host`` (each sampling chunk's records copied back), ``data fingerprint`` (the
  SHA-256 of the data stored in ``attrs``), ``finish`` (the InferenceData: draws stacked,
  per-chain means, ``sampler_state``), and ``other`` (the rest of the call);
* ``lp`` is computed inside the sampling sweeps (one log joint per kept draw): its share is
  estimated apart, by timing the compiled log joint of all chains on the final state;
* the estimator adds ``as_corpus``, ``job`` (packing included), the LDA ``postprocess``
  (topics aligned, agreement, stable topics, top words, coherence), ``keep raw draws`` and
  ``fitted attributes``.

"sweeps" is the sum of the two sweep phases; "outside" = whole call - sweeps.  Timers only
(``time.perf_counter`` and ``jax.block_until_ready``), set by replacing module attributes for the
measurement: the library's own code is unchanged.  Waiting for each chunk adds one
synchronisation per chunk, which the copy of its records to the host makes anyway.

CPU (the numbers in benchmarks/README.md):
    JAX_PLATFORMS=cpu python benchmarks/sample_profile.py --tokens 1000000 --topics 20 100
On the GPU machine (see ../shared/gpu/README.md), from the project root:
    . .gpu/setup.sh && python3 benchmarks/sample_profile.py --tokens 10000000 100000000 \
        --topics 100 1000 --json $OUT/sample_profile.json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import gibbsjax
from gibbsjax import pipeline
from gibbsjax.datasets.synthetic import lda_corpus
from gibbsjax.models import lda
from gibbsjax.specs import lda as postprocessing
from gibbsjax.run import driver, results
from gibbsjax.topics import estimators
from gibbsjax.topics import fit as lda_fit

ALPHA, ETA, VOCAB = 0.1, 0.01, 10_000


# ----------------------------------------------------------------------------- timers
class Phases:
    """Seconds per phase name, summed over calls; nested phases are subtracted from their parent
    (``self``-time), so the phases of one call add up to its whole."""

    def __init__(self):
        self.seconds = defaultdict(float)
        self._stack: list[list] = []

    @contextlib.contextmanager
    def timed(self, name):
        frame = [name, 0.0]  # name, seconds of nested phases
        self._stack.append(frame)
        t = time.perf_counter()
        try:
            yield
        finally:
            elapsed = time.perf_counter() - t
            self._stack.pop()
            self.seconds[name] += elapsed - frame[1]
            if self._stack:
                self._stack[-1][1] += elapsed

    def reset(self):
        self.seconds = defaultdict(float)


PHASES = Phases()


def _wrap(fn, name, block=True):
    def wrapper(*args, **kwargs):
        with PHASES.timed(name):
            out = fn(*args, **kwargs)
            if block:
                jax.block_until_ready(out)
        return out

    wrapper.__wrapped__ = fn
    return wrapper


@contextlib.contextmanager
def patched(targets):
    """Replace ``module.attr`` by a timed wrapper for every ``(module, attr, phase, block)``."""
    saved = []
    try:
        for module, attr, name, block in targets:
            original = getattr(module, attr)
            saved.append((module, attr, original))
            setattr(module, attr, _wrap(original, name, block))
        yield
    finally:
        for module, attr, original in reversed(saved):
            setattr(module, attr, original)


def _timed_compiled(compiled):
    """``driver.compiled`` whose warm-up and sampling chunk functions are timed (and waited for)."""
    def wrapper(kernel, s, n_iters):
        length, warm_fn, draw_fn = compiled(kernel, s, n_iters)
        return length, _wrap(warm_fn, "warm-up sweeps"), _wrap(draw_fn, "sampling sweeps")

    return wrapper


def _timed_fingerprint_later(later):
    """``driver._fingerprint_later`` whose digest's wait at the end of the call is timed (the hash
    itself runs in a thread beside the sweeps)."""
    def wrapper(data):
        return _wrap(later(data), "data fingerprint (wait)", block=False)

    return wrapper


def _timed_start_fn(start_fn):
    def wrapper(init):
        return _wrap(start_fn(init), "init (start)")

    return wrapper


def sample_targets():
    """What is timed inside ``gibbsjax.sample`` (names as the driver and results modules hold them)."""
    return [
        (driver, "layout", "layout, checks", False),
        (driver, "check_sizes_first", "layout, checks", False),
        (driver, "check_data_type", "layout, checks", False),
        (driver, "check_layout_memory", "memory check", False),
        (driver, "place_data", "place data", True),
        (driver, "place_run", "place run", True),
        (driver, "zero_accumulators", "place run", True),
        (driver, "to_host", "records to host", False),
        (driver, "_fingerprint_later", "data fingerprint (start)", False),
        (driver, "finish", "finish (InferenceData)", False),
        (results, "to_inference_data", "finish: to_inference_data", False),
        (results, "stack_chunks", "finish: stack draws", False),
        (results, "_state_dataset", "finish: sampler_state", False),
    ]


def fit_targets():
    """What is timed in ``LDA.fit`` besides ``sample`` (post-processing piece by piece)."""
    return [
        (estimators, "as_corpus", "as_corpus", False),
        (lda_fit, "data", "pack (lda.data)", True),
        (lda_fit, "job", "job (kernel, settings)", False),
        (pipeline, "postprocess", "postprocess: other", False),
        (postprocessing, "_recorded_draws", "postprocess: recorded draws", False),
        (postprocessing, "align_chains", "postprocess: align chains", False),
        (postprocessing, "add_agreement", "postprocess: agreement", False),
        (postprocessing, "add_stable_topics", "postprocess: stable topics", False),
        (postprocessing.evaluate, "top_words", "postprocess: top words", False),
        (postprocessing.evaluate, "coherence", "postprocess: coherence", False),
        (pipeline.run, "keep_raw_draws", "keep raw draws", False),
        (lda_fit, "fitted_attributes", "fitted attributes", False),
        (estimators, "warn_if_chains_disagree", "fitted attributes", False),
    ]


@contextlib.contextmanager
def instrumented(fit: bool):
    targets = sample_targets() + (fit_targets() if fit else [])
    compiled, start_fn = driver.compiled, driver.start_fn
    driver.compiled, driver.start_fn = _timed_compiled(compiled), _timed_start_fn(start_fn)
    later = getattr(driver, "_fingerprint_later", None)  # absent before the hash ran in a thread
    if later is not None:
        driver._fingerprint_later = _timed_fingerprint_later(later)
    else:  # the hash at the end of the call
        targets.append((driver, "data_fingerprint", "data fingerprint", False))
    try:
        with patched([t for t in targets if hasattr(t[0], t[1])]):
            yield
    finally:
        driver.compiled, driver.start_fn = compiled, start_fn
        if later is not None:
            driver._fingerprint_later = later


# ----------------------------------------------------------------------------- one profile
def lp_seconds(kernel, d, idata, reps=3) -> float:
    """Seconds of the compiled log joint of every chain on one state (what each kept draw adds)."""
    state_type = type(kernel.init(jax.random.key(0), d))
    fields = {f: jnp.asarray(idata.sampler_state[f"state__{f}"].values) for f in state_type._fields}
    state = state_type(**fields)
    fn = jax.jit(jax.vmap(kernel.log_joint, in_axes=(0, None)))
    jax.block_until_ready(fn(state, d))
    t = time.perf_counter()
    for _ in range(reps):
        jax.block_until_ready(fn(state, d))
    return (time.perf_counter() - t) / reps


def timed_call(fn, fit: bool):
    PHASES.reset()
    with instrumented(fit):
        t = time.perf_counter()
        with PHASES.timed("other"):
            out = fn()
        whole = time.perf_counter() - t
    return out, whole, dict(PHASES.seconds)


def profile(tokens: int, k: int, chains: int, warmup: int, draws: int, *, fit: bool, seed: int = 0,
            repeat: int = 1) -> dict:
    """The phases of the first and second ``sample`` call (``fit``: ``LDA.fit``) on ``tokens`` tokens;
    with ``repeat`` > 1, of the first call and of ``repeat`` more, each phase's least time (their
    sum is then the "whole" of the later calls)."""
    t = time.perf_counter()
    corpus, _, _ = lda_corpus(num_docs=max(1, tokens // 100), num_topics=k, vocab_size=VOCAB, alpha=ALPHA,
                              eta=0.05, seed=seed)
    generate_s = time.perf_counter() - t
    kernel = lda.partially_collapsed(k, alpha=ALPHA, eta=ETA)
    pre = {"generate": generate_s}
    if fit:
        model = gibbsjax.LDA(num_topics=k, alpha=ALPHA, eta=ETA, num_chains=chains, num_warmup=warmup,
                             num_draws=draws, seed=seed, progress=False, warn=False)

        def call():
            return model.fit(corpus).idata_
        d = None
    else:
        t = time.perf_counter()
        d = jax.block_until_ready(lda.data(corpus))
        pre["pack (lda.data)"] = time.perf_counter() - t
        host = [np.asarray(x) for x in d]
        t = time.perf_counter()
        jax.block_until_ready([jax.device_put(x) for x in host])
        pre["transfer (device_put)"] = time.perf_counter() - t

        def call():
            return gibbsjax.sample(kernel, d, seed=seed, num_chains=chains, num_warmup=warmup, num_draws=draws,
                                   progress=False, log_likelihood=False)
    calls = []
    idata = None
    for _ in range(1 + max(1, repeat)):
        idata, whole, phases = timed_call(call, fit)
        sweeps = phases.get("warm-up sweeps", 0.0) + phases.get("sampling sweeps", 0.0)
        calls.append({"whole_s": whole, "phases": phases, "sweeps_s": sweeps, "outside_s": whole - sweeps})
    if len(calls) > 2:  # a shared machine's noise: each phase's least time over the repeats
        later = calls[1:]
        names = set().union(*(c["phases"] for c in later))
        phases = {n: min(c["phases"].get(n, 0.0) for c in later) for n in names}
        sweeps = phases.get("warm-up sweeps", 0.0) + phases.get("sampling sweeps", 0.0)
        whole = sum(phases.values())
        calls = [calls[0], {"whole_s": whole, "phases": phases, "sweeps_s": sweeps, "outside_s": whole - sweeps,
                            "repeats": [c["whole_s"] for c in later]}]
    if d is None:
        d = lda_fit.data(model.get_params(), lda_fit.sampled(corpus))
    lp = lp_seconds(kernel, d, idata)
    return {"what": "LDA.fit" if fit else "sample", "tokens": int(corpus.num_tokens), "docs": int(corpus.num_docs),
            "K": k, "V": VOCAB, "chains": chains, "num_warmup": warmup, "num_draws": draws,
            "grid": list(np.shape(d.words)), "before": pre, "first": calls[0], "second": calls[1],
            "lp_per_draw_s": lp, "lp_in_sampling_s": lp * draws,
            "sweep_s": calls[1]["sweeps_s"] / max(warmup + draws, 1)}


ORDER = ["layout, checks", "memory check", "data fingerprint (start)", "place data", "init (start)", "place run",
         "warm-up sweeps", "sampling sweeps", "records to host", "data fingerprint (wait)", "data fingerprint",
         "finish (InferenceData)",
         "finish: stack draws", "finish: to_inference_data", "finish: sampler_state"]


def print_profile(p: dict) -> None:
    print(f"\n{p['what']}: {p['tokens']:,} tokens, {p['docs']:,} documents, K = {p['K']}, V = {p['V']:,}, "
          f"{p['chains']} chain(s), {p['num_warmup']} warm-up + {p['num_draws']} draws, grid {tuple(p['grid'])}")
    for name, s in p["before"].items():
        print(f"  before the call: {name:<28} {s:8.3f} s")
    first, second = p["first"], p["second"]
    names = [n for n in ORDER if n in second["phases"] or n in first["phases"]]
    names += sorted((set(second["phases"]) | set(first["phases"])) - set(names) - {"other"}) + ["other"]
    later = "2nd call (s)" if "repeats" not in second else f"min of {len(second['repeats'])} (s)"
    print(f"  {'phase':<32} {'1st call (s)':>12} {later:>12} {'share 2nd':>9}")
    for name in dict.fromkeys(names):
        a, b = first["phases"].get(name, 0.0), second["phases"].get(name, 0.0)
        print(f"  {name:<32} {a:12.3f} {b:12.3f} {100 * b / second['whole_s']:8.1f}%")
    for label, key in (("whole call", "whole_s"), ("sweeps", "sweeps_s"), ("outside the sweeps", "outside_s")):
        print(f"  {label:<32} {first[key]:12.3f} {second[key]:12.3f} "
              f"{100 * second[key] / second['whole_s']:8.1f}%")
    print(f"  one sweep {p['sweep_s']:.4f} s; lp {p['lp_per_draw_s']:.4f} s per kept draw "
          f"({p['lp_in_sampling_s']:.3f} s of the sampling sweeps, "
          f"{100 * p['lp_in_sampling_s'] / max(second['sweeps_s'], 1e-12):.1f}%)", flush=True)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tokens", type=int, nargs="+", default=[1_000_000])
    p.add_argument("--topics", type=int, nargs="+", default=[20, 100])
    p.add_argument("--chains", type=int, default=4, help="chains (default 4, the estimator's default)")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--draws", type=int, default=10)
    p.add_argument("--what", nargs="+", choices=["sample", "fit"], default=["sample", "fit"])
    p.add_argument("--repeat", type=int, default=1,
                   help="calls after the first (default 1); more: each phase's least time over them")
    p.add_argument("--smoke", action="store_true", help="tiny sizes: a few seconds")
    p.add_argument("--json", help="also write the profiles to this file")
    args = p.parse_args(argv)
    if args.smoke:
        args.tokens, args.topics, args.chains, args.warmup, args.draws = [20_000], [5], 2, 2, 2
    return args


def main(argv=None):
    args = parse_args(argv)
    device = jax.devices()[0]
    print(f"jax {jax.__version__}, {device.platform} ({device.device_kind})", flush=True)
    out = []
    for tokens in args.tokens:
        for k in args.topics:
            for what in args.what:
                p = profile(tokens, k, args.chains, args.warmup, args.draws, fit=what == "fit", repeat=args.repeat)
                print_profile(p)
                out.append(p)
    if args.json:
        Path(args.json).write_text(json.dumps({"jax": jax.__version__, "device": device.device_kind,
                                               "platform": device.platform, "profiles": out}, indent=1))
    return out


if __name__ == "__main__":
    sys.exit(main() and 0)
