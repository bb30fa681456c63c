"""Words: the tokenizer (:func:`tokenize`, its default :data:`TOKEN_PATTERN`, scikit-learn's, and
:data:`WORD_PATTERN`) and stop words (:func:`english_stop_words`), used by
:meth:`~gibbsjax.corpus.Corpus.from_texts`.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = ["TOKEN_PATTERN", "WORD_PATTERN", "tokenize", "check_token_pattern", "english_stop_words",
           "stop_word_set"]


# ---------------------------------------------------------------------- tokenizer
#: What :func:`tokenize` counts as a word by default, scikit-learn's ``CountVectorizer``
#: default ``token_pattern``: two or more letters, digits or underscores between word
#: boundaries (so one-character tokens are dropped, numbers are words, and an apostrophe
#: splits a word: ``"don't"`` gives ``"don"``).
TOKEN_PATTERN = r"(?u)\b\w\w+\b"
#: Another word pattern: a letter, then any letters, digits, underscores or apostrophes,
#: ending in a letter or digit ("letter" and "digit" Unicode-aware, ``\w`` in Python's
#: ``re``); numbers alone are not words, inner apostrophes stay, one letter is a word.
WORD_PATTERN = r"[^\W\d_](?:[\w']*[^\W_])?"
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})


def check_token_pattern(pattern, name: str = "token_pattern") -> re.Pattern:
    """``pattern`` compiled, or ``ValueError`` naming it: a regex (str or compiled) with at most
    one capturing group (with one, the group is the token, as in scikit-learn).

    Parameters
    ----------
    pattern : str or re.Pattern
        The token regex.
    name : str, default "token_pattern"
        The argument's name, for messages.

    Returns
    -------
    re.Pattern
        The compiled regex.

    Raises
    ------
    ValueError
        Naming ``name`` and the pattern: not a str, not a valid regex, or more than one group.

    Examples
    --------
    >>> check_token_pattern("[a-z]+").findall("one 2 three")
    ['one', 'three']
    >>> check_token_pattern("(a)(b)")
    Traceback (most recent call last):
    ...
    ValueError: token_pattern '(a)(b)' has 2 capturing groups; a token pattern has at most one (the token)
    """
    if isinstance(pattern, re.Pattern):
        regex = pattern
    elif isinstance(pattern, str):
        try:
            regex = _compile(pattern)
        except re.error as e:
            raise ValueError(f"{name} {pattern!r} is not a regular expression: {e}") from None
    else:
        raise ValueError(f"{name} must be a regular expression (a str), got {type(pattern).__name__} "
                         f"{pattern!r}")
    if regex.groups > 1:
        raise ValueError(f"{name} {regex.pattern!r} has {regex.groups} capturing groups; a token pattern has "
                         "at most one (the token)")
    return regex


@lru_cache(maxsize=64)
def _compile(pattern: str) -> re.Pattern:
    return re.compile(pattern)


def tokenize(text: str, *, lowercase: bool = True, pattern: str | re.Pattern | None = None) -> list[str]:
    """Split ``text`` into words: every non-overlapping match of ``pattern``.

    The default, :data:`TOKEN_PATTERN`, is scikit-learn's ``CountVectorizer``'s: runs of two
    or more letters, digits or underscores (Unicode-aware), so one-character tokens are
    dropped, numbers are words and punctuation (apostrophes and hyphens too) splits words.
    :data:`WORD_PATTERN` keeps inner apostrophes and single letters and drops numbers.
    Typographic apostrophes (’) count as ``'``; the text is put in Unicode NFC form and,
    with ``lowercase``, lower-cased first.  A pattern with one capturing group gives the
    group (as in scikit-learn).

    Parameters
    ----------
    text : str
        The text.
    lowercase : bool, default True
        Lower-case the text first.
    pattern : str or re.Pattern, optional
        The token regex (default :data:`TOKEN_PATTERN`).

    Returns
    -------
    list of str
        The words, in order.

    Examples
    --------
    >>> tokenize("The cat's 2 well-known toys: x1, __init__ and Ünïcode!")
    ['the', 'cat', 'well', 'known', 'toys', 'x1', '__init__', 'and', 'ünïcode']
    >>> tokenize("The cat's 2 well-known toys: x1, __init__ and Ünïcode!", pattern=WORD_PATTERN)
    ['the', "cat's", 'well', 'known', 'toys', 'x1', 'init', 'and', 'ünïcode']
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    if not text.isascii():
        text = unicodedata.normalize("NFC", text).translate(_APOSTROPHES)
    if lowercase:
        text = text.lower()
    regex = check_token_pattern(TOKEN_PATTERN if pattern is None else pattern, "pattern")
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


def stop_word_set(stop_words, pattern: str | re.Pattern | None = None) -> frozenset[str]:
    """The stop words ``stop_words`` (None, ``"english"`` or an iterable of words) as a set;
    with a token ``pattern``, each stop word's tokens under it are stop words too, so that a
    stop word the pattern splits still matches the words of a text (``"don't"`` stops
    ``"don"`` under :data:`TOKEN_PATTERN`).

    Parameters
    ----------
    stop_words : None, "english" or iterable of str
        The stop words.
    pattern : str or re.Pattern, optional
        The token pattern of the texts they are removed from.

    Returns
    -------
    frozenset of str
        The words to remove (empty for None).

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
    >>> sorted(stop_word_set(["don't", "the"], TOKEN_PATTERN))
    ['don', "don't", 'the']
    """
    if stop_words is None:
        return frozenset()
    if isinstance(stop_words, str):
        if stop_words.lower() != "english":
            raise ValueError(
                f"stop_words must be None, 'english' or an iterable of words, got the string {stop_words!r}"
            )
        words = english_stop_words()
    else:
        words = frozenset(str(w) for w in stop_words)
    if pattern is None:
        return words
    return words | frozenset(t for w in words for t in tokenize(w, lowercase=False, pattern=pattern))
