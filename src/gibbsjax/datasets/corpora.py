"""Text corpora: the lecture-notes a/b/c toy corpus, and standard-library docstrings.

>>> from gibbsjax.datasets.corpora import abc_corpus
>>> abc_corpus()
Corpus(12 documents, 36 tokens, vocabulary of 3)
"""

from __future__ import annotations

import ast
import sysconfig
from collections.abc import Mapping, Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path

from gibbsjax.corpus import WORD_PATTERN, Corpus, english_stop_words, tokenize

__all__ = ["abc_corpus", "stdlib_docs", "STDLIB_GROUPS"]


def abc_corpus() -> Corpus:
    """The twelve three-word documents over the words a, b, c of the Gibbs-sampling lecture notes.

    CSE 5523 Lecture Notes 23, §23.3 (``shared/seeds/002``): the documents
    ``a b a``, ``c b c``, ``b a a``, repeated four times, on which a two-topic
    model should find one topic rich in ``a`` and one rich in ``c``.  Shipped as
    ``datasets/data/abc.txt`` (one document per line); vocabulary ``("a", "b", "c")``,
    token order kept (word ``i`` of document ``d`` is ``tokens[3 * d + i]``).

    Returns
    -------
    Corpus
        Twelve documents of three tokens.

    Examples
    --------
    >>> c = abc_corpus()
    >>> c.tokens.reshape(12, 3)[:3].tolist()
    [[0, 1, 0], [2, 1, 2], [1, 0, 0]]
    >>> c.word_counts.tolist()
    [16, 12, 8]
    """
    text = resources.files("gibbsjax.datasets").joinpath("data", "abc.txt").read_text("utf-8")
    docs = [line.split() for line in text.splitlines() if line.strip()]
    return Corpus.from_token_lists(docs, vocab=("a", "b", "c"))


#: Label -> the top-level standard-library modules / packages whose docstrings it holds.
#: All are pure-Python parts of CPython present on every installation of 3.9 .. 3.13
#: (``decimal``'s Python implementation is the ``_pydecimal`` module).
STDLIB_GROUPS: dict[str, tuple[str, ...]] = {
    "asyncio": ("asyncio",),
    "decimal": ("_pydecimal",),
    "email": ("email",),
    "http": ("http", "urllib"),
    "importlib": ("importlib",),
    "logging": ("logging",),
    "unittest": ("unittest",),
    "xml": ("xml",),
}

# Words frequent in any docstring but saying nothing about its topic.
_DOCSTRING_STOP_WORDS = frozenset(
    """self cls none true false args kwargs arg argument arguments param params parameter parameters
    return returns returned rtype raise raises raised type default optional function functions
    method methods class classes object objects instance value values used use using see also
    note example examples given otherwise new call called calls e g i etc ie eg""".split()
)


def _docstrings(path: Path, module: str):
    """(qualified name, docstring) of a file's module, classes and functions, in source order."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (SyntaxError, ValueError, OSError):
        return
    doc = ast.get_docstring(tree, clean=True)
    if doc:
        yield module, doc

    def visit(body, prefix):
        for node in body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}.{node.name}"
                doc = ast.get_docstring(node, clean=True)
                if doc:
                    yield name, doc
                yield from visit(node.body, name)

    yield from visit(tree.body, module)


def _strip_code(doc: str) -> str:
    """Drop doctest lines (``>>>`` and ``...`` prompts) and the output right after them."""
    out, in_example = [], False
    for line in doc.splitlines():
        s = line.strip()
        if s.startswith(">>>") or (in_example and s.startswith("...")):
            in_example = True
            continue
        if in_example and s:  # expected output of the example
            continue
        in_example = False
        out.append(line)
    return "\n".join(out)


def _group_files(root: Path, modules: Sequence[str]):
    for mod in modules:
        single = root / f"{mod}.py"
        if single.is_file():
            yield mod, single
        pkg = root / mod
        if pkg.is_dir():
            for p in sorted(pkg.rglob("*.py"), key=lambda p: p.relative_to(root).as_posix()):
                rel = p.relative_to(root)
                if any(part in ("test", "tests", "idle_test") for part in rel.parts[:-1]):
                    continue
                parts = list(rel.with_suffix("").parts)
                if parts[-1] == "__init__":
                    parts.pop()
                yield ".".join(parts), p


def _word_tokenizer(text: str) -> list[str]:
    return [w for w in tokenize(text, lowercase=False, pattern=WORD_PATTERN) if len(w) > 1]


@lru_cache(maxsize=8)
def _stdlib_docs(groups, min_words, min_count, max_doc_freq, min_doc_length, stdlib) -> Corpus:
    root = Path(stdlib)
    stops = english_stop_words() | _DOCSTRING_STOP_WORDS
    texts, names, labels, seen = [], [], [], set()
    for label, modules in groups:
        for module, path in _group_files(root, modules):
            for qualname, doc in _docstrings(path, module):
                text = _strip_code(doc)
                if text in seen or len(_word_tokenizer(text.lower())) < min_words:
                    continue
                seen.add(text)
                texts.append(text)
                names.append(qualname)
                labels.append(label)
    if not texts:
        raise ValueError(f"no docstrings with at least {min_words} words found under {root}")
    corpus = Corpus.from_texts(
        texts,
        tokenizer=_word_tokenizer,
        stop_words=stops,
        min_count=min_count,
        max_doc_freq=max_doc_freq,
        doc_names=names,
        labels=labels,
        label_names=[g for g, _ in groups],
        empty="keep",
    )
    return corpus.subset(corpus.doc_lengths >= min_doc_length)


def stdlib_docs(
    packages: Sequence[str] | Mapping[str, Sequence[str]] | None = None,
    *,
    min_words: int = 20,
    min_count: int = 5,
    max_doc_freq: float = 0.25,
    min_doc_length: int = 10,
) -> Corpus:
    """A real labelled corpus: docstrings of the Python standard library, one document each.

    Built at run time from the source files of the running Python (under
    ``sysconfig.get_paths()["stdlib"]``), parsed with :mod:`ast` -- nothing is
    imported.  **The corpus depends on the Python version** (and, slightly,
    on how it was packaged): documents, vocabulary and counts differ between
    3.11 and 3.12; within one installation it is deterministic (files are
    walked in sorted order) and cached in memory.

    Every module, class and function docstring of the chosen packages is a
    document if it has at least ``min_words`` words (of two or more letters,
    before filtering); doctest examples are removed and repeated docstrings
    kept once.  Words are lower-cased :data:`~gibbsjax.corpus.WORD_PATTERN` words
    of two or more characters; English stop words and a few words common to
    all docstrings (``self``, ``return``, ``default``, ``argument``, ...) are
    removed, as are words seen fewer than ``min_count`` times or in more than
    ``max_doc_freq`` of the documents; documents left with fewer than
    ``min_doc_length`` tokens are dropped (without a warning).

    Parameters
    ----------
    packages : sequence of str or mapping, optional
        Label names from :data:`STDLIB_GROUPS` (default: all eight -- asyncio,
        decimal, email, http (with urllib), importlib, logging, unittest, xml), or
        a mapping ``label -> top-level module names``.  Labels are numbered in the
        given order.
    min_words : int, default 20
        The fewest words (before filtering) of a docstring kept as a document.
    min_count : int, default 5
        Remove words seen fewer times.
    max_doc_freq : float, default 0.25
        Remove words in more than this fraction of the documents.
    min_doc_length : int, default 10
        Drop documents left with fewer tokens.

    Returns
    -------
    Corpus
        Labelled documents; ``doc_names`` are qualified names
        (``"email.message.Message.get_payload"``).

    Examples
    --------
    >>> c = stdlib_docs()
    >>> c.label_names
    ('asyncio', 'decimal', 'email', 'http', 'importlib', 'logging', 'unittest', 'xml')
    >>> c.num_docs > 500
    True
    """
    if packages is None:
        groups = tuple(STDLIB_GROUPS.items())
    elif isinstance(packages, Mapping):
        groups = tuple((str(k), tuple(v) if not isinstance(v, str) else (v,)) for k, v in packages.items())
    else:
        if isinstance(packages, str):
            packages = [packages]
        unknown = [p for p in packages if p not in STDLIB_GROUPS]
        if unknown:
            raise ValueError(
                f"packages: unknown group(s) {unknown}; choose from {sorted(STDLIB_GROUPS)} "
                f"or pass a mapping label -> module names"
            )
        groups = tuple((p, STDLIB_GROUPS[p]) for p in packages)
    if not groups:
        raise ValueError("packages must name at least one group")
    return _stdlib_docs(
        groups, int(min_words), int(min_count), float(max_doc_freq), int(min_doc_length),
        sysconfig.get_paths()["stdlib"],
    )
