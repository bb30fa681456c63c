"""Every ```python block of README.md and of the documentation's Markdown pages runs as written.

The rule (stated in the README and the user guide): each block runs on its own, with nothing
defined or imported before it and nothing set in the environment.  Here every block is compiled
as it stands (tracebacks name its file and line numbers) and run in a fresh Python process of
its own, in its own working folder, with the test run's environment less ``XLA_FLAGS``: a block
that needs several devices sets them up itself, before JAX starts, as a reader's script would.

A visible marker on the line before a block's fence changes how it is run:
``<!-- test: slow (reason) -->`` runs it only with ``-m slow`` (as the suite's other long
tests), ``<!-- test: skip (reason) -->`` never; a block that uses ``devices=`` may carry
neither.  The README's own-sampler block is also checked for what it computes (the posterior of
μ), and the README for its shape (short, no long lines outside code, no dates).
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
    path: str = "README.md"


def readme_blocks(text: str | None = None, path: Path = README) -> list[Block]:
    """Every ```python block of the README (or of the Markdown file ``path``, or of ``text``), in
    order, with the marker on the line before its fence, ``<!-- test: skip (reason) -->`` or
    ``<!-- test: slow (reason) -->``; a ``test:`` marker of any other form, or anywhere else, is a
    ``ValueError``."""
    name = path.relative_to(ROOT).as_posix()
    lines = (path.read_text(encoding="utf-8") if text is None else text).splitlines()
    blocks, i = [], 0
    while i < len(lines):
        if lines[i].strip() == "```python":
            previous = lines[i - 1].strip() if i else ""
            kind = reason = None
            if (marker := _MARKER.fullmatch(previous)) is not None:
                if (known := _KIND.fullmatch(marker.group(1))) is None:
                    raise ValueError(f"{name} line {i}: unknown test marker {previous!r}; "
                                     "known: <!-- test: skip (reason) -->, <!-- test: slow (reason) -->")
                kind, reason = known.groups()
            end = lines.index("```", i + 1)
            blocks.append(Block(line=i + 2, code="\n".join(lines[i + 1:end]) + "\n", marker=kind, reason=reason,
                                path=name))
            i = end
        elif _MARKER.search(lines[i]) and not (i + 1 < len(lines) and lines[i + 1].strip() == "```python"):
            raise ValueError(f"{name} line {i + 1}: a test marker must stand on the line before a ```python fence")
        i += 1
    return blocks


def readme_block(after: str) -> Block:
    """The first ```python block after the text ``after`` in the README."""
    text = README.read_text(encoding="utf-8")
    line = text[:text.index(after)].count("\n") + 1
    return next(b for b in readme_blocks(text) if b.line > line)


#: the Markdown pages whose blocks run: the README and the documentation site's pages
PAGES = [README, *sorted(p for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.parts)]

_RUNNER = textwrap.dedent("""
    import json, os, sys
    b = json.load(open(sys.argv[1]))
    source = "\\n" * (b["line"] - 1) + b["code"]  # the file's line numbers in tracebacks
    namespace = {"__name__": "__main__"}
    exec(compile(source, b["path"], "exec"), namespace)
    if b["after"]:
        exec(b["after"], namespace)
""")

# what the README's own-sampler block computes, kept for its test below (run after the block)
_OWN_SAMPLER = "## A model of your own"
_AFTER = {_OWN_SAMPLER: "idata.to_netcdf('idata.nc')"}


def _key(b: Block) -> str:
    return f"{b.path}:{b.line}"


def _run_blocks(blocks: list[Block], folder: Path) -> dict[str, str]:
    """Run each of ``blocks`` in a fresh process of its own, in its own working folder
    ``folder / <file>-<line>``, with this environment less ``XLA_FLAGS``: ``"ok"`` or the
    error output, by ``file:line``."""
    after = {_key(readme_block(k)): v for k, v in _AFTER.items()}
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)  # a block that wants several devices says so itself
    env.pop("PYTHONWARNINGS", None)  # the blocks warn as they would for a reader (e.g. chains disagree)
    results = {}
    for b in blocks:
        work = folder / _key(b).replace("/", "_").replace(":", "-")
        work.mkdir()
        (work / "block.json").write_text(json.dumps({"line": b.line, "code": b.code, "path": b.path,
                                                     "after": after.get(_key(b), "")}), encoding="utf-8")
        proc = subprocess.run([sys.executable, "-c", _RUNNER, str(work / "block.json")], capture_output=True,
                              text=True, env=env, cwd=work, timeout=1200)
        results[_key(b)] = "ok" if proc.returncode == 0 else proc.stderr[-5000:]
    return results


def _work(folder: Path, b: Block) -> Path:
    return folder / _key(b).replace("/", "_").replace(":", "-")


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """Every unmarked block, run once: ``(results by line, folder)``."""
    folder = tmp_path_factory.mktemp("readme")
    return _run_blocks([b for b in _BLOCKS if b.marker is None], folder), folder


@pytest.fixture(scope="module")
def ran_slow(tmp_path_factory):
    """Every block marked slow, run once (only when a slow test asks)."""
    folder = tmp_path_factory.mktemp("readme-slow")
    return _run_blocks([b for b in _BLOCKS if b.marker == "slow"], folder), folder


_BLOCKS = [b for page in PAGES for b in readme_blocks(path=page)]


@pytest.mark.parametrize("block", [pytest.param(b, marks=[pytest.mark.slow] if b.marker == "slow" else [],
                                                id=_key(b)) for b in _BLOCKS])
def test_block_runs_as_written(block, request):
    if block.marker == "skip":
        pytest.skip(f"{_key(block)}: {block.reason}")
    results, _ = request.getfixturevalue("ran_slow" if block.marker == "slow" else "ran")
    assert results[_key(block)] == "ok", f"{_key(block)}:\n{results[_key(block)]}"


def test_the_pages_hold_blocks():
    """The README and the guide's pages are read (a renamed folder would leave nothing to run)."""
    paths = {b.path for b in _BLOCKS}
    assert "README.md" in paths and "docs/guide/own-sampler.md" in paths and "docs/guide/lda.md" in paths
    assert len([b for b in _BLOCKS if b.path == "README.md"]) >= 2


def test_the_multi_device_blocks_set_up_their_devices():
    """The blocks that show ``devices=4`` run as written on a plain machine: each gives itself four
    CPU devices (the XLA flag, set before JAX is imported), and none of them may be skipped (the
    several-hosts block passes ``devices=jax.device_count()``, and needs a cluster)."""
    shown = [b for b in _BLOCKS if "devices=4" in b.code]
    assert len(shown) >= 2
    assert all(b.marker is None for b in shown), [_key(b) for b in shown if b.marker]
    for b in shown:
        flag = b.code.find("--xla_force_host_platform_device_count=4")
        first_import = min(i for i in (b.code.find("import jax"), b.code.find("import gibbsjax"),
                                       b.code.find("from gibbsjax")) if i >= 0)
        assert 0 <= flag < first_import, f"{_key(b)} uses devices=4 without setting up four devices first"


def test_readme_is_short_and_timeless():
    """At most 250 lines, no line over 120 characters outside code blocks, no dates."""
    import re

    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, len(lines)
    in_code = False
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            in_code = not in_code
            continue
        if not in_code:
            assert len(line) <= 120, f"README.md line {number} has {len(line)} characters"
            assert not re.search(r"\b(19|20)\d\d-\d\d-\d\d\b|\bissue \d+", line), f"README.md line {number}: {line}"


def test_markers_are_read_and_checked():
    text = ("a\n<!-- test: skip (needs a cluster) -->\n```python\nx = 1\n```\n\n```python\ny = 2\n```\n"
            "<!-- test: slow (long) -->\n```python\nz = 3\n```\n")
    assert readme_blocks(text) == [Block(4, "x = 1\n", "skip", "needs a cluster"), Block(8, "y = 2\n"),
                                   Block(12, "z = 3\n", "slow", "long")]
    assert readme_blocks(text, path=ROOT / "docs" / "guide" / "lda.md")[0].path == "docs/guide/lda.md"
    with pytest.raises(ValueError, match="unknown test marker"):
        readme_blocks("<!-- test: skipp (typo) -->\n```python\nx = 1\n```\n")
    with pytest.raises(ValueError, match="line before a ```python fence"):
        readme_blocks("<!-- test: skip (far away) -->\n\n```python\nx = 1\n```\n")


def test_own_sampler_block_gives_the_posterior_of_mu(ran):
    """The README's "a model of your own" block, as run above: its flat-prior normal
    model gives the posterior of μ it should (mean ȳ, Student-t spread)."""
    import arviz as az

    from gibbsjax.datasets import body_temperature
    from gibbsjax.diagnostics import summary_table

    results, folder = ran
    block = readme_block(_OWN_SAMPLER)
    assert results.get(_key(block)) == "ok", results.get(_key(block))
    idata = az.from_netcdf(_work(folder, block) / "idata.nc")
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
