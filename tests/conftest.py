"""Test-session settings: a persistent XLA compilation cache for the whole run.

Compilation dominates this suite's time (a gamma sampler takes 1-2 s to compile on
a 2-core CPU).  Identical computations built from fresh closures — every Geweke
test, the CLI subprocesses, the notebook kernels — then compile once.  The cache
lives in ``$GIBBSJAX_CACHE_DIR`` when set, else a temporary folder; JAX's own
environment variables carry it into subprocesses.
"""

import os
import shutil
import tempfile

#: the cache folder this process made (None where the environment named one, or a parent test
#: process made it: xdist's workers and the suite's subprocesses inherit the variable); removed
#: when the session ends (:func:`pytest_unconfigure`), so that no run leaves its cache behind
_OWN_CACHE = None if "GIBBSJAX_CACHE_DIR" in os.environ else tempfile.mkdtemp(prefix="gibbsjax-test-xla-")
if _OWN_CACHE is not None:
    os.environ["GIBBSJAX_CACHE_DIR"] = _OWN_CACHE
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", os.environ["GIBBSJAX_CACHE_DIR"])
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0.05")
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "0")

import gibbsjax  # noqa: E402

gibbsjax.enable_compilation_cache(os.environ["GIBBSJAX_CACHE_DIR"])


import signal  # noqa: E402
import threading  # noqa: E402

import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _interactive_sigint():
    """Every test runs with SIGINT as an interactive session has it (Python's KeyboardInterrupt
    handler), however the suite was launched: a suite started in the background by a script
    (``cmd &``, as CI may be) inherits SIGINT *ignored*, and gibbsjax rightly keeps an ignored
    signal ignored (tests/test_resume.py checks that case explicitly).  Child processes then
    start with SIGINT at its default too."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


#: The test files that take longest (30-100 s each on a 2-core machine), run first.  With
#: pytest-xdist's ``--dist loadfile`` a worker takes a whole file, in collection order; a long
#: file started last keeps one worker busy while the other has nothing left to do (that tail
#: was several minutes of the suite's wall time).  The other files keep their order.
LONG_FIRST = (
    "test_lda_shard.py", "test_readme_blocks.py", "test_benchmarks.py", "test_row_shard.py",
    "test_notebooks.py", "test_demo.py", "test_choose_k.py", "test_x64.py", "test_devices.py",
    "test_lda_estimator.py", "test_lda_priors.py", "test_memory.py", "test_plots.py", "test_quiet.py",
    "test_stable_topics.py", "test_testing.py", "test_lda_fast.py", "test_resume.py", "test_lda_sparse.py",
)


def pytest_collection_modifyitems(session, config, items):
    rank = {name: i for i, name in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable sort


def pytest_unconfigure(config):
    """The session's own compilation cache is removed when it ends (hundreds of MB on a full run)."""
    if _OWN_CACHE is not None and not hasattr(config, "workerinput"):
        shutil.rmtree(_OWN_CACHE, ignore_errors=True)
