"""Hashes of every result a refactoring must leave unchanged (run by hand, not collected by pytest).

Runs every config in ``configs/`` shortened (``gibbsjax run CONFIG --chains 2 --warmup 3 --draws 4``),
the LDA samplers' draws (each sampler, z-update, warm-up, Dirichlet draw and learned prior on a small
synthetic corpus) and one ``gibbsjax.LDA`` fit, and prints one SHA-256 per group and variable of each
result (values, dtype, shape, dims and coordinates) and per group's attributes (timestamps left out)::

    JAX_PLATFORMS=cpu python tests/result_hashes.py --write before.json    # on the base commit
    JAX_PLATFORMS=cpu python tests/result_hashes.py --check before.json    # after the change

``--check`` lists every hash that differs and exits 1 when one does.  The hashes depend on the
machine (CPU, XLA version), so they are compared on one machine, never stored in the repository.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import sys
import tempfile
import tomllib
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
VOLATILE = ("created_at", "creation", "time", "elapsed", "duration", "seconds", "host", "path", "config_file",
            "inference_library_version", "arviz_version", "out")


def _digest(*parts) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else repr(p).encode())
    return h.hexdigest()[:16]


def _array_bytes(values) -> bytes:
    a = np.asarray(values)
    if a.dtype == object or a.dtype.kind in "US":
        return repr(a.tolist()).encode()
    return np.ascontiguousarray(a).tobytes()


def _stable_attrs(attrs) -> dict:
    return {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in sorted(attrs.items())
            if not any(word in k.lower() for word in VOLATILE)}


def hash_idata(idata, prefix: str, out: dict) -> None:
    for group in idata.groups():
        ds = getattr(idata, group)
        for name in sorted(ds.variables):
            var = ds[name]
            out[f"{prefix}/{group}/{name}"] = _digest(str(var.dtype), var.shape, var.dims, _array_bytes(var.values))
        out[f"{prefix}/{group}/.attrs"] = _digest(json.dumps(_stable_attrs(ds.attrs), default=repr, sort_keys=True))


def configs(out: dict, tmp: Path) -> None:
    import arviz as az

    from gibbsjax.cli import main

    for path in sorted((ROOT / "configs").glob("*.toml")):
        result = tmp / f"{path.stem}.nc"
        sampler = tomllib.loads(path.read_text())["sampler"]
        chains = str(sampler["num_chains"]) if "init" in sampler else "2"  # one starting value per chain
        args = ["run", str(path), "--chains", chains, "--warmup", "3", "--draws", "4", "--seed", "7",
                "--no-progress", "--out", str(result)]
        with contextlib.redirect_stdout(io.StringIO()) as text, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                code = main(args)
            except SystemExit as stop:
                code = stop.code
        out[f"config:{path.stem}/exit"] = _digest(code)
        out[f"config:{path.stem}/stdout"] = _digest(text.getvalue().replace(str(result), "RESULT"))
        if result.exists():
            hash_idata(az.from_netcdf(result), f"config:{path.stem}", out)
        print(path.name, code, file=sys.stderr)


def lda_draws(out: dict) -> None:
    import gibbsjax
    from gibbsjax.datasets.synthetic import lda_corpus
    from gibbsjax.models import lda

    corpus, *_ = lda_corpus(num_docs=24, num_topics=3, vocab_size=30, doc_length=12, seed=3)
    d = lda.data(corpus)
    kernels = {
        "collapsed": lda.collapsed(3),
        "uncollapsed": lda.uncollapsed(3),
        "uncollapsed_exact": lda.uncollapsed(3, warmup="exact"),
        "pc_learned": lda.partially_collapsed(3, learn_alpha="sample", learn_eta=True, z_update="dense"),
        "pc_asym": lda.partially_collapsed(3, learn_alpha="sample", asymmetric_alpha=True, z_update="dense"),
        "pc_minka": lda.partially_collapsed(3, learn_alpha="minka", z_update="dense"),
        "pc_record": lda.partially_collapsed(3, record_phi=[0, 2], record_theta=[1], z_update="dense"),
    }
    for z in ("dense", "lanes", "sparse", "native"):
        for warmup in ("exact", "fast", "fast_grid"):
            for draw in ("dense", "sparse", "native"):
                if warmup != "exact" and draw != "dense":
                    continue
                kernels[f"pc_{z}_{warmup}_{draw}"] = lda.partially_collapsed(3, z_update=z, warmup=warmup,
                                                                             dirichlet_draw=draw)
    for name, kernel in kernels.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            idata = gibbsjax.sample(kernel, d, seed=11, num_chains=3, num_warmup=4, num_draws=5, progress=False)
        hash_idata(idata, f"lda:{name}", out)
        print(name, file=sys.stderr)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = gibbsjax.LDA(3, num_chains=3, num_warmup=4, num_draws=5, seed=5, progress=False).fit(corpus)
        hash_idata(model.idata_, "estimator:fit", out)
        out["estimator:components_"] = _digest(_array_bytes(model.components_))
        out["estimator:transform"] = _digest(_array_bytes(model.transform(corpus)))
        out["estimator:perplexity"] = _digest(repr(float(model.perplexity(corpus))))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", metavar="FILE")
    action.add_argument("--check", metavar="FILE")
    args = parser.parse_args(argv)
    out: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        configs(out, Path(tmp))
    lda_draws(out)
    if args.write:
        Path(args.write).write_text(json.dumps(out, indent=1, sort_keys=True))
        print(f"{len(out)} hashes written to {args.write}")
        return 0
    before = json.loads(Path(args.check).read_text())
    differ = sorted(k for k in set(before) | set(out) if before.get(k) != out.get(k))
    for key in differ:
        print(f"DIFFERS {key}: {before.get(key)} -> {out.get(key)}")
    print(f"{len(out)} hashes, {len(differ)} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
