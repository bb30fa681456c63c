"""The API reference's pages: one page per public module of gibbsjax, and the index of them.

Run ``python docs/api_pages.py`` after adding or removing a public module (or a name that a
package re-exports from one of its modules); it rewrites ``docs/api/``.  tests/test_docs.py
fails when a public module has no page, or a public class or function has no entry on the
built site.

Each public object is documented once, on its *home* page: the shallowest public module on
the path to the module that defines it that exports it (``gibbsjax.run.sample`` rather than
``gibbsjax.run.driver.sample``).  The other modules that export it leave it out
(``:exclude-members:``) and say where it is.  The top package ``gibbsjax`` is the API index:
a table of its names, linked to their homes.
"""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent

# the reference's sections: (caption, module prefixes); a module goes to the first that matches
SECTIONS = [
    ("Writing and running samplers", ("gibbsjax.kernel", "gibbsjax.steps", "gibbsjax.run", "gibbsjax.random",
                                      "gibbsjax.rows", "gibbsjax.conjugate", "gibbsjax.stopping",
                                      "gibbsjax.memory")),
    ("LDA and topic models", ("gibbsjax.topics", "gibbsjax.models.lda", "gibbsjax.corpus", "gibbsjax.evaluate")),
    ("Models", ("gibbsjax.models",)),
    ("Results and diagnostics", ("gibbsjax.diagnostics", "gibbsjax.chain_stats", "gibbsjax.labels",
                                 "gibbsjax.agreement", "gibbsjax.plots", "gibbsjax.reports")),
    ("Checking samplers", ("gibbsjax.testing",)),
    ("Data sets", ("gibbsjax.datasets",)),
    ("Configs, command line and files", ("gibbsjax.config", "gibbsjax.cli", "gibbsjax.spec", "gibbsjax.specs",
                                         "gibbsjax.sources", "gibbsjax.pipeline", "gibbsjax.outputs",
                                         "gibbsjax.reading")),
]


def public_modules() -> list[str]:
    """Every public module of gibbsjax (no part of its name starts with ``_``), sorted."""
    import gibbsjax

    names = [m.name for m in pkgutil.walk_packages(gibbsjax.__path__, "gibbsjax.")
             if not any(part.startswith("_") for part in m.name.split("."))]
    return ["gibbsjax", *sorted(names)]


def public_names(module_name: str) -> dict[str, object]:
    """A module's public names: its ``__all__``, or else the classes and functions it defines
    whose names do not start with ``_``."""
    module = importlib.import_module(module_name)
    if hasattr(module, "__all__"):
        return {name: getattr(module, name) for name in module.__all__}
    return {name: obj for name, obj in vars(module).items()
            if not name.startswith("_") and (inspect.isclass(obj) or inspect.isfunction(obj))
            and getattr(obj, "__module__", None) == module_name}


def homes(modules: list[str]) -> dict[tuple[str, int], str]:
    """The home module of every exported object, keyed by ``(name, id(object))``."""
    exported: dict[tuple[str, int], list[str]] = {}
    for m in modules:
        if m == "gibbsjax":
            continue
        for name, obj in public_names(m).items():
            exported.setdefault((name, id(obj)), []).append(m)
    result = {}
    for key, where in exported.items():
        obj = public_names(where[0])[key[0]]
        defined = getattr(obj, "__module__", None) or ""
        path = [m for m in where if (defined == m or defined.startswith(m + "."))
                and f"{m}.{key[0]}" not in modules]  # gibbsjax.testing.sbc is a module: sbc() is at home in it
        result[key] = min(path or where, key=lambda m: (m.count("."), m))
    return result


def section(module: str) -> str:
    for caption, prefixes in SECTIONS:
        if any(module == p or module.startswith(p + ".") or module.startswith(p + "_") for p in prefixes):
            return caption
    raise ValueError(f"{module} belongs to no section of docs/api_pages.py's SECTIONS")


def page(module: str, home: dict[tuple[str, int], str]) -> str:
    names = public_names(module)
    elsewhere = {name: home[(name, id(obj))] for name, obj in names.items()
                 if home.get((name, id(obj)), module) != module}
    lines = [module, "=" * len(module), "", f".. automodule:: {module}"]
    own = []
    if not hasattr(importlib.import_module(module), "__all__"):  # its own classes and functions, one by one
        lines.append("   :no-members:")
        own = [name for name in names if name not in elsewhere]
    elif elsewhere:
        lines.append(f"   :exclude-members: {', '.join(sorted(elsewhere))}")
    for name in own:
        kind = "autoclass" if inspect.isclass(names[name]) else "autofunction"
        lines += ["", f".. {kind}:: {module}.{name}"] + (["   :members:"] if kind == "autoclass" else [])
        lines += ["", "Also exported here, documented where they are at home:", ""]
        for name, where in sorted(elsewhere.items()):
            lines.append(f"- :py:obj:`{name} <{where}.{name}>` ({where})")
    return "\n".join(lines) + "\n"


def index(modules: list[str], home: dict[tuple[str, int], str]) -> str:
    import gibbsjax

    lines = ["API reference", "=============", "", ".. automodule:: gibbsjax", "   :no-members:", "",
             "The names exported by ``gibbsjax`` itself, documented in the modules they come from:", "",
             ".. autosummary::", ""]
    for name in gibbsjax.__all__:
        where = home[(name, id(getattr(gibbsjax, name)))]
        lines.append(f"   ~{where.removeprefix('gibbsjax.')}.{name}")
    by_section: dict[str, list[str]] = {caption: [] for caption, _ in SECTIONS}
    for m in modules:
        if m != "gibbsjax":
            by_section[section(m)].append(m)
    for caption, members in by_section.items():
        lines += ["", ".. toctree::", "   :maxdepth: 1", f"   :caption: {caption}", ""]
        lines += [f"   {m}" for m in members]
    return "\n".join(lines) + "\n"


def pages() -> dict[str, str]:
    """Every page of the API reference: file name (in ``docs/api``) -> text."""
    modules = public_modules()
    home = homes(modules)
    result = {f"{m}.rst": page(m, home) for m in modules if m != "gibbsjax"}
    result["index.rst"] = index(modules, home)
    return result


def main() -> None:
    api = DOCS / "api"
    for old in api.glob("gibbsjax*.rst"):
        old.unlink()
    written = pages()
    for name, text in written.items():
        (api / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(written)} pages to {api}")


if __name__ == "__main__":
    sys.path.insert(0, str(DOCS.parent / "src"))  # this checkout's gibbsjax
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    main()
