"""Every ```python block of README.md runs as written.

The README's rule (stated above its first block): each block runs on its own, with
nothing defined or imported before it.  Here every block is compiled as it stands in
the README (tracebacks name README.md and its line numbers) and run in a fresh
namespace, in its own working folder, in one subprocess started with
``XLA_FLAGS=--xla_force_host_platform_device_count=4`` and ``JAX_PLATFORMS=cpu``, so
that the ``devices=4`` blocks run on four CPU devices (JAX fixes the number of CPU
devices when it starts; the rest of the suite keeps one).  One process for all blocks
spares an interpreter and JAX start per block; a name a block forgets to define or
import still fails, as the namespace is fresh.

A visible marker on the line before a block's fence in the README changes how it is run:
``<!-- test: slow (reason) -->`` runs it only with ``-m slow`` (as the suite's other long
tests), ``<!-- test: skip (reason) -->`` never; a block that uses ``devices=`` may carry
neither.  The own-sampler block is also checked for what it computes (the posterior of μ).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import jax
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
_MARKER = re.compile(r"<!--\s*test:\s*(.*?)\s*-->")
_KIND = re.compile(r"(skip|slow) \((.+)\)")


@dataclass(frozen=True)
class Block:
    """One ```python block: ``line`` is the README line of its first line of code; ``marker``
    ``"skip"`` or ``"slow"`` (with its ``reason``) or ``None``."""

    line: int
    code: str
    marker: str | None = None
    reason: str | None = None


def readme_blocks(text: str | None = None) -> list[Block]:
    """Every ```python block of the README (or of ``text``), in order, with the marker on the
    line before its fence, ``<!-- test: skip (reason) -->`` or ``<!-- test: slow (reason) -->``;
    a ``test:`` marker of any other form, or anywhere else, is a ``ValueError``."""
    lines = (README.read_text(encoding="utf-8") if text is None else text).splitlines()
    blocks, i = [], 0
    while i < len(lines):
        if lines[i].strip() == "```python":
            previous = lines[i - 1].strip() if i else ""
            kind = reason = None
            if (marker := _MARKER.fullmatch(previous)) is not None:
                if (known := _KIND.fullmatch(marker.group(1))) is None:
                    raise ValueError(f"README.md line {i}: unknown test marker {previous!r}; "
                                     "known: <!-- test: skip (reason) -->, <!-- test: slow (reason) -->")
                kind, reason = known.groups()
            end = lines.index("```", i + 1)
            blocks.append(Block(line=i + 2, code="\n".join(lines[i + 1:end]) + "\n", marker=kind, reason=reason))
            i = end
        elif _MARKER.search(lines[i]) and not (i + 1 < len(lines) and lines[i + 1].strip() == "```python"):
            raise ValueError(f"README.md line {i + 1}: a test marker must stand on the line before a ```python fence")
        i += 1
    return blocks


def readme_block(after: str) -> Block:
    """The first ```python block after the text ``after`` in the README."""
    text = README.read_text(encoding="utf-8")
    line = text[:text.index(after)].count("\n") + 1
    return next(b for b in readme_blocks(text) if b.line > line)


_RUNNER = textwrap.dedent("""
    import json, os, sys, traceback
    blocks, results_path, folder = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
    results = {}
    for b in blocks:
        os.chdir(os.path.join(folder, str(b["line"])))
        source = "\\n" * (b["line"] - 1) + b["code"]  # README.md's line numbers in tracebacks
        namespace = {"__name__": "__main__"}
        try:
            exec(compile(source, "README.md", "exec"), namespace)
            if b["after"]:
                exec(b["after"], namespace)
            results[b["line"]] = "ok"
        except BaseException:
            results[b["line"]] = traceback.format_exc()
        with open(results_path, "w") as f:
            json.dump(results, f)
        print("README.md line", b["line"], "ran", flush=True)
""")

# what the own-sampler block computes, kept for its test below (run after the block, in its namespace)
_OWN_SAMPLER = "Writing your own sampler"
_AFTER = {_OWN_SAMPLER: "idata.to_netcdf('idata.nc')"}


def _run_blocks(blocks: list[Block], folder: Path) -> dict[int, str]:
    """Run ``blocks`` in one subprocess with four CPU devices, each in a fresh namespace and in
    its own working folder ``folder / str(line)``: ``"ok"`` or the traceback, by line."""
    after = {readme_block(k).line: v for k, v in _AFTER.items()}
    todo = [{"line": b.line, "code": b.code, "after": ""} for b in blocks]
    for b in todo:
        (folder / str(b["line"])).mkdir()
        b["after"] = after.get(b["line"], "")
    (folder / "blocks.json").write_text(json.dumps(todo), encoding="utf-8")
    env = dict(os.environ)
    env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4").strip()
    env["JAX_PLATFORMS"] = "cpu"
    env["MPLBACKEND"] = "Agg"
    env.pop("PYTHONWARNINGS", None)  # the blocks warn as they would for a reader (e.g. chains disagree)
    proc = subprocess.run([sys.executable, "-c", _RUNNER, str(folder / "blocks.json"), str(folder / "results.json"),
                           str(folder)], capture_output=True, text=True, env=env, cwd=folder, timeout=1200)
    results_path = folder / "results.json"
    results = json.loads(results_path.read_text()) if results_path.exists() else {}
    assert proc.returncode == 0 and len(results) == len(todo), proc.stderr[-3000:]
    return {int(k): v for k, v in results.items()}


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """Every unmarked block, run once: ``(results by line, folder)``."""
    folder = tmp_path_factory.mktemp("readme")
    return _run_blocks([b for b in readme_blocks() if b.marker is None], folder), folder


@pytest.fixture(scope="module")
def ran_slow(tmp_path_factory):
    """Every block marked slow, run once (only when a slow test asks)."""
    folder = tmp_path_factory.mktemp("readme-slow")
    return _run_blocks([b for b in readme_blocks() if b.marker == "slow"], folder), folder


_BLOCKS = readme_blocks()


@pytest.mark.parametrize("block", [pytest.param(b, marks=[pytest.mark.slow] if b.marker == "slow" else [],
                                                id=f"line{b.line}") for b in _BLOCKS])
def test_readme_block_runs_as_written(block, request):
    if block.marker == "skip":
        pytest.skip(f"README.md line {block.line}: {block.reason}")
    results, _ = request.getfixturevalue("ran_slow" if block.marker == "slow" else "ran")
    assert block.line in results, f"README.md line {block.line} did not run (the runner stopped before it)"
    assert results[block.line] == "ok", f"README.md line {block.line}:\n{results[block.line]}"


def test_the_multi_device_blocks_are_not_skipped():
    """The blocks that show ``devices=`` run on four CPU devices; none of them may be skipped
    (the several-hosts block passes ``devices=jax.device_count()``, and needs a cluster)."""
    shown = [b for b in _BLOCKS if "devices=4" in b.code]
    assert len(shown) >= 2
    assert all(b.marker is None for b in shown), [b.line for b in shown if b.marker]


def test_markers_are_read_and_checked():
    text = ("a\n<!-- test: skip (needs a cluster) -->\n```python\nx = 1\n```\n\n```python\ny = 2\n```\n"
            "<!-- test: slow (long) -->\n```python\nz = 3\n```\n")
    assert readme_blocks(text) == [Block(4, "x = 1\n", "skip", "needs a cluster"), Block(8, "y = 2\n"),
                                   Block(12, "z = 3\n", "slow", "long")]
    with pytest.raises(ValueError, match="unknown test marker"):
        readme_blocks("<!-- test: skipp (typo) -->\n```python\nx = 1\n```\n")
    with pytest.raises(ValueError, match="line before a ```python fence"):
        readme_blocks("<!-- test: skip (far away) -->\n\n```python\nx = 1\n```\n")


def test_own_sampler_block_gives_the_posterior_of_mu(ran):
    """The README's "writing your own sampler" block, as run above: its flat-prior normal
    model gives the posterior of μ it should (mean ȳ, Student-t spread)."""
    import arviz as az

    from gibbsjax.datasets import body_temperature
    from gibbsjax.diagnostics import summary_table

    results, folder = ran
    line = readme_block(_OWN_SAMPLER).line
    assert results.get(line) == "ok", results.get(line)
    idata = az.from_netcdf(folder / str(line) / "idata.nc")
    y = np.asarray(body_temperature()["temperature_f"], np.float64)
    n = y.size
    mu = idata.posterior["mu"]
    # with prior ∝ 1/σ², μ | y is Student-t, n − 1 degrees of freedom, centre ȳ, scale s/√n
    sd = y.std(ddof=1) / np.sqrt(n) * np.sqrt((n - 1) / (n - 3))
    # MCSEs from gibbsjax's float64 statistics (az.mcse failed here on the GPU image, inside ArviZ:
    # float() of a one-element array under numpy 2.5), checked against ArviZ's
    # definitions in tests/test_many_chains.py
    row = summary_table(idata, var_names=["mu"], round_to="none").loc["mu"]
    mcse_mean, mcse_sd = float(row["mcse_mean"]), float(row["mcse_sd"])
    assert abs(float(mu.mean()) - y.mean()) < 5 * mcse_mean
    assert abs(float(mu.std()) - sd) < 5 * mcse_sd


@pytest.mark.skipif(jax.default_backend() != "cpu", reason="the hint is for CPU devices")
def test_a_cpu_run_asking_for_more_devices_says_how_to_get_them():
    """devices=N beyond what JAX sees on a CPU: the error names the XLA flag that gives N CPU devices."""
    import jax

    from gibbsjax.models import normal
    from gibbsjax.run import sample

    n = len(jax.devices()) + 1
    with pytest.raises(ValueError, match=f"XLA_FLAGS=--xla_force_host_platform_device_count={n}"):
        sample(normal.bivariate(rho=0.5), devices=n, num_chains=n, num_draws=2, num_warmup=0, progress=False)
