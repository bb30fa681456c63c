"""Corpus file readers and writers (LDA-C, UCI, folders) and the shipped corpora."""

from __future__ import annotations

import gzip
import re
import sysconfig
import warnings

import numpy as np
import pytest

from gibbsjax.corpus import (
    Corpus,
    EmptyDocumentWarning,
    read_folder,
    read_ldac,
    read_uci,
    write_ldac,
    write_uci,
)
from gibbsjax.datasets.corpora import STDLIB_GROUPS, abc_corpus, stdlib_docs


def _where(path, line):
    """The start of an error message naming ``path`` and ``line``."""
    return re.escape(f"{path}, line {line}:")


@pytest.fixture
def random_corpus():
    rng = np.random.default_rng(1)
    X = rng.poisson(0.6, size=(25, 12))
    X[3] = 0  # an empty document
    return Corpus.from_dtm(X, vocab=[f"w{i}" for i in range(12)], empty="keep")


# ---------------------------------------------------------------------- LDA-C
def test_read_ldac_good_file(tmp_path):
    (tmp_path / "c.ldac").write_text("2 0:2 2:1\n1 1:3\n0\n3 2:1 0:1 2:1\n")
    (tmp_path / "v.txt").write_text("apple\nbanana\ncherry\n")
    with pytest.warns(EmptyDocumentWarning, match=r"dropped 1 of 4 documents in .*c\.ldac.*'2'"):
        c = read_ldac(tmp_path / "c.ldac", tmp_path / "v.txt")
    assert c.vocab == ("apple", "banana", "cherry")
    assert c.doc_names == ("0", "1", "3")
    np.testing.assert_array_equal(c.to_dtm().toarray(), [[2, 0, 1], [0, 3, 0], [1, 0, 2]])  # repeats summed
    k = read_ldac(tmp_path / "c.ldac", empty="keep")  # no vocabulary file: ids as words
    assert k.vocab == ("0", "1", "2") and k.doc_lengths.tolist() == [3, 3, 0, 3]
    with pytest.raises(ValueError, match="empty"):
        read_ldac(tmp_path / "c.ldac", empty="error")


def test_ldac_round_trip(tmp_path, random_corpus):
    write_ldac(random_corpus, tmp_path / "c.ldac", tmp_path / "vocab.txt")
    back = read_ldac(tmp_path / "c.ldac", tmp_path / "vocab.txt", empty="keep")
    assert back.vocab == random_corpus.vocab
    np.testing.assert_array_equal(back.to_dtm().toarray(), random_corpus.to_dtm().toarray())
    assert (tmp_path / "c.ldac").read_text().splitlines()[3] == "0"
    write_ldac(random_corpus, tmp_path / "c.ldac.gz", tmp_path / "vocab.txt.gz")  # gzip, transparently
    with gzip.open(tmp_path / "c.ldac.gz", "rt") as fh:
        assert fh.read() == (tmp_path / "c.ldac").read_text()
    gz = read_ldac(tmp_path / "c.ldac.gz", tmp_path / "vocab.txt.gz", empty="keep")
    np.testing.assert_array_equal(gz.to_dtm().toarray(), random_corpus.to_dtm().toarray())


@pytest.mark.parametrize(
    "body, line, msg",
    [
        ("2 0:1 1:1\n2 0:1 x:2\n", 2, "malformed entry 2 (expected id:count"),
        ("2 0:1 1:1\nabc 0:1\n", 2, "expected the number of terms N"),
        ("2 0:1 1:1\n1 0:1 1:1\n", 2, "N = 1 but the line has 2"),
        ("3 0:1 1:1\n", 1, "N = 3 but the line has 2"),
        ("1 0:1\n1 3:1\n", 2, "word id 3 is out of range"),
        ("1 -1:1\n", 1, "word id -1 is out of range"),
        ("1 0:1\n1 1:-2\n", 2, "negative count -2"),
        ("1 0:1\n\n1 1:1\n", 2, "blank line"),
        ("1 0:1 \n1 1:1\n1 0:1 2\n", 3, "malformed entry 2 (expected id:count"),
    ],
)
def test_read_ldac_malformed(tmp_path, body, line, msg):
    path = tmp_path / "bad.ldac"
    path.write_text(body)
    (tmp_path / "v.txt").write_text("a\nb\nc\n")
    with pytest.raises(ValueError, match=_where(path, line) + ".*" + re.escape(msg)):
        read_ldac(path, tmp_path / "v.txt")


def test_vocab_file_errors_and_missing_files(tmp_path):
    (tmp_path / "c.ldac").write_text("1 0:1\n")
    v = tmp_path / "v.txt"
    v.write_text("a\nb\na\n")
    with pytest.raises(ValueError, match=_where(v, 3) + ".*repeats the word of line 1"):
        read_ldac(tmp_path / "c.ldac", v)
    v.write_text("a\n\nb\n")
    with pytest.raises(ValueError, match=_where(v, 2) + ".*blank line"):
        read_ldac(tmp_path / "c.ldac", v)
    v.write_text("a\nb\n\n\n")  # trailing blank lines are fine
    assert read_ldac(tmp_path / "c.ldac", v).vocab == ("a", "b")
    for call in (
        lambda: read_ldac(tmp_path / "nope.ldac"),
        lambda: read_ldac(tmp_path / "c.ldac", tmp_path / "nope.txt"),
        lambda: read_uci(tmp_path / "nope.txt"),
        lambda: read_folder(tmp_path / "nope"),
    ):
        with pytest.raises(FileNotFoundError, match="nope"):
            call()


# ---------------------------------------------------------------------- UCI bag of words
def test_read_uci_good_file(tmp_path):
    dw = tmp_path / "docword.txt"
    dw.write_text("3\n4\n4\n1 1 2\n1 3 1\n\n3 4 5\n3 4 1\n")  # doc 2 empty, a repeated entry, a blank line
    (tmp_path / "vocab.txt").write_text("w1\nw2\nw3\nw4\n")
    with pytest.warns(EmptyDocumentWarning, match="dropped 1 of 3"):
        c = read_uci(dw, tmp_path / "vocab.txt")
    assert c.doc_names == ("1", "3") and c.vocab == ("w1", "w2", "w3", "w4")
    np.testing.assert_array_equal(c.to_dtm().toarray(), [[2, 0, 1, 0], [0, 0, 0, 6]])
    k = read_uci(dw, empty="keep")
    assert k.vocab == ("1", "2", "3", "4") and k.doc_lengths.tolist() == [3, 0, 6]


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_uci_round_trip(tmp_path, random_corpus, suffix):
    dw, voc = tmp_path / f"docword.txt{suffix}", tmp_path / f"vocab.txt{suffix}"
    write_uci(random_corpus, dw, voc)
    back = read_uci(dw, voc, empty="keep")
    assert back.vocab == random_corpus.vocab
    assert back.doc_names == tuple(str(d + 1) for d in range(random_corpus.num_docs))
    np.testing.assert_array_equal(back.to_dtm().toarray(), random_corpus.to_dtm().toarray())


@pytest.mark.parametrize(
    "body, line, msg",
    [
        ("2\n3\n2\n1 1 1\n1 2\n", 5, "three integers"),
        ("2\n3\n2\n1 1 1\n1 2 x\n", 5, "three integers"),
        ("2\n3\n2\n1 1 1\n1 2 1.5\n", 5, "three integers"),
        ("2\n3\n2\n1 1 1\n1 4 1\n", 5, "word id 4 is out of range 1..3"),
        ("2\n3\n2\n1 0 1\n1 2 1\n", 4, "word id 0 is out of range"),
        ("2\n3\n2\n1 1 1\n3 2 1\n", 5, "document id 3 is out of range 1..2"),
        ("2\n3\n2\n1 1 1\n2 2 -1\n", 5, "negative count -1"),
        ("2\n3\n3\n1 1 1\n2 2 1\n", 3, "NNZ = 3 but the file has 2 entries"),
        ("2\n3\n1\n1 1 1\n\n2 2 1\n", 6, "more entries than NNZ = 1"),
        ("2\nthree\n1\n1 1 1\n", 2, "number of words W"),
        ("2\n3\n", 3, "ends before the number of entries NNZ"),
    ],
)
def test_read_uci_malformed(tmp_path, body, line, msg):
    path = tmp_path / "docword.txt"
    path.write_text(body)
    with pytest.raises(ValueError, match=_where(path, line) + ".*" + re.escape(msg)):
        read_uci(path)


def test_read_uci_vocab_size_disagrees(tmp_path):
    (tmp_path / "docword.txt").write_text("1\n3\n1\n1 1 1\n")
    (tmp_path / "vocab.txt").write_text("a\nb\n")
    with pytest.raises(ValueError, match=r"vocab\.txt has 2 words but .*docword\.txt, line 2 says W = 3"):
        read_uci(tmp_path / "docword.txt", tmp_path / "vocab.txt")


# ---------------------------------------------------------------------- folders of text files
def _write(root, files):
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def test_read_folder_flat_and_labelled(tmp_path):
    _write(
        tmp_path,
        {
            "b.txt": "The cat sat.",
            "a.txt": "A dog barked at the cat.",
            "notes.md": "not read",
            "sport/x.txt": "Goal! The match ended.",
            "sport/deep/y.txt": "A late goal",
            "politics/z.txt": "The vote",
            "politics/e.txt": "the of and",
        },
    )
    flat = read_folder(tmp_path, stop_words="english")
    assert flat.doc_names == ("a.txt", "b.txt")
    assert flat.to_token_lists() == [["dog", "barked", "cat"], ["cat", "sat"]]
    assert flat.labels is None
    with pytest.warns(EmptyDocumentWarning, match="'politics/e.txt'"):
        lab = read_folder(tmp_path, labels_from="subfolder", stop_words="english")
    assert lab.doc_names == ("a.txt", "b.txt", "politics/z.txt", "sport/deep/y.txt", "sport/x.txt")
    assert lab.label_names == ("politics", "sport")
    assert lab.labels.tolist() == [-1, -1, 0, 1, 1]
    assert read_folder(tmp_path, "**/*.md").doc_names == ("notes.md",)
    with pytest.raises(ValueError, match="no files match"):
        read_folder(tmp_path, "*.csv")
    with pytest.raises(ValueError, match="labels_from"):
        read_folder(tmp_path, labels_from="parent")
    with pytest.raises(ValueError, match="not both"):
        read_folder(tmp_path, labels_from="subfolder", labels=[0, 1])
    with pytest.raises(ValueError, match="no file matching"):
        read_folder(tmp_path, "*.md", labels_from="subfolder")


def test_read_folder_bad_encoding(tmp_path):
    (tmp_path / "ok.txt").write_text("fine")
    (tmp_path / "bad.txt").write_bytes(b"line one\nline two \xff\xfe\n")
    with pytest.raises(ValueError, match=_where(tmp_path / "bad.txt", 2) + ".*utf-8"):
        read_folder(tmp_path)
    assert read_folder(tmp_path, encoding="latin-1").num_docs == 2


# ---------------------------------------------------------------------- shipped corpora
def test_abc_corpus():
    c = abc_corpus()
    assert (c.num_docs, c.num_tokens, c.vocab) == (12, 36, ("a", "b", "c"))
    docs = [" ".join(d) for d in c.to_token_lists()]
    assert docs == ["a b a", "c b c", "b a a"] * 4
    assert c.word_counts.tolist() == [16, 12, 8]
    assert c.doc_lengths.tolist() == [3] * 12


def test_stdlib_docs():
    c = stdlib_docs()
    assert c.label_names == tuple(STDLIB_GROUPS)
    assert c.num_docs >= 400 and c.vocab_size >= 500
    counts = np.bincount(c.labels, minlength=len(c.label_names))
    assert counts.min() >= 30, dict(zip(c.label_names, counts.tolist()))
    assert (c.labels >= 0).all() and c.doc_lengths.min() >= 10
    assert not {"the", "self", "return"} & set(c.vocab)
    assert len(set(c.doc_names)) == c.num_docs
    assert all(n.split(".")[0] in STDLIB_GROUPS[c.label_names[k]] for n, k in zip(c.doc_names, c.labels))
    assert stdlib_docs() is c  # cached
    # deterministic: a fresh build gives the same corpus
    from gibbsjax.datasets import corpora

    stdlib = sysconfig.get_paths()["stdlib"]
    fresh = corpora._stdlib_docs.__wrapped__(tuple(STDLIB_GROUPS.items()), 20, 5, 0.25, 10, stdlib)
    assert fresh is not c and fresh.vocab == c.vocab and fresh.doc_names == c.doc_names
    np.testing.assert_array_equal(fresh.tokens, c.tokens)
    np.testing.assert_array_equal(fresh.labels, c.labels)
    sub = stdlib_docs(["xml", "email"], min_count=2)
    assert sub.label_names == ("xml", "email") and set(sub.labels.tolist()) == {0, 1}
    custom = stdlib_docs({"json": "json"}, min_words=5, min_count=1, min_doc_length=1, max_doc_freq=1.0)
    assert custom.label_names == ("json",) and custom.num_docs > 3
    with pytest.raises(ValueError, match="unknown group"):
        stdlib_docs(["nonsense"])


# ---------------------------------------------------------------------- sizes bounded by the file (issue 11)
@pytest.mark.parametrize(
    "body, line, msg",
    [
        ("1 3000000000:1\n", 1, "word id 3000000000 needs a vocabulary of 3000000001 words"),
        ("2 0:1 1:1\n1 7:2\n", 2, "word id 7 needs a vocabulary of 8 words"),
        ("1 0:3000000000\n", 1, "the counts add up to 3000000000 tokens"),
        ("1 0:60\n1 0:60\n", 2, "the counts add up to 120 tokens, more than a corpus can hold here (100"),
        ("1 0:99999999999999999999\n", 1, "does not fit in 64 bits"),
    ],
)
def test_read_ldac_sizes_bounded_by_the_file(tmp_path, monkeypatch, body, line, msg):
    if "120 tokens" in msg:  # the limit also follows the host's free memory: fix it here
        import gibbsjax.corpus.ldac

        monkeypatch.setattr(gibbsjax.corpus.ldac, "token_limit", lambda: 100)
    path = tmp_path / "big.ldac"
    path.write_text(body)
    with pytest.raises(ValueError, match=_where(path, line) + ".*" + re.escape(msg)):
        read_ldac(path)


@pytest.mark.parametrize(
    "body, line, msg",
    [
        ("1\n2000000000\n1\n1 1 1\n", 2, "W = 2000000000 words, but the file has 1 entries"),
        ("2000000000\n3\n1\n1 1 1\n", 1, "D = 2000000000 documents, but the file has 1 entries"),
        ("1\n1\n1\n1 1 3000000000\n", 4, "the counts add up to 3000000000 tokens"),
    ],
)
def test_read_uci_sizes_bounded_by_the_file(tmp_path, body, line, msg):
    path = tmp_path / "docword.txt"
    path.write_text(body)
    with pytest.raises(ValueError, match=_where(path, line) + ".*" + re.escape(msg)):
        read_uci(path)


def test_uci_vocabulary_file_allows_unused_words(tmp_path):
    # W larger than the entries is fine when a vocabulary file names the words
    (tmp_path / "docword.txt").write_text("1\n5\n1\n1 2 3\n")
    (tmp_path / "vocab.txt").write_text("a\nb\nc\nd\ne\n")
    c = read_uci(tmp_path / "docword.txt", tmp_path / "vocab.txt")
    assert c.vocab_size == 5 and c.to_token_lists() == [["b", "b", "b"]]


SECRET = "s3cr3t:x:0:0:hidden"


@pytest.mark.parametrize(
    "reader, body",
    [
        ("ldac", f"{SECRET}\n"),
        ("ldac", f"1 0:1\n2 0:1 {SECRET}\n"),
        ("uci", f"{SECRET}\n2\n1\n1 1 1\n"),
        ("uci", f"1\n2\n1\n1 {SECRET} 1\n"),
        ("vocab", f"a\n{SECRET}\n{SECRET}\n"),
    ],
)
def test_reader_errors_never_echo_the_file(tmp_path, reader, body):
    path = tmp_path / "f.txt"
    path.write_text(body)
    with pytest.raises(ValueError) as info:
        if reader == "ldac":
            read_ldac(path)
        elif reader == "uci":
            read_uci(path)
        else:
            (tmp_path / "c.ldac").write_text("1 0:1\n")
            read_ldac(tmp_path / "c.ldac", path)
    assert str(info.value).startswith(f"{path}, line ")
    assert "s3cr3t" not in str(info.value) and "hidden" not in str(info.value)


# ---------------------------------------------------------------------- integers, never truncated (issue 11)
@pytest.mark.parametrize(
    "tokens, offsets, msg",
    [
        (np.array([0, 1.7]), [0, 2], "tokens (word ids) must hold integers, got 1.7"),
        (np.array([0, 2**32 + 1], dtype=np.int64), [0, 2], "value 4294967297 at position 1 is out of range"),
        ([0, 1], np.array([0, 1.5, 2]), "doc_offsets must hold integers, got 1.5"),
        (np.array([0, np.nan]), [0, 2], "tokens (word ids) must hold integers"),
        (np.array(["0", "1"]), [0, 2], "tokens (word ids) must hold integers"),
    ],
)
def test_corpus_ids_and_offsets_must_be_integers(tokens, offsets, msg):
    with pytest.raises(ValueError, match=re.escape(msg)):
        Corpus(tokens, offsets, ("a", "b"))


def test_corpus_accepts_whole_floats_and_labels_are_checked():
    c = Corpus(np.array([0.0, 1.0]), np.array([0.0, 1.0, 2.0]), ("a", "b"))
    assert c.tokens.tolist() == [0, 1] and c.doc_offsets.tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match=re.escape("labels must hold integers, got 0.5")):
        Corpus([0, 1], [0, 1, 2], ("a", "b"), labels=[0.5, 1])
    with pytest.raises(ValueError, match="X must hold non-negative integer counts"):
        Corpus.from_dtm(np.array([[1.5, 0.0]]))


# ---------------------------------------------------------------------- parts of files (one host's share)
def _concat_parts(parts):
    names = sum((p.doc_names for p in parts), ())
    return names, np.concatenate([p.tokens for p in parts]), np.concatenate([p.doc_lengths for p in parts])


@pytest.fixture
def corpus_with_empty_ends():
    rng = np.random.default_rng(7)
    X = rng.poisson(0.8, size=(31, 9))
    X[[0, 3, 17, 30]] = 0  # empty documents, also first and last
    X[9] = 40  # one long document
    return Corpus.from_dtm(X, vocab=[f"w{i}" for i in range(9)], empty="keep")


@pytest.mark.parametrize("fmt", ["ldac", "uci"])
def test_parts_of_a_file_tile_its_documents(tmp_path, corpus_with_empty_ends, fmt):
    """part=(i, n) for i < n, and docs=(start, stop) ranges, are the whole-file read cut into pieces:
    the same documents, names and tokens, with empty documents dropped per part as per file."""
    c = corpus_with_empty_ends
    path, vocab = tmp_path / f"c.{fmt}", tmp_path / "v.txt"
    (write_ldac if fmt == "ldac" else write_uci)(c, path, vocab)
    read = read_ldac if fmt == "ldac" else read_uci
    whole = read(path, vocab, empty="keep")
    assert whole.num_docs == 31
    with pytest.warns(EmptyDocumentWarning):
        dropped = read(path, vocab)
    for n in (1, 2, 3, 5, 8):
        parts = [read(path, vocab, empty="keep", part=(i, n)) for i in range(n)]
        names, tokens, lengths = _concat_parts(parts)
        assert names == whole.doc_names, n
        np.testing.assert_array_equal(tokens, whole.tokens)
        np.testing.assert_array_equal(lengths, whole.doc_lengths)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EmptyDocumentWarning)
            kept = [read(path, vocab, part=(i, n)) for i in range(n)]
        names, tokens, _ = _concat_parts(kept)
        assert names == dropped.doc_names
        np.testing.assert_array_equal(tokens, dropped.tokens)
    for start, stop in ((0, 1), (2, 9), (9, 10), (25, 31), (29, 100)):
        p = read(path, vocab, empty="keep", docs=(start, stop))
        ref = whole.subset(np.arange(start, min(stop, 31)))
        assert p.doc_names == ref.doc_names
        np.testing.assert_array_equal(p.tokens, ref.tokens)
    # the parts are balanced by bytes: no part holds more than about its share plus one document
    n = 4
    parts = [read(path, vocab, empty="keep", part=(i, n)) for i in range(n)]
    entries = [int((p.to_dtm() > 0).sum()) for p in parts]
    assert max(entries) <= sum(entries) / n + 9 + 2, entries


def test_ldac_docs_of_a_gzip_file(tmp_path, corpus_with_empty_ends):
    c = corpus_with_empty_ends
    write_ldac(c, tmp_path / "c.ldac.gz", tmp_path / "v.txt")
    whole = read_ldac(tmp_path / "c.ldac.gz", tmp_path / "v.txt", empty="keep")
    p = read_ldac(tmp_path / "c.ldac.gz", tmp_path / "v.txt", empty="keep", docs=(5, 12))
    assert p.doc_names == tuple(str(i) for i in range(5, 12))
    np.testing.assert_array_equal(p.tokens, whole.subset(np.arange(5, 12)).tokens)
    with pytest.raises(ValueError, match="uncompressed"):
        read_ldac(tmp_path / "c.ldac.gz", tmp_path / "v.txt", part=(0, 2))


def test_parts_of_files_refuse_what_they_cannot_read(tmp_path, corpus_with_empty_ends):
    c = corpus_with_empty_ends
    write_ldac(c, tmp_path / "c.ldac", tmp_path / "v.txt")
    write_uci(c, tmp_path / "dw.txt", tmp_path / "v.txt")
    write_uci(c, tmp_path / "dw.txt.gz")
    with pytest.raises(ValueError, match="needs vocab_path"):
        read_ldac(tmp_path / "c.ldac", docs=(0, 3))
    for kwargs, msg in [(dict(docs=(3, 3)), "0 <= start < stop"), (dict(part=(2, 2)), "0 <= i < n"),
                        (dict(part=(0, 2), docs=(0, 1)), "not both"), (dict(docs=5), "pair of integers"),
                        (dict(docs=(40, 50)), "has only 31 lines")]:
        with pytest.raises(ValueError, match=re.escape(msg)):
            read_ldac(tmp_path / "c.ldac", tmp_path / "v.txt", **kwargs)
    with pytest.raises(ValueError, match="D = 31 documents"):
        read_uci(tmp_path / "dw.txt", tmp_path / "v.txt", docs=(31, 40))
    with pytest.raises(ValueError, match="uncompressed"):
        read_uci(tmp_path / "dw.txt.gz", docs=(0, 2))
    # more parts than entries: some parts hold no document and say so; the others still tile the file
    held, refused = [], 0
    for i in range(400):
        try:
            held.append(read_uci(tmp_path / "dw.txt", tmp_path / "v.txt", empty="keep", part=(i, 400)))
        except ValueError as e:
            assert "holds no document" in str(e)
            refused += 1
    assert refused > 0 and sum((p.doc_names for p in held), ()) == tuple(str(i) for i in range(1, 32))
    # a blank line inside a part is an error, as in the whole file; at the end it is not
    text = (tmp_path / "c.ldac").read_text().splitlines()
    (tmp_path / "b.ldac").write_text("\n".join(text[:6] + [""] + text[6:]) + "\n\n\n")
    with pytest.raises(ValueError, match=_where(tmp_path / "b.ldac", 7) + " blank line"):
        read_ldac(tmp_path / "b.ldac", tmp_path / "v.txt", docs=(4, 8))
    assert read_ldac(tmp_path / "b.ldac", tmp_path / "v.txt", empty="keep", docs=(25, 40)).num_docs == 7
    # entries out of order: a part of an unsorted UCI file is refused, naming the line
    lines = (tmp_path / "dw.txt").read_text().splitlines()
    body = lines[3:]
    body[10], body[-1] = body[-1], body[10]
    (tmp_path / "u.txt").write_text("\n".join(lines[:3] + body) + "\n")
    with pytest.raises(ValueError, match="sorted"):
        read_uci(tmp_path / "u.txt", tmp_path / "v.txt", docs=(0, 31))
    with pytest.raises(ValueError, match=_where(tmp_path / "u.txt", 4 + 11)):  # the line after the swapped-in one
        read_uci(tmp_path / "u.txt", tmp_path / "v.txt", docs=(0, 31))
    # a malformed line in a part names its line in the file
    body = lines[3:]
    body[20] = "x y z"
    (tmp_path / "m.txt").write_text("\n".join(lines[:3] + body) + "\n")
    with pytest.raises(ValueError, match=_where(tmp_path / "m.txt", 24)):
        read_uci(tmp_path / "m.txt", tmp_path / "v.txt", docs=(int(body[19].split()[0]) - 1, 31))
