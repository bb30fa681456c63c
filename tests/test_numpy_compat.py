"""Newer numpy (issue 11, point 6): no ``float()`` of something that can be a non-0-d array.

numpy 2.5 no longer converts a one-element array of ndim > 0 to a Python float
(``float(np.array([1.0]))`` raises), which broke ``float(az.mcse(...))``.  This
lint-style test needs no numpy 2.5: it scans ``src/`` for ``float(...)`` of
expressions that can be arrays of any shape: ArviZ results, ``np.asarray`` /
``np.array`` / ``np.atleast_1d`` / ``jnp.asarray`` / ``jnp.array``, xarray
``.values`` / ``.data``, reductions given an ``axis``, and subscripts of those.
Use ``.item()`` (any one-element array) or index down to a scalar instead.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "gibbsjax"
_ARRAY_MAKERS = {"asarray", "array", "atleast_1d", "atleast_2d", "ravel", "reshape"}
_ARVIZ = {"az", "arviz"}
_NUMPY = {"np", "numpy", "jnp"}

# Known, being fixed by the owner of testing.py (issue 11): remove once gone.
KNOWN = {("testing.py", "float(az.mcse(np.asarray(x, dtype=np.float64), method='mean'))")}


def _root(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _can_be_array(node: ast.AST) -> bool:
    """Whether ``node`` may evaluate to an array of ndim > 0 (by its syntax)."""
    if isinstance(node, ast.Subscript):
        return _can_be_array(node.value) and _root(node) in _ARVIZ
    if isinstance(node, ast.Attribute):
        return node.attr in ("values", "data")
    if isinstance(node, ast.Call):
        func = node.func
        if _root(func) in _ARVIZ:
            return True
        if isinstance(func, ast.Attribute):
            if _root(func) in _NUMPY and func.attr in _ARRAY_MAKERS:
                return True
            if any(k.arg == "axis" for k in node.keywords):
                return True
    return False


def float_of_arrays(source: str) -> list[tuple[int, str]]:
    """``(line, code)`` of every ``float(x)`` whose ``x`` can be a non-0-d array."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "float"
            and len(node.args) == 1
            and _can_be_array(node.args[0])
        ):
            found.append((node.lineno, ast.unparse(node)))
    return found


@pytest.mark.parametrize(
    "code, flagged",
    [
        ("float(az.mcse(x, method='mean'))", True),
        ("float(arviz.rhat(d)['mu'])", True),
        ("float(np.asarray(x))", True),
        ("float(jnp.array(x))", True),
        ("float(ds['mu'].values)", True),
        ("float(np.mean(x, axis=0))", True),
        ("float(np.mean(x))", False),  # a full reduction is 0-d
        ("float(np.sum(x ** 2))", False),
        ("float(x[0])", False),
        ("float('nan')", False),
        ("np.asarray(az.mcse(x)).item()", False),
    ],
)
def test_the_lint_itself(code, flagged):
    assert bool(float_of_arrays(code)) is flagged


def test_no_float_of_an_array_in_src():
    found = []
    for path in sorted(SRC.rglob("*.py")):
        for line, code in float_of_arrays(path.read_text(encoding="utf-8")):
            if (path.name, code) not in KNOWN:
                found.append(f"{path.relative_to(SRC.parent)}:{line}: {code}")
    assert not found, "float() of a possibly non-0-d array (use .item()):\n" + "\n".join(found)
