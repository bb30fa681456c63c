"""The numerics fingerprint that exact stored outputs are compared by (``tests/_numerics.py``):
it must see a change of float rounding (here: XLA's CPU code capped to narrower vectors), and
a stored notebook is compared only on the keys it was stored with."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import jax

from _numerics import fingerprint
from test_notebooks import differences, environment

HERE = Path(__file__).resolve().parent


def _fingerprint_in_child(xla_flags: str) -> str:
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "XLA_FLAGS": xla_flags}
    code = "import _numerics; print(_numerics.fingerprint())"
    out = subprocess.run([sys.executable, "-c", code], cwd=HERE, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip().splitlines()[-1]


def test_the_fingerprint_sees_another_rounding():
    """The same machine with XLA's CPU code limited to SSE4.2 (4-wide vectors) rounds its sums
    otherwise, as another CPU would: another fingerprint; with no limit, this process's."""
    plain = _fingerprint_in_child(os.environ.get("XLA_FLAGS", ""))
    if jax.default_backend() == "cpu":  # elsewhere this process's fingerprint is its accelerator's
        assert plain == fingerprint()
    assert _fingerprint_in_child("--xla_cpu_max_isa=SSE4_2").rsplit("-", 1)[1] != plain.rsplit("-", 1)[1]


def test_a_stored_environment_is_compared_on_its_own_keys():
    here = environment()
    assert here["numerics"] == fingerprint()
    assert differences(dict(here), here) == {}
    assert differences({k: v for k, v in here.items() if k != "numerics"}, here) == {}  # stored without one
    assert differences({**here, "numerics": "x86_64-avx512f-000000000000"}, here) == {
        "numerics": ("x86_64-avx512f-000000000000", here["numerics"])}
    assert differences({**here, "jax": "0.1"}, here) == {"jax": ("0.1", here["jax"])}
    assert differences({}, here)  # no recorded environment: never compared
