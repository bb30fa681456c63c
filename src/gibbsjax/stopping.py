"""Stopping rules for ``until=``: run until R-hat and ESS say the chains agree.

A rule is a comma-separated list of conditions on the run's label-invariant
quantities (``lp`` and the recorded variables without a component dimension,
see :attr:`gibbsjax.Kernel.label_dims`)::

    "rhat<1.01,ess>400"

* ``rhat``: the largest rank-normalised split R-hat (Vehtari et al. 2021;
  :func:`gibbsjax.diagnostics.rhat_unguarded`, a non-finite value counting as the worst);
* ``ess`` / ``ess_bulk``: the smallest bulk effective sample size (:func:`gibbsjax.diagnostics.ess`);
* ``ess_tail``: the smallest tail effective sample size;

each compared with ``<``, ``<=``, ``>`` or ``>=`` to a number.  All conditions
must hold.  :func:`gibbsjax.sample` checks the rule after ``num_draws`` draws
and then after every further ``num_draws`` (at most ``max_draws`` in all).

>>> rule = parse_until("rhat<1.01, ess>400")
>>> [str(c) for c in rule]
['rhat<1.01', 'ess_bulk>400']
"""

from __future__ import annotations

import operator
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from gibbsjax.diagnostics import ess, rhat_unguarded

__all__ = ["Condition", "parse_until", "check_until", "UntilResult"]

_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
_STATS = {"rhat": "rhat", "r_hat": "rhat", "ess": "ess_bulk", "ess_bulk": "ess_bulk", "ess_tail": "ess_tail"}
_PATTERN = re.compile(r"^\s*([A-Za-z_]+)\s*(<=|>=|<|>)\s*([0-9.eE+-]+)\s*$")


@dataclass(frozen=True)
class Condition:
    """One condition: ``stat op value`` (e.g. ``rhat < 1.01``).

    Parameters
    ----------
    stat : {"rhat", "ess_bulk", "ess_tail"}
        The statistic.
    op : {"<", "<=", ">", ">="}
        The comparison.
    value : float
        The bound.

    Examples
    --------
    >>> from gibbsjax.stopping import parse_until
    >>> rule = parse_until('rhat<1.01,ess>400')
    >>> [type(c).__name__ for c in rule], rule[0].stat
    (['Condition', 'Condition'], 'rhat')
    """

    stat: str
    op: str
    value: float

    def __str__(self) -> str:
        return f"{self.stat}{self.op}{self.value:g}"

    def holds(self, measured: float) -> bool:
        """Whether the measured worst value satisfies the condition.

        Parameters
        ----------
        measured : float
            The worst value of ``stat`` over the variables.

        Returns
        -------
        bool
            ``measured op value``.

        Examples
        --------
        >>> c = parse_until("rhat<1.01")[0]
        >>> c.holds(1.004), c.holds(1.02)
        (True, False)
        """
        return bool(np.isfinite(measured)) and _OPS[self.op](measured, self.value)


def parse_until(text: str) -> tuple[Condition, ...]:
    """Parse a stopping rule such as ``"rhat<1.01,ess>400"``.

    Parameters
    ----------
    text : str
        Comma-separated conditions (see the module docs).

    Returns
    -------
    tuple of Condition
        The conditions, ``ess`` named ``ess_bulk``.

    Raises
    ------
    ValueError
        Saying what is wrong with ``text``.

    Examples
    --------
    >>> parse_until("ess_tail>=100")[0].stat
    'ess_tail'
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"until must be a non-empty string such as 'rhat<1.01,ess>400', got {text!r}")
    conditions = []
    for part in text.split(","):
        m = _PATTERN.match(part)
        if not m:
            raise ValueError(
                f"until: cannot read {part.strip()!r}; write conditions like 'rhat<1.01,ess>400' "
                f"(statistics: rhat, ess, ess_bulk, ess_tail; operators <, <=, >, >=)"
            )
        name, op, value = m.groups()
        stat = _STATS.get(name.lower())
        if stat is None:
            raise ValueError(f"until: unknown statistic {name!r}; use rhat, ess, ess_bulk or ess_tail")
        try:
            number = float(value)
        except ValueError:
            raise ValueError(f"until: {value!r} is not a number (in {part.strip()!r})") from None
        if not np.isfinite(number) or number <= 0:
            raise ValueError(f"until: {part.strip()!r} needs a positive finite number")
        if stat == "rhat" and op in (">", ">="):
            raise ValueError(f"until: {part.strip()!r} asks R-hat to be large; convergence is R-hat < 1.01 or so")
        if stat != "rhat" and op in ("<", "<="):
            raise ValueError(f"until: {part.strip()!r} asks the ESS to be small; write e.g. 'ess>400'")
        conditions.append(Condition(stat, op, number))
    return tuple(conditions)


@dataclass(frozen=True)
class UntilResult:
    """The outcome of one check: whether every condition holds and the worst values.

    Parameters
    ----------
    met : bool
        Whether every condition holds.
    worst : mapping of str to tuple of (float, str)
        ``stat -> (value, variable)``: the worst value of each statistic and where.
    num_draws : int
        Draws per chain checked.

    Examples
    --------
    >>> import numpy as np
    >>> from gibbsjax.stopping import check_until, parse_until
    >>> draws = {'x': np.random.default_rng(0).normal(size=(4, 500))}
    >>> result = check_until(parse_until('rhat<1.05'), draws)
    >>> type(result).__name__, result.met
    ('UntilResult', True)
    """

    met: bool
    worst: Mapping[str, tuple[float, str]]  # stat -> (value, variable)
    num_draws: int

    def describe(self) -> str:
        """The worst values in words.

        Returns
        -------
        str
            E.g. ``max R-hat 1.004 (lp), min bulk ESS 512 (mu)``.

        Examples
        --------
        >>> rng = np.random.default_rng(0)
        >>> check_until(parse_until("rhat<1.05,ess>100"), {"x": rng.normal(size=(4, 500))}).describe()
        'max R-hat 1.001 (x), min bulk ESS 2003 (x)'
        """
        names = {"rhat": "max R-hat", "ess_bulk": "min bulk ESS", "ess_tail": "min tail ESS"}
        parts = []
        for stat, (value, var) in self.worst.items():
            shown = f"{value:.3f}" if stat == "rhat" else f"{value:.0f}"
            parts.append(f"{names[stat]} {shown} ({var})")
        return ", ".join(parts)


def check_until(rule: Sequence[Condition], draws: Mapping[str, np.ndarray]) -> UntilResult:
    """Evaluate ``rule`` on draws ``name -> (chain, draw, ...)`` arrays.

    The worst value over every variable (and every element of a vector
    variable) is compared.  Fewer than 4 draws per chain never meet a rule.

    Parameters
    ----------
    rule : sequence of Condition
        The rule, from :func:`parse_until`.
    draws : mapping of str to numpy.ndarray
        ``name -> (chain, draw, ...)`` arrays.

    Returns
    -------
    UntilResult
        Whether the rule holds and the worst values.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> check_until(parse_until("rhat<1.05,ess>100"), {"x": rng.normal(size=(4, 500))}).met
    True
    """
    arrays = {k: np.asarray(v, dtype=np.float64) for k, v in draws.items()}
    n = min((a.shape[1] for a in arrays.values()), default=0)
    stats = sorted({c.stat for c in rule}, key=["rhat", "ess_bulk", "ess_tail"].index)
    worst: dict[str, tuple[float, str]] = {}
    if n < 4 or not arrays:
        return UntilResult(False, {s: (float("nan"), "-") for s in stats}, n)
    for stat in stats:
        best = None
        for name, a in arrays.items():
            if stat == "rhat":
                values = rhat_unguarded(a)
            else:
                values = ess(a, method=stat.split("_")[1])
            arr = np.asarray(values, dtype=np.float64).ravel()
            if arr.size == 0:
                continue
            arr = np.where(np.isfinite(arr), arr, np.inf if stat == "rhat" else 0.0)
            v = float(arr.max() if stat == "rhat" else arr.min())
            if best is None or (v > best[0] if stat == "rhat" else v < best[0]):
                best = (v, name)
        worst[stat] = best or (float("nan"), "-")
    met = all(c.holds(worst[c.stat][0]) for c in rule)
    return UntilResult(met, worst, n)
