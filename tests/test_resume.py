"""Resume and extend, run until converged, and nothing finished lost (issue 10).

Bit-identity: a run of 500 draws and a run of 200 draws resumed for 300 more
must give the very same draws (sweep ``t`` of chain ``c`` always uses the key
``fold_in(run_key_c, t)`` and the state is saved exactly), for the body
temperature model and for LDA, through the Python API and the command line.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gibbsjax.cli import main
from gibbsjax.config import load_config, resume_result, run_config
from gibbsjax.kernel import Kernel
from gibbsjax.run import Settings, resume, sample

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs"
TIMEOUT = 120


def _open(path):
    import arviz as az

    return az.from_netcdf(path)


def _assert_same_groups(a, b, groups=("posterior", "sample_stats", "posterior_mean")):
    for group in groups:
        if group not in a.groups():
            continue
        assert group in b.groups(), group
        assert set(a[group].data_vars) == set(b[group].data_vars), group
        for name in a[group].data_vars:
            np.testing.assert_array_equal(a[group][name].values, b[group][name].values, err_msg=f"{group}.{name}")


# ----------------------------------------------------------------------------- Python API
@pytest.fixture(scope="module")
def body():
    return load_config(CONFIGS / "body-temperature.toml")


def test_resume_is_bit_identical_body_temperature(body, tmp_path):
    kw = dict(seed=11, num_chains=4, num_warmup=100, progress=False, chunk_size=64)
    full = sample(body.kernel, body.data, num_draws=500, **kw)
    first = sample(body.kernel, body.data, num_draws=200, **kw)
    first.to_netcdf(str(tmp_path / "first.nc"))  # through the file, as a user would
    more = resume(_open(tmp_path / "first.nc"), body.kernel, body.data, 300, progress=False, chunk_size=7)
    assert more.posterior.sizes["draw"] == 500
    _assert_same_groups(full, more)
    assert int(more.attrs["resumed"]) == 1
    assert int(more.attrs["num_draws_requested"]) == 500
    # and once more: 500 + 100 equals a run of 600
    longer = resume(more, body.kernel, body.data, 100, progress=False)
    full600 = sample(body.kernel, body.data, num_draws=600, **kw)
    _assert_same_groups(full600, longer)


@pytest.mark.slow  # the CLI test below compares LDA's posterior_mean too, by default
def test_resume_is_bit_identical_lda_with_means():
    from gibbsjax.datasets import abc_corpus
    from gibbsjax.models import lda

    kernel = lda.partially_collapsed(2, alpha=0.5, eta=0.5)
    d = lda.data(abc_corpus())
    kw = dict(seed=5, num_chains=3, num_warmup=50, progress=False)
    full = sample(kernel, d, num_draws=500, **kw)
    part = resume(sample(kernel, d, num_draws=200, **kw), kernel, d, 300, progress=False)
    _assert_same_groups(full, part)  # posterior_mean too: running sums are saved, not means
    for name in full.sampler_state.data_vars:
        np.testing.assert_array_equal(full.sampler_state[name].values, part.sampler_state[name].values)


def test_resume_finishes_an_interrupted_warmup_and_thins(monkeypatch, body):
    """A run stopped in the warm-up (save_warmup keeps its records) and resumed equals one whole run."""
    import gibbsjax.run.driver as run_module

    kw = dict(seed=2, num_chains=2, num_warmup=40, num_draws=30, thin=3, save_warmup=True, chunk_size=8,
              progress=False)
    full = sample(body.kernel, body.data, **kw)
    real, calls = run_module.to_host, {"n": 0}

    def flaky(out, n):
        calls["n"] += 1
        if calls["n"] == 4:  # the 1st call is draw 0; the 4th is inside the warm-up
            raise KeyboardInterrupt
        return real(out, n)

    monkeypatch.setattr(run_module, "to_host", flaky)
    with pytest.warns(RuntimeWarning, match="interrupted"):
        cut = sample(body.kernel, body.data, **kw)
    monkeypatch.setattr(run_module, "to_host", real)
    assert int(cut.attrs["interrupted"]) == 1 and cut.posterior.sizes["draw"] == 0
    assert 0 < int(cut.sampler_state.attrs["next_sweep"]) < 40
    done = resume(cut, body.kernel, body.data, 30, progress=False)
    _assert_same_groups(full, done, ("posterior", "sample_stats", "warmup_posterior", "warmup_sample_stats"))
    assert int(done.attrs["interrupted"]) == 0


def test_resume_refuses_other_data_or_kernel(body):
    from gibbsjax.models import normal

    first = sample(body.kernel, body.data, seed=0, num_warmup=5, num_draws=5, progress=False)
    other = normal.data(np.asarray(body.data.y) + 1.0)
    with pytest.raises(ValueError, match="data differ"):
        resume(first, body.kernel, other, 5, progress=False)
    with pytest.raises(ValueError, match="made by kernel"):
        resume(first, normal.bivariate(rho=0.5), None, 5, progress=False)
    bare = first.copy()
    del bare["sampler_state"]
    with pytest.raises(ValueError, match="no sampler_state"):
        resume(bare, body.kernel, body.data, 5, progress=False)


# ----------------------------------------------------------------------------- a damaged saved state
def _damaged(idata, var: str, at: tuple, value):
    """A copy of ``idata`` whose ``sampler_state[var]`` holds ``value`` at ``at`` (as an edited file would)."""
    out = idata.copy()
    st = out.sampler_state.copy(deep=True)
    arr = st[var].values.copy()
    if isinstance(value, float) and arr.dtype.kind in "iu":
        arr = arr.astype(np.float64)
    arr[at] = value
    st[var] = (st[var].dims, arr)
    out.sampler_state = st
    return out


def _refused(call, *fragments) -> str:
    with pytest.raises(ValueError) as info:
        call()
    text = str(info.value)
    assert "\n" not in text, text
    assert "cannot be resumed" in text, text
    for fragment in fragments:
        assert fragment in text, (fragment, text)
    return text


@pytest.fixture(scope="module")
def lda_run():
    from gibbsjax.datasets import abc_corpus
    from gibbsjax.models import lda

    kernel, d = lda.partially_collapsed(3, alpha=0.5, eta=0.5), lda.data(abc_corpus())
    return kernel, d, sample(kernel, d, seed=1, num_chains=2, num_warmup=3, num_draws=3, progress=False)


def _never_step(key, state, data):
    raise AssertionError("sampled from a damaged state")


@pytest.mark.parametrize("var, at, value, fragments", [
    ("state__z", (1, 0, 2), 99, ["sampler_state 'state__z'", "0..2", "got 99 at (1, 0, 2)"]),
    ("state__z", (0, 1, 0), -1, ["sampler_state 'state__z'", "got -1 at (0, 1, 0)"]),
    ("state__z", (0, 0, 1), 1.5, ["sampler_state 'state__z'", "1.5", "at (0, 0, 1)", "(chain 0)"]),
    ("state__log_phi", (1, 2, 1), float("nan"), ["sampler_state 'state__log_phi'", "nan at (1, 2, 1)", "(chain 1)"]),
    ("state__log_phi", (0, 1, 2), 5.0, ["sampler_state 'state__log_phi'", "sum to 1", "(0, 1)"]),
    ("acc__topic_word", (1, 0, 0), float("inf"), ["sampler_state 'acc__topic_word'", "inf at (1, 0, 0)"]),
])
def test_damaged_lda_state_is_refused_before_sampling(lda_run, var, at, value, fragments):
    kernel, d, first = lda_run
    bad = _damaged(first, var, at, value)
    _refused(lambda: resume(bad, kernel._replace(step=_never_step), d, 2, progress=False), *fragments)
    assert resume(first, kernel, d, 0, progress=False).posterior.sizes["draw"] == 3  # the undamaged one resumes


def test_damaged_state_of_other_models_names_the_entry(body):
    from gibbsjax.models import bayes_net, naive_bayes
    from gibbsjax.corpus import Corpus

    first = sample(body.kernel, body.data, seed=0, num_chains=2, num_warmup=2, num_draws=2, progress=False)
    _refused(lambda: resume(_damaged(first, "state__sigma2", (1,), -2.0), body.kernel, body.data, 1,
                            progress=False), "sampler_state 'state__sigma2'", "> 0", "got -2 (chain 1)")
    _refused(lambda: resume(_damaged(first, "state__mu", (0,), float("-inf")), body.kernel, body.data, 1,
                            progress=False), "sampler_state 'state__mu'", "-inf at (0,)")
    # labels whose number the data set (Kernel.check_state): naive Bayes with 2 classes
    c = Corpus.from_token_lists([["a", "a"], ["b", "b"], ["a"], ["b"]], labels=[0, 1, -1, -1])
    for kernel, var in ((naive_bayes.dirichlet_multinomial(), "state__labels"),
                        (naive_bayes.uncollapsed(), "state__z")):
        d = naive_bayes.data(c)
        nb = sample(kernel, d, seed=0, num_chains=2, num_warmup=2, num_draws=2, progress=False)
        _refused(lambda: resume(_damaged(nb, var, (1, 3), 2), kernel, d, 1, progress=False),
                 f"sampler_state '{var}'", "0..1", "got 2 at (1, 3)")
        assert resume(nb, kernel, d, 0, progress=False).posterior.sizes["draw"] == 2
    # a categorical variable beyond its cardinality (the network in the data)
    net = bayes_net.network([("A", 2, []), ("B", 3, ["A"])])
    d = bayes_net.data(net, [[0, 1], [-1, 2], [1, -1]])
    kernel = bayes_net.dirichlet_cpts()
    bn = sample(kernel, d, seed=0, num_chains=2, num_warmup=2, num_draws=2, progress=False)
    _refused(lambda: resume(_damaged(bn, "state__x", (0, 2, 0), 2), kernel, d, 1, progress=False),
             "sampler_state 'state__x'", "variable 'A' (column 0) in 0..1", "got 2 at (0, 2, 0)")
    assert resume(bn, kernel, d, 0, progress=False).posterior.sizes["draw"] == 2


def _counting_kernel() -> Kernel:
    """A toy kernel whose state holds assignments and their counts, and checks that they agree."""
    def counts(z):
        return jnp.zeros(3, jnp.int32).at[z].add(1)

    def step(key, s, d):
        z = jax.random.randint(key, (5,), 0, 3, dtype=jnp.int32)
        return {"z": z, "n": counts(z)}

    def check_state(state, data, label=None):
        z, n = np.asarray(state["z"]), np.asarray(state["n"])
        want = np.stack([np.bincount(row, minlength=3) for row in z])
        at = np.argwhere(n != want)
        if at.size:
            c, k = (int(i) for i in at[0])
            raise ValueError(f"{label('n')} holds {int(n[c, k])} at {(c, k)}, but state__z assigns "
                             f"{int(want[c, k])} items to {k}")

    return Kernel(init=lambda key, d: step(key, None, d), step=step, record=lambda s, d: {"n": s["n"]},
                  name="counting", check_state=check_state)


def test_counts_that_disagree_with_the_assignments_are_refused():
    kernel = _counting_kernel()
    first = sample(kernel, None, seed=0, num_chains=2, num_warmup=0, num_draws=2, progress=False)
    n = first.sampler_state["state__n"].values
    _refused(lambda: resume(_damaged(first, "state__n", (1, 2), int(n[1, 2]) + 1), kernel, None, 1, progress=False),
             "sampler_state 'state__n'", f"holds {int(n[1, 2]) + 1} at (1, 2)")
    assert resume(first, kernel, None, 1, progress=False).posterior.sizes["draw"] == 3


def test_cli_resume_of_a_damaged_file_exits_2_naming_the_entry(tmp_path, capsys):
    import arviz as az

    config = tmp_path / "lda.toml"
    config.write_text(textwrap.dedent("""
        [model]
        name = "lda.partially_collapsed"
        K = 3
        [data]
        corpus = "abc"
        [sampler]
        seed = 3
        num_chains = 2
        num_warmup = 2
        num_draws = 2
    """), encoding="utf-8")
    good, bad = tmp_path / "good.nc", tmp_path / "bad.nc"
    assert main(["run", str(config), "--out", str(good), "--no-progress"]) == 0
    idata = az.from_netcdf(str(good))
    idata.sampler_state.load()
    _damaged(idata, "state__z", (0, 0, 1), 99).to_netcdf(str(bad))
    capsys.readouterr()
    before = bad.read_bytes()
    assert main(["resume", str(bad), "--draws", "2", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gibbsjax: error: ") and err.count("\n") == 1, err
    assert "sampler_state 'state__z'" in err and "got 99 at (0, 0, 1)" in err, err
    assert bad.read_bytes() == before  # the file is left as it was


# ----------------------------------------------------------------------------- another float precision
def test_resume_in_another_precision_says_so(tmp_path, capsys):
    """A float32 result resumed with JAX_ENABLE_X64=1, and a float64 one resumed without: one line
    naming both precisions and the setting to resume with, not "data_sha256 does not match"."""
    here = "float64" if jax.config.jax_enable_x64 else "float32"
    there, flag = ("float32", "0") if here == "float64" else ("float64", "1")
    mine = tmp_path / "here.nc"
    assert main(["run", str(CONFIGS / "body-temperature.toml"), "--out", str(mine), "--no-progress",
                 "--draws", "5"]) == 0
    import arviz as az

    old = az.from_netcdf(str(mine))  # a result saved before float_dtype was recorded: told by its arrays
    old.sampler_state.load()
    del old.sampler_state.attrs["float_dtype"]
    old.to_netcdf(str(tmp_path / "old.nc"))
    script = textwrap.dedent(f"""
        import sys
        from gibbsjax.cli import main
        assert main(["run", {str(CONFIGS / "body-temperature.toml")!r}, "--out", "there.nc", "--no-progress",
                     "--draws", "5"]) == 0
        sys.exit(10 * main(["resume", "here.nc", "--draws", "5", "--no-progress"])
                 + main(["resume", "old.nc", "--draws", "5", "--no-progress"]))
    """)
    env = {**_env(), "JAX_ENABLE_X64": flag}
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 22, proc.stderr[-3000:]
    errors = [line for line in proc.stderr.splitlines() if line.startswith("gibbsjax: error:")]
    assert len(errors) == 2, proc.stderr[-3000:]
    for line in errors:
        assert f"sampled in {here}" in line and f"computes in {there}" in line, line
        assert "JAX_ENABLE_X64" in line and "data_sha256" not in line, line
    capsys.readouterr()
    assert main(["resume", str(tmp_path / "there.nc"), "--draws", "5", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"sampled in {there}" in err and f"computes in {here}" in err, err
    assert ("JAX_ENABLE_X64=1" if there == "float64" else "JAX_ENABLE_X64 unset or 0") in err.split("resume it")[1]


# ----------------------------------------------------------------------------- until
def _stuck_kernel() -> Kernel:
    """Chains that never move: each stays at its own starting value (R-hat never comes down)."""
    return Kernel(
        init=lambda key, d: {"x": jax.random.normal(key) * 10.0},
        step=lambda key, s, d: {"x": s["x"] + 1e-3 * jax.random.normal(key)},
        record=lambda s, d: {"x": s["x"]},
        log_joint=lambda s, d: -0.5 * s["x"] ** 2,
        name="stuck",
    )


def test_until_stops_early_when_converged(body):
    idata = sample(body.kernel, body.data, seed=4, num_warmup=100, num_draws=100, until="rhat<1.01,ess>400",
                   max_draws=5000, progress=False)
    n = idata.posterior.sizes["draw"]
    assert n < 5000 and n % 100 == 0
    assert int(idata.attrs["until_met"]) == 1
    # independently: the rule holds on the kept draws, and did not hold 100 draws earlier
    import arviz as az

    assert float(az.rhat(idata.sample_stats["lp"].values)) < 1.01
    for name in ("mu", "sigma2"):
        assert float(az.ess(idata.posterior[name].values, method="bulk")) > 400 or n == 100
    # the same draws as a plain run of that length: until only decides when to stop
    plain = sample(body.kernel, body.data, seed=4, num_warmup=100, num_draws=n, progress=False)
    _assert_same_groups(plain, idata, ("posterior", "sample_stats"))


def test_until_runs_to_the_cap_when_chains_disagree():
    idata = sample(_stuck_kernel(), seed=0, num_chains=4, num_warmup=0, num_draws=50, until="rhat<1.01",
                   max_draws=175, progress=False)
    assert idata.posterior.sizes["draw"] == 175
    assert int(idata.attrs["until_met"]) == 0
    assert "max R-hat" in idata.attrs["until_values"]


def test_until_uses_only_label_invariant_variables():
    """A kernel with label_dims: the rule looks at lp and the variables without those dims."""
    base = _stuck_kernel()

    def record(s, d):
        return {"x": s["x"], "labelled": jnp.stack([s["x"], -s["x"]])}

    kernel = base._replace(record=record, dims={"labelled": ("component",)}, label_dims=("component",),
                           step=lambda key, s, d: {"x": jax.random.normal(key)},
                           log_joint=lambda s, d: -0.5 * s["x"] ** 2)
    idata = sample(kernel, seed=1, num_chains=4, num_warmup=0, num_draws=200, until="rhat<1.05",
                   max_draws=400, progress=False)
    assert int(idata.attrs["until_met"]) == 1
    assert "labelled" not in idata.attrs["until_values"]


@pytest.mark.parametrize("kwargs, match", [
    (dict(until="rhat>1.01"), "R-hat to be large"),
    (dict(until="ess<10"), "ESS to be small"),
    (dict(until="speed<1"), "unknown statistic"),
    (dict(until="rhat<1.01", num_chains=1), "compares chains"),
    (dict(max_draws=10), "give until"),
    (dict(until="rhat<1.01", max_draws=5), "at least num_draws"),
])
def test_until_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        sample(_stuck_kernel(), **{"seed": 0, "num_draws": 10, "progress": False, **kwargs})


def test_settings_take_until():
    s = Settings(num_draws=100, until="rhat<1.01,ess>400", max_draws=1000)
    assert s.until == "rhat<1.01,ess>400" and s.max_draws == 1000


# ----------------------------------------------------------------------------- config and CLI
@pytest.mark.parametrize("which", ["body", pytest.param("lda", marks=pytest.mark.slow),
                                   pytest.param("mixture", marks=pytest.mark.slow)])  # LDA: estimator extend test
def test_cli_resume_is_bit_identical(which, tmp_path, capsys):
    """The body temperature model, LDA and (slow run) a mixture whose postprocess relabels
    every draw, through `gibbsjax run` / `gibbsjax resume`."""
    lda_config = tmp_path / "lda.toml"
    lda_config.write_text(textwrap.dedent("""
        [model]
        name = "lda.partially_collapsed"
        K = 2
        alpha = 0.5
        eta = 0.5
        [data]
        corpus = "abc"
        [sampler]
        seed = 3
        num_chains = 2
        num_warmup = 30
        num_draws = 500
    """), encoding="utf-8")
    config = {"body": CONFIGS / "body-temperature.toml", "lda": lda_config,
              "mixture": CONFIGS / "abc-topics.toml"}[which]
    for config in (config,):
        one, two = tmp_path / f"{config.stem}-500.nc", tmp_path / f"{config.stem}-200.nc"
        assert main(["run", str(config), "--out", str(one), "--no-progress", "--draws", "500"]) == 0
        assert main(["run", str(config), "--out", str(two), "--no-progress", "--draws", "200"]) == 0
        assert main(["resume", str(two), "--draws", "300", "--no-progress"]) == 0
        out = capsys.readouterr().out
        assert f"saved {two}" in out
        a, b = _open(one), _open(two)
        assert b.posterior.sizes["draw"] == 500
        groups = [g for g in a.groups() if g not in ("sampler_state",)]
        _assert_same_groups(a, b, groups)


def test_cli_until(tmp_path, capsys):
    out = tmp_path / "u.nc"
    assert main(["run", str(CONFIGS / "body-temperature.toml"), "--out", str(out), "--no-progress",
                 "--draws", "200", "--until", "rhat<1.01,ess>400", "--max-draws", "4000"]) == 0
    text = capsys.readouterr().out
    assert "until rhat<1.01,ess_bulk>400: met after" in text
    assert _open(out).posterior.sizes["draw"] < 4000
    bad = tmp_path / "bivariate.toml"
    bad.write_text('[model]\nname = "normal.bivariate"\nrho = 0.999\n[sampler]\nseed = 1\nnum_warmup = 0\n'
                   "num_draws = 50\n", encoding="utf-8")
    assert main(["run", str(bad), "--out", str(tmp_path / "b.nc"), "--no-progress",
                 "--until", "rhat<1.001,ess>100000", "--max-draws", "120"]) == 0
    text = capsys.readouterr().out
    assert "NOT met; stopped at the cap of 120 draws" in text
    assert _open(tmp_path / "b.nc").posterior.sizes["draw"] == 120


def test_resume_result_postprocesses_only_with_zero_draws(tmp_path):
    config = load_config(CONFIGS / "abc-topics.toml")
    first = run_config(config, num_draws=40, num_warmup=20, progress=False)
    again = resume_result(first, 0, progress=False)
    _assert_same_groups(first, again, ("posterior", "sample_stats", "estimates"))


# ----------------------------------------------------------------------------- subprocesses
def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["JAX_PLATFORMS"] = "cpu"
    env["PYTHONUNBUFFERED"] = "1"
    env["GIBBSJAX_NO_CACHE"] = "1"
    env.pop("PYTHONWARNINGS", None)
    return env


def _wait_for(proc, path: Path, marker: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
        if marker in text:
            return
        if proc.poll() is not None:
            pytest.fail(f"process ended (rc={proc.returncode}) before {marker!r}: {text[-2000:]}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"no {marker!r} after {timeout} s: {text[-2000:]}")
        time.sleep(0.05)


def default_sigint() -> None:
    """In a child before it starts: SIGINT to its default, so that Python turns it into
    KeyboardInterrupt.  A suite started in the background (``cmd &`` in a script, as CI may)
    runs with SIGINT ignored, which children inherit, and a gibbsjax started that way rightly
    keeps ignoring it outside sampling."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(args, tmp_path, *, script: str | None = None):
    log = tmp_path / "stderr.txt"
    cmd = [sys.executable, "-c", script] if script else [sys.executable, "-m", "gibbsjax", *map(str, args)]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=_env(), stdout=subprocess.PIPE,
                            stderr=open(log, "wb"),  # noqa: SIM115 (closed with the process)
                            preexec_fn=default_sigint)
    return proc, log


def _signal_when(proc, log: Path, marker: str, sig, *, delay: float = 0.0) -> tuple[int, str]:
    """Send ``sig`` once ``marker`` is in the process's stderr; its exit status and stderr."""
    try:
        _wait_for(proc, log, marker, TIMEOUT)
        time.sleep(delay)
        proc.send_signal(sig)
        # generous under load: a process that ignored the signal would still be caught by its exit status
        rc = proc.wait(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    return rc, log.read_text(encoding="utf-8", errors="replace")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigterm_mid_sampling_saves_finished_draws(tmp_path):
    config = tmp_path / "long.toml"
    text = (CONFIGS / "body-temperature.toml").read_text(encoding="utf-8")
    config.write_text(text.replace("num_draws = 2000", "num_draws = 10000000").replace("thin = 1", "thin = 100\nlog_likelihood = false"),
                      encoding="utf-8")
    out = tmp_path / "long.nc"
    proc, log = _start(["run", config, "--out", out, "--chunk-size", "5"], tmp_path)
    rc, stderr = _signal_when(proc, log, "sampling", signal.SIGTERM, delay=1.0)
    assert rc == 143, stderr
    assert "Traceback" not in stderr
    assert "run interrupted (SIGTERM): kept" in stderr and "gibbsjax resume" in stderr
    idata = _open(out)
    assert int(idata.attrs["interrupted"]) == 1 and idata.attrs["interrupted_by"] == "SIGTERM"
    assert 0 < idata.posterior.sizes["draw"] < 10_000_000
    assert not list(tmp_path.glob(".*.partial"))


_SLOW_POSTPROCESS = """
import sys, time
from gibbsjax import config as c
from gibbsjax.spec import ModelSpec
spec = c.get_spec("normal.semiconjugate")
def slow(idata, kernel, data, extras):
    print("postprocessing now", file=sys.stderr, flush=True)
    time.sleep(60)
    return idata
c.register_model(ModelSpec(spec.name, spec.factory, spec.make_data, slow, spec.report), replace=True)
from gibbsjax.cli import main
sys.exit(main(sys.argv[1:] or {args!r}))
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigint_during_postprocessing_keeps_raw_draws(tmp_path):
    out = tmp_path / "raw.nc"
    args = ["run", str(CONFIGS / "body-temperature.toml"), "--out", str(out), "--no-progress", "--draws", "300",
            "--warmup", "100"]
    proc, log = _start(None, tmp_path, script=_SLOW_POSTPROCESS.format(args=args))
    rc, stderr = _signal_when(proc, log, "postprocessing now", signal.SIGINT)
    assert rc == 130, stderr
    assert "interrupted during post-processing: the raw draws (300 draws per chain (4 chains))" in stderr
    assert "gibbsjax resume" in stderr and "--draws 0" in stderr
    idata = _open(out)
    assert idata.posterior.sizes["draw"] == 300 and int(idata.attrs["postprocessed"]) == 0
    assert int(idata.attrs["interrupted"]) == 0
    assert not list(tmp_path.glob(".*.partial"))


def _unwritable_folder(tmp_path: Path) -> Path:
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return Path("/sys")  # root writes anywhere a mode allows; sysfs takes no new files
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    return folder


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_unwritable_output_fails_fast_before_sampling(tmp_path):
    folder = _unwritable_folder(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "gibbsjax", "run", str(CONFIGS / "lda-demo.toml"), "--out",
                           str(folder / "x.nc")], cwd=tmp_path, env=_env(), capture_output=True, text=True,
                          timeout=TIMEOUT)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gibbsjax: error: cannot write to"), proc.stderr
    assert "sweep" not in proc.stderr  # no progress bar: nothing was sampled


def test_stale_partial_file_is_removed(tmp_path, capsys):
    out = tmp_path / "r.nc"
    stale = tmp_path / ".r.nc.partial"
    stale.write_bytes(b"left by a killed save")
    assert main(["run", str(CONFIGS / "body-temperature.toml"), "--out", str(out), "--no-progress",
                 "--draws", "50", "--warmup", "20"]) == 0
    assert out.exists() and not stale.exists()


def test_full_disk_is_found_before_sampling(tmp_path, monkeypatch, capsys):
    import shutil
    from collections import namedtuple

    import gibbsjax.run.driver as run_module

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**9, 10**9 - 1000, 1000))
    monkeypatch.setattr(run_module, "drive", lambda *a, **k: pytest.fail("sampling started"))
    status = main(["run", str(CONFIGS / "body-temperature.toml"), "--out", str(tmp_path / "x.nc"), "--no-progress"])
    assert status == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "MiB on disk" in err[0] and "0 MiB free" in err[0], err


def test_lda_estimator_extend_is_bit_identical():
    import warnings

    from gibbsjax import LDA
    from gibbsjax.datasets import abc_corpus

    # chunks of 4 sweeps, what the 80-draw fit and the extend by 50 take by default: the 30-draw fit
    # (default 2) then runs the same compiled sweep; the extend's chunks still start in the middle
    # of one of the single fit's (at draw 30)
    kw = dict(num_topics=2, alpha=0.5, eta=0.5, num_chains=2, num_warmup=30, seed=1, progress=False, chunk_size=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # chains may disagree on 12 documents
        one = LDA(num_draws=80, **kw).fit(abc_corpus())
        two = LDA(num_draws=30, **kw).fit(abc_corpus()).extend(50)
    _assert_same_groups(one.idata_, two.idata_, ("posterior", "sample_stats", "posterior_mean", "raw_posterior"))
    np.testing.assert_array_equal(one.topic_word_, two.topic_word_)
    np.testing.assert_array_equal(one.doc_topic_, two.doc_topic_)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_run_started_with_sigint_ignored_keeps_ignoring_it(tmp_path):
    """A background job of a script (``gibbsjax run ... &``) starts with SIGINT ignored: a Ctrl-C
    meant for the script does not stop its sampling; SIGTERM still does."""
    config = tmp_path / "long.toml"
    text = (CONFIGS / "body-temperature.toml").read_text(encoding="utf-8")
    config.write_text(text.replace("num_draws = 2000", "num_draws = 10000000").replace("thin = 1", "thin = 100\nlog_likelihood = false"),
                      encoding="utf-8")
    out = tmp_path / "long.nc"
    log = tmp_path / "stderr.txt"
    proc = subprocess.Popen([sys.executable, "-m", "gibbsjax", "run", str(config), "--out", str(out),
                             "--chunk-size", "5"], cwd=tmp_path, env=_env(), stdout=subprocess.PIPE,
                            stderr=open(log, "wb"),  # noqa: SIM115 (closed with the process)
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        _wait_for(proc, log, "sampling", TIMEOUT)
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        time.sleep(3.0)
        assert proc.poll() is None, log.read_text(encoding="utf-8", errors="replace")  # still sampling
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=180)
    stderr = log.read_text(encoding="utf-8", errors="replace")
    assert rc == 143 and "run interrupted (SIGTERM): kept" in stderr, stderr
    assert "SIGINT" not in stderr
