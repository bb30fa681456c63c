"""Words: the tokenizer (:func:`tokenize`, :data:`WORD_PATTERN`) and stop words
(:func:`english_stop_words`), used by :meth:`~gibbsjax.corpus.Corpus.from_texts`.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = ["WORD_PATTERN", "tokenize", "english_stop_words", "stop_word_set"]


# ---------------------------------------------------------------------- tokenizer
#: What :func:`tokenize` counts as a word: a letter, then any letters, digits,
#: underscores or apostrophes, ending in a letter or digit.  "Letter" and
#: "digit" are Unicode-aware (``\w`` in Python's ``re``).
WORD_PATTERN = r"[^\W\d_](?:[\w']*[^\W_])?"
_WORD_RE = re.compile(WORD_PATTERN)
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})


def tokenize(text: str, *, lowercase: bool = True, pattern: str | re.Pattern | None = None) -> list[str]:
    """Split ``text`` into words.

    A word is a maximal run that starts with a letter, continues with letters,
    digits, underscores or apostrophes, and ends with a letter or digit
    (:data:`WORD_PATTERN`; letters and digits in the Unicode sense).  So
    numbers alone (``"2024"``) are not words, ``"x1"`` and ``"get_item"`` are,
    hyphens and other punctuation split words (``"well-known"`` gives
    ``"well"``, ``"known"``), inner apostrophes stay (``"don't"``), leading and
    trailing underscores and apostrophes are dropped (``"__init__"`` gives
    ``"init"``).  Typographic apostrophes (’) count as ``'``; the text is put
    in Unicode NFC form and, with ``lowercase``, lower-cased first.  Single
    letters are words (remove them with stop words if you want).

    ``pattern`` replaces the word regex (every non-overlapping match is a word).

    Parameters
    ----------
    text : str
        The text.
    lowercase : bool, default True
        Lower-case the text first.
    pattern : str or re.Pattern, optional
        A regex replacing the word regex (every non-overlapping match is a word).

    Returns
    -------
    list of str
        The words, in order.

    Examples
    --------
    >>> tokenize("The cat's 2 well-known toys: x1, __init__ and Ünïcode!")
    ['the', "cat's", 'well', 'known', 'toys', 'x1', 'init', 'and', 'ünïcode']
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    if not text.isascii():
        text = unicodedata.normalize("NFC", text).translate(_APOSTROPHES)
    if lowercase:
        text = text.lower()
    regex = _WORD_RE if pattern is None else re.compile(pattern)
    return regex.findall(text)


@lru_cache(maxsize=1)
def english_stop_words() -> frozenset[str]:
    """The English stop-word list shipped with gibbsjax (about 270 function words).

    Articles, pronouns, prepositions, conjunctions, auxiliary and modal verbs,
    common adverbs, and contractions such as ``"don't"``; all lower case.  The
    list is ``gibbsjax/datasets/data/stopwords_en.txt``.

    Returns
    -------
    frozenset of str
        The stop words.

    Examples
    --------
    >>> {"the", "and", "don't"} <= english_stop_words(), "topic" in english_stop_words()
    (True, False)
    """
    from importlib import resources

    text = resources.files("gibbsjax.datasets").joinpath("data", "stopwords_en.txt").read_text("utf-8")
    return frozenset(
        line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")
    )


def stop_word_set(stop_words) -> frozenset[str]:
    """The set of stop words an option names.

    Parameters
    ----------
    stop_words : None, "english" or iterable of str
        No stop words, scikit-learn's English list, or the words given.

    Returns
    -------
    frozenset of str
        The stop words.

    Raises
    ------
    ValueError
        For a string other than ``"english"``.

    Examples
    --------
    >>> sorted(stop_word_set(["the", "a"]))
    ['a', 'the']
    >>> "the" in stop_word_set("english")
    True
    """
    if stop_words is None:
        return frozenset()
    if isinstance(stop_words, str):
        if stop_words.lower() == "english":
            return english_stop_words()
        raise ValueError(
            f"stop_words must be None, 'english' or an iterable of words, got the string {stop_words!r}"
        )
    return frozenset(str(w) for w in stop_words)
