"""The kernel protocol every sampler implements, and :func:`sweep`.

A sampler is a :class:`Kernel`: a small NamedTuple of *pure* functions, in the
spirit of BlackJAX's ``SamplingAlgorithm(init, step)`` and Optax's
``GradientTransformation(init, update)``.  A kernel describes **one chain**; the
runner (:func:`gibbsjax.sample`) vmaps it over chains and scans it over sweeps.

* ``init(key, data) -> state``: a random starting state for one chain.
* ``step(key, state, data) -> state``: one full Gibbs sweep.  Pure: the same
  key, state and data always give the same new state.
* ``record(state, data) -> dict[str, Array]``: what one stored draw keeps.
* ``dims``: ArviZ dimension names of each recorded array (beyond chain/draw).
* ``log_joint(state, data) -> scalar`` (optional): the log joint density of
  parameters and data, up to a constant; recorded as ``lp`` in ``sample_stats``.
* ``coords(data) -> dict`` (optional): ArviZ coordinates for the dims.
* ``sample_prior(key, data) -> state`` and ``simulate_data(key, state, data) ->
  data`` (optional): draw the unknowns from the prior and new data from the
  likelihood.  With both, :func:`gibbsjax.testing.geweke_test` can check the
  kernel.  ``simulate_data`` must return data of the template's structure,
  shapes and dtypes; ``sample_prior`` and ``step`` states of one structure.
* ``accumulate(state, data) -> dict[str, Array]`` (optional): quantities too
  big to store per draw (a topic model's K × V word distributions, per-document
  probabilities); the runner sums them over kept draws on the device and
  returns their per-chain means in the ``posterior_mean`` group.
* ``data_type`` (optional): the type (or tuple of types) of the data the kernel
  takes, e.g. ``NormalData``; :func:`gibbsjax.sample` refuses other data with
  a ``ValueError`` naming it (and the model's data constructor).
* ``check_init(values) -> None`` (optional): checks user-given initial values
  (a dict of the given state fields, numpy arrays with the chains first) for
  the support of the state (a variance > 0, weights on the simplex) and raises
  ``ValueError`` naming the field; :func:`gibbsjax.sample` calls it on ``init``,
  and :func:`gibbsjax.resume` on the state saved in a result.
* ``check_state(state, data, label=None) -> None`` (optional): checks a state
  of every chain (numpy arrays, chains first) for what ``check_init`` cannot
  know without the data (labels in ``0..K-1`` where the data set K, values of
  categorical variables within their cardinality, counts equal to those of the
  assignments where the state holds both) and raises ``ValueError`` naming the
  field as ``label(field)`` and the first bad entry;
  :func:`gibbsjax.resume` calls it on the saved state (a damaged or edited
  result is refused before anything is sampled).
* ``warmup_step(key, state, data) -> state`` (optional): the transition used
  during warm-up instead of ``step``.  Warm-up draws are discarded, so it need
  not leave the posterior invariant (e.g. a sweep that reaches the typical set
  sooner); the sampling phase always uses ``step``.  ``warmup_name`` describes
  it; the runner records which warm-up ran in ``attrs["warmup"]``.
* ``label_dims`` (optional): dimensions whose labels the posterior is
  symmetric in (a mixture's ``cluster``, a topic model's ``topic``, an HMM's
  ``state``): chains may label them differently, so R-hat of a variable with
  such a dimension means nothing before alignment.  Stopping rules
  (``until=``) look only at ``lp`` and the variables without them.
* ``shard(data, devices, num_shards=None) -> Sharded`` (optional): the model's
  data can be split along an axis (LDA: documents) over ``devices``, with
  ``num_shards`` pieces (default: one per device; a multiple of the number of
  devices).  It returns a :class:`Sharded`: a kernel of the same ``name`` that
  runs on the sharded data, its reductions (count tables) summed across devices
  inside ``jax.shard_map`` over the returned mesh, and the
  ``jax.sharding.PartitionSpec`` of the data, of one chain's state and of its
  accumulators, plus ``means``, which maps the per-chain means of
  ``accumulate`` back to this kernel's layout (e.g. documents in corpus
  order).  :func:`gibbsjax.sample` uses it with ``devices=N`` when the chains
  do not fill the devices (or ``shard="data"``); the draws must not depend on
  the number of devices for a fixed ``num_shards``.  A kernel that cannot shard
  (e.g. a sequential collapsed sampler) leaves it ``None``, or raises
  ``ValueError`` saying why.  :func:`gibbsjax.rows.plan` builds it for models whose
  rows (documents, observations, sequences) are independent given global parameters
  drawn from counts (the mixtures, naive Bayes, the HMMs).

* ``log_likelihood(state, data) -> dict[str, Array]`` (optional): the pointwise log
  likelihood of the draw, one entry per observation (LDA: per document), under the
  name of the observed variable, its dims in ``dims``; recorded per kept draw into
  the ``log_likelihood`` group, so ``az.loo``, ``az.waic`` and ``az.compare`` work
  on results.  It costs chains × draws × observations × the float's bytes (4, or 8
  with ``JAX_ENABLE_X64``) of host memory (counted by the memory check);
  ``sample(..., log_likelihood=False)`` leaves it out.
* ``observed_data(data) -> dict[str, tuple[tuple[str, ...], array]]`` (optional): the
  observed data as ``{name: (dims, numpy array)}``, computed on the host once per
  run: the ``observed_data`` group.

* ``sizes(data) -> dict[str, int]`` (optional): the sizes of the dims of
  ``dims`` for ``data`` (LDA: ``topic``, ``word``, ``document``), computed
  without tracing anything; the memory estimate (:mod:`gibbsjax.memory`) checks
  a floor from them first, so sizes too large even to trace (a billion topics)
  are refused with an estimate.

States are pytrees (usually NamedTuples).  Data is a pytree built by a model's
validating constructor; hyperparameters are closed over by the model factory.

Examples
--------
>>> import jax, jax.numpy as jnp
>>> from typing import NamedTuple
>>> from gibbsjax.kernel import Kernel, sweep
>>> class S(NamedTuple):
...     x: jax.Array
...     y: jax.Array
>>> def sample_x(key, s, data):  # x | y ~ N(y / 2, 3/4)
...     return s.y / 2 + jnp.sqrt(0.75) * jax.random.normal(key)
>>> def sample_y(key, s, data):  # y | x ~ N(x / 2, 3/4)
...     return s.x / 2 + jnp.sqrt(0.75) * jax.random.normal(key)
>>> k = Kernel(init=lambda key, d: S(jnp.zeros(()), jnp.zeros(())),
...            step=sweep(("x", sample_x), ("y", sample_y)),
...            record=lambda s, d: {"x": s.x, "y": s.y})
>>> s = k.step(jax.random.key(0), k.init(jax.random.key(1), None), None)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

__all__ = ["Kernel", "Sharded", "sweep", "set_field", "check_field_value", "check_outputs", "abstract_output"]

State = Any
Data = Any
Update = Callable[[jax.Array, State, Data], State]


class Kernel(NamedTuple):
    """A Gibbs sampler for one chain, as pure functions (see the module docs).

    Parameters
    ----------
    init : callable
        ``init(key, data) -> state``: a random starting state for one chain.
    step : callable
        ``step(key, state, data) -> state``: one full Gibbs sweep (pure).
    record : callable
        ``record(state, data) -> dict[str, Array]``: what one stored draw keeps.
    dims : mapping of str to tuple of str, optional
        ArviZ dimension names of each recorded array (beyond ``chain, draw``).
    log_joint : callable, optional
        ``log_joint(state, data) -> scalar``: the log joint density up to a
        constant, recorded as ``lp`` in ``sample_stats``.
    coords : callable, optional
        ``coords(data) -> dict``: ArviZ coordinates for the dims.
    sample_prior : callable, optional
        ``sample_prior(key, data) -> state``: the unknowns drawn from the prior.
    simulate_data : callable, optional
        ``simulate_data(key, state, data) -> data``: new data from the likelihood,
        of the template's structure, shapes and dtypes.  With ``sample_prior``,
        :func:`gibbsjax.testing.geweke_test` can check the kernel.
    name : str, default "kernel"
        The registry name (``"<module>.<factory>"``), recorded in the result.
    accumulate : callable, optional
        ``accumulate(state, data) -> dict[str, Array]``: quantities too big to store
        per draw, averaged per chain on the device (the ``posterior_mean`` group).
    data_type : type or tuple of type, optional
        The type(s) of data the kernel takes; :func:`gibbsjax.sample` refuses others.
    check_init : callable, optional
        ``check_init(values) -> None``: checks user-given initial values and raises
        ``ValueError`` naming the field.
    warmup_step : callable, optional
        ``warmup_step(key, state, data) -> state``: the transition used during
        warm-up instead of ``step``.
    warmup_name : str, default ""
        What ``warmup_step`` is, recorded in ``attrs["warmup"]``.
    label_dims : tuple of str, default ()
        Dimensions whose labels the posterior is symmetric in (left out of stopping rules).
    shard : callable, optional
        ``shard(data, devices, num_shards=None) -> Sharded``: the kernel and its data
        split over devices (``shard="data"`` runs).
    sizes : callable, optional
        ``sizes(data) -> dict[str, int]``: the sizes of the dims, computed without
        tracing (for the memory check).
    check_state : callable, optional
        ``check_state(state, data, label=None) -> None``: checks the values of a state
        of every chain (numpy, chains first) against the model and the data, naming a
        field as ``label(field)``; ``resume`` calls it on the saved state.
    log_likelihood : callable, optional
        ``log_likelihood(state, data) -> dict[str, Array]``: the pointwise log likelihood
        of one chain's draw (one value per observation, its dims in ``dims``), recorded
        into the ``log_likelihood`` group for ``az.loo``, ``az.waic`` and ``az.compare``.
    observed_data : callable, optional
        ``observed_data(data) -> dict[str, (dims, array)]``: the ``observed_data`` group.

    See Also
    --------
    sweep : Compose conditional updates into ``step``.
    gibbsjax.run.sample : Run many chains of a kernel.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> from gibbsjax import Kernel, sample, sweep
    >>> kernel = Kernel(init=lambda key, data: {'x': jnp.float32(0.0)},
    ...                 step=sweep(('x', lambda key, s, data: jax.random.normal(key))),
    ...                 record=lambda s, data: {'x': s['x']})
    >>> idata = sample(kernel, seed=0, num_chains=2, num_draws=50, progress=False)
    >>> idata.posterior['x'].shape
    (2, 50)
    """

    init: Callable[[jax.Array, Data], State]
    step: Callable[[jax.Array, State, Data], State]
    record: Callable[[State, Data], dict[str, jax.Array]]
    dims: Mapping[str, tuple[str, ...]] | None = None
    log_joint: Callable[[State, Data], jax.Array] | None = None
    coords: Callable[[Data], Mapping[str, Any]] | None = None
    sample_prior: Callable[[jax.Array, Data], State] | None = None
    simulate_data: Callable[[jax.Array, State, Data], Data] | None = None
    name: str = "kernel"
    accumulate: Callable[[State, Data], dict[str, jax.Array]] | None = None
    data_type: type | tuple[type, ...] | None = None
    check_init: Callable[[dict[str, Any]], None] | None = None
    warmup_step: Callable[[jax.Array, State, Data], State] | None = None
    warmup_name: str = ""
    label_dims: tuple[str, ...] = ()
    shard: Callable[..., "Sharded"] | None = None
    sizes: Callable[[Data], Mapping[str, int]] | None = None
    check_state: Callable[..., None] | None = None
    log_likelihood: Callable[[State, Data], dict[str, jax.Array]] | None = None
    observed_data: Callable[[Data], Mapping[str, Any]] | None = None


class Sharded(NamedTuple):
    """A kernel and its data split along one axis over the devices of a mesh (``Kernel.shard``).

    Parameters
    ----------
    kernel : Kernel
        The per-chain kernel on ``data`` (same ``name``); its functions use
        ``jax.shard_map`` over ``mesh`` and cross-device sums (``jax.lax.psum``) for the
        reductions, so every device holds its shard of the data and of the state.
    data : pytree
        The sharded data.
    mesh : jax.sharding.Mesh
        The devices the data is split over.
    data_specs, state_specs, acc_specs : pytree of PartitionSpec
        ``PartitionSpec`` pytrees (or prefixes) of the data, of one chain's state and of
        one chain's accumulators (the runner prepends the chain axis, unsharded).
    means : callable
        ``means(dict) -> dict``: the per-chain means of ``accumulate`` (numpy, chains
        first) in the unsharded kernel's layout, with its ``dims``.
    num_shards : int
        How many shards; recorded in a result's ``attrs["sharding"]``.
    description : str
        The sharding in words; recorded in a result's ``attrs["sharding"]``.

    Examples
    --------
    >>> from gibbsjax.models import lda
    >>> callable(lda.partially_collapsed(3).shard)
    True
    """

    kernel: Kernel
    data: Any
    mesh: Any
    data_specs: Any
    state_specs: Any
    acc_specs: Any
    means: Callable[[dict], dict]
    num_shards: int
    description: str


def set_field(state: State, field: str, value: Any) -> State:
    """Return ``state`` with ``field`` replaced by ``value``.

    Works for NamedTuple states (``_replace``) and dict states (a new dict).

    Parameters
    ----------
    state : NamedTuple or dict
        The state.
    field : str
        The field to replace.
    value : object
        Its new value.

    Returns
    -------
    NamedTuple or dict
        A new state of the same type.

    Examples
    --------
    >>> set_field({"a": 1, "b": 2}, "a", 5)
    {'a': 5, 'b': 2}
    """
    if isinstance(state, Mapping):
        if field not in state:
            raise KeyError(f"state has no field {field!r}; fields: {sorted(state)}")
        return {**state, field: value}
    if hasattr(state, "_replace"):
        if field not in state._fields:
            raise KeyError(f"state has no field {field!r}; fields: {state._fields}")
        return state._replace(**{field: value})
    raise TypeError(f"cannot set field {field!r} on a state of type {type(state).__name__}")


def _kind(dtype) -> str:
    return "bool" if dtype == bool else ("integer" if jnp.issubdtype(dtype, jnp.integer) else
                                         "float" if jnp.issubdtype(dtype, jnp.floating) else str(dtype))


def check_field_value(state: State, field: str, value: Any) -> None:
    """Refuse, while the sweep is traced (once, before any sampling), a conditional's draw whose shape
    or kind of number does not match the state field it replaces: one ``ValueError`` naming the field
    and both shapes, per chain (inside the runner's ``vmap`` the chain axis is not in them).

    Parameters
    ----------
    state : NamedTuple or dict
        The state the conditional was given.
    field : str
        The field its draw replaces.
    value : object
        The draw.

    Raises
    ------
    ValueError
        For another shape (or structure), or integers for a float field and the like.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> check_field_value({"mu": jnp.zeros(())}, "mu", jnp.ones(()))   # fine: nothing happens
    >>> check_field_value({"mu": jnp.zeros(())}, "mu", jnp.ones(3))
    Traceback (most recent call last):
    ...
    ValueError: the conditional of state field 'mu' returned shape (3,) per chain, but the field holds shape () per chain (the state from init); return one draw of the field's shape
    """
    old = state[field] if isinstance(state, Mapping) else getattr(state, field, None)
    if old is None:
        return  # set_field names an unknown field
    old_leaves, old_tree = jax.tree_util.tree_flatten(old)
    new_leaves, new_tree = jax.tree_util.tree_flatten(value)
    if old_tree != new_tree:
        raise ValueError(f"the conditional of state field {field!r} returned {new_tree}, but the field holds "
                         f"{old_tree} (the state from init); return a value of the field's structure")
    for a, b in zip(old_leaves, new_leaves):
        old_shape, new_shape = tuple(jnp.shape(a)), tuple(jnp.shape(b))
        if old_shape != new_shape:
            raise ValueError(f"the conditional of state field {field!r} returned shape {new_shape} per chain, but "
                             f"the field holds shape {old_shape} per chain (the state from init); return one "
                             "draw of the field's shape")
        old_kind, new_kind = _kind(jnp.result_type(a)), _kind(jnp.result_type(b))
        if old_kind != new_kind:
            raise ValueError(f"the conditional of state field {field!r} returned {new_kind} values "
                             f"({jnp.result_type(b)}), but the field holds {old_kind} values ({jnp.result_type(a)}); "
                             "cast the draw to the field's dtype")


def _field_leaves(tree) -> list[tuple[str, Any]]:
    """``(name, leaf)`` of a state's leaves, named by their path (``mu``, ``params.a``)."""
    def part(k) -> str:
        for attr in ("name", "key", "idx"):
            if hasattr(k, attr):
                return str(getattr(k, attr))
        return str(k)

    return [(".".join(part(k) for k in path) or "state", leaf)
            for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]]


def _is_array_like(x) -> bool:
    return hasattr(x, "shape") and hasattr(x, "dtype") or isinstance(x, (bool, int, float, complex))


def abstract_output(fn, what: str, *args, named: bool = False):
    """``jax.eval_shape(fn, *args)``, refusing an output that is not arrays with a ``ValueError``
    that names ``what`` and the field (before JAX's own error).

    Parameters
    ----------
    fn : callable
        A kernel's function (``init``, ``record``, ``log_likelihood``).
    what : str
        Its name in the message.
    *args
        Its arguments (abstract or concrete).
    named : bool, default False
        The output must be a dict of variable names to arrays (``record``); else a state, a
        pytree of arrays.

    Returns
    -------
    pytree of jax.ShapeDtypeStruct
        The output's shapes and dtypes (nothing is computed).

    Raises
    ------
    ValueError
        For an output that holds something other than arrays (or, ``named``, is not such a dict).

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> abstract_output(lambda s: {"mu": s}, "record", jnp.zeros(3), named=True)["mu"].shape
    (3,)
    >>> abstract_output(lambda s: {"mu": "x"}, "record", jnp.zeros(3), named=True)
    Traceback (most recent call last):
    ...
    ValueError: record returned 'mu' as str; return one array per name
    """
    problems: list[str] = []

    def checked(*a):
        out = fn(*a)
        if named:
            if not isinstance(out, Mapping):
                problems.append(f"{what} must return a dict of names to arrays, got {type(out).__name__}")
                return {}
            for name, value in out.items():
                if not isinstance(name, str):
                    problems.append(f"{what} returned a key {name!r}; keys must be variable names (str)")
                elif not _is_array_like(value):
                    problems.append(f"{what} returned {name!r} as {type(value).__name__}; return one array per name")
        else:
            problems.extend(f"{what} returned state field {leaf_name!r} as {type(leaf).__name__}; a state holds "
                            "arrays" for leaf_name, leaf in _field_leaves(out) if not _is_array_like(leaf))
        return {} if problems else out  # (raised below, outside JAX's trace: a plain traceback)

    out = jax.eval_shape(checked, *args)
    if problems:
        raise ValueError(problems[0])
    return out


def _check_named_arrays(out, what: str, dims: Mapping, sizes: dict) -> None:
    """``out`` (what ``record`` or ``log_likelihood`` returns, abstract, one chain) is a mapping of names
    to arrays whose number of dimensions is that of ``dims`` and whose dims agree in size (``sizes``,
    filled in as they are met)."""
    for name, value in out.items():
        shape = tuple(value.shape)
        if name not in dims:
            continue
        names = tuple(dims[name])
        if len(names) != len(shape):
            raise ValueError(f"{what} returned {name!r} of shape {shape} per chain, but the kernel's dims declare "
                             f"{names} for it ({len(names)} dimension{'s' if len(names) != 1 else ''}); return "
                             "one array of the declared dimensions per chain, or change dims")
        for dim, n in zip(names, shape):
            seen = sizes.setdefault(dim, (int(n), f"{what}'s {name!r}"))
            if seen[0] != int(n):
                raise ValueError(f"{what} returned {name!r} with dimension {dim!r} of size {int(n)} per chain, "
                                 f"but {seen[1]} has it of size {seen[0]}; a dimension has one size")


def check_outputs(kernel: "Kernel", data: Data, *, log_likelihood: bool = True) -> None:
    """Refuse, before anything is compiled or sampled, a kernel whose functions return what the runner
    cannot use: one ``ValueError`` naming the function, the field or variable and both shapes per chain.

    On abstract shapes (``jax.eval_shape`` of ``init`` and ``record``: nothing is computed, the
    sweep is not traced), for one chain:

    * ``init`` returns a state of arrays holding every field that ``step`` (and ``warmup_step``)
      declare, when they are :func:`sweep` s of ``(field, sampler)`` pairs;
    * ``record`` (and ``log_likelihood``) return a dict of names to arrays, each with as many
      dimensions as ``dims`` declares for it, a dimension of one size in every variable (and as
      many entries as ``coords(data)`` gives it).

    (A conditional's draw is checked against its field where the sweep is traced:
    :func:`check_field_value`.)

    Parameters
    ----------
    kernel : Kernel
        The kernel.
    data : pytree
        Its data.
    log_likelihood : bool, default True
        Check ``log_likelihood`` too (when the kernel has it).

    Raises
    ------
    ValueError
        Naming the function, the field or variable, and both shapes per chain.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> k = Kernel(init=lambda key, d: {"mu": jnp.zeros(())},
    ...            step=lambda key, s, d: s,
    ...            record=lambda s, d: {"mu": jnp.zeros(3)}, dims={"mu": ("school",)})
    >>> check_outputs(k, None)   # fine: nothing happens
    >>> check_outputs(k._replace(record=lambda s, d: {"mu": s["mu"]}), None)
    Traceback (most recent call last):
    ...
    ValueError: record returned 'mu' of shape () per chain, but the kernel's dims declare ('school',) for it (1 dimension); return one array of the declared dimensions per chain, or change dims
    """
    key = jax.random.key(0)
    state = abstract_output(kernel.init, "init", key, data)
    if isinstance(state, Mapping) or hasattr(state, "_fields"):
        have = list(state) if isinstance(state, Mapping) else list(state._fields)
        for what, fn in (("step", kernel.step), ("warmup_step", kernel.warmup_step)):
            missing = [f for f in getattr(fn, "fields", ()) if f not in have]
            if missing:
                raise ValueError(f"init returned a state without field {missing[0]!r}, which {what} (a sweep) "
                                 f"updates; the state's fields are {have}")
    dims = dict(kernel.dims or {})
    sizes: dict[str, tuple[int, str]] = {}
    if kernel.coords is not None and kernel.sizes is None:  # (with sizes, padded results are cut to coords)
        coords = kernel.coords(data)
        for dim, values in coords.items():
            if hasattr(values, "__len__") and not isinstance(values, (str, bytes)):
                sizes[dim] = (len(values), f"coords {dim!r}")
    if kernel.record is not None:
        _check_named_arrays(abstract_output(kernel.record, "record", state, data, named=True), "record", dims, sizes)
    if log_likelihood and kernel.log_likelihood is not None:
        _check_named_arrays(abstract_output(kernel.log_likelihood, "log_likelihood", state, data, named=True),
                            "log_likelihood", dims, sizes)


def sweep(*updates: Update | tuple[str, Callable[[jax.Array, State, Data], Any]]) -> Update:
    """Compose conditional updates into one Gibbs sweep, splitting keys for them.

    Parameters
    ----------
    *updates : callable or tuple of (str, callable)
        Each is either

        * a full update ``update(key, state, data) -> state``, or
        * a pair ``(field, sampler)`` where ``sampler(key, state, data)`` returns a
          draw from the full conditional of ``field`` given the rest of ``state``;
          the sweep stores it in ``state.field`` before the next update runs.

    Returns
    -------
    callable
        ``step(key, state, data) -> state``: the updates run in the order given (a
        systematic-scan Gibbs sampler), each with its own key from
        ``jax.random.split(key, len(updates))``.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> step = sweep(("a", lambda k, s, d: s["b"] + 1.0),
    ...              ("b", lambda k, s, d: s["a"] * 2.0))
    >>> step(jax.random.key(0), {"a": jnp.array(0.0), "b": jnp.array(1.0)}, None)["b"].item()
    4.0
    """
    if not updates:
        raise ValueError("sweep needs at least one update")
    normalised: list[Update] = []
    for u in updates:
        if isinstance(u, tuple):
            if len(u) != 2 or not isinstance(u[0], str) or not callable(u[1]):
                raise TypeError("a field update must be a pair (field_name, sampler)")
            field, sampler = u

            def update(key, state, data, _field=field, _sampler=sampler):
                value = _sampler(key, state, data)
                check_field_value(state, _field, value)
                return set_field(state, _field, value)

            update.__name__ = f"update_{field}"
            normalised.append(update)
        elif callable(u):
            normalised.append(u)
        else:
            raise TypeError(f"an update must be callable or a (field, sampler) pair, got {u!r}")

    def step(key, state, data):
        keys = jax.random.split(key, len(normalised))
        for i, update in enumerate(normalised):
            state = update(keys[i], state, data)
        return state

    # the fields the sweep's pairs update, nested sweeps included: check_outputs asks init's state for them
    step.fields = tuple(dict.fromkeys(
        f for u in updates for f in ((u[0],) if isinstance(u, tuple) else getattr(u, "fields", ()))))
    return step
