"""What gibbsjax may write (issue 21): never a file a run reads, never anything but a
regular file, never someone else's file without ``--force`` / ``overwrite=True``, and
never half a file (:mod:`gibbsjax.outputs`).

Refusals come before any sampling, so most tests call ``gibbsjax.cli.main`` in this
process and sample nothing; a few share one tiny real run.
"""

from __future__ import annotations

import os
import signal
import stat
import sys
from pathlib import Path

import numpy as np
import pytest

from gibbsjax import outputs
from gibbsjax.cli import main
from gibbsjax.outputs import OutputError, SaveInterrupted, check_output, is_gibbsjax_result, write_atomic

POSIX = pytest.mark.skipif(sys.platform == "win32", reason="POSIX links, fifos and signals")
LDAC = "2 0:2 2:1\n1 1:3\n3 0:1 1:1 2:1\n"
VOCAB = "apple\nbanana\ncherry\n"
TINY = ["--chains", "2", "--warmup", "3", "--draws", "4", "--no-progress"]


@pytest.fixture(autouse=True)
def _no_cache(monkeypatch):
    monkeypatch.setenv("GIBBSJAX_NO_CACHE", "1")


def _lda_job(folder: Path, output: str | None = None, data: str | None = None) -> Path:
    """An LDA config reading ``victim.ldac`` and ``words.txt`` beside it."""
    (folder / "victim.ldac").write_text(LDAC, encoding="utf-8")
    (folder / "words.txt").write_text(VOCAB, encoding="utf-8")
    data = data or 'file = "victim.ldac"\nformat = "ldac"\nvocab = "words.txt"'
    text = f'[model]\nname = "lda.collapsed"\nK = 2\n[data]\n{data}\n[sampler]\nseed = 1\n'
    if output is not None:
        text += f'[output]\npath = "{output}"\n'
    cfg = folder / "job.toml"
    cfg.write_text(text, encoding="utf-8")
    return cfg


def _csv_job(folder: Path) -> Path:
    """A tiny normal model reading ``x.csv``: quick to sample."""
    (folder / "x.csv").write_text("x\n98.1\n98.6\n97.9\n99.0\n98.4\n", encoding="utf-8")
    cfg = folder / "csv.toml"
    cfg.write_text('[model]\nname = "normal.semiconjugate"\nmu0 = 98.6\nsigma0 = 0.5\na0 = 0.001\nb0 = 0.001\n'
                   '[data]\nfile = "x.csv"\ncolumn = "x"\n[sampler]\nseed = 3\n', encoding="utf-8")
    return cfg


def _refused(capsys, argv, *fragments) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("gibbsjax: error: "), err
    for f in fragments:
        assert f in err, err
    return err


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ----------------------------------------------------------------------------- files the run reads
def test_output_path_equal_to_the_data_file_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    cfg = _lda_job(tmp_path, output="victim.ldac")  # the audit's case: exit 0, the corpus replaced
    before = _snapshot(tmp_path)
    _refused(capsys, ["run", str(cfg)], "victim.ldac", "the [data] file itself", "never replaces a file it reads")
    _refused(capsys, ["run", str(cfg), "--force"], "the [data] file itself")  # --force does not allow it
    assert _snapshot(tmp_path) == before


@POSIX
@pytest.mark.parametrize("how", ["symlink", "hardlink", "spelling"])
def test_other_names_of_an_input_are_refused(tmp_path, monkeypatch, capsys, how):
    monkeypatch.chdir(tmp_path)
    cfg = _lda_job(tmp_path)
    out = tmp_path / "alias.nc"
    if how == "symlink":
        out.symlink_to(tmp_path / "victim.ldac")
    elif how == "hardlink":
        os.link(tmp_path / "victim.ldac", out)
    else:
        (tmp_path / "sub").mkdir()
        out = Path("sub/../victim.ldac")
    before = _snapshot(tmp_path)
    _refused(capsys, ["run", str(cfg), "--out", str(out), "--force"], "the [data] file itself")
    assert _snapshot(tmp_path) == before
    assert (tmp_path / "victim.ldac").read_text(encoding="utf-8") == LDAC


@POSIX
def test_vocabulary_and_symlinked_config_are_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    cfg = _lda_job(tmp_path)
    (tmp_path / "cfg-link.nc").symlink_to(cfg)
    before = _snapshot(tmp_path)
    _refused(capsys, ["run", str(cfg), "--out", "words.txt", "--force"], "the [data] vocab itself")
    _refused(capsys, ["run", str(cfg), "--out", "cfg-link.nc", "--force"], "is the config file itself")
    assert _snapshot(tmp_path) == before


def test_output_inside_a_data_folder_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("apple banana apple cherry", encoding="utf-8")
    (docs / "b.txt").write_text("banana cherry cherry apple", encoding="utf-8")
    cfg = _lda_job(tmp_path, data='file = "docs"\nformat = "folder"')
    for out in ("docs/result.nc", "docs/a.txt"):
        _refused(capsys, ["run", str(cfg), "--out", out, "--force"], "inside the [data] file", "a folder the run reads")
    assert sorted(p.name for p in docs.iterdir()) == ["a.txt", "b.txt"]


# ----------------------------------------------------------------------------- someone else's file
def test_an_existing_file_that_is_not_a_result_needs_force(tmp_path, monkeypatch, capsys):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    precious = tmp_path / "precious.txt"
    precious.write_text("my thesis", encoding="utf-8")
    cfg = _lda_job(work, output="../precious.txt")
    _refused(capsys, ["run", str(cfg)], "precious.txt", "is not a gibbsjax result", "--force")
    assert precious.read_text(encoding="utf-8") == "my thesis"


def test_force_replaces_a_foreign_file_and_a_rerun_replaces_its_own_result(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    cfg = _csv_job(tmp_path)
    out = tmp_path / "r.nc"
    out.write_text("someone else's", encoding="utf-8")
    _refused(capsys, ["run", str(cfg), "--out", str(out), *TINY], "is not a gibbsjax result")
    assert main(["run", str(cfg), "--out", str(out), "--force", *TINY]) == 0
    assert is_gibbsjax_result(out)
    assert main(["run", str(cfg), "--out", str(out), "--seed", "4", *TINY]) == 0  # our own result: no --force
    assert is_gibbsjax_result(out)
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left
    capsys.readouterr()


# ----------------------------------------------------------------------------- not a regular file
@POSIX
def test_a_fifo_a_device_and_a_directory_are_never_written(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    cfg = _lda_job(tmp_path)
    fifo = tmp_path / "pipe.nc"
    os.mkfifo(fifo)
    _refused(capsys, ["run", str(cfg), "--out", str(fifo), "--force"], "is a fifo", "only regular files")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    (tmp_path / "adir").mkdir()
    _refused(capsys, ["run", str(cfg), "--out", "adir", "--force"], "is a directory")
    device = tmp_path / "null"  # a private copy of /dev/null: the real one must never be at risk here
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, OSError):
        return  # not root: no device to try
    _refused(capsys, ["run", str(cfg), "--out", str(device), "--force"], "is a character device")
    assert stat.S_ISCHR(os.stat(device).st_mode)
    (tmp_path / "link.nc").symlink_to(device)
    _refused(capsys, ["run", str(cfg), "--out", "link.nc", "--force"], "is a character device")
    assert stat.S_ISCHR(os.stat(device).st_mode)


@POSIX
def test_write_atomic_refuses_a_device_that_appeared_after_the_check(tmp_path):
    fifo = tmp_path / "late.nc"
    os.mkfifo(fifo)
    with pytest.raises(OutputError, match="fifo"):
        write_atomic(fifo, lambda tmp: tmp.write_text("x"))
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["late.nc"]


# ----------------------------------------------------------------------------- recognising a result
def test_is_gibbsjax_result_never_fails_on_garbage(tmp_path):
    import xarray as xr

    cases = {
        "empty": b"",
        "text": b"hello",
        "hdf5-signature-then-garbage": b"\x89HDF\r\n\x1a\n" + bytes(range(256)) * 4,
    }
    for name, content in cases.items():
        (tmp_path / name).write_bytes(content)
        assert not is_gibbsjax_result(tmp_path / name), name
    xr.Dataset({"v": ("x", np.arange(3))}).to_netcdf(tmp_path / "foreign.nc", engine="h5netcdf")
    assert not is_gibbsjax_result(tmp_path / "foreign.nc")  # NetCDF, but not ours
    xr.Dataset({"v": ("x", np.arange(3))}, attrs={"gibbsjax_kernel": "demo"}).to_netcdf(
        tmp_path / "ours.nc", engine="h5netcdf")
    assert is_gibbsjax_result(tmp_path / "ours.nc")
    assert not is_gibbsjax_result(tmp_path)
    assert not is_gibbsjax_result(tmp_path / "missing.nc")


def test_an_empty_file_may_be_replaced_without_force(tmp_path):
    (tmp_path / "touched.nc").write_bytes(b"")
    assert check_output(tmp_path / "touched.nc") == (tmp_path / "touched.nc").resolve()
    (tmp_path / "full.nc").write_bytes(b"x")
    with pytest.raises(OutputError, match="overwrite=True"):
        check_output(tmp_path / "full.nc", force_hint="overwrite=True")
    assert check_output(tmp_path / "full.nc", force=True).name == "full.nc"
    with pytest.raises(OutputError, match="output folder does not exist"):
        check_output(tmp_path / "nowhere" / "r.nc")
    with pytest.raises(OutputError, match="a folder; give a file name"):
        check_output(f"{tmp_path}/newdir/")  # not a file called "newdir"


# ----------------------------------------------------------------------------- resume and plot
@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """One tiny real run: (folder, config, result)."""
    folder = tmp_path_factory.mktemp("run")
    cwd = os.getcwd()
    os.environ["GIBBSJAX_NO_CACHE"] = "1"
    try:
        os.chdir(folder)
        cfg = _csv_job(folder)
        assert main(["run", str(cfg), "--out", "r.nc", *TINY]) == 0
    finally:
        os.chdir(cwd)
    return folder, cfg, folder / "r.nc"


def test_resume_never_writes_over_what_it_reads(run_dir, monkeypatch, capsys):
    folder, cfg, result = run_dir
    monkeypatch.chdir(folder)
    capsys.readouterr()
    before = _snapshot(folder)
    _refused(capsys, ["resume", str(result), "--draws", "1", "--out", "x.csv", "--force"], "the [data] file itself")
    _refused(capsys, ["resume", str(result), "--draws", "1", "--out", str(cfg), "--force"], "the config file itself")
    (folder / "notes.txt").write_text("mine", encoding="utf-8")
    _refused(capsys, ["resume", str(result), "--draws", "1", "--out", "notes.txt"], "is not a gibbsjax result")
    assert _snapshot(folder) == {**before, "notes.txt": b"mine"}


def test_plot_never_writes_over_what_it_reads_or_someone_elses_image(run_dir, monkeypatch, capsys):
    folder, cfg, result = run_dir
    monkeypatch.chdir(folder)
    capsys.readouterr()
    before = result.read_bytes()
    _refused(capsys, ["plot", str(result), "--kind", "lp", "-o", str(result), "--force"], "the result being plotted")
    assert result.read_bytes() == before
    photo = folder / "photo.png"
    photo.write_bytes(b"\x89PNG\r\n\x1a\nnot drawn by gibbsjax")
    _refused(capsys, ["plot", str(result), "--kind", "lp", "-o", str(photo)], "is not a gibbsjax plot", "--force")
    assert photo.read_bytes() == b"\x89PNG\r\n\x1a\nnot drawn by gibbsjax"
    _refused(capsys, ["plot", str(result), "--kind", "lp", "-o", "fig.nc"], "'nc' is not supported")
    for _ in range(2):  # the second time the image is ours: replaced without --force
        assert main(["plot", str(result), "--kind", "lp", "-o", "fig.png"]) == 0
        assert outputs.is_gibbsjax_plot(folder / "fig.png")
    capsys.readouterr()


# ----------------------------------------------------------------------------- signals while saving
@POSIX
def test_one_signal_while_writing_is_held_and_the_file_is_complete(tmp_path):
    p = tmp_path / "f.txt"

    def write(tmp):
        os.kill(os.getpid(), signal.SIGINT)
        tmp.write_text("complete")

    with pytest.raises(SaveInterrupted) as info:
        write_atomic(p, write)
    assert info.value.written and info.value.signal == "SIGINT"
    assert "was written completely" in str(info.value)
    assert p.read_text() == "complete"


@POSIX
def test_a_second_signal_stops_the_write_and_keeps_the_previous_file(tmp_path):
    p = tmp_path / "f.txt"
    p.write_text("previous")

    def write(tmp):
        tmp.write_text("half")
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGINT)
        tmp.write_text("never")

    with pytest.raises(SaveInterrupted) as info:
        write_atomic(p, write)
    assert not info.value.written and "was not written" in str(info.value)
    assert p.read_text() == "previous"
    assert sorted(q.name for q in tmp_path.iterdir()) == ["f.txt"]


@POSIX
def test_cli_says_the_raw_draws_were_written_when_a_signal_came_while_writing_them(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    cfg = _csv_job(tmp_path)
    real = outputs.write_netcdf
    calls = []

    def signalled(idata, path):  # Ctrl-C while the raw draws are written
        calls.append(path)
        if len(calls) > 1:
            return real(idata, path)

        def write(tmp):
            os.kill(os.getpid(), signal.SIGINT)
            idata.to_netcdf(str(tmp))

        return outputs.write_atomic(path, write)

    monkeypatch.setattr(outputs, "write_netcdf", signalled)
    assert main(["run", str(cfg), "--out", "r.nc", *TINY]) == 130
    err = capsys.readouterr().err
    assert "the raw draws" in err and "are saved in r.nc" in err and "was not written" not in err, err
    assert "resume r.nc --draws 0" in err
    assert len(calls) == 1 and is_gibbsjax_result(tmp_path / "r.nc")


# ----------------------------------------------------------------------------- LDA.save
@pytest.fixture(scope="module")
def lda_model():
    import warnings

    from gibbsjax import LDA
    from gibbsjax.datasets import abc_corpus

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return LDA(2, num_chains=2, num_warmup=5, num_draws=5, seed=0, progress=False).fit(abc_corpus())


def test_lda_save_interrupted_keeps_the_first_file(lda_model, tmp_path, monkeypatch):
    import arviz as az

    from gibbsjax import LDA

    p = tmp_path / "lda.nc"
    lda_model.save(p)
    first = p.read_bytes()
    original = az.InferenceData.to_netcdf

    def dies_half_way(self, filename, *args, **kwargs):
        Path(filename).write_bytes(first[: len(first) // 2])  # half a file, then Ctrl-C
        raise KeyboardInterrupt

    monkeypatch.setattr(az.InferenceData, "to_netcdf", dies_half_way)
    with pytest.raises(KeyboardInterrupt):
        lda_model.save(p)
    monkeypatch.setattr(az.InferenceData, "to_netcdf", original)
    assert p.read_bytes() == first
    assert sorted(q.name for q in tmp_path.iterdir()) == ["lda.nc"]  # no half file beside it
    assert (LDA.load(p).topic_word_ == lda_model.topic_word_).all()
    lda_model.save(p)  # a gibbsjax result: replaced without overwrite=True
    assert is_gibbsjax_result(p)


def test_lda_save_needs_overwrite_for_a_foreign_file(lda_model, tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("mine", encoding="utf-8")
    with pytest.raises(ValueError, match="not a gibbsjax result.*overwrite=True"):
        lda_model.save(p)
    assert p.read_text(encoding="utf-8") == "mine"
    lda_model.save(p, overwrite=True)
    assert is_gibbsjax_result(p)
    (tmp_path / "adir").mkdir()
    with pytest.raises(ValueError, match="is a directory"):
        lda_model.save(tmp_path / "adir", overwrite=True)
    if sys.platform != "win32":
        os.mkfifo(tmp_path / "pipe")
        with pytest.raises(ValueError, match="fifo"):
            lda_model.save(tmp_path / "pipe", overwrite=True)


def test_temporary_files_of_killed_saves_are_removed_and_live_ones_kept(tmp_path):
    p = tmp_path / "f.nc"
    dead = tmp_path / ".f.nc.999999999-0a1b.partial"  # no such process
    legacy = tmp_path / ".f.nc.partial"
    live = tmp_path / f".f.nc.{os.getppid()}-0a1b.partial"  # a running process may still be writing it
    other = tmp_path / ".f.nc.gz.999999999-0a1b.partial"  # another output's
    for q in (dead, legacy, live, other):
        q.write_bytes(b"half")
    write_atomic(p, lambda tmp: tmp.write_text("new"))
    assert sorted(q.name for q in tmp_path.iterdir()) == sorted(["f.nc", live.name, other.name])


def test_a_result_open_in_this_process_is_still_recognised(tmp_path):
    """arviz keeps a result open (with HDF5's default lock) after from_netcdf; resume then checks
    its output, the same file: it must still be recognised as ours."""
    import arviz as az
    import numpy as np

    from gibbsjax.diagnostics import to_inference_data
    from gibbsjax.outputs import is_gibbsjax_result, write_netcdf

    p = tmp_path / "r.nc"
    write_netcdf(to_inference_data({"mu": np.zeros((2, 3))}, attrs={"gibbsjax_kernel": "demo"}), p)
    held = az.from_netcdf(p)  # noqa: F841 -- keeps the file open, as a resumed run does
    assert is_gibbsjax_result(p)
