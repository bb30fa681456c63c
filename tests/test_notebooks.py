"""Execute every notebook under notebooks/, so that a notebook that breaks fails CI.

Each notebook runs top to bottom in a fresh ipykernel (cwd = notebooks/,
MPLBACKEND=Agg); a cell that raises fails the test with the cell's traceback.
The kernel is always ipykernel on the Python running the tests (not whatever a
"python3" kernelspec elsewhere on the machine points to).

Notebooks are stored *with* their outputs, so they show their plots on GitHub
or in Jupyter without being run.  To refresh the stored outputs after a change::

    python tests/test_notebooks.py notebooks/topic-models.ipynb   # or several, or none for all

**Stored outputs stay true**: the notebooks of :data:`COMPARED` (the fast ones in the
default run, all of them in the slow run) are re-run and their text outputs compared
with the stored ones, cell by cell, after :func:`normalise` (the regexes of
:data:`NORMALISE`: timings, progress bars, memory addresses, file paths, free memory).
Only stdout and the cells' results (``text/plain``) are compared, not stderr (warnings
and progress bars), and each cell must have as many figures as stored.  The outputs
depend on the environment (``stdlib_docs`` on the Python version, random streams and
float rounding on the jax version, float rounding on the CPU too: :mod:`_numerics`), so the
comparison runs only where Python X.Y, jax, the backend and (where it was recorded) the numerics
fingerprint equal those recorded in the notebook's metadata when it was stored
(``metadata["gibbsjax"]``); elsewhere it is skipped with the difference named.  Storing
records this machine's fingerprint; a notebook stored before fingerprints were recorded (its
outputs matched on every CPU seen since) has none and is compared on every CPU.
"""

from __future__ import annotations

import platform
import re
import sys
from pathlib import Path

import nbformat
import pytest
from ipykernel.kernelspec import RESOURCES, get_kernel_dict
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient

from _numerics import fingerprint

NOTEBOOK_DIR = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
CELL_TIMEOUT_S = 300

# Cheap checks on the executed outputs of particular notebooks: text that must appear.
EXPECTED_TEXT = {
    "convergence.ipynb": [
        "chains 0-3 of the 16-chain run equal the 4-chain run: True",
        "posterior mean of mu: 98.2",
    ],
    "lda-workflow.ipynb": [
        "same topics after loading: True",
        "rows sum to 1: True",
        "held by >= 50% of 8 chains",
    ],
    "large-corpus.ipynb": [
        "this run fits",
        "refused: this run needs at least",
        "mean Hellinger distance to the true topics",
    ],
    "topic-models.ipynb": [
        "estimates equal the reference chain's: True",
        "extended run equals one longer run: True",
        "topics reproduced by all 4 chains",
    ],
}
# Patterns that must match the executed outputs (re.S): for results that depend on the Python
# version, such as the stdlib_docs corpus (670 training documents on 3.11, 674 on 3.12)
EXPECTED_PATTERNS = {
    "lda-workflow.ipynb": [  # pyLDAvis's inputs hold one row per training document
        r"training: (\d+) documents;.*'doc_topic_dists': \(\1, 8\), 'doc_lengths': \(\1,\)",
    ],
}
MIN_FIGURES = {"convergence.ipynb": 7, "topic-models.ipynb": 4, "sbc.ipynb": 2, "lda-workflow.ipynb": 2}

#: (pattern, replacement) applied to every text output before stored and re-run outputs are
#: compared; each hides something that changes from run to run by design, nothing else
NORMALISE = [
    (re.compile(r"^.*\[machine-dependent\].*$", re.M), "[machine-dependent]"),  # timings, tokens/s
    (re.compile(r"^.*(?:it/s|s/it|sweeps/s|\d+%\|).*$", re.M), "[progress]"),  # progress bars
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "0x..."),  # memory addresses in reprs
    (re.compile(r"(?<![\w./])(?:/[\w.+-]+){2,}/?"), "<path>"),  # file paths (temp folders, site-packages)
    (re.compile(r"\d[\d.,]* [KMGTPE]?i?B is available"), "<bytes> is available"),  # free memory
]

#: notebooks whose re-run text outputs must equal the stored ones in the default run
#: (the slow ones are compared in the slow run, where they are executed)
COMPARED = {"convergence.ipynb", "lda-workflow.ipynb", "large-corpus.ipynb"}

_PROBE = "import sys\nprint(sys.prefix)"


class _ThisPython(KernelSpecManager):
    """Resolves every kernel name to ipykernel running on ``sys.executable``."""

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
        return KernelSpec(resource_dir=RESOURCES, **get_kernel_dict())


def _text_outputs(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if out.output_type == "stream":
            parts.append(out.text)
        elif out.output_type in ("execute_result", "display_data"):
            parts.append(out.data.get("text/plain", ""))
    return "".join(parts)


def _execute(path: Path):
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(_PROBE))  # which Python ran the notebook
    km = AsyncKernelManager(kernel_name="python3", kernel_spec_manager=_ThisPython())
    client = NotebookClient(
        nb,
        km=km,
        timeout=CELL_TIMEOUT_S,
        allow_errors=False,
        resources={"metadata": {"path": str(NOTEBOOK_DIR)}},  # the kernel's cwd
        shutdown_kernel="immediate",
    )
    # cleanup_kc: shut the kernel down when the notebook ends.  nbclient keeps a kernel it did not
    # create alive until the interpreter exits (each one holding a JAX process's memory), and its
    # exit-time clean-up left the connection file (a temporary file) behind.
    client.execute(cleanup_kc=True)
    return nb


def environment() -> dict[str, str]:
    """What the notebooks' outputs depend on besides the code: recorded when they are stored
    (``numerics``: how this CPU rounds floats, :func:`_numerics.fingerprint`)."""
    import jax

    return {"python": ".".join(platform.python_version_tuple()[:2]), "jax": jax.__version__,
            "backend": jax.default_backend(), "numerics": fingerprint()}


def differences(recorded: dict, here: dict) -> dict:
    """The entries of ``recorded`` (a stored notebook's environment) that this machine does not
    share, as {key: (recorded, here)}; a key the notebook was stored without is not compared.

    >>> differences({"jax": "0.10.2"}, {"jax": "0.10.2", "numerics": "x"})
    {}
    >>> differences({"jax": "0.10.2", "numerics": "a"}, {"jax": "0.10.2", "numerics": "b"})
    {'numerics': ('a', 'b')}
    >>> differences({}, {"jax": "0.10.2"})
    {'environment': ('not recorded', 'recorded')}
    """
    if not recorded:
        return {"environment": ("not recorded", "recorded")}
    return {k: (v, here.get(k)) for k, v in recorded.items() if here.get(k) != v}


def normalise(text: str) -> str:
    """``text`` with the run-dependent parts of :data:`NORMALISE` replaced.

    >>> normalise("[machine-dependent] 3.2 s\\nsaved to /tmp/abc/x.nc at 0x7f3a")
    '[machine-dependent]\\nsaved to <path> at 0x...'
    """
    for pattern, replacement in NORMALISE:
        text = pattern.sub(replacement, text)
    return text


def _compared_text(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if out.output_type == "stream" and out.name == "stdout":
            parts.append(out.text)
        elif out.output_type in ("execute_result", "display_data"):
            parts.append(out.data.get("text/plain", ""))
    return normalise("".join(parts))


def _figures(cell) -> int:
    return sum("image/png" in o.get("data", {}) for o in cell.get("outputs", []))


_EXECUTED: dict[str, object] = {}  # notebook name -> executed notebook (one execution per session)


def _executed(path: Path):
    if path.name not in _EXECUTED:
        _EXECUTED[path.name] = _execute(path)
    return _EXECUTED[path.name]


#: executed only in the slow run (the default run checks their stored outputs): the LDA
#: notebook fits several models, the SBC one runs SBC twice; their APIs are tested directly
#: (test_lda_estimator.py & co., test_testing.py)
SLOW_NOTEBOOKS = {"topic-models.ipynb", "sbc.ipynb"}


@pytest.mark.parametrize("path", [pytest.param(p, marks=pytest.mark.slow) if p.name in SLOW_NOTEBOOKS else p
                                  for p in NOTEBOOKS], ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes(path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")  # inherited by the kernel process
    nb = _executed(path)  # raises CellExecutionError if any cell raises

    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    probe = code_cells[-1]
    code_cells = code_cells[:-1]
    assert _text_outputs(probe).strip() == sys.prefix, "the kernel is not the Python running the tests"

    _check_outputs(path.name, code_cells, "executed")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_stored_with_outputs(path: Path):
    """Every code cell was run, in order, without errors, and the stored outputs hold the
    expected text and figures (refresh them with ``python tests/test_notebooks.py``)."""
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    counts = [c.execution_count for c in code_cells]
    assert all(n is not None for n in counts), f"{path.name}: stored without outputs; run python tests/test_notebooks.py"
    assert counts == sorted(counts), f"{path.name}: cells were run out of order"
    _check_outputs(path.name, code_cells, "stored")


@pytest.mark.parametrize("path", [pytest.param(p, marks=pytest.mark.slow) if p.name not in COMPARED else p
                                  for p in NOTEBOOKS], ids=[p.name for p in NOTEBOOKS])
def test_rerun_matches_stored_outputs(path: Path, monkeypatch: pytest.MonkeyPatch):
    """A re-run prints what the stored notebook shows, cell by cell (after :func:`normalise`),
    with as many figures per cell: the stored outputs are today's results."""
    stored = nbformat.read(path, as_version=4)
    recorded = stored.metadata.get("gibbsjax", {})
    differ = differences(recorded, environment())
    if differ:
        pytest.skip(f"{path.name} was stored in another environment ({differ}: recorded, here); its outputs are "
                    "compared where they were stored; refresh it with python tests/test_notebooks.py")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    rerun = [c for c in _executed(path).cells if c.cell_type == "code"][:-1]  # the probe cell left out
    kept = [c for c in stored.cells if c.cell_type == "code"]
    assert len(rerun) == len(kept), f"{path.name}: {len(kept)} stored code cells, {len(rerun)} re-run"
    for i, (new, old) in enumerate(zip(rerun, kept)):
        assert _compared_text(new) == _compared_text(old), (
            f"{path.name}: code cell {i} prints something else than its stored output; if the change is "
            f"intended, refresh with python tests/test_notebooks.py {path.relative_to(path.parents[1])}\n"
            f"--- stored:\n{_compared_text(old)}\n--- re-run:\n{_compared_text(new)}")
        assert _figures(new) == _figures(old), f"{path.name}: code cell {i} has {_figures(new)} figures, stored {_figures(old)}"


def test_normalise_hides_only_what_changes_by_design():
    """Timings, progress bars, addresses, paths and free memory are hidden; results are not."""
    run1 = ("[machine-dependent] second call: 6.4 s, 9.4 M tokens/s\nheld-out perplexity: 425.5\n"
            "saved to /tmp/tmpab12/m.nc <Figure at 0x7f3a2c>\n100%|####| 50/50 [00:01<00:00, 42.1it/s]\n"
            "but 22.3 GiB is available (a run may use 90% of it)")
    run2 = ("[machine-dependent] second call: 7.9 s, 7.6 M tokens/s\nheld-out perplexity: 425.5\n"
            "saved to /var/folders/x/m.nc <Figure at 0x55d1e0>\n100%|####| 50/50 [00:02<00:00, 21.0it/s]\n"
            "but 1.5 TiB is available (a run may use 90% of it)")
    assert normalise(run1) == normalise(run2)
    assert normalise(run1.replace("425.5", "425.6")) != normalise(run2)  # a result that changed is seen
    assert normalise("ratio 1/2, 3 of 8 chains, R-hat 1.01") == "ratio 1/2, 3 of 8 chains, R-hat 1.01"


def _check_outputs(name: str, code_cells, which: str) -> None:
    """Every cell ran without an error output; the expected text and figures are there."""
    for i, cell in enumerate(code_cells):
        assert cell.execution_count is not None, f"{name}: {which} code cell {i} was not executed"
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert not errors, f"{name}: {which} code cell {i} holds an error output: {errors[0].get('ename')}"
    text = "".join(_text_outputs(c) for c in code_cells)
    for expected in EXPECTED_TEXT.get(name, []):
        assert expected in text, f"{name}: {which} outputs lack {expected!r}"
    for pattern in EXPECTED_PATTERNS.get(name, []):
        assert re.search(pattern, text, re.S), f"{name}: {which} outputs do not match {pattern!r}"
    figures = sum("image/png" in o.get("data", {}) for c in code_cells for o in c.outputs)
    assert figures >= MIN_FIGURES.get(name, 0), f"{name}: only {figures} figures in the {which} outputs"


def store_outputs(paths) -> None:
    """Execute notebooks and write them back with their outputs (the probe cell removed)."""
    import os

    os.environ.setdefault("MPLBACKEND", "Agg")
    for path in paths:
        nb = _execute(Path(path).resolve())
        nb.cells.pop()  # the probe cell
        nb.metadata["gibbsjax"] = environment()  # what the outputs depend on besides the code
        nbformat.write(nb, str(path))
        print(f"stored outputs of {path}")


if __name__ == "__main__":
    store_outputs(sys.argv[1:] or NOTEBOOKS)
