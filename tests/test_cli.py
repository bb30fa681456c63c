"""The ``gibbsjax`` command line, mostly in subprocesses (``python -m gibbsjax``).

Subprocesses each pay JAX's import and compile time, so there are few of them:
one real run shared by several tests, the error cases, and two Ctrl-C runs.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from gibbsjax import __version__
from gibbsjax.cli import main

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs"
TIMEOUT = 120
CACHE_DIR = Path(tempfile.mkdtemp(prefix="gibbsjax-xla-"))


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["JAX_PLATFORMS"] = "cpu"
    env["PYTHONUNBUFFERED"] = "1"
    env["GIBBSJAX_CACHE_DIR"] = str(CACHE_DIR)
    env["JAX_COMPILATION_CACHE_DIR"] = str(CACHE_DIR)
    env.pop("GIBBSJAX_NO_CACHE", None)
    env.pop("PYTHONWARNINGS", None)
    return env


def gibbsjax(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gibbsjax", *map(str, args)],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def _open(path):
    import arviz as az

    return az.from_netcdf(path)


# ----------------------------------------------------------------------------- a real run
@pytest.fixture(scope="module")
def body_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("run")
    out = tmp / "tmp.nc"
    proc = gibbsjax("run", CONFIGS / "body-temperature.toml", "--out", out, "--no-progress", cwd=tmp)
    return proc, out


def test_run_exits_0_and_prints_summary(body_run):
    proc, out = body_run
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stdout.splitlines()
    header = lines[0].split()
    for col in ("mean", "sd", "hdi_3%", "hdi_97%", "mcse_mean", "mcse_sd", "ess_bulk", "ess_tail", "r_hat"):
        assert col in header, proc.stdout
    rows = {line.split()[0]: line.split() for line in lines[1:] if line.strip()}
    assert {"mu", "sigma2", "lp"} <= set(rows)
    assert abs(float(rows["mu"][1]) - 98.25) < 0.02
    assert f"saved {out}" in proc.stdout


def test_run_keeps_compiled_code_in_the_cache(body_run):
    proc, _ = body_run
    assert proc.returncode == 0, proc.stderr
    assert any(CACHE_DIR.iterdir()), "gibbsjax run should fill the compilation cache"


def test_run_result_file(body_run):
    proc, out = body_run
    idata = _open(out)
    assert idata.posterior.sizes["chain"] == 4
    assert idata.posterior.sizes["draw"] == 2000
    assert idata.attrs["model"] == "normal.semiconjugate"
    assert float(idata.attrs["model_sigma0"]) == 0.5
    assert int(idata.attrs["interrupted"]) == 0
    assert int(idata.attrs["seed"]) == 2026
    assert "lp" in idata.sample_stats


def test_shipped_body_temperature_config_converges(body_run):
    """The config's warm-up/draws are enough: bulk ESS > 400 and R-hat < 1.01, comfortably."""
    import arviz as az

    idata = _open(body_run[1])
    table = az.summary(idata, var_names=["mu", "sigma2"])
    assert (table["ess_bulk"] > 800).all(), table
    assert (table["r_hat"] < 1.01).all(), table
    assert abs(table.loc["mu", "sd"] - 0.064) < 0.01


def test_summary_command(body_run):
    _, out = body_run
    proc = gibbsjax("summary", out, cwd=out.parent)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    for expected in ("model: normal.semiconjugate", "seed: 2026", "chains: 4", "draws per chain: 2000", "interrupted: 0"):
        assert expected in text, text
    rows = [line.split()[0] for line in text.splitlines() if line.strip()]
    assert "mu" in rows and "sigma2" in rows and "lp" in rows


@pytest.mark.parametrize("kind", ["trace", "rank"])
def test_plot_command(body_run, tmp_path, capsys, kind):
    _, out = body_run
    fig = tmp_path / f"fig_{kind}.png"
    assert main(["plot", str(out), "--kind", kind, "-o", str(fig), "--var", "mu", "sigma2"]) == 0
    assert fig.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert fig.stat().st_size > 5000
    assert str(fig) in capsys.readouterr().out


def test_plot_default_name(body_run, tmp_path):
    _, out = body_run
    local = tmp_path / "res.nc"
    local.write_bytes(out.read_bytes())
    assert main(["plot", str(local)]) == 0
    assert (tmp_path / "res_trace.png").exists()


def test_plot_unknown_variable(body_run, capsys):
    _, out = body_run
    assert main(["plot", str(out), "--var", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gibbsjax: error: unknown variable 'nope'") and err.count("\n") == 1


# ----------------------------------------------------------------------------- errors
def _assert_one_line_error(proc, *fragments):
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("gibbsjax: error: ")
    for f in fragments:
        assert f in lines[0], lines[0]


def _body_config(tmp_path: Path, old: str = "", new: str = "", name: str = "job.toml") -> Path:
    text = (CONFIGS / "body-temperature.toml").read_text(encoding="utf-8")
    if old:
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_error_missing_config(tmp_path):
    _assert_one_line_error(gibbsjax("run", "no-such.toml", cwd=tmp_path), "not found", "no-such.toml")


def test_error_malformed_toml(tmp_path):
    path = _body_config(tmp_path, "mu0 = 98.6", "mu0 = = 98.6")
    _assert_one_line_error(gibbsjax("run", path, cwd=tmp_path), "invalid TOML")


def test_error_unknown_model(tmp_path):
    path = _body_config(tmp_path, '"normal.semiconjugate"', '"normal.fancy"')
    _assert_one_line_error(gibbsjax("run", path, cwd=tmp_path), "normal.fancy", "normal.semiconjugate")


def test_error_bad_hyperparameter(tmp_path):
    path = _body_config(tmp_path, "sigma0 = 0.5", "sigma0 = -1")
    proc = gibbsjax("run", path, cwd=tmp_path)
    _assert_one_line_error(proc, "sigma0")
    assert not (tmp_path / "body-temperature.nc").exists()


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["summary", "missing.nc"], "result file not found"),
        (["plot", "missing.nc"], "result file not found"),
        (["run", "{cfg}", "--out", "no/such/dir/x.nc"], "output folder does not exist"),
        (["summary", "{cfg}"], "cannot read"),
    ],
)
def test_errors_in_process(tmp_path, monkeypatch, capsys, argv, fragment):
    monkeypatch.chdir(tmp_path)
    cfg = _body_config(tmp_path)
    argv = [a.replace("{cfg}", str(cfg)) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("gibbsjax: error: ") and err.count("\n") == 1 and fragment in err, err


def test_version_and_help(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert __version__ in capsys.readouterr().out
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for command in ("run", "summary", "plot"):
        assert command in out


# ----------------------------------------------------------------------------- one chain
def test_single_chain_run_in_process(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "one.toml"
    config.write_text(
        textwrap.dedent(
            """
            [model]
            name = "normal.bivariate"
            rho = 0.5
            [sampler]
            seed = 3
            num_chains = 1
            num_warmup = 50
            num_draws = 200
            """
        ),
        encoding="utf-8",
    )
    assert main(["run", str(config), "--no-progress"]) == 0
    out = capsys.readouterr().out
    header = out.splitlines()[0].split()
    assert "ess_bulk" in header and "r_hat" not in header
    assert "single chain" in out
    idata = _open(tmp_path / "one.nc")  # default name: the config's, in the cwd
    assert idata.posterior.sizes["chain"] == 1


# ----------------------------------------------------------------------------- Ctrl-C
class _StderrReader:
    """Collects a subprocess's stderr in a thread (tqdm writes \\r, not newlines)."""

    def __init__(self, proc):
        self.proc = proc
        self.chunks: list[bytes] = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        fd = self.proc.stderr.fileno()
        while True:
            chunk = os.read(fd, 4096)
            if not chunk:
                return
            self.chunks.append(chunk)

    @property
    def text(self) -> str:
        return b"".join(self.chunks).decode("utf-8", "replace")

    def wait_for(self, marker: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while marker not in self.text:
            if self.proc.poll() is not None:
                pytest.fail(f"process ended (rc={self.proc.returncode}) before {marker!r}: {self.text}")
            if time.monotonic() > deadline:
                self.proc.kill()
                pytest.fail(f"no {marker!r} in stderr after {timeout} s: {self.text[-2000:]}")
            time.sleep(0.05)


def _interrupted_run(tmp_path, *, num_warmup: int, num_draws: int, thin: int, marker: str, extra_wait: float):
    config = _body_config(tmp_path, name="long.toml")
    text = config.read_text(encoding="utf-8")
    text = text.replace("num_warmup = 1000", f"num_warmup = {num_warmup}")
    text = text.replace("num_draws = 2000", f"num_draws = {num_draws}")
    # the pointwise log likelihood of 10^7 draws x 130 observations would not fit: left out
    text = text.replace("thin = 1", f"thin = {thin}\nlog_likelihood = false")
    config.write_text(text, encoding="utf-8")
    out = tmp_path / "long.nc"
    proc = subprocess.Popen(
        [sys.executable, "-m", "gibbsjax", "run", str(config), "--out", str(out), "--chunk-size", "5"],
        cwd=tmp_path,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as in test_resume.default_sigint
    )
    reader = _StderrReader(proc)
    try:
        reader.wait_for(marker, TIMEOUT)
        time.sleep(extra_wait)
        assert proc.poll() is None, "the run finished before it could be interrupted"
        proc.send_signal(signal.SIGINT)
        try:
            rc = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            # Python drops a KeyboardInterrupt that lands in a gc callback ("Exception
            # ignored in _xla_gc_callback"), rarely; a user would press Ctrl-C again.
            proc.send_signal(signal.SIGINT)
            rc = proc.wait(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.thread.join(timeout=10)
    stdout = proc.stdout.read().decode("utf-8", "replace")
    proc.stdout.close()
    proc.stderr.close()
    return rc, stdout, reader.text, out


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process is POSIX")
def test_sigint_keeps_finished_draws(tmp_path):
    num_draws = 10_000_000  # x thin 100: 10^9 sweeps, half an hour; Ctrl-C comes within seconds
    rc, stdout, stderr, out = _interrupted_run(
        tmp_path, num_warmup=100, num_draws=num_draws, thin=100, marker="sampling", extra_wait=1.0
    )
    assert rc == 130, stderr
    assert "Traceback" not in stderr
    assert "run interrupted (SIGINT): kept" in stderr and "draws per chain" in stderr
    assert "gibbsjax resume" in stderr
    idata = _open(out)
    assert int(idata.attrs["interrupted"]) == 1
    n = idata.posterior.sizes["draw"]
    assert 0 < n < num_draws
    assert idata.posterior.sizes["chain"] == 4
    assert f"kept {n} of {num_draws} draws per chain" in stderr
    assert np.isfinite(idata.posterior["mu"].values).all()
    assert "mu" in stdout  # the summary of what was kept


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process is POSIX")
def test_sigint_before_any_draw_keeps_the_warmup_state(tmp_path):
    """Stopped in the warm-up: no draw yet, but the warm-up's state is saved for resume (issue 21)."""
    rc, stdout, stderr, out = _interrupted_run(
        tmp_path, num_warmup=100_000_000, num_draws=10, thin=1, marker="warm-up", extra_wait=0.2
    )
    assert rc == 130, stderr
    assert "Traceback" not in stderr
    idata = _open(out)
    done = int(idata.sampler_state.attrs["next_sweep"])
    assert idata.posterior.sizes["draw"] == 0 and 0 < done < 100_000_000
    last = stderr.replace("\r", "\n").strip().splitlines()[-1]
    assert last.startswith(f"gibbsjax: run interrupted (SIGINT) during warm-up after {done} of 100000000 warm-up "
                           "sweeps: no posterior draws yet; saved the warm-up state (sampler_state, 4 chains)")
    assert f"gibbsjax resume {out} --draws 10" in last


# ----------------------------------------------------------------------------- reliability (issue 11)
def test_lda_demo_with_200000_chains_is_refused_before_sampling(tmp_path):
    """Refused before anything is compiled or sampled: one line, no progress bar, no file (the
    suite asserts behaviour, never wall-clock time)."""
    proc = gibbsjax("run", CONFIGS / "lda-demo.toml", "--chains", "200000", "--out", tmp_path / "x.nc",
                    cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    _assert_one_line_error(proc, "needs at least", "GiB of host RAM", "available", "fewer chains")
    assert "sweep" not in proc.stderr and "warm-up" not in proc.stderr  # no progress bar: nothing was sampled
    assert not (tmp_path / "x.nc").exists()


def test_out_equal_to_the_config_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    cfg = _body_config(tmp_path)
    before = cfg.read_bytes()
    for out in (str(cfg), "job.toml", f"./{cfg.name}"):
        assert main(["run", str(cfg), "--out", out, "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "is the config file itself" in err, err
    assert cfg.read_bytes() == before


def test_chains_draws_warmup_overrides(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "biv.toml"
    config.write_text('[model]\nname = "normal.bivariate"\n[sampler]\nseed = 1\n', encoding="utf-8")
    argv = ["run", str(config), "--chains", "3", "--warmup", "0", "--draws", "7", "--no-progress"]
    assert main(argv) == 0
    capsys.readouterr()
    idata = _open(tmp_path / "biv.nc")
    assert dict(idata.posterior.sizes)["chain"] == 3 and dict(idata.posterior.sizes)["draw"] == 7
    assert int(idata.attrs["num_warmup"]) == 0
    with pytest.raises(SystemExit):  # argparse: the seed range
        main(["run", str(config), "--seed", str(2**32)])
    assert "[0, 2**32)" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["model_attrs", "string_variable"])
def test_summary_of_a_foreign_file_is_one_line(tmp_path, monkeypatch, capsys, kind):
    import arviz as az
    import xarray as xr

    monkeypatch.chdir(tmp_path)
    x = np.random.default_rng(0).normal(size=(2, 10))
    idata = az.from_dict(posterior={"x": x})
    if kind == "model_attrs":
        idata.attrs["model"] = "lda"  # a registered model whose report expects its own variables
        idata.posterior.attrs["model"] = "lda"
    else:
        idata.posterior["s"] = xr.DataArray(np.full((2, 10), "a"), dims=("chain", "draw"))
    idata.to_netcdf(str(tmp_path / "foreign.nc"))
    assert main(["summary", str(tmp_path / "foreign.nc")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gibbsjax: error: ") and err.count("\n") == 1, err
    assert "gibbsjax result" in err and "Traceback" not in err


def test_data_file_error_does_not_echo_the_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cr3t:x:0:0:hidden\nmore:lines\n", encoding="utf-8")
    cfg = tmp_path / "job.toml"
    cfg.write_text(
        f'[model]\nname = "normal.semiconjugate"\n[data]\nfile = "{secret}"\n[sampler]\nnum_draws = 5\n',
        encoding="utf-8",
    )
    assert main(["run", str(cfg), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "column 1 of 1" in err and "s3cr3t" not in err and "hidden" not in err, err
