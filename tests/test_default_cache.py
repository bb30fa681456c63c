"""``gibbsjax.sample`` turns JAX's persistent compilation cache on by default, as the command line
does (``gibbsjax.run.enable_default_cache``): into ``$GIBBSJAX_CACHE_DIR`` (or ``~/.cache/gibbsjax/xla``),
never over a folder the user chose (``JAX_COMPILATION_CACHE_DIR``), and not at all with
``GIBBSJAX_NO_CACHE=1``.  JAX's configuration is process-wide, so each case runs in a new process."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_SCRIPT = """
import os, jax, gibbsjax
from gibbsjax.models import normal
before = jax.config.jax_compilation_cache_dir
gibbsjax.sample(normal.bivariate(0.5), seed=0, num_chains=2, num_warmup=5, num_draws=5, progress=False)
print("BEFORE", before)
print("AFTER", jax.config.jax_compilation_cache_dir)
"""


def _run(tmp_path, **env_changes) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("GIBBSJAX_CACHE_DIR", "JAX_COMPILATION_CACHE_DIR", "GIBBSJAX_NO_CACHE")}
    env.update(env_changes, JAX_PLATFORMS="cpu", HOME=str(tmp_path / "home"))
    proc = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return dict(line.split(" ", 1) for line in proc.stdout.splitlines() if line.startswith(("BEFORE", "AFTER")))


def test_sample_turns_the_cache_on_in_gibbsjax_cache_dir(tmp_path):
    folder = tmp_path / "cache"
    out = _run(tmp_path, GIBBSJAX_CACHE_DIR=str(folder))
    assert out["BEFORE"] == "None" and out["AFTER"] == str(folder)
    assert folder.is_dir()


def test_without_a_folder_the_cache_goes_under_home(tmp_path):
    out = _run(tmp_path)
    assert out["AFTER"] == str(tmp_path / "home" / ".cache" / "gibbsjax" / "xla")


@pytest.mark.parametrize("env", [{"GIBBSJAX_NO_CACHE": "1"}, {"JAX_COMPILATION_CACHE_DIR": "USER"}])
def test_a_users_choice_is_kept(tmp_path, env):
    env = {k: (str(tmp_path / "mine") if v == "USER" else v) for k, v in env.items()}
    out = _run(tmp_path, GIBBSJAX_CACHE_DIR=str(tmp_path / "ours"), **env)
    assert out["AFTER"] == out["BEFORE"]  # nothing changed: off, or the user's folder
    assert not (tmp_path / "ours").exists()
