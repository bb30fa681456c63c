"""Bounded, clear reads (issue 21): every file gibbsjax reads is a regular file under a
stated limit, and every way of failing to read it is one line naming the file -- a
``ValueError`` in Python, exit status 2 on the command line.  Results record their
config's absolute path, so ``gibbsjax resume`` works from any folder.

Permission errors are made by a stand-in ``open`` (root reads a file of mode 000),
so these tests mean the same as root and as a user.
"""

from __future__ import annotations

import builtins
import contextlib
import gzip
import os
import resource
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from gibbsjax.cli import main
from gibbsjax.corpus import read_folder, read_ldac, read_uci

NORMAL = textwrap.dedent("""
    [model]
    name = "normal.semiconjugate"
    mu0 = 98.6
    sigma0 = 0.5
    a0 = 0.001
    b0 = 0.001
    [data]
    file = "{file}"
    column = "t"
    [sampler]
    seed = 5
    num_chains = 2
    num_warmup = 5
    num_draws = 10
""")

LDA = textwrap.dedent("""
    [model]
    name = "lda.partially_collapsed"
    K = 2
    [data]
    file = "{file}"
    format = "{format}"
    {vocab}
    [sampler]
    seed = 1
    num_chains = 2
    num_warmup = 2
    num_draws = 2
""")


def _cli_error(argv, capsys, *fragments) -> str:
    """``main(argv)`` exits 2 with one line ``gibbsjax: error: ...`` holding every fragment."""
    assert main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gibbsjax: error: ") and err.count("\n") == 1, err
    for fragment in fragments:
        assert str(fragment) in err, (fragment, err)
    return err


def _value_error(call, *fragments) -> ValueError:
    """``call()`` raises a one-line ``ValueError`` holding every fragment."""
    with pytest.raises(ValueError) as info:
        call()
    text = str(info.value)
    assert "\n" not in text, text
    for fragment in fragments:
        assert str(fragment) in text, (fragment, text)
    return info.value


@contextlib.contextmanager
def _no_hang(seconds: int = 60):
    """A read of a FIFO that waits for a writer forever fails the test instead of hanging it
    (the alarm interrupts ``open``); no test asserts a time."""
    def stop(signum, frame):
        raise TimeoutError(f"still reading after {seconds} s: a file that is not regular was opened")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _sparse(path: Path, size: int) -> Path:
    with open(path, "wb") as fh:
        fh.truncate(size)  # a hole: no disk used, and nothing must read it
    return path


def _deny(monkeypatch, *denied: Path):
    """``open`` in gibbsjax.reading fails with PermissionError for ``denied`` (as for mode 000)."""
    from gibbsjax import reading

    denied_names = {os.path.abspath(p) for p in denied}

    def fake_open(file, *args, **kwargs):
        if isinstance(file, (str, os.PathLike)) and os.path.abspath(file) in denied_names:
            raise PermissionError(13, "Permission denied", str(file))
        return builtins.open(file, *args, **kwargs)

    monkeypatch.setattr(reading, "open", fake_open, raising=False)


@pytest.fixture
def ldac(tmp_path):
    path = tmp_path / "c.ldac"
    path.write_text("2 0:1 1:2\n1 2:1\n", encoding="utf-8")
    (tmp_path / "vocab.txt").write_text("a\nb\nc\n", encoding="utf-8")
    return path


def _lda_config(tmp_path, file, fmt="ldac", vocab=None, name="lda.toml") -> Path:
    path = tmp_path / name
    line = f'vocab = "{vocab}"' if vocab else ""
    path.write_text(LDA.format(file=file, format=fmt, vocab=line), encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- not regular files
def _limited_memory():
    resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, 4 * 2**30))  # a reader of /dev/zero stops here


def test_device_as_config_is_refused_without_reading(tmp_path):
    """In a process of bounded memory: reading /dev/zero must not be how it fails."""
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "GIBBSJAX_NO_CACHE": "1"}
    for argv in (["run", "/dev/zero"], ["summary", "/dev/zero"]):
        proc = subprocess.run([sys.executable, "-m", "gibbsjax", *argv], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=300, preexec_fn=_limited_memory)
        assert proc.returncode == 2, proc.stderr[-2000:]
        assert proc.stderr.startswith("gibbsjax: error: ") and proc.stderr.count("\n") == 1, proc.stderr
        assert "/dev/zero" in proc.stderr and "not a regular file" in proc.stderr


def test_fifo_as_config_and_as_data(tmp_path, capsys, ldac):
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)  # opening it would wait for a writer forever
    data = tmp_path / "pipe.ldac"
    os.mkfifo(data)
    with _no_hang():
        _cli_error(["run", fifo], capsys, str(fifo), "FIFO")
        _value_error(lambda: read_ldac(data), str(data), "FIFO")
        _cli_error(["run", _lda_config(tmp_path, "pipe.ldac")], capsys, str(data), "FIFO")


def test_directory_where_a_file_is_expected(tmp_path, capsys, ldac):
    folder = tmp_path / "sub"
    folder.mkdir()
    _value_error(lambda: read_ldac(ldac, folder), str(folder), "folder")  # a folder as vocab
    _value_error(lambda: read_uci(folder), str(folder), "folder")
    _cli_error(["run", folder], capsys, str(folder), "folder")  # a folder as config
    _cli_error(["summary", folder], capsys, str(folder), "folder")
    # file = "." in a config: says it is a folder (not "file not found")
    _cli_error(["run", _lda_config(tmp_path, ".")], capsys, "'.'", "is a folder", 'format = "folder"')
    _cli_error(["run", _lda_config(tmp_path, "c.ldac", vocab="sub")], capsys, str(folder), "folder")


def test_folder_holding_a_fifo_names_it(tmp_path):
    (tmp_path / "a.txt").write_text("cats and dogs", encoding="utf-8")
    os.mkfifo(tmp_path / "b.txt")
    with _no_hang():
        _value_error(lambda: read_folder(tmp_path), str(tmp_path / "b.txt"), "FIFO")
    (tmp_path / "b.txt").unlink()
    (tmp_path / "c.txt").mkdir()  # a matching folder is skipped, as before
    (tmp_path / "d.txt").symlink_to(tmp_path / "missing.txt")  # a broken link is named
    _value_error(lambda: read_folder(tmp_path), str(tmp_path / "d.txt"), "not found")
    (tmp_path / "d.txt").unlink()
    assert read_folder(tmp_path).num_docs == 1


# ----------------------------------------------------------------------------- sizes
def test_sparse_64gib_config_is_refused_by_its_size(tmp_path, capsys):
    path = _sparse(tmp_path / "huge.toml", 64 * 2**30)
    _cli_error(["run", path], capsys, str(path), "16 MiB")


def test_sparse_4gib_data_file_is_refused_by_its_size(tmp_path, capsys):
    path = _sparse(tmp_path / "huge.ldac", 4 * 2**30)
    _value_error(lambda: read_ldac(path), str(path), "2 GiB", "GIBBSJAX_MAX_DATA_BYTES")
    _value_error(lambda: read_uci(path), str(path), "2 GiB")
    vocab = _sparse(tmp_path / "huge-vocab.txt", 4 * 2**30)
    _value_error(lambda: read_ldac(tmp_path / "huge.ldac", vocab), str(vocab), "2 GiB")
    _cli_error(["run", _lda_config(tmp_path, "huge.ldac")], capsys, str(path), "GIBBSJAX_MAX_DATA_BYTES")


def test_data_limit_from_the_environment(tmp_path, monkeypatch, ldac, capsys):
    assert read_ldac(ldac).num_docs == 2
    monkeypatch.setenv("GIBBSJAX_MAX_DATA_BYTES", "10")
    _value_error(lambda: read_ldac(ldac), str(ldac), "10 bytes limit")
    csv = tmp_path / "y.csv"
    csv.write_text("t\n98.1\n98.6\n97.9\n", encoding="utf-8")
    config = tmp_path / "normal.toml"
    config.write_text(NORMAL.format(file="y.csv"), encoding="utf-8")
    _cli_error(["run", config, "--out", tmp_path / "n.nc"], capsys, str(csv), "limit")
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(3):
        (docs / f"{i}.txt").write_text("four words in here", encoding="utf-8")
    monkeypatch.setenv("GIBBSJAX_MAX_DATA_BYTES", "40")  # each file fits, the three do not
    _value_error(lambda: read_folder(docs), str(docs), "add up to 54 bytes")
    monkeypatch.setenv("GIBBSJAX_MAX_DATA_BYTES", "1GiB")
    assert read_folder(docs).num_docs == 3
    monkeypatch.setenv("GIBBSJAX_MAX_DATA_BYTES", "lots")
    _value_error(lambda: read_ldac(ldac), "GIBBSJAX_MAX_DATA_BYTES", "'lots'")


def test_gzip_limit_counts_the_decompressed_bytes(tmp_path, monkeypatch):
    path = tmp_path / "c.ldac.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write("1 0:1\n" * 2000)  # 12000 bytes, compressed to far fewer
    assert path.stat().st_size < 1000
    assert read_ldac(path).num_docs == 2000
    monkeypatch.setenv("GIBBSJAX_MAX_DATA_BYTES", "1000")
    _value_error(lambda: read_ldac(path), str(path), "decompressed", "1000 bytes limit")
    (tmp_path / "docword.txt.gz").write_bytes(gzip.compress(b"1\n1\n3000\n" + b"1 1 1\n" * 3000))
    _value_error(lambda: read_uci(tmp_path / "docword.txt.gz"), "docword.txt.gz", "decompressed")


def test_a_part_is_bounded_by_its_own_bytes(tmp_path, monkeypatch, ldac):
    big = tmp_path / "big.ldac"
    big.write_text("1 0:1\n" * 1000, encoding="utf-8")  # 6000 bytes
    vocab = tmp_path / "vocab.txt"
    monkeypatch.setenv("GIBBSJAX_MAX_DATA_BYTES", "600")
    _value_error(lambda: read_ldac(big), str(big), "600 bytes limit")
    assert read_ldac(big, vocab, docs=(10, 20)).num_docs == 10  # 60 bytes: within the limit
    assert read_ldac(big, vocab, part=(3, 20)).num_docs == 50  # 300 bytes
    _value_error(lambda: read_ldac(big, vocab, docs=(0, 200)), str(big), "limit")
    _value_error(lambda: read_ldac(big, vocab, part=(0, 2)), str(big), "limit")
    dw = tmp_path / "docword.txt"
    dw.write_text("1000\n3\n1000\n" + "".join(f"{d} 1 1\n" for d in range(1, 1001)), encoding="utf-8")
    assert read_uci(dw, vocab, docs=(0, 20)).num_docs == 20
    _value_error(lambda: read_uci(dw, vocab, docs=(0, 900)), str(dw), "limit")


# ----------------------------------------------------------------------------- permission
def test_unreadable_data_files_are_named(tmp_path, monkeypatch, capsys, ldac):
    vocab, denied_vocab = tmp_path / "vocab.txt", tmp_path / "denied-vocab.txt"
    denied_vocab.write_text("a\n", encoding="utf-8")
    _deny(monkeypatch, ldac, denied_vocab)
    _value_error(lambda: read_ldac(ldac), str(ldac), "permission denied")
    _value_error(lambda: read_ldac(ldac, vocab, docs=(0, 1)), str(ldac), "permission denied")
    (tmp_path / "c2.ldac").write_text("1 0:1\n", encoding="utf-8")
    _value_error(lambda: read_ldac(tmp_path / "c2.ldac", denied_vocab), str(denied_vocab), "permission denied")
    _cli_error(["run", _lda_config(tmp_path, "c.ldac")], capsys, str(ldac), "permission denied")


def test_unreadable_file_in_a_folder_and_config(tmp_path, monkeypatch, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("cats", encoding="utf-8")
    (docs / "b.txt").write_text("dogs", encoding="utf-8")
    config = _lda_config(tmp_path, "docs", fmt="folder")
    _deny(monkeypatch, docs / "b.txt", config)
    _value_error(lambda: read_folder(docs), str(docs / "b.txt"), "permission denied")
    _cli_error(["run", config], capsys, str(config), "permission denied")


def test_real_mode_000_when_not_root(tmp_path, ldac):
    """As a user, a file of mode 000 fails the same way as the stand-in above (as root it is
    readable, and the read must then succeed: no skip either way)."""
    ldac.chmod(0)
    try:
        if os.geteuid() == 0:
            assert read_ldac(ldac).num_docs == 2
        else:
            _value_error(lambda: read_ldac(ldac), str(ldac), "permission denied")
    finally:
        ldac.chmod(0o644)


# ----------------------------------------------------------------------------- decoding
def test_non_utf8_bytes_name_the_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.ldac"
    bad.write_bytes(b"1 0:1\n1 1:\xff1\n")
    _value_error(lambda: read_ldac(bad), f"{bad}, line 2", "utf-8")
    vocab = tmp_path / "vocab.txt"
    vocab.write_bytes("a\nb\u00e9\n".encode("latin-1"))
    good = tmp_path / "good.ldac"
    good.write_text("1 0:1\n1 1:1\n", encoding="utf-8")
    _value_error(lambda: read_ldac(good, vocab), f"{vocab}, line 2", "utf-8")
    (tmp_path / "v3.txt").write_text("a\nb\n", encoding="utf-8")
    _value_error(lambda: read_ldac(bad, tmp_path / "v3.txt", docs=(1, 2)), f"{bad}, line 2")
    dw = tmp_path / "docword.txt"
    dw.write_bytes(b"2\n2\n2\n1 1 1\n2 2 \xfe\n")
    _value_error(lambda: read_uci(dw), str(dw), "utf-8")
    (tmp_path / "v2.txt").write_text("x\ny\n", encoding="utf-8")
    _value_error(lambda: read_uci(dw, tmp_path / "v2.txt", docs=(0, 2)), str(dw), "utf-8")
    _cli_error(["run", _lda_config(tmp_path, "bad.ldac")], capsys, f"{bad}, line 2", "utf-8")
    _cli_error(["run", _lda_config(tmp_path, "docword.txt", fmt="uci")], capsys, str(dw), "utf-8")


BOM = b"\xef\xbb\xbf"  # the UTF-8 byte-order mark a spreadsheet writes first


def test_bom_csv_column_of_a_config(tmp_path):
    """A CSV file saved by a spreadsheet: the mark must not stick to the first header."""
    from gibbsjax.sources import read_column

    (tmp_path / "bom.csv").write_bytes(BOM + b"temperature_f,rate\r\n98.2,70\r\n98.9,74\r\n")
    got = read_column({"file": "bom.csv", "column": "temperature_f"}, tmp_path)
    np.testing.assert_array_equal(got, [98.2, 98.9])
    (tmp_path / "one.csv").write_bytes(BOM + b"t\n1.5\n")  # the only column, found without its name
    np.testing.assert_array_equal(read_column({"file": "one.csv"}, tmp_path), [1.5])


def test_bom_config_file(tmp_path):
    from gibbsjax.config import load_config

    (tmp_path / "t.csv").write_text("t\n98.0\n98.5\n", encoding="utf-8")
    (tmp_path / "bom.toml").write_bytes(BOM + NORMAL.format(file="t.csv").encode("utf-8"))
    assert load_config(tmp_path / "bom.toml").sampler.num_chains == 2


def test_bom_vocabulary_file(tmp_path):
    from gibbsjax.corpus.files import read_vocab

    (tmp_path / "vocab.txt").write_bytes(BOM + b"apple\nbond\n")
    assert read_vocab(tmp_path / "vocab.txt") == ("apple", "bond")
    with gzip.open(tmp_path / "vocab.txt.gz", "wb") as fh:
        fh.write(BOM + b"apple\nbond\n")
    assert read_vocab(tmp_path / "vocab.txt.gz") == ("apple", "bond")


def test_bom_ldac_whole_and_in_parts(tmp_path):
    (tmp_path / "c.ldac").write_bytes(BOM + b"2 0:1 1:2\n1 2:1\n")
    (tmp_path / "vocab.txt").write_bytes(BOM + b"a\nb\nc\n")
    want = [["a", "b", "b"], ["c"]]
    assert read_ldac(tmp_path / "c.ldac", tmp_path / "vocab.txt").to_token_lists() == want
    assert read_ldac(tmp_path / "c.ldac").to_token_lists() == [["0", "1", "1"], ["2"]]
    assert read_ldac(tmp_path / "c.ldac", tmp_path / "vocab.txt", docs=(0, 1)).to_token_lists() == want[:1]
    first = read_ldac(tmp_path / "c.ldac", tmp_path / "vocab.txt", part=(0, 2)).to_token_lists()
    assert first == want[:len(first)] and first


def test_bom_uci_whole_and_in_parts(tmp_path):
    (tmp_path / "docword.txt").write_bytes(BOM + b"2\n3\n3\n1 1 2\n1 3 1\n2 2 4\n")
    (tmp_path / "vocab.txt").write_bytes(BOM + b"apple\nbanana\ncherry\n")
    c = read_uci(tmp_path / "docword.txt", tmp_path / "vocab.txt")
    assert c.to_token_lists() == [["apple", "apple", "cherry"], ["banana"] * 4]
    assert read_uci(tmp_path / "docword.txt").to_token_lists() == [["1", "1", "3"], ["2"] * 4]
    part = read_uci(tmp_path / "docword.txt", tmp_path / "vocab.txt", docs=(0, 1))
    assert part.to_token_lists() == [["apple", "apple", "cherry"]]


def test_bom_text_files_of_a_folder(tmp_path):
    (tmp_path / "a.txt").write_bytes(BOM + "apple banana apple".encode("utf-8"))
    (tmp_path / "b.txt").write_bytes("banana cherry".encode("utf-8"))
    for c in (read_folder(tmp_path), read_folder(tmp_path, tokenizer=str.split)):  # (split keeps any mark)
        assert sorted(c.vocab) == ["apple", "banana", "cherry"]
        assert sorted(c.to_token_lists()[0]) == ["apple", "apple", "banana"]


def test_uci_bad_header(tmp_path):
    dw = tmp_path / "docword.txt"
    dw.write_text("2\nthree\n2\n1 1 1\n", encoding="utf-8")
    _value_error(lambda: read_uci(dw), f"{dw}, line 2", "number of words W")
    dw.write_bytes(b"\x00" * 10000)  # one long line of NUL bytes, no newline
    _value_error(lambda: read_uci(dw), f"{dw}, line 1", "number of documents D")


# ----------------------------------------------------------------------------- configs
def test_empty_and_garbage_configs(tmp_path, capsys):
    empty = tmp_path / "empty.toml"
    empty.write_bytes(b"")
    _cli_error(["run", empty], capsys, str(empty), "empty")
    garbage = tmp_path / "garbage.toml"
    garbage.write_bytes(bytes(range(256)) * 4)
    _cli_error(["run", garbage], capsys, str(garbage), "utf-8")
    nuls = tmp_path / "nuls.toml"
    nuls.write_bytes(b"\x00" * 100)
    _cli_error(["run", nuls], capsys, str(nuls), "invalid TOML")


def test_missing_vocab_is_named_not_the_corpus(tmp_path, capsys, ldac):
    config = _lda_config(tmp_path, "c.ldac", vocab="nope-vocab.txt")
    err = _cli_error(["run", config], capsys, "nope-vocab.txt", "not found")
    assert "c.ldac" not in err
    missing = tmp_path / "nope-vocab.txt"
    with pytest.raises(FileNotFoundError, match="nope-vocab"):  # still a FileNotFoundError ...
        read_ldac(ldac, missing)
    _value_error(lambda: read_ldac(ldac, missing), str(missing))  # ... and a ValueError


# ----------------------------------------------------------------------------- results
def _small_result(path: Path) -> Path:
    import arviz as az

    az.from_dict(posterior={"x": np.zeros((2, 50))}).to_netcdf(str(path))
    return path


def test_lda_load_of_text_or_truncated_file(tmp_path):
    from gibbsjax import LDA

    text = tmp_path / "notes.nc"
    text.write_text("not a result\n", encoding="utf-8")
    _value_error(lambda: LDA.load(text), str(text), "cannot read")
    whole = _small_result(tmp_path / "whole.nc")
    cut = tmp_path / "cut.nc"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    _value_error(lambda: LDA.load(cut), str(cut), "cannot read")
    _value_error(lambda: LDA.load(tmp_path / "none.nc"), "none.nc", "not found")


def test_result_files_are_checked(tmp_path, monkeypatch, capsys):
    result = _small_result(tmp_path / "r.nc")
    fifo = tmp_path / "pipe.nc"
    os.mkfifo(fifo)
    with _no_hang():
        for command in ("summary", "plot"):
            _cli_error([command, fifo], capsys, str(fifo), "FIFO")
        _cli_error(["resume", fifo, "--draws", "1", "--out", tmp_path / "o.nc"], capsys, str(fifo), "FIFO")
    _deny(monkeypatch, result)
    _cli_error(["summary", result], capsys, str(result), "permission denied")
    monkeypatch.undo()
    monkeypatch.setenv("GIBBSJAX_MAX_RESULT_BYTES", "100")
    _cli_error(["summary", result], capsys, str(result), "GIBBSJAX_MAX_RESULT_BYTES")
    from gibbsjax.config import resume_result

    _value_error(lambda: resume_result(result, 1), str(result), "limit")


# ----------------------------------------------------------------------------- paths in results
def test_resume_from_another_folder(tmp_path, monkeypatch, capsys):
    """A run started in its config's folder with relative paths resumes from anywhere; a result
    recording its config relatively (as before) resumes from the folder it was run in."""
    import arviz as az

    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    (project / "y.csv").write_text("t\n" + "\n".join(str(98 + i / 10) for i in range(20)) + "\n",
                                   encoding="utf-8")
    (project / "normal.toml").write_text(NORMAL.format(file="y.csv"), encoding="utf-8")
    monkeypatch.chdir(project)
    assert main(["run", "normal.toml", "--out", "run.nc", "--no-progress"]) == 0
    result = project / "run.nc"
    assert az.from_netcdf(str(result)).attrs["config_file"] == str(project / "normal.toml")
    monkeypatch.chdir(elsewhere)
    assert main(["resume", str(result), "--draws", "5", "--no-progress"]) == 0
    assert az.from_netcdf(str(result)).posterior.sizes["draw"] == 15
    capsys.readouterr()

    old = az.from_netcdf(str(result))
    old.load()
    old.attrs["config_file"] = "normal.toml"  # as results recorded it before
    old.to_netcdf(str(project / "old.nc"))
    _cli_error(["resume", project / "old.nc", "--draws", "5", "--no-progress"], capsys,
               "y.csv", "not found", "resume it from that folder")
    monkeypatch.chdir(project)
    assert main(["resume", "old.nc", "--draws", "5", "--no-progress"]) == 0
    assert az.from_netcdf(str(project / "old.nc")).posterior.sizes["draw"] == 20


def test_unlistable_folder_and_file_as_folder(tmp_path, monkeypatch, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("cats", encoding="utf-8")
    listing = os.scandir

    def fake_scandir(path="."):
        if os.path.abspath(path) == str(docs):
            raise PermissionError(13, "Permission denied", str(path))
        return listing(path)

    monkeypatch.setattr(os, "scandir", fake_scandir)
    _value_error(lambda: read_folder(docs), str(docs), "permission denied")
    monkeypatch.undo()
    _value_error(lambda: read_folder(docs / "a.txt"), str(docs / "a.txt"), "not a folder")
    _cli_error(["run", _lda_config(tmp_path, "docs/a.txt", fmt="folder")], capsys, str(docs / "a.txt"),
               "not a folder")


def test_summary_of_a_config_or_a_text_file_names_what_it_is(tmp_path, capsys):
    """Not NetCDF at all (a config, a text file): one line naming the file and, for a config, what to
    do; a file with the signature but truncated: the reader's own reason."""
    from gibbsjax.cli import main

    config = tmp_path / "job.toml"
    config.write_text('[model]\nname = "normal.bivariate"\n', encoding="utf-8")
    assert main(["summary", str(config)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "job.toml as an ArviZ NetCDF result: it is not a NetCDF file" in err
    assert "gibbsjax run" in err
    text = tmp_path / "notes.nc"
    text.write_text("hello", encoding="utf-8")
    assert main(["plot", str(text)]) == 2
    err = capsys.readouterr().err.strip()
    assert "notes.nc as an ArviZ NetCDF result: it is not a NetCDF file" in err and "gibbsjax run" not in err
    truncated = tmp_path / "cut.nc"
    truncated.write_bytes(b"\x89HDF\r\n\x1a\n" + b"\0" * 40)
    assert main(["summary", str(truncated)]) == 2
    err = capsys.readouterr().err
    assert "cannot read" in err and "cut.nc" in err and "not a NetCDF file" not in err
