"""The house's structure (DESIGN.md, issue "One home per concern"): read from the source, nothing run.

* no import circle among the modules of ``src/gibbsjax`` (imports inside functions count);
* no module imports another module's private name (``from m import _x`` or ``m._x``);
* two layers: no module of the samplers (``SAMPLERS`` below: models, conditionals, kernels, random
  primitives, the runner, diagnostics, the testing tools, corpora and data sets) imports a module of
  the applications above them (specs, configs, reports, post-processing, alignment, the estimator, the CLI);
* no module over 1,000 lines (``random.py``, one generator and its distributions, excepted); the LDA
  package's modules stay under 600 lines, the estimator facade under 500.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def _modules() -> dict[str, tuple[Path, bool]]:
    out = {}
    for path in sorted((SRC / "gibbsjax").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if package else parts)] = (path, package)
    return out


MODULES = _modules()


def _absolute(module: str, package: bool, level: int, name: str | None) -> str:
    if level == 0:
        return name or ""
    base = module.split(".")[: None if package else -1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def _owner(name: str) -> str:
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def _read():
    """(edges module -> imported modules, private names reached across modules)."""
    edges, private = {}, []
    for module, (path, package) in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        targets, aliases = set(), {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith("gibbsjax"):
                        targets.add(_owner(a.name))
                        if a.asname:
                            aliases[a.asname] = a.name
            elif isinstance(node, ast.ImportFrom):
                source = _absolute(module, package, node.level, node.module)
                if not source.startswith("gibbsjax"):
                    continue
                for a in node.names:
                    full = f"{source}.{a.name}"
                    if full in MODULES:
                        targets.add(full)
                        aliases[a.asname or a.name] = full
                    else:
                        targets.add(_owner(source))
                        if a.name.startswith("_") and not a.name.startswith("__"):
                            private.append(f"{module}: from {source} import {a.name}")
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                    and node.attr.startswith("_") and not node.attr.startswith("__")):
                private.append(f"{module}: {node.value.id}.{node.attr}")
        targets.discard(module)
        edges[module] = targets
    return edges, private


def _circles(edges) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on, stack, found, counter = {}, {}, set(), [], [], 0
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in edges:
                    continue
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_the_circle_check_sees_a_circle():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(edges) == [["a", "b", "c"]]


def test_no_import_circle():
    edges, _ = _read()
    assert _circles(edges) == []


def test_no_module_imports_another_modules_private_name():
    _, private = _read()
    assert private == []


#: the samplers' layer: these modules and the packages' modules below them; every other module is an application
SAMPLERS = ("gibbsjax.models", "gibbsjax.run", "gibbsjax.testing", "gibbsjax.corpus", "gibbsjax.datasets",
            "gibbsjax.random", "gibbsjax.kernel", "gibbsjax._checks", "gibbsjax.conjugate", "gibbsjax.conjugate_normal",
            "gibbsjax.rows", "gibbsjax.memory", "gibbsjax.stopping", "gibbsjax.diagnostics", "gibbsjax.chain_stats",
            "gibbsjax.reading", "gibbsjax.outputs", "gibbsjax.steps")


def _is_sampler(module: str) -> bool:
    return any(module == m or module.startswith(m + ".") for m in SAMPLERS)


def _upward(edges) -> list[str]:
    return sorted(f"{a} -> {b}" for a, targets in edges.items() if _is_sampler(a)
                  for b in targets if b.startswith("gibbsjax") and not _is_sampler(b))


def test_the_layer_check_sees_an_import_upward():
    edges = {"gibbsjax.models.normal": {"gibbsjax.kernel", "gibbsjax.specs.normal"},
             "gibbsjax.specs.normal": {"gibbsjax.models.normal"}}
    assert _upward(edges) == ["gibbsjax.models.normal -> gibbsjax.specs.normal"]


def test_samplers_never_import_applications():
    edges, _ = _read()
    assert [m for m in SAMPLERS if m not in MODULES] == []
    assert _upward(edges) == []


def test_file_sizes():
    sizes = {m: sum(1 for _ in p.open(encoding="utf-8")) for m, (p, _) in MODULES.items()}
    assert {m: n for m, n in sizes.items() if n > 1000 and m != "gibbsjax.random"} == {}
    lda = {m: sum(1 for _ in p.open(encoding="utf-8")) for m, (p, _) in MODULES.items()
           if m.startswith("gibbsjax.models.lda.")}
    assert lda and max(lda.values()) <= 600, lda
    estimators, _ = MODULES["gibbsjax.topics.estimators"]
    assert sum(1 for _ in estimators.open(encoding="utf-8")) < 500
