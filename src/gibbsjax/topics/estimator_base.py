"""What every gibbsjax estimator (:class:`gibbsjax.LDA`) shares: scikit-learn's
conventions without importing scikit-learn, and a NetCDF file without pickle.

:class:`Estimator` gives a subclass ``get_params`` / ``set_params`` read from its
constructor's signature (so ``clone``, ``Pipeline`` and ``GridSearchCV`` work), a
``repr`` showing the arguments that differ from their defaults, scikit-learn's
tags and fitted check (:func:`not_fitted_error`: scikit-learn's ``NotFittedError``), its
names of other libraries' settings refused with a message naming ours (``_refused``),
quiet fits inside its model selection (:func:`in_model_selection`), and the file format of ``save`` / ``load``: the result
(an ArviZ InferenceData) as it is, plus a group ``estimator`` holding the
constructor's arguments (JSON, in its attributes) and the training corpus
(:func:`write_estimator`, :func:`read_estimator`).  A subclass supplies
``_check_params`` (``ValueError`` naming the argument) and names the attribute a
fit sets (``_fitted_attribute``).  :class:`TopicModelNames` adds scikit-learn's
names of a fitted topic model's parts (``components_``).
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import sys
import warnings
from typing import Any

import numpy as np

from gibbsjax.corpus import Corpus

__all__ = ["Estimator", "TopicModelNames", "ESTIMATOR_GROUP", "write_estimator", "read_estimator",
           "not_fitted_error", "in_model_selection", "resolve_auto", "refuse_foreign_names",
           "refusing_foreign_names"]

#: the group of a saved estimator that holds its parameters (attributes) and the
#: training corpus (arrays)
ESTIMATOR_GROUP = "estimator"
_SAVE_FORMAT = 1


class _NotFittedError(ValueError, AttributeError):
    """A method that needs a fitted estimator was called before ``fit`` (scikit-learn's
    ``NotFittedError`` is this class when scikit-learn is installed)."""


_NotFittedError.__name__ = _NotFittedError.__qualname__ = "NotFittedError"


@functools.cache
def not_fitted_error() -> type[Exception]:
    """The class of the error a method of an unfitted estimator raises: scikit-learn's
    ``sklearn.exceptions.NotFittedError`` when scikit-learn is installed (imported only
    here, when first asked), otherwise an equivalent subclass of ``ValueError`` and
    ``AttributeError`` (as scikit-learn's is).  Also this module's ``NotFittedError``.

    Returns
    -------
    type
        The exception class.

    Examples
    --------
    >>> from gibbsjax import LDA
    >>> try:
    ...     LDA(3).transform([["a"]])
    ... except not_fitted_error() as e:
    ...     print(e, isinstance(e, ValueError) and isinstance(e, AttributeError))
    LDA.transform needs a fitted model: call fit(X) first (or LDA.load(path)) True
    """
    try:
        from sklearn.exceptions import NotFittedError as error
    except ImportError:
        error = _NotFittedError
    return error


def __getattr__(name: str):
    if name == "NotFittedError":  # resolved when asked: scikit-learn is not imported with gibbsjax
        return not_fitted_error()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: the modules whose frames make a fit "inside scikit-learn's model selection"
_MODEL_SELECTION = "sklearn.model_selection"


def in_model_selection() -> bool:
    """Whether the caller runs inside scikit-learn's model selection (``GridSearchCV``,
    ``RandomizedSearchCV``, ``cross_val_score``, ``cross_validate``, ``learning_curve``, ...):
    a frame of a module of ``sklearn.model_selection`` on the call stack.  This holds in
    joblib's worker processes too (``n_jobs``), where the fit runs inside
    ``sklearn.model_selection._validation``'s ``_fit_and_score``.  Reads the stack only
    (no scikit-learn import).

    Returns
    -------
    bool
        True inside scikit-learn's model selection.

    Examples
    --------
    >>> in_model_selection()
    False
    """
    frame = sys._getframe(1)
    while frame is not None:
        if str(frame.f_globals.get("__name__", "")).startswith(_MODEL_SELECTION):
            return True
        frame = frame.f_back
    return False


def resolve_auto(value) -> bool:
    """A setting that is True, False or ``"auto"`` as a bool: ``"auto"`` is on, except
    inside scikit-learn's model selection (:func:`in_model_selection`), where the many
    fits of a search stay quiet.

    Parameters
    ----------
    value : bool or "auto"
        The setting (checked elsewhere).

    Returns
    -------
    bool
        The setting in effect here.

    Examples
    --------
    >>> resolve_auto("auto"), resolve_auto(False)
    (True, False)
    """
    if isinstance(value, str) and value == "auto":
        return not in_model_selection()
    return bool(value)


def refuse_foreign_names(cls, given, where: str) -> None:
    """``ValueError`` when the arguments ``given`` hold another library's name of a setting
    that ``cls`` refuses (its ``_refused``: name -> what to do instead), naming the value
    and ours.

    Parameters
    ----------
    cls : type
        The estimator class.
    given : mapping of str to object
        The arguments given, by name.
    where : str
        What was called, for the message (``"LDA()"``, ``"set_params"``).

    Raises
    ------
    ValueError
        For the first refused name.

    Examples
    --------
    >>> from gibbsjax import LDA
    >>> refuse_foreign_names(LDA, {"max_iter": 10}, "LDA()")
    Traceback (most recent call last):
    ...
    ValueError: LDA() got max_iter=10, a name of scikit-learn's LatentDirichletAllocation: give num_warmup (sweeps discarded per chain) and num_draws (draws kept per chain)
    """
    for name, value in given.items():
        if name in cls._refused:
            raise ValueError(f"{where} got {name}={value!r}, a name of {cls._refused_from}: {cls._refused[name]}")


def refusing_foreign_names(init):
    """Decorate an estimator's ``__init__`` so that another library's names of its settings
    (its class's ``_refused``) give a ``ValueError`` naming ours, not Python's bare
    ``TypeError``; the signature seen by ``inspect`` (and ``get_params``) stays ``init``'s.

    Parameters
    ----------
    init : callable
        The ``__init__`` of an :class:`Estimator` subclass.

    Returns
    -------
    callable
        ``init``, checking the names it is given first (:func:`refuse_foreign_names`).

    Examples
    --------
    >>> class Toy(Estimator):
    ...     _refused, _refused_from = {"n_iter": "give num_draws"}, "OtherLib's Toy"
    ...     @refusing_foreign_names
    ...     def __init__(self, num_draws=10):
    ...         self.num_draws = num_draws
    >>> Toy(num_draws=5).get_params()
    {'num_draws': 5}
    >>> Toy(n_iter=5)
    Traceback (most recent call last):
    ...
    ValueError: Toy() got n_iter=5, a name of OtherLib's Toy: give num_draws
    """

    @functools.wraps(init)
    def checked(self, *args, **kwargs):
        refuse_foreign_names(type(self), kwargs, f"{type(self).__name__}()")
        init(self, *args, **kwargs)

    return checked


class Estimator:
    """scikit-learn's estimator conventions, for a subclass whose constructor stores
    its arguments as given and checks them with ``_check_params``.

    Examples
    --------
    >>> from gibbsjax import LDA
    >>> from gibbsjax.topics.estimator_base import Estimator
    >>> issubclass(LDA, Estimator), LDA(num_topics=4).get_params()['num_topics']
    (True, 4)
    """

    #: an attribute that exists once the estimator is fitted
    _fitted_attribute = ""
    #: arguments :meth:`__repr__` shows even at their default
    _always_shown: tuple[str, ...] = ()
    #: constructor arguments that are other names of one argument (alias -> name):
    #: :meth:`set_params` given one of them sets both
    _aliases: dict[str, str] = {}
    #: another library's names of settings, refused by the constructor and set_params
    #: (name -> what to use instead), and that library's estimator, for the message
    _refused: dict[str, str] = {}
    _refused_from = ""

    @classmethod
    def _param_names(cls) -> list[str]:
        return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]

    def _check_params(self) -> None:
        """Check the arguments without changing them (``ValueError`` naming the argument)."""

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor's arguments, as given (scikit-learn's convention).

        >>> from gibbsjax import LDA
        >>> LDA(num_topics=5, seed=0).get_params()["num_topics"]
        5
        """
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        """Set constructor arguments by name and return ``self`` (checked like the
        constructor's; an unknown name is a ``ValueError``).  Fitted attributes stay
        until the next ``fit``.

        >>> from gibbsjax import LDA
        >>> LDA(num_topics=5).set_params(num_topics=7, alpha=0.5).num_topics
        7
        """
        known = self._param_names()
        refuse_foreign_names(type(self), params, "set_params")
        for name in params:
            if name not in known:
                raise ValueError(f"unknown parameter {name!r} for {type(self).__name__}; parameters are: "
                                 f"{', '.join(known)}")
        params = dict(params)
        for alias, name in self._aliases.items():  # one of a pair given: the other follows it
            if alias in params and name not in params:
                params[name] = params[alias]
            elif name in params and alias not in params:
                params[alias] = params[name]
        old = {name: getattr(self, name) for name in params}
        for name, value in params.items():
            setattr(self, name, value)
        try:
            self._check_params()
        except ValueError:
            for name, value in old.items():
                setattr(self, name, value)
            raise
        return self

    def __sklearn_tags__(self):
        """scikit-learn ≥ 1.6 asks estimators for their tags; scikit-learn is imported
        here only, when it asks (older versions read :meth:`_more_tags`)."""
        try:
            from sklearn.utils import InputTags, Tags, TargetTags, TransformerTags
        except ImportError:  # scikit-learn < 1.6 does not call this method
            return self._more_tags()
        return Tags(estimator_type=None, target_tags=TargetTags(required=False),
                    transformer_tags=TransformerTags(preserves_dtype=["float64"]),
                    input_tags=InputTags(two_d_array=True, sparse=True, positive_only=True, string=True),
                    requires_fit=True)

    def _more_tags(self) -> dict[str, Any]:
        """Tags for scikit-learn < 1.6."""
        return {"requires_positive_X": True, "X_types": ["2darray", "sparse", "string"],
                "requires_y": False, "preserves_dtype": [np.float64]}

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, self._fitted_attribute)

    def _check_fitted(self):
        """:func:`not_fitted_error` naming the method that called this, unless fitted."""
        if not self.__sklearn_is_fitted__():
            name = type(self).__name__
            method = sys._getframe(1).f_code.co_name
            raise not_fitted_error()(f"{name}.{method} needs a fitted model: call fit(X) first (or {name}.load(path))")

    def __repr__(self) -> str:
        defaults = {n: p.default for n, p in inspect.signature(type(self).__init__).parameters.items()
                    if n != "self"}
        shown = [f"{n}={v!r}" for n, v in self.get_params().items()
                 if (n in self._always_shown and v is not None)
                 or not (type(v) is type(defaults[n]) and v == defaults[n])]
        return f"{type(self).__name__}({', '.join(shown)})"

    @classmethod
    def _from_params(cls, params: dict[str, Any]):
        """An estimator from saved arguments: unknown names left out, lists back to tuples
        where the constructor's default is a tuple (JSON has no tuples)."""
        defaults = {n: p.default for n, p in inspect.signature(cls.__init__).parameters.items() if n != "self"}
        return cls(**{k: tuple(v) if isinstance(v, list) and isinstance(defaults[k], tuple) else v
                      for k, v in params.items() if k in defaults})


class TopicModelNames:
    """scikit-learn's names (those of ``LatentDirichletAllocation``) for the parts of a
    fitted topic model with ``topic_word_`` (``n_components``, scikit-learn's name of the
    number of topics, is a constructor argument of :class:`gibbsjax.LDA` itself).

    Examples
    --------
    >>> from gibbsjax import LDA
    >>> from gibbsjax.topics.estimator_base import TopicModelNames
    >>> issubclass(LDA, TopicModelNames), LDA(n_components=4).n_components
    (True, 4)
    """

    @property
    def components_(self):
        """The topic-word matrix (K × V), ``topic_word_``: the posterior mean of φ, every
        row a distribution over the words (it sums to 1).  scikit-learn's
        ``LatentDirichletAllocation.components_`` holds unnormalised pseudo-counts
        instead; its rows normalised are the counterpart.  Missing (``AttributeError``,
        so ``hasattr`` says False) before ``fit``."""
        return self.topic_word_


def write_estimator(path: str | os.PathLike, idata, params: dict[str, Any], corpus: Corpus | None, vocab,
                    *, name: str, overwrite: bool = False) -> None:
    """Write a fitted estimator to a NetCDF file: ``idata`` as it is (with its attributes),
    plus the group ``estimator`` with ``params`` (JSON; a RandomState ``random_state`` is
    replaced by the seed it gave, ``idata.attrs["seed"]``), the words ``vocab`` and the
    training ``corpus`` (tokens, document offsets, document names, labels).

    The file is written atomically (:func:`gibbsjax.outputs.write_netcdf`: an interrupted
    or failed save leaves the previous file).  An existing file that is not a gibbsjax
    result is replaced only with ``overwrite=True``; anything but a regular file never
    (``ValueError``, :func:`gibbsjax.outputs.check_output`)."""
    import arviz as az
    import xarray as xr

    from gibbsjax.outputs import check_output, write_netcdf

    check_output(path, force=overwrite, force_hint="overwrite=True")

    params = dict(params)
    if params.get("random_state") is not None and not isinstance(params["random_state"], (int, np.integer)):
        params["random_state"] = None  # a RandomState: the seed it gave is recorded
        params["seed"] = int(idata.attrs["seed"])
    params = {k: (int(v) if isinstance(v, np.integer) else float(v) if isinstance(v, np.floating)
                  else sorted(v) if isinstance(v, (set, frozenset))  # e.g. stop words: JSON has no sets
                  else np.asarray(v).tolist() if isinstance(v, (tuple, list, np.ndarray)) else v)
              for k, v in params.items()}
    attrs = {"params": json.dumps(params), "format": _SAVE_FORMAT,
             "note": f"a gibbsjax.{name}: load it with gibbsjax.{name}.load(path)"}
    variables = {"vocab": ("word", np.array(vocab, dtype=str))}
    if corpus is not None:
        variables.update({
            "tokens": ("token", np.asarray(corpus.tokens, np.int32)),
            "doc_offsets": ("doc_offset", np.asarray(corpus.doc_offsets, np.int64)),
            "doc_names": ("document", np.array(corpus.doc_names, dtype=str)),
        })
        if corpus.labels is not None:
            variables["labels"] = ("document", np.asarray(corpus.labels, np.int32))
            attrs["label_names"] = json.dumps(list(corpus.label_names))
    groups = {g: idata[g] for g in idata.groups()}
    groups[ESTIMATOR_GROUP] = xr.Dataset(variables, attrs=attrs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # groups outside ArviZ's schema
        out = az.InferenceData(**groups)
    out.attrs = dict(idata.attrs)  # the run's attributes (seed, config, ...)
    write_netcdf(out, path)


def read_estimator(path: str | os.PathLike, check=None):
    """A file of :func:`write_estimator` (or any result file), read eagerly:
    ``(idata, params, corpus, vocab)``, ``idata`` without the ``estimator`` group
    (with the file's attributes); ``params``, ``corpus`` and ``vocab`` are None for a
    file without one.  ``check(idata)`` runs on the file's result first.  A file that is
    missing, not a regular file, too large, unreadable or not NetCDF raises a ``ValueError``
    naming it (:func:`gibbsjax.reading.open_result`)."""
    import arviz as az

    from gibbsjax.reading import open_result

    idata = open_result(path, eager=True)
    attrs = dict(idata.attrs)
    if check is not None:
        check(idata)
    params, corpus, vocab = None, None, None
    if ESTIMATOR_GROUP in idata.groups():
        saved = idata[ESTIMATOR_GROUP]
        params = json.loads(str(saved.attrs["params"]))
        vocab = tuple(str(w) for w in saved["vocab"].values)
        if "tokens" in saved:
            labels = saved["labels"].values if "labels" in saved else None
            names = json.loads(str(saved.attrs["label_names"])) if "label_names" in saved.attrs else ()
            corpus = Corpus(saved["tokens"].values, saved["doc_offsets"].values, vocab,
                            tuple(str(n) for n in saved["doc_names"].values), labels, tuple(names))
    keep = {g: idata[g] for g in idata.groups() if g != ESTIMATOR_GROUP}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        clean = az.InferenceData(**keep)
    clean.attrs = attrs
    return clean, params, corpus, vocab
