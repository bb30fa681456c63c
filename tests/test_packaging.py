"""Package metadata as a new user and a packaging tool see it (issue 24): an SPDX license with
its file, classifiers, the type-hint marker, and the GPU extra."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_license_is_an_spdx_string_with_its_file():
    assert PROJECT["license"] == "MIT"  # a string (PEP 639), not the deprecated table
    assert PROJECT["license-files"] == ["LICENSE"]
    assert "MIT License" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    build = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["build-system"]
    assert "setuptools>=77" in build["requires"]  # the first setuptools that reads license expressions


def test_classifiers_authors_and_typed_marker():
    classifiers = PROJECT["classifiers"]
    assert "Typing :: Typed" in classifiers and "Programming Language :: Python :: 3.11" in classifiers
    assert not any(c.startswith("License ::") for c in classifiers)  # PEP 639: the expression says it
    assert PROJECT["authors"]
    assert (ROOT / "src" / "gibbsjax" / "py.typed").is_file()
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-data"]
    assert "py.typed" in data["gibbsjax"]


def test_gpu_extra_installs_jax_with_cuda():
    extras = PROJECT["optional-dependencies"]
    assert any(req.startswith("jax[cuda") for req in extras["gpu"])
    assert all("jax" not in req for req in PROJECT["dependencies"] if "cuda" in req)  # core stays CPU-only
