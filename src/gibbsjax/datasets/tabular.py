"""Tabular and sequence data for the mixture and HMM models.

* :func:`faithful`: the Old Faithful geyser data (shipped, provenance in
  ``datasets/data/README.md``).
* :func:`casino`: the "occasionally dishonest casino" hidden Markov model of
  Durbin, Eddy, Krogh & Mitchison (1998), *Biological Sequence Analysis*,
  §3.2, simulated with a fixed seed: rolls of a fair and a loaded die.

>>> from gibbsjax.datasets.tabular import faithful
>>> faithful()["eruptions_min"].shape
(272,)
"""

from __future__ import annotations

import numpy as np

from gibbsjax.datasets.files import load_csv

__all__ = ["faithful", "casino", "CASINO_INITIAL", "CASINO_TRANSITION", "CASINO_EMISSION"]


def faithful() -> dict[str, np.ndarray]:
    """Old Faithful eruptions: duration and waiting time to the next one (minutes), 272 rows.

    R's ``faithful`` data (Härdle 1991; Azzalini & Bowman 1990, Applied
    Statistics 39:357–365).  Both are bimodal: eruptions cluster near 2.0 and
    4.3 minutes.

    Returns
    -------
    dict of str to numpy.ndarray
        Columns ``eruptions_min`` and ``waiting_min``, float64, in time order.

    Examples
    --------
    >>> round(float(faithful()["eruptions_min"].mean()), 4)
    3.4878
    """

    return load_csv("faithful.csv")


#: the casino's initial state distribution (fair, loaded): our choice, uniform
CASINO_INITIAL = np.array([0.5, 0.5])
#: Durbin et al. (1998) §3.2: the casino switches to the loaded die with probability
#: 0.05 per roll and back with probability 0.1
CASINO_TRANSITION = np.array([[0.95, 0.05], [0.10, 0.90]])
#: faces 1..6 as symbols 0..5: the fair die is uniform, the loaded one shows 6 half the time
CASINO_EMISSION = np.array([[1 / 6] * 6, [0.1] * 5 + [0.5]])


def casino(
    num_sequences: int = 8,
    min_length: int = 100,
    max_length: int = 300,
    seed: int = 1998,
) -> dict:
    """Simulated rolls of the occasionally dishonest casino (Durbin et al. 1998, §3.2).

    A two-state HMM: state 0 a fair die (faces 1..6 equally likely), state 1 a
    loaded die (6 with probability 1/2, each other face 1/10); the casino
    switches fair → loaded with probability 0.05 and loaded → fair with 0.1
    after each roll, and starts in either state with probability 1/2.  Faces
    1..6 are symbols 0..5.  Deterministic for a given ``seed`` (numpy's PCG64).

    Parameters
    ----------
    num_sequences : int, default 8
        How many sequences.
    min_length, max_length : int, default 100 and 300
        Sequence lengths are drawn uniformly from [min_length, max_length], so the
        sequences differ in length (padding and masking are exercised).
    seed : int, default 1998
        The seed.

    Returns
    -------
    dict
        ``sequences`` (list of int arrays), ``states`` (the hidden die used for
        each roll), ``num_symbols`` (6), and the true parameters ``initial``,
        ``transition``, ``emission``.

    Examples
    --------
    >>> d = casino(num_sequences=3, min_length=5, max_length=9)
    >>> len(d["sequences"]), d["num_symbols"]
    (3, 6)
    """
    for name, value, minimum in (
        ("num_sequences", num_sequences, 1),
        ("min_length", min_length, 1),
        ("max_length", max_length, 1),
        ("seed", seed, 0),
    ):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
            raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if max_length < min_length:
        raise ValueError(f"max_length ({max_length}) must be >= min_length ({min_length})")
    rng = np.random.default_rng(seed)
    lengths = rng.integers(min_length, max_length + 1, size=num_sequences)
    sequences, states = [], []
    for length in lengths:
        z = np.empty(length, dtype=np.int32)
        z[0] = rng.choice(2, p=CASINO_INITIAL)
        u = rng.random(length)
        for t in range(1, length):
            z[t] = int(u[t] < CASINO_TRANSITION[z[t - 1], 1])
        cdf = np.cumsum(CASINO_EMISSION, axis=1)
        v = rng.random(length)
        y = np.minimum((v[:, None] >= cdf[z]).sum(axis=1), 5).astype(np.int32)
        sequences.append(y)
        states.append(z)
    return {
        "sequences": sequences,
        "states": states,
        "num_symbols": 6,
        "initial": CASINO_INITIAL.copy(),
        "transition": CASINO_TRANSITION.copy(),
        "emission": CASINO_EMISSION.copy(),
    }

