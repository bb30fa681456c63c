"""Discrete Bayesian networks with Dirichlet CPTs and missing entries (the CSE 5523 lecture notes 23 §23.2–23.3).

The model: a directed acyclic graph of discrete variables X_1..X_V with
cardinalities c_v and parents C_v; every variable's conditional probability
table (CPT) M_v has one row per parent configuration j, each row a
distribution over the c_v values with a Dirichlet prior,

    M_v[j] ~ Dir(a_v[j]),   X_{n,v} | X_{n,C_v} = j, M ~ Cat(M_v[j])

for rows (cases) n = 1..N.  Some entries X_{n,v} are observed, the others
(``-1`` in the table) are latent.  Several variables may share one CPT
(``tied``: same cardinality, same parent cardinalities), e.g. the word slots
of a document all drawn from its topic's word distribution.

One sweep (:func:`bayes_net`):

1. :func:`sample_missing` -- every missing X_{n,v} from its full conditional
   given its Markov blanket (Sarkar's lecture notes 21 §21.1: parents, children, co-parents)

       p(X_{n,v} = k | rest) ∝ M_v[x_{n,C_v}, k] · Π_{w child of v} M_w[x_{n,C_w} with x_v = k, x_{n,w}],

   the CSE 5523 lecture notes' forward factor times the backward messages b_{n,w,v}.  Rows are
   independent given the CPTs, so all rows are updated at once (vectorised);
   within a row the variables are visited one at a time in topological order
   (single-site, exact Gibbs: each draw uses the newest values of the others).
2. :func:`sample_cpts` -- every CPT row from its Dirichlet posterior
   M_v[j] | X ~ Dir(a_v[j] + n_v[j]), n_v[j, k] = #{n : x_{n,C_v} = j, x_{n,v} = k}
   (summed over the tied variables).  Given the completed table the rows are
   independent, so one log-gamma call draws all of them.

Both steps sample exact full conditionals; nothing is approximate.

Representation (static shapes, no recompilation for the same network and table
shapes): all CPT rows of all (distinct, after tying) tables are stacked into
one (R, C) array of log-probabilities, C the largest cardinality, padded with
−inf; variable v's row for parent values x is ``offset_v + Σ_u x_u stride_u``.
The network structure is static pytree metadata of the data.

Geweke test (``sample_prior`` / ``simulate_data``)
--------------------------------------------------
The unknowns are the CPTs and the missing entries; the data are the observed
entries (the missingness pattern is fixed).  ``sample_prior`` draws CPTs from
the prior and *complete* rows by ancestral sampling, so the state holds a
whole joint draw (CPTs, missing and observed values).  ``simulate_data`` must
then draw the observed entries from p(x_obs | CPTs, x_mis), which for a network
has no cheap exact route (observed variables depend on each other).  Instead it
applies one systematic Gibbs sweep over the *observed* positions of the
state's complete rows, each from its exact Markov-blanket conditional: a
transition that leaves p(x_obs | CPTs, x_mis) invariant.  Started from an exact
joint draw (the prior draw, or the state after a sweep, whose observed values
are the current data), it therefore yields a joint draw again, which is all
the Geweke test needs: the marginal-conditional draws are exact joint draws and
the successive-conditional transition leaves the joint invariant.  Test
functions must read the observed values from the data (``record`` merges them
in), not from the state.

Outputs
-------
Per draw: ``cpt`` (cpt_row, value), the CPT rows (padding 0) -- their mean is
the posterior mean of each row.  Accumulated on the device (``posterior_mean``
group): ``imputed_probs`` (row, variable, value), the Rao-Blackwellised
posterior probability of each value of each entry: the full conditional of
step 1 evaluated at each kept state (one-hot for observed entries), whose
average estimates p(X_{n,v} = k | observed data).  With ``keep_draws=False``
``cpt`` is accumulated too.  A variable that is never observed (a topic) has
exchangeable values: chains may label them differently.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from gibbsjax import conjugate as cj
from gibbsjax._checks import as_numbers, check_values, fields_of
from gibbsjax import random as gr
from gibbsjax.kernel import Kernel, sweep

__all__ = [
    "Network",
    "NetworkData",
    "NetState",
    "network",
    "data",
    "dirichlet_cpts",
    "sample_missing",
    "sample_cpts",
    "cpt_posterior",
    "conditional_logits",
    "imputed_probs",
    "cpt_row_index",
]


# ============================================================================ structure
@dataclass(frozen=True)
class Network:
    """A validated discrete DAG with tied CPTs and Dirichlet priors; hashable static metadata.

    Built by :func:`network`; the CPTs of all variables are stacked into one (R, C)
    array of rows (C = the largest cardinality, shorter rows padded).

    Parameters
    ----------
    names : tuple of str
        The variables' names.
    cards : tuple of int
        The variables' cardinalities.
    parents : tuple of tuple of int
        ``parents[v]``: the indices of variable v's parents, in the order given.
    children : tuple of tuple of int
        ``children[v]``: the indices of the variables that have v as a parent.
    order : tuple of int
        A topological order of the variables.
    table : tuple of int
        ``table[v]``: the CPT that variable v uses (tied variables share one).
    offset : tuple of int
        ``offset[v]``: the first row of v's CPT in the stacked array.
    strides : tuple of tuple of int
        ``strides[v]``: the row strides of v's parents (row-major).
    num_rows : int
        R, the number of stacked CPT rows.
    max_card : int
        C, the largest cardinality.
    prior : tuple of tuple of float
        The (R, C) Dirichlet concentrations (1.0 in the padding).
    row_names : tuple of str
        A label per CPT row.

    Examples
    --------
    >>> from gibbsjax.datasets.networks import sprinkler
    >>> from gibbsjax.models import bayes_net
    >>> example = sprinkler(num_rows=10)
    >>> type(bayes_net.network(example.variables)).__name__
    'Network'
    """

    names: tuple[str, ...]
    cards: tuple[int, ...]
    parents: tuple[tuple[int, ...], ...]
    children: tuple[tuple[int, ...], ...]
    order: tuple[int, ...]
    table: tuple[int, ...]
    offset: tuple[int, ...]
    strides: tuple[tuple[int, ...], ...]
    num_rows: int
    max_card: int
    prior: tuple[tuple[float, ...], ...]
    row_names: tuple[str, ...]

    @property
    def num_vars(self) -> int:
        return len(self.names)

    def valid(self) -> np.ndarray:
        """Which entries of the stacked CPT rows are real values (not padding).

        Returns
        -------
        numpy.ndarray
            (R, C) bool.

        Examples
        --------
        >>> network([("A", 2, []), ("B", 3, ["A"])]).valid()   # row 'A' has 2 of the 3 columns
        array([[ True,  True, False],
               [ True,  True,  True],
               [ True,  True,  True]])
        """
        card = np.zeros(self.num_rows, int)
        for v in range(self.num_vars):
            q = math.prod(self.cards[u] for u in self.parents[v])
            card[self.offset[v]:self.offset[v] + q] = self.cards[v]
        return np.arange(self.max_card)[None, :] < card[:, None]

    def __repr__(self) -> str:
        fams = ", ".join(
            f"{n}({c})" + (f" | {','.join(self.names[u] for u in p)}" if p else "")
            for n, c, p in zip(self.names, self.cards, self.parents))
        return f"Network({fams}; {self.num_rows} CPT rows)"


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def network(
    variables: Sequence[tuple[str, int, Sequence[str]]],
    concentration: Any = 1.0,
    tied: Mapping[str, str] | None = None,
) -> Network:
    """Validate a DAG of discrete variables and build a :class:`Network`.

    Parameters
    ----------
    variables : sequence of (str, int, sequence of str)
        ``(name, cardinality, parents)`` triples (cardinality >= 2, parents a list of
        names); any order.
    concentration : float or mapping, default 1.0
        The Dirichlet prior of every CPT row: a positive number for all, or a mapping
        name -> a number (symmetric), an array of shape (q_v,) (one symmetric
        concentration per CPT row, q_v = number of parent configurations, in
        row-major order of the parents as listed) or (q_v, c_v) (one per entry);
        variables not in the mapping get 1.
    tied : mapping of str to str, optional
        name -> owner name: the variable shares its owner's CPT (and prior), which
        needs the same cardinality and parent cardinalities.

    Returns
    -------
    Network
        The validated network.

    Raises
    ------
    ValueError
        Naming the problem, for duplicate or bad names, bad cardinalities, unknown or
        repeated parents, a cycle, non-positive, NaN or wrongly shaped concentrations
        and bad ties.

    Examples
    --------
    >>> net = network([("Rain", 2, []), ("Wet", 2, ["Rain"])], concentration={"Wet": [1.0, 2.0]})
    >>> net.num_rows, net.row_names
    (3, ('Rain', 'Wet | Rain=0', 'Wet | Rain=1'))
    """
    if isinstance(variables, (str, bytes)) or not isinstance(variables, Sequence) or len(variables) == 0:
        raise ValueError("variables must be a non-empty list of (name, cardinality, parents) triples")
    names, cards, parent_names = [], [], []
    for i, spec in enumerate(variables):
        if not isinstance(spec, (tuple, list)) or len(spec) != 3:
            raise ValueError(f"variables[{i}] must be a (name, cardinality, parents) triple, got {spec!r}")
        name, card, pars = spec
        if not isinstance(name, str) or not name:
            raise ValueError(f"variables[{i}]: name must be a non-empty string, got {name!r}")
        if name in names:
            raise ValueError(f"duplicate variable name {name!r}")
        if not _is_int(card) or card < 2:
            raise ValueError(f"variable {name!r}: cardinality must be an integer >= 2, got {card!r}")
        if isinstance(pars, str) or not isinstance(pars, (Sequence, np.ndarray)):
            raise ValueError(f"variable {name!r}: parents must be a list of names, got {pars!r}")
        pars = list(pars)
        if len(set(pars)) != len(pars):
            raise ValueError(f"variable {name!r}: repeated parent in {pars}")
        names.append(name)
        cards.append(int(card))
        parent_names.append(pars)
    index = {n: i for i, n in enumerate(names)}
    parents = []
    for name, pars in zip(names, parent_names):
        for p in pars:
            if p not in index:
                raise ValueError(f"variable {name!r}: parent {p!r} does not exist; variables: {names}")
            if p == name:
                raise ValueError(f"variable {name!r} is its own parent (a cycle)")
        parents.append(tuple(index[p] for p in pars))
    order = _topological_order(names, parents)
    V = len(names)
    children = tuple(tuple(w for w in range(V) if v in parents[w]) for v in range(V))

    tied = dict(tied or {})
    owner = list(range(V))
    for name, own in tied.items():
        if name not in index or own not in index:
            raise ValueError(f"tied: unknown variable in {name!r} -> {own!r}; variables: {names}")
        v, o = index[name], index[own]
        if own in tied:
            raise ValueError(f"tied: {own!r} is tied to another variable; tie {name!r} to its owner")
        if cards[v] != cards[o] or [cards[u] for u in parents[v]] != [cards[u] for u in parents[o]]:
            raise ValueError(f"tied: {name!r} and {own!r} need the same cardinality and parent cardinalities")
        owner[v] = o
    if isinstance(concentration, Mapping):
        for name in concentration:
            if name not in index:
                raise ValueError(f"concentration: unknown variable {name!r}; variables: {names}")
            if owner[index[name]] != index[name]:
                raise ValueError(f"concentration: {name!r} is tied to {names[owner[index[name]]]!r}; "
                                 "give the concentration of the owner")

    C = max(cards)
    table, offset, strides = [0] * V, [0] * V, [()] * V
    prior_rows: list[np.ndarray] = []
    row_names: list[str] = []
    owners = [v for v in range(V) if owner[v] == v]
    t_offset = {}
    for t, o in enumerate(owners):
        q = math.prod(cards[u] for u in parents[o])
        t_offset[o] = (t, len(row_names))
        a = concentration.get(names[o], 1.0) if isinstance(concentration, Mapping) else concentration
        a = _concentration(names[o], a, q, cards[o])
        pad = np.ones((q, C))
        pad[:, :cards[o]] = a
        prior_rows.extend(pad)
        members = [names[w] for w in range(V) if owner[w] == o]
        label = ",".join(members)
        for j in np.ndindex(*[cards[u] for u in parents[o]]):
            cond = ",".join(f"{names[u]}={x}" for u, x in zip(parents[o], j))
            row_names.append(label + (f" | {cond}" if cond else ""))
    for v in range(V):
        t, off = t_offset[owner[v]]
        table[v], offset[v] = t, off
        pc = [cards[u] for u in parents[v]]
        strides[v] = tuple(int(math.prod(pc[i + 1:])) for i in range(len(pc)))
    return Network(
        names=tuple(names), cards=tuple(cards), parents=tuple(parents), children=children,
        order=order, table=tuple(table), offset=tuple(offset), strides=tuple(strides),
        num_rows=len(row_names), max_card=C,
        prior=tuple(tuple(float(x) for x in r) for r in prior_rows), row_names=tuple(row_names),
    )


def _topological_order(names, parents) -> tuple[int, ...]:
    V = len(names)
    state = [0] * V  # 0 new, 1 on stack, 2 done
    order: list[int] = []

    def visit(v, path):
        if state[v] == 2:
            return
        if state[v] == 1:
            cyc = path[path.index(v):] + [v]
            raise ValueError("the graph has a cycle: " + " -> ".join(names[u] for u in reversed(cyc)))
        state[v] = 1
        for u in parents[v]:
            visit(u, path + [v])
        state[v] = 2
        order.append(v)

    for v in range(V):
        visit(v, [])
    return tuple(order)


def _concentration(name: str, a: Any, q: int, c: int) -> np.ndarray:
    arr = as_numbers(f"concentration of {name!r}", a, "numbers")  # strings and bools refused
    if arr.ndim == 0:
        arr = np.full((q, c), float(arr))
    elif arr.shape == (q,):
        arr = np.repeat(arr[:, None], c, axis=1)
    elif arr.shape != (q, c):
        raise ValueError(f"concentration of {name!r} must be a number or have shape ({q},) (one per CPT row) "
                         f"or ({q}, {c}) (one per entry), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"concentration of {name!r} must be positive and finite, got {a!r}")
    check_values(f"concentration of {name!r}", arr)  # in the range a run in the working dtype can use
    return arr


# ============================================================================ data
@dataclass(frozen=True, eq=False)
class NetworkData:
    """A table of cases, as :func:`data` builds it (a pytree: the network is static).

    Parameters
    ----------
    values : jax.Array
        (N, V) int32: column v = variable v, ``-1`` = missing.
    network : Network
        The network the cases belong to.

    Examples
    --------
    >>> from gibbsjax.datasets.networks import sprinkler
    >>> from gibbsjax.models import bayes_net
    >>> example = sprinkler(num_rows=10)
    >>> d = bayes_net.data(bayes_net.network(example.variables), example.rows)
    >>> type(d).__name__
    'NetworkData'
    """

    values: jax.Array
    network: Network

    @property
    def num_cases(self) -> int:
        return int(self.values.shape[0])

    def __repr__(self) -> str:
        return f"NetworkData({self.num_cases} rows × {self.network.num_vars} variables)"


jax.tree_util.register_dataclass(NetworkData, data_fields=["values"], meta_fields=["network"])


def data(net: Network, rows: Any) -> NetworkData:
    """Validate a table of cases for ``net`` and build :class:`NetworkData`.

    Parameters
    ----------
    net : Network
        The network, from :func:`network`.
    rows : array_like or list of mapping
        An (N, V) array-like of integers, columns in the order the variables were
        given, ``-1`` (or ``None``) = missing; or a list of mappings name -> value
        (absent names or ``None`` = missing).

    Returns
    -------
    NetworkData
        The validated table.

    Raises
    ------
    ValueError
        For a wrong shape, NaN or non-integer entries, unknown variable names, and
        values outside a variable's cardinality (naming row and variable).

    Examples
    --------
    >>> net = network([("A", 2, []), ("B", 3, ["A"])])
    >>> data(net, [[0, -1], {"B": 2}]).values.tolist()
    [[0, -1], [-1, 2]]
    """
    if not isinstance(net, Network):
        raise ValueError(f"net must be built by bayes_net.network(...), got {type(net).__name__}")
    V = net.num_vars
    if isinstance(rows, Sequence) and any(isinstance(r, Mapping) for r in rows):
        table = []
        for i, r in enumerate(rows):
            if isinstance(r, Mapping):
                bad = [k for k in r if k not in net.names]
                if bad:
                    raise ValueError(f"rows[{i}]: unknown variable(s) {bad}; variables: {list(net.names)}")
                r = [r.get(n, -1) for n in net.names]
            table.append(r)
        rows = table
    try:
        arr = np.array([[(-1 if x is None else x) for x in r] for r in rows], dtype=np.float64) \
            if isinstance(rows, Sequence) else np.asarray(rows, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"rows must be a 2-D table of integers of shape (N, {V}) (cases × variables), "
                         "-1 = missing") from None
    if arr.ndim != 2 or arr.shape[1] != V or arr.shape[0] == 0:
        raise ValueError(f"rows must have shape (N >= 1, {V}) (one column per variable: {list(net.names)}), "
                         f"got shape {arr.shape}")
    if np.isnan(arr).any():
        i, v = np.argwhere(np.isnan(arr))[0]
        raise ValueError(f"rows[{i}] has NaN for {net.names[v]!r}; use -1 for a missing entry")
    if np.any(arr != np.round(arr)):
        i, v = (int(j) for j in np.argwhere(arr != np.round(arr))[0])
        raise ValueError(f"rows must hold integers (value indices), -1 = missing; rows[{i}] has {arr[i, v].item()!r} "
                         f"for {net.names[v]!r}")
    card = np.asarray(net.cards)
    bad = (arr < -1) | (arr >= card[None, :])
    if bad.any():
        i, v = np.argwhere(bad)[0]
        raise ValueError(f"rows[{i}]: value {int(arr[i, v])} of {net.names[v]!r} is outside 0..{card[v] - 1} "
                         "(-1 = missing)")
    return NetworkData(jnp.asarray(arr.astype(np.int32)), net)


# ============================================================================ conditionals
class NetState(NamedTuple):
    """One chain's state.

    Parameters
    ----------
    log_cpt : jax.Array
        (R, C): the log CPT rows, −inf in the padding.
    x : jax.Array
        (N, V) int32: the complete rows (observed positions are copies of the data).

    Examples
    --------
    >>> import jax
    >>> from gibbsjax.datasets.networks import sprinkler
    >>> from gibbsjax.models import bayes_net
    >>> example = sprinkler(num_rows=10)
    >>> d = bayes_net.data(bayes_net.network(example.variables), example.rows)
    >>> state = bayes_net.dirichlet_cpts().init(jax.random.key(0), d)
    >>> type(state).__name__, state._fields
    ('NetState', ('log_cpt', 'x'))
    """

    log_cpt: jax.Array
    x: jax.Array


def merge_observed(x, d: NetworkData):
    """The full table of values: the observed entries of ``d`` (≥ 0), ``x`` where they are missing.

    Parameters
    ----------
    x : jax.Array
        (N, V) int32: complete rows.
    d : NetworkData
        The data.

    Returns
    -------
    jax.Array
        (N, V) int32.
    """
    return jnp.where(d.values >= 0, d.values, x)


def cpt_row_index(net: Network, x: jax.Array, v: int) -> jax.Array:
    """The stacked-CPT row of variable v given the parent values in x: offset_v + Σ_u x_u stride_u.

    Parameters
    ----------
    net : Network
        The network.
    x : jax.Array
        (..., V) int: values of all variables (only v's parents are read).
    v : int
        The variable's index.

    Returns
    -------
    jax.Array
        (...) int32: row indices into the stacked CPT array.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> net = network([("Rain", 2, []), ("Wet", 2, ["Rain"])])
    >>> cpt_row_index(net, jnp.array([[0, 1], [1, 0]]), 1).tolist()   # rows 'Wet | Rain=0', 'Wet | Rain=1'
    [1, 2]
    """
    r = jnp.full(x.shape[:-1], net.offset[v], jnp.int32)
    for u, s in zip(net.parents[v], net.strides[v]):
        r = r + x[..., u] * s
    return r


def conditional_logits(log_cpt: jax.Array, x: jax.Array, net: Network, v: int) -> jax.Array:
    """log p(X_v = k | Markov blanket) + const for every row.

    log M_v[x_{C_v}, k] + Σ_{w child of v} log M_w[x_{C_w} with x_v = k, x_w].

    Parameters
    ----------
    log_cpt : jax.Array
        (R, C): the log CPT rows.
    x : jax.Array
        (N, V) int: complete rows (column v is not read).
    net : Network
        The network.
    v : int
        The variable's index.

    Returns
    -------
    jax.Array
        (N, C): the logits, −inf for k >= c_v.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> net = network([("Rain", 2, []), ("Wet", 2, ["Rain"])])
    >>> log_cpt = jnp.log(jnp.array([[0.5, 0.5], [0.8, 0.2], [0.1, 0.9]]))   # Rain; Wet | Rain=0; Wet | Rain=1
    >>> logits = conditional_logits(log_cpt, jnp.array([[0, 1]]), net, 0)   # Rain given Wet = 1
    >>> [round(float(v), 4) for v in logits[0]]   # log(0.5 * 0.2), log(0.5 * 0.9)
    [-2.3026, -0.7985]
    """
    C = net.max_card
    ks = jnp.arange(C, dtype=jnp.int32)
    xk = jnp.broadcast_to(x[:, None, :], (x.shape[0], C, x.shape[1]))
    xk = xk.at[:, :, v].set(jnp.minimum(ks, net.cards[v] - 1)[None, :])
    logits = 0.0
    for f in (v, *net.children[v]):
        logits = logits + log_cpt[cpt_row_index(net, xk, f), xk[..., f]]
    return jnp.where(ks[None, :] < net.cards[v], logits, -jnp.inf)


def _gibbs_sites(key, log_cpt, x, update: jax.Array, net: Network) -> jax.Array:
    """One systematic sweep (topological order) over the positions where ``update`` (N, V) is true."""
    keys = jax.random.split(key, net.num_vars)
    for v in net.order:
        new = gr.categorical(keys[v], conditional_logits(log_cpt, x, net, v))
        x = x.at[:, v].set(jnp.where(update[:, v], new, x[:, v]))
    return x


def sample_missing(key, state: NetState, d: NetworkData) -> jax.Array:
    """Every missing X_{n,v} | Markov blanket, all rows at once, variables in topological order (step 1).

    Parameters
    ----------
    key : jax.Array
        PRNG key.
    state : NetState
        The current state.
    d : NetworkData
        The data (observed entries are kept).

    Returns
    -------
    jax.Array
        (N, V) int32: the new complete rows.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> net = network([("Rain", 2, []), ("Wet", 2, ["Rain"])])
    >>> d = data(net, [[0, 1], [1, -1], [-1, 1]])
    >>> log_cpt = jnp.log(jnp.array([[0.5, 0.5], [0.8, 0.2], [0.1, 0.9]]))   # Rain; Wet | Rain=0; Wet | Rain=1
    >>> s = NetState(log_cpt=log_cpt, x=jnp.array([[0, 1], [1, 1], [0, 1]]))
    >>> x = sample_missing(jax.random.key(0), s, d)
    >>> x.dtype, x[0].tolist(), int(x[1, 0]), int(x[2, 1])   # observed entries are kept
    (dtype('int32'), [0, 1], 1, 1)
    """
    return _gibbs_sites(key, state.log_cpt, merge_observed(state.x, d), d.values < 0, d.network)


def _counts(net: Network, x: jax.Array) -> jax.Array:
    rows = jnp.stack([cpt_row_index(net, x, v) for v in range(net.num_vars)], axis=-1)
    return cj.table_counts(rows, x, net.num_rows, net.max_card)


def cpt_posterior(state: NetState, d: NetworkData) -> jax.Array:
    """Concentrations a_v[j] + n_v[j] of every stacked CPT row given the completed table.

    Parameters
    ----------
    state : NetState
        The current state (its complete rows are read).
    d : NetworkData
        The data.

    Returns
    -------
    jax.Array
        (R, C) float, one row per CPT row.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> net = network([("Rain", 2, []), ("Wet", 2, ["Rain"])])
    >>> d = data(net, [[0, 1], [1, -1], [-1, 1]])
    >>> log_cpt = jnp.log(jnp.array([[0.5, 0.5], [0.8, 0.2], [0.1, 0.9]]))   # Rain; Wet | Rain=0; Wet | Rain=1
    >>> s = NetState(log_cpt=log_cpt, x=jnp.array([[0, 1], [1, 1], [0, 1]]))
    >>> cpt_posterior(s, d).tolist()   # Dirichlet(1) priors plus the counts of the completed rows
    [[3.0, 2.0], [1.0, 3.0], [1.0, 2.0]]
    """
    net = d.network
    f = jnp.result_type(float)
    return _counts(net, merge_observed(state.x, d)).astype(f) + jnp.asarray(net.prior, f)


def sample_cpts(key, state: NetState, d: NetworkData) -> jax.Array:
    """M_v[j] | X ~ Dir(a_v[j] + n_v[j]) for every CPT row (step 2).

    Parameters
    ----------
    key : jax.Array
        PRNG key.
    state : NetState
        The current state (its complete rows are read).
    d : NetworkData
        The data.

    Returns
    -------
    jax.Array
        (R, C): the new log CPT rows, −inf in the padding.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> net = network([("Rain", 2, []), ("Wet", 2, ["Rain"])])
    >>> d = data(net, [[0, 1], [1, -1], [-1, 1]])
    >>> log_cpt = jnp.log(jnp.array([[0.5, 0.5], [0.8, 0.2], [0.1, 0.9]]))   # Rain; Wet | Rain=0; Wet | Rain=1
    >>> s = NetState(log_cpt=log_cpt, x=jnp.array([[0, 1], [1, 1], [0, 1]]))
    >>> new = sample_cpts(jax.random.key(0), s, d)
    >>> new.shape, [round(float(v), 4) for v in jnp.exp(new).sum(axis=1)]
    ((3, 2), [1.0, 1.0, 1.0])
    """
    return cj.sample_log_dirichlet_padded(key, cpt_posterior(state, d), 0.0, jnp.asarray(d.network.valid()))


def imputed_probs(state: NetState, d: NetworkData) -> jax.Array:
    """p(X_{n,v} = k | Markov blanket) at the state for missing entries, one-hot for observed.

    Parameters
    ----------
    state : NetState
        The current state (its log CPTs and the imputed values).
    d : NetworkData
        The data.

    Returns
    -------
    jax.Array
        (N, V, C): probabilities over each entry's values.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> net = network([("Rain", 2, []), ("Wet", 2, ["Rain"])])
    >>> d = data(net, [[0, 1], [1, -1], [-1, 1]])
    >>> log_cpt = jnp.log(jnp.array([[0.5, 0.5], [0.8, 0.2], [0.1, 0.9]]))   # Rain; Wet | Rain=0; Wet | Rain=1
    >>> s = NetState(log_cpt=log_cpt, x=jnp.array([[0, 1], [1, 1], [0, 1]]))
    >>> p = imputed_probs(s, d)
    >>> p.shape, [round(float(v), 4) for v in p[2, 0]]   # Rain given Wet = 1: 0.1 : 0.45
    ((3, 2, 2), [0.1818, 0.8182])
    """
    net = d.network
    x = merge_observed(state.x, d)
    p = jnp.stack([jax.nn.softmax(conditional_logits(state.log_cpt, x, net, v), axis=-1)
                   for v in range(net.num_vars)], axis=1)
    onehot = jax.nn.one_hot(d.values, net.max_card, dtype=p.dtype)
    return jnp.where((d.values >= 0)[..., None], onehot, p)


# ============================================================================ factory
def _check_data(d) -> NetworkData:
    if not isinstance(d, NetworkData):
        raise ValueError(f"data must be built by bayes_net.data(network, rows), got {type(d).__name__}")
    return d


def dirichlet_cpts(keep_draws: bool = True) -> Kernel:
    """Gibbs sampler for a discrete Bayesian network with Dirichlet CPTs (the CSE 5523 lecture notes 23 §23.2).

    The network, priors and ties travel with the data (:func:`network`,
    :func:`data`).  Each sweep: missing entries by single-site exact Gibbs in
    topological order (all rows at once), then all CPT rows from their
    Dirichlet posteriors (see the module docs).  Random start: CPTs from the
    prior, missing entries by ancestral sampling.

    Parameters
    ----------
    keep_draws : bool, default True
        Record the CPT rows every draw, or only accumulate their per-chain means
        (``posterior_mean["cpt"]``).

    Returns
    -------
    gibbsjax.kernel.Kernel
        The sampler (for :func:`gibbsjax.sample`).

    Raises
    ------
    ValueError
        For a ``keep_draws`` that is not a bool.

    Examples
    --------
    >>> import gibbsjax
    >>> net = network([("A", 2, []), ("B", 2, ["A"])])
    >>> d = data(net, [[0, 1], [-1, 1], [1, -1]])
    >>> idata = gibbsjax.sample(dirichlet_cpts(), d, seed=0, num_warmup=10, num_draws=20, progress=False)
    >>> idata.posterior["cpt"].shape, idata.posterior_mean["imputed_probs"].shape
    ((4, 20, 3, 2), (4, 3, 2, 2))
    """
    if not isinstance(keep_draws, (bool, np.bool_)):
        raise ValueError(f"keep_draws must be true or false, got {keep_draws!r}")
    return _bayes_net(bool(keep_draws))


def _sample_prior(key, d: NetworkData) -> NetState:
    net = _check_data(d).network
    k1, k2 = jax.random.split(key)
    f = jnp.result_type(float)
    log_cpt = cj.sample_log_dirichlet_padded(k1, jnp.zeros((net.num_rows, net.max_card), f),
                                             jnp.asarray(net.prior, f), jnp.asarray(net.valid()))
    return NetState(log_cpt, _ancestral(k2, log_cpt, net, d.num_cases))


def _ancestral(key, log_cpt, net: Network, n: int) -> jax.Array:
    """Complete rows X_n ~ p(X | M) by ancestral sampling, (n, V)."""
    keys = jax.random.split(key, net.num_vars)
    x = jnp.zeros((n, net.num_vars), jnp.int32)
    for v in net.order:
        x = x.at[:, v].set(gr.categorical(keys[v], log_cpt[cpt_row_index(net, x, v)]))
    return x


@functools.lru_cache(maxsize=8)
def _bayes_net(keep_draws: bool) -> Kernel:
    def init(key, d: NetworkData) -> NetState:
        s = _sample_prior(key, d)
        return s._replace(x=merge_observed(s.x, d))

    def cpt(state, d):
        return jnp.where(jnp.asarray(d.network.valid()), jnp.exp(state.log_cpt), 0.0)

    def record(state: NetState, d: NetworkData):
        return {"cpt": cpt(state, d)} if keep_draws else {}

    def accumulate(state: NetState, d: NetworkData):
        out = {"imputed_probs": imputed_probs(state, d)}
        return out if keep_draws else {**out, "cpt": cpt(state, d)}

    def log_joint(state: NetState, d: NetworkData):
        """log p(M) + log p(X | M) for the completed table."""
        net = d.network
        x = merge_observed(state.x, d)
        valid = jnp.asarray(net.valid())
        a = jnp.asarray(net.prior, state.log_cpt.dtype)
        lp = jnp.where(valid, state.log_cpt, 0.0)
        prior = jnp.sum(jax.scipy.special.gammaln(jnp.sum(jnp.where(valid, a, 0.0), -1))
                        - jnp.sum(jnp.where(valid, jax.scipy.special.gammaln(a), 0.0), -1)) \
            + jnp.sum(cj.xlogy(jnp.where(valid, a - 1.0, 0.0), lp))
        lik = sum(jnp.sum(state.log_cpt[cpt_row_index(net, x, v), x[:, v]]) for v in range(net.num_vars))
        return prior + lik

    def simulate_data(key, state: NetState, d: NetworkData) -> NetworkData:
        """Observed entries redrawn by one exact Gibbs sweep over the observed positions of the
        state's complete rows (leaves p(x_obs | M, x_mis) invariant; see the module docs)."""
        x = _gibbs_sites(key, state.log_cpt, state.x, d.values >= 0, d.network)
        return NetworkData(jnp.where(d.values >= 0, x, -1), d.network)

    def coords(d: NetworkData):
        net = d.network
        return {"cpt_row": list(net.row_names), "value": list(range(net.max_card)),
                "row": list(range(d.num_cases)), "variable": list(net.names)}

    return Kernel(
        init=init,
        step=sweep(("x", sample_missing), ("log_cpt", sample_cpts)),
        record=record,
        dims={"cpt": ("cpt_row", "value"), "imputed_probs": ("row", "variable", "value")},
        log_joint=log_joint,
        coords=coords,
        sample_prior=_sample_prior,
        simulate_data=simulate_data,
        name="bayes_net.dirichlet_cpts",
        accumulate=accumulate,
        check_state=_check_state,
    )


def _check_state(state, d: NetworkData, label=None) -> None:
    """``Kernel.check_state``: column v of the complete rows ``x`` holds values of variable v
    (``0..cards[v]-1``); ``ValueError`` naming the first bad entry otherwise."""
    net = _check_data(d).network
    x = fields_of(state)["x"]
    cards = np.asarray(net.cards)
    bad = np.argwhere((x < 0) | (x >= cards))
    if bad.size:
        at = tuple(int(i) for i in bad[0])
        v = at[-1]
        name = "init['x']" if label is None else label("x")
        raise ValueError(f"{name} must hold values of variable {net.names[v]!r} (column {v}) in "
                         f"0..{cards[v] - 1}, got {int(x[at])} at {at}")

