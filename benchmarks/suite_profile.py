"""Where the test suite's time goes: per test file, the wall time of its tests and how much of it
JAX spent compiling (XLA's backend compilation) and tracing/lowering, in this process.

The default test run must stay under 15 minutes on CI's 2 cores; this says what to attack.  Each
test is timed around its whole protocol (setup, call, teardown), and JAX's own monitoring events
(``/jax/core/compile/backend_compile_duration``, ``jaxpr_trace_duration``,
``jaxpr_to_mlir_module_duration``, ``/jax/compilation_cache/compile_time_saved_sec``) are summed
per test; the backend compilations also per compiled function's name (``jit(run)``, the chunk
functions of ``gibbsjax.sample``, and so on), over the whole run.  Compilation inside a test's
subprocesses (the multi-device checks, the README blocks, the notebooks) is not seen: those files
show wall time with little compilation.

It also fingerprints every program XLA compiles in those processes (its text three ways: as it is,
with its constants left out, and with its constants and array shapes left out) and says how much
compilation time repeats a program already compiled: what tests sharing programs could save at
most, if they were rewritten to use the same data shapes and hyperparameters (``programs``).

From the project root (the suite's own options apply: ``-n 2``, ``-m 'not slow'``):

    python benchmarks/suite_profile.py                 # the whole default run (about 22 min here)
    python benchmarks/suite_profile.py --top 10 --json /tmp/profile.json -- tests/test_lda.py -n 0

Measured on the 2-core CPU of 2026-11-28 (AMD EPYC, AVX2), the whole default run: 2,571 s of
test time over two workers, 1,206 s of it backend compilation and 225 s tracing/lowering in the
workers' own processes; the persistent compilation cache saved 35 s.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EVENTS = {
    "/jax/core/compile/backend_compile_duration": "compile_s",
    "/jax/core/compile/jaxpr_trace_duration": "trace_s",
    "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower_s",
    "/jax/compilation_cache/compile_time_saved_sec": "cache_saved_s",
}
COMPILE = "/jax/core/compile/backend_compile_duration"
# what a program's text is compared without: constants (hyperparameters, seeds, loop bounds), then
# also array types and shape attributes, and the names of its functions
_CONSTANTS = re.compile(r"dense(?:_resource)?<[^>]*>|value = [^\n:]+")
_SHAPES = re.compile(r"tensor<[^>]*>|memref<[^>]*>|array<i64[^>]*>")
_SYMBOLS = re.compile(r"@[\w$.]+")
_LOCATIONS = re.compile(r"loc\([^\n]*\)|#loc\d*(?: = [^\n]*)?")


def fingerprints(text: str) -> tuple[str, str, str]:
    """Hashes of a program's text: as it is, without its constants, and without its constants,
    shapes and function names (locations are left out of all three)."""
    text = _LOCATIONS.sub("", text)
    no_constants = _CONSTANTS.sub("C", text)
    no_shapes = _SYMBOLS.sub("@F", _SHAPES.sub("T", no_constants))
    return tuple(hashlib.sha1(t.encode()).hexdigest()[:16] for t in (text, no_constants, no_shapes))


# ----------------------------------------------------------------------------- the pytest plugin
class Plugin:
    """Per test: wall seconds and the JAX event sums; written as JSON lines to ``folder`` (one file
    per xdist worker) when the session ends."""

    def __init__(self, folder: str):
        import jax

        self.folder = folder
        self.sums: collections.Counter = collections.Counter()
        self.compiled: dict[str, list] = {}  # per function name: [compilations, seconds], this test
        self.programs: list[list] = []  # [module name, seconds, fingerprints...] of each compilation, this test
        self.rows: list[dict] = []
        jax.monitoring.register_event_duration_secs_listener(self._event)
        self._wrap_compiler()

    def _wrap_compiler(self):
        """Fingerprint each program handed to XLA (``jax._src.compiler.backend_compile_and_load``, a
        private function of jax 0.10; where it is missing, no programs are recorded and the report
        says so).  Persistent-cache hits do not reach it."""
        from jax._src import compiler

        real = getattr(compiler, "backend_compile_and_load", None)
        if real is None:
            return

        def backend_compile_and_load(backend, module, *args, **kwargs):
            start = time.perf_counter()
            try:
                return real(backend, module, *args, **kwargs)
            finally:
                seconds = time.perf_counter() - start
                text = str(module)
                name = re.search(r"module @([\w$.]+)", text)
                self.programs.append([name.group(1) if name else "?", seconds, *fingerprints(text)])

        compiler.backend_compile_and_load = backend_compile_and_load

    def _event(self, event, seconds, fun_name=None, **_):
        if event in EVENTS:
            self.sums[EVENTS[event]] += seconds
        if event == COMPILE and fun_name is not None:
            count = self.compiled.setdefault(str(fun_name), [0, 0.0])
            count[0] += 1
            count[1] += seconds

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self.sums.clear()
        self.compiled = {}
        self.programs = []
        start = time.perf_counter()
        try:
            return (yield)
        finally:
            self.rows.append({"test": item.nodeid, "wall_s": time.perf_counter() - start, **self.sums,
                              "compiled": self.compiled, "programs": self.programs})

    def pytest_sessionfinish(self, session):
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with open(Path(self.folder) / f"{worker}.jsonl", "w", encoding="utf-8") as f:
            for row in self.rows:
                f.write(json.dumps(row) + "\n")


def pytest_configure(config):
    """Entry point when pytest loads this file with ``-p suite_profile`` (done by :func:`main`)."""
    folder = os.environ.get("GIBBSJAX_SUITE_PROFILE")
    if folder:
        config.pluginmanager.register(Plugin(folder), "gibbsjax-suite-profile")


# ----------------------------------------------------------------------------- running and reading
def by_file(rows: list[dict]) -> list[dict]:
    """The rows summed per test file, longest first."""
    files: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for row in rows:
        name = row["test"].split("::")[0]
        files[name]["tests"] += 1
        for key, value in row.items():
            if key.endswith("_s"):
                files[name][key] += value
    out = [{"file": name, **sums} for name, sums in files.items()]
    return sorted(out, key=lambda r: -r.get("wall_s", 0.0))


def by_function(rows: list[dict]) -> list[dict]:
    """Backend compilations summed per compiled function's name (``jit(run)``: the chunk
    functions of ``gibbsjax.sample``; ``jit(start)``: its initial states; ``jit(add)`` and the
    like: op-by-op dispatch of code run outside ``jit``), longest first."""
    sums: dict[str, list] = collections.defaultdict(lambda: [0, 0.0, set()])
    for row in rows:
        for name, (count, seconds) in row.get("compiled", {}).items():
            sums[name][0] += count
            sums[name][1] += seconds
            sums[name][2].add(row["test"])
    out = [{"function": name, "compilations": c, "compile_s": s, "tests": len(t)} for name, (c, s, t) in sums.items()]
    return sorted(out, key=lambda r: -r["compile_s"])


LEVELS = ("identical", "up to constants", "up to constants and shapes")


def programs(rows: list[dict], name: str | None = None) -> dict:
    """The programs compiled in the tests' own processes (only those whose module name contains
    ``name``, where given): how many, their seconds, and at each level of :data:`LEVELS` how many
    are distinct and how many seconds went to compiling a program equal at that level to one
    compiled before (in any test of any worker: each worker compiles its own)."""
    compiled = [p for row in rows for p in row.get("programs", []) if name is None or name in p[0]]
    out = {"compilations": len(compiled), "seconds": sum(p[1] for p in compiled)}
    for level, column in zip(LEVELS, (2, 3, 4)):
        seen, repeated = set(), 0.0
        for p in compiled:
            if p[column] in seen:
                repeated += p[1]
            seen.add(p[column])
        out[level] = {"distinct": len(seen), "repeated_s": repeated}
    return out


def run(pytest_args: list[str], folder: str) -> int:
    env = dict(os.environ, GIBBSJAX_SUITE_PROFILE=folder)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent), env.get("PYTHONPATH", "")]).strip(os.pathsep)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "suite_profile", "-p", "no:cacheprovider", *pytest_args]
    return subprocess.run(cmd, cwd=ROOT, env=env).returncode


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("pytest_args", nargs="*", help="passed to pytest (default: the suite's default run)")
    p.add_argument("--top", type=int, default=25, help="files and tests shown (default 25)")
    p.add_argument("--json", help="also write the rows and the per-file sums to this file")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="suite_profile_") as folder:
        start = time.perf_counter()
        code = run(args.pytest_args, folder)
        elapsed = time.perf_counter() - start
        rows = [json.loads(line) for f in sorted(Path(folder).glob("*.jsonl")) for line in f.read_text().splitlines()]
    files = by_file(rows)
    functions = by_function(rows)
    total = collections.Counter()
    for row in rows:
        total.update({k: v for k, v in row.items() if k.endswith("_s")})
    print(f"\npytest exit {code}; {len(rows)} tests in {elapsed:.0f} s of wall time; test time {total['wall_s']:.0f} s, "
          f"of it backend compilation {total['compile_s']:.0f} s ({total['compile_s'] / max(total['wall_s'], 1e-9):.0%}), "
          f"tracing and lowering {total['trace_s'] + total['lower_s']:.0f} s; the persistent cache saved "
          f"{max(total['cache_saved_s'], 0.0):.0f} s")
    print(f"{'test s':>8} {'compile':>8} {'trace':>7}  file (tests)")
    for f in files[:args.top]:
        print(f"{f['wall_s']:8.1f} {f.get('compile_s', 0):8.1f} {f.get('trace_s', 0) + f.get('lower_s', 0):7.1f}  "
              f"{f['file']} ({f['tests']})")
    print(f"\n{'compile':>8} {'count':>6} {'tests':>6}  compiled function")
    for f in functions[:args.top]:
        print(f"{f['compile_s']:8.1f} {f['compilations']:6d} {f['tests']:6d}  {f['function']}")
    census = programs(rows)
    if census["compilations"]:
        print(f"\n{census['compilations']} programs compiled in the tests' processes, {census['seconds']:.0f} s; "
              f"compiling a program equal to an earlier one:")
        for level in LEVELS:
            print(f"  {level:28s} {census[level]['distinct']:6d} distinct, {census[level]['repeated_s']:7.1f} s")
    else:
        print("\nno programs fingerprinted (nothing compiled in the tests' processes, or this jax has no "
              "jax._src.compiler.backend_compile_and_load)")
    print(f"\n{'test s':>8} {'compile':>8}  slowest tests")
    for row in sorted(rows, key=lambda r: -r["wall_s"])[:args.top]:
        print(f"{row['wall_s']:8.1f} {row.get('compile_s', 0):8.1f}  {row['test']}")
    result = {"elapsed_s": elapsed, "exit": code, "total": dict(total), "files": files, "functions": functions,
              "programs": census, "tests": rows}
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1), encoding="utf-8")
    return result


if __name__ == "__main__":
    sys.exit(main()["exit"])
