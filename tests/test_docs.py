"""The documentation site (docs/) builds with every warning an error, and documents every public name.

numpydoc validates each documented docstring during the build (the checks are listed in
docs/conf.py: GL08, SS01, PR01, PR02, PR03, RT01, and an Examples section for functions and
methods), so a public function whose parameter is not documented, or that returns a value
without a Returns section, fails this test.  Modules not yet converted are named in
``docs/conf.py``'s ``NOT_YET_VALIDATED`` and printed here.  The site's user guide is Markdown
(MyST), its examples gallery the notebooks with their stored outputs (myst-nb, nothing executed).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import posixpath
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

# skipped only outside CI (CI installs the test extra, which brings them)
pytestmark = pytest.mark.skipif(
    not os.environ.get("CI") and any(importlib.util.find_spec(m) is None
                                     for m in ("sphinx", "numpydoc", "myst_nb")),
    reason="sphinx, numpydoc and myst-nb come with the test and docs extras")


def _api_pages():
    return runpy.run_path(str(DOCS / "api_pages.py"), run_name="api_pages")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site, built once with -W (warnings are errors): its html folder."""
    tmp = tmp_path_factory.mktemp("docs")
    env = dict(os.environ, JAX_PLATFORMS="cpu", MPLBACKEND="Agg",
               PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    out = tmp / "html"
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                           "-d", str(tmp / "doctrees"), str(DOCS), str(out)],
                          env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"sphinx-build failed:\n{proc.stdout}\n{proc.stderr}"
    return out


def _inventory(site: Path) -> dict[str, dict]:
    from sphinx.util.inventory import InventoryFile

    with open(site / "objects.inv", "rb") as f:
        return InventoryFile.load(f, "", posixpath.join)


def _resolve(name: str):
    """The object a documented dotted name stands for (the longest importable module, then attributes)."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(name)


def test_site_builds_without_warnings(site):
    print("modules not yet validated:", runpy.run_path(str(DOCS / "conf.py"))["NOT_YET_VALIDATED"])
    # the pages exist and hold the documented functions (not an empty site that passes)
    run_page = (site / "api" / "gibbsjax.run.html").read_text()
    assert 'id="gibbsjax.run.sample"' in run_page and "Parameters" in run_page
    assert (site / "index.html").is_file()


def test_the_site_has_its_pages(site):
    """Getting started, the user guide, the examples gallery (notebooks with their stored
    outputs), the performance page and the API reference."""
    guide = ["getting-started", "guide/own-sampler", "guide/lda", "guide/diagnostics", "guide/long-runs",
             "guide/large-corpora", "guide/cli", "guide/files", "guide/floating-point", "performance",
             "api/index"]
    for page in guide:
        assert (site / f"{page}.html").is_file(), page
    notebooks = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks
    for name in notebooks:
        html = (site / "examples" / f"{name}.html").read_text()
        assert "cell_output" in html, f"the notebook {name} is rendered without its outputs"
    # the performance page holds benchmarks/README.md's tables
    assert "<table" in (site / "performance.html").read_text()


def test_the_guide_links_resolve(site):
    """Every {func}/{class}/{mod} reference of the hand-written pages links to its entry (Sphinx
    renders an unresolved one as plain code, without a warning)."""
    import re

    pages = [site / "index.html", site / "getting-started.html", *sorted((site / "guide").glob("*.html"))]
    unresolved = [f"{page.name}: {m.group(2)}" for page in pages
                  for m in re.finditer(r'(<a [^>]*>)?<code class="xref py[^"]*"[^>]*><span class="pre">([^<]*)</span>',
                                       page.read_text(encoding="utf-8")) if not m.group(1)]
    assert not unresolved, f"references to nothing on the site: {unresolved}"


def test_every_public_module_has_a_page(site):
    """Each public module has its page, listed in the API index, and is a module on the site."""
    modules = _api_pages()["public_modules"]()
    assert "gibbsjax.config" in modules and "gibbsjax.cli" in modules  # the walk finds them
    pages = {p.stem for p in (DOCS / "api").glob("gibbsjax*.rst")}
    index = (DOCS / "api" / "index.rst").read_text()
    for page in pages:
        assert f"   {page}\n" in index, f"docs/api/{page}.rst is not in the API index's toctree"
        assert importlib.util.find_spec(page) is not None, page
    documented = set(_inventory(site)["py:module"])
    for module in modules:
        assert module == "gibbsjax" or module in pages, f"no API page for {module} (run python docs/api_pages.py)"
        assert module in documented, f"{module} is not documented as a module on the site"


def test_the_api_pages_are_up_to_date():
    """docs/api holds what ``python docs/api_pages.py`` writes today (a module added, or a name
    re-exported from elsewhere, changes the pages: run it)."""
    expected = _api_pages()["pages"]()
    written = {p.name: p.read_text(encoding="utf-8") for p in (DOCS / "api").glob("*.rst")}
    assert set(written) == set(expected), "run python docs/api_pages.py"
    stale = sorted(name for name in expected if written[name] != expected[name])
    assert not stale, f"run python docs/api_pages.py: {stale}"


def test_every_public_class_and_function_has_an_entry(site):
    """Every class and function a public module exports (its ``__all__``, or the public ones it
    defines) is documented on the site, under its own name or one that names the same object."""
    inventory = _inventory(site)
    documented = set()
    for kind in ("py:class", "py:function", "py:exception"):
        for name in inventory.get(kind, {}):
            documented.add(id(_resolve(name)))
    pages = _api_pages()
    missing = [f"{m}.{name}" for m in pages["public_modules"]() for name, obj in pages["public_names"](m).items()
               if (inspect.isclass(obj) or inspect.isfunction(obj)) and id(obj) not in documented]
    assert not missing, f"public names without an entry on the site (run python docs/api_pages.py): {missing}"


def test_the_entry_check_can_fail(site):
    """A name that is not on the site is seen as missing: the check above is not vacuous."""
    inventory = _inventory(site)
    names = set(inventory["py:function"]) | set(inventory["py:class"])
    assert "gibbsjax.run.sample" in names
    assert "gibbsjax.corpus.text.not_a_function" not in names


def test_every_public_class_has_an_example():
    """Each public class's docstring has a numpydoc Examples section (run by tests/test_doctests.py)."""
    from numpydoc.docscrape import NumpyDocString

    pages = _api_pages()
    seen, missing = set(), []
    for m in pages["public_modules"]():
        for name, obj in pages["public_names"](m).items():
            if inspect.isclass(obj) and obj.__module__.startswith("gibbsjax") and id(obj) not in seen:
                seen.add(id(obj))
                if not NumpyDocString(inspect.getdoc(obj) or "")["Examples"]:
                    missing.append(f"{obj.__module__}.{obj.__qualname__}")
    assert not missing, f"public classes without an Examples section: {sorted(missing)}"
