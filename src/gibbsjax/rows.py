"""Rows of a model's data (documents, observations, sequences) split over devices.

Models whose unknowns are one global block (mixture weights and component
parameters, class word distributions, HMM transition and emission matrices) and
one latent variable per row (a document's cluster, an observation's component, a
sequence's hidden path), with the rows independent given the global block, shard
exactly as LDA does (:mod:`gibbsjax.models.lda_shard`): every device holds a
contiguous block of rows, and one sweep

1. draws the global block from the sufficient statistics summed over all rows
   (``jax.lax.psum`` of each device's counts), with the same key on every device,
   so every device holds the same global block;
2. draws the latent variable of each of its rows, row ``i``'s randomness keyed by
   its global index ``i`` (:func:`gibbsjax.random.categorical_at`, or
   ``fold_in(key, i)``), exactly as the one-device kernel draws row ``i``.

A model writes its conditionals once, with a ``rows`` argument (a :class:`Rows`,
``None`` on one device) that says which rows are here, which of them are padding,
and how to sum over all rows; :func:`kernel` builds the model's
:class:`~gibbsjax.kernel.Kernel` from its functions of ``rows``, with a ``shard`` whose
result (:class:`gibbsjax.kernel.Sharded`) :func:`plan` builds.

Exactness of the sharded draws: integer statistics (counts) summed across devices
are exact, so count-based models (the unigram and Bernoulli mixtures, naive Bayes,
the categorical HMM) draw bit for bit what they draw on one device, whatever the
number of devices.  Float statistics (sums of observations in the Gaussian models)
are summed block by block, in a different order than on one device: their draws
agree with one device's up to float rounding.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

from gibbsjax import random as gr
from gibbsjax._checks import check_int
from gibbsjax.kernel import Kernel, Sharded

__all__ = ["AXIS", "P", "Rows", "check_devices", "RowData", "split_rows", "pad_rows", "pad_row_fields", "plan",
           "kernel", "here", "total", "row_sum", "take_rows"]

#: the mesh axis rows are split along
AXIS = "rows"


class Rows(NamedTuple):
    """The rows a model's conditionals see (``rows=None`` in a model's functions: all rows,
    on one device).

    * ``ids``: (R,) int32, the global index of each local row (padding rows: indices
      at and beyond ``num_rows``);
    * ``num_rows``: rows in the whole data set (static);
    * ``axis``: the mesh axis to sum over, or ``None``;
    * ``offset``: the position of this device's first row in the padded layout (a model
      whose per-token arrays point at rows by padded position subtracts it).

    >>> r = Rows.all(3)
    >>> r.real.tolist(), int(r.sum(jnp.array(2)))
    ([True, True, True], 2)

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> from gibbsjax.rows import Rows
    >>> rows = Rows.all(4)
    >>> rows.num_rows, rows.sum(jnp.ones(4)).tolist()
    (4, [1.0, 1.0, 1.0, 1.0])
    """

    ids: jax.Array
    num_rows: int
    axis: str | None = None
    offset: Any = 0

    @staticmethod
    def all(num_rows: int) -> "Rows":
        """Every row of a data set of ``num_rows`` rows, on one device."""
        return Rows(jnp.arange(num_rows, dtype=jnp.int32), int(num_rows), None)

    @property
    def real(self) -> jax.Array:
        """(R,) bool: the row holds data (not padding)."""
        return self.ids < self.num_rows

    def sum(self, tree):
        """Sums over every device's rows of per-device sums (a ``psum``); unchanged on one device."""
        if self.axis is None:
            return tree
        return jax.tree_util.tree_map(lambda x: jax.lax.psum(x, self.axis), tree)

    def gather(self, x):
        """A per-row array (R, ...) of every device, as the whole (num_rows, ...) array in row
        order (padding left out), on every device (an ``all_gather``); unchanged on one device."""
        if self.axis is None:
            return x
        full = jax.lax.all_gather(x, self.axis, tiled=True)
        ids = jax.lax.all_gather(self.ids, self.axis, tiled=True)
        return jnp.zeros((self.num_rows,) + x.shape[1:], x.dtype).at[ids].set(full, mode="drop")

    def take(self, full):
        """This device's rows of an array drawn for all rows (num_rows, ...) (padding rows:
        the last row's values)."""
        return full[jnp.minimum(self.ids, self.num_rows - 1)]

    def categorical(self, key, logits):
        """One categorical draw per local row, row i's as row i of ``gr.categorical(key, all_logits)``."""
        if self.axis is None:
            return gr.categorical(key, logits)
        return gr.categorical_at(key, logits, self.ids)

    def weights(self, dtype=jnp.int32):
        """1 for real rows, 0 for padding, (R,) of ``dtype``."""
        return self.real.astype(dtype)

    def labels(self, z, num_labels: int):
        """``z`` with padding rows set to ``num_labels`` (out of range): every count by
        scatter-add or segment sum keyed by the labels then drops them."""
        return jnp.where(self.real, z, num_labels)


def here(rows: Rows | None, z, num_labels: int):
    """``rows.labels(z, num_labels)``, or ``z`` on one device (``rows`` None).

    >>> here(None, jnp.array([0, 1]), 2).tolist()
    [0, 1]
    """
    return z if rows is None else rows.labels(z, num_labels)


def total(rows: Rows | None, tree):
    """``rows.sum(tree)``, or ``tree`` on one device."""
    return tree if rows is None else rows.sum(tree)


def row_sum(rows: Rows | None, values) -> jax.Array:
    """Σ over all rows of a per-row array (R, ...): padding rows left out, summed over the
    devices; ``jnp.sum(values)`` on one device.

    >>> float(row_sum(None, jnp.array([1.0, 2.0])))
    3.0
    """
    if rows is None:
        return jnp.sum(values)
    real = rows.real.reshape(rows.real.shape + (1,) * (values.ndim - 1))
    return rows.sum(jnp.sum(jnp.where(real, values, 0)))


def take_rows(rows: Rows | None, full):
    """``rows.take(full)``, or ``full`` when ``rows`` is None (one device).

    >>> take_rows(None, jnp.arange(3)).tolist()
    [0, 1, 2]
    """
    return full if rows is None else rows.take(full)


class RowData(NamedTuple):
    """A model's data with its rows split into ``num_shards`` equal blocks (padded).

    ``data``: the model's own data type, each row field padded to ``num_shards × R`` rows
    (block p holds the rows p·R .. p·R + R − 1, the last block padded); ``ids``: (num_shards × R,)
    int32, each row's global index (padding rows: ``num_rows`` + j).

    Examples
    --------
    >>> from gibbsjax.rows import RowData
    >>> RowData._fields
    ('data', 'ids')
    """

    data: Any
    ids: jax.Array


def check_devices(devices: Sequence | None, num_shards: int | None) -> tuple[list, int]:
    """``(devices, num_shards)`` of a split run: ``devices`` as a list (default: every device
    JAX sees), ``num_shards`` a multiple of their number (default: one per device);
    ``ValueError`` otherwise.

    >>> d, n = check_devices(None, None)
    >>> n == len(d) == len(jax.devices())
    True
    """
    devices = list(jax.devices() if devices is None else devices)
    if not devices:
        raise ValueError("devices must name at least one device")
    num_shards = len(devices) if num_shards is None else check_int("num_shards", num_shards, 1)
    if num_shards % len(devices):
        raise ValueError(f"num_shards ({num_shards}) must be a multiple of the number of devices ({len(devices)})")
    return devices, num_shards


def split_rows(num_rows: int, num_shards: int) -> int:
    """Rows per block when ``num_rows`` rows are split into ``num_shards`` equal blocks: R =
    ceil(num_rows / num_shards).  ``ValueError`` for more blocks than rows.

    >>> split_rows(10, 4)
    3
    """
    num_shards = check_int("num_shards", num_shards, 1)
    if num_shards > num_rows:
        raise ValueError(f"num_shards ({num_shards}) must be at most the number of rows ({num_rows})")
    return -(-num_rows // num_shards)


def pad_rows(x, total: int, fill=0) -> jax.Array:
    """``x`` (n, ...) padded with ``fill`` to ``total`` rows (on the host).

    >>> pad_rows(np.array([1, 2]), 4, -1).tolist()
    [1, 2, -1, -1]
    """
    x = np.asarray(x)
    return jnp.asarray(np.concatenate([x, np.full((total - x.shape[0],) + x.shape[1:], fill, x.dtype)]))


def _replace(data, **fields):
    if hasattr(data, "_replace"):
        return data._replace(**fields)
    return dataclasses.replace(data, **fields)


def pad_row_fields(data, fields: Sequence[str], num_shards: int, per_block: int, fill: dict | None = None):
    """``padded`` for :func:`plan` when every field in ``fields`` has one entry per row
    (leading axis): those fields padded to ``num_shards × per_block`` rows (with ``fill[field]``,
    default 0) and split with the rows, the rest of ``data`` replicated; row ids 0, 1, ...

    >>> from typing import NamedTuple
    >>> class D(NamedTuple):
    ...     x: jax.Array
    ...     scale: jax.Array
    >>> d, specs, ids = pad_row_fields(D(jnp.arange(3), jnp.ones(2)), ["x"], 2, 2)
    >>> d.x.tolist(), specs.x == P(AXIS), specs.scale == P(), ids.tolist()
    ([0, 1, 2, 0], True, True, [0, 1, 2, 3])
    """
    total = num_shards * per_block
    fill = fill or {}
    padded = _replace(data, **{f: pad_rows(getattr(data, f), total, fill.get(f, 0)) for f in fields})
    specs = jax.tree_util.tree_map(lambda _: P(), padded)
    specs = _replace(specs, **{f: P(AXIS) for f in fields})
    return padded, specs, np.arange(total, dtype=np.int32)


def plan(*, base: Kernel, padded: Any, num_rows: int, devices: Sequence | None, num_shards: int | None,
         make: Callable[[Rows | None], dict], state_specs: Any, row_records: Sequence[str] = (),
         row_accumulators: Sequence[str] = (), what: str = "rows") -> Sharded:
    """A :class:`~gibbsjax.kernel.Sharded` plan for a model written with :class:`Rows`:
    ``Kernel.shard`` of ``base`` (the one-device kernel, whose name, dims and label dims
    the sharded kernel keeps), for ``num_rows`` rows.

    ``padded(num_shards, R)``: ``(data, specs, ids)``: the model's data laid out in
    ``num_shards`` equal blocks of rows (R real rows at most per block, padded), the
    ``PartitionSpec`` pytree of that data (``P(AXIS)`` for arrays split with the rows,
    ``P()`` for the rest) and the global index of every row position (padding rows:
    ``num_rows`` or more); ``make(rows)``: the model's kernel functions for the given rows, a dict with
    ``init``, ``step``, ``record``, ``log_joint`` and optionally ``accumulate`` (each
    ``fn(key?, state, data)`` as in :class:`~gibbsjax.kernel.Kernel`, on the local rows;
    ``record`` and ``log_joint`` must return whole-data values on every device, with
    :meth:`Rows.gather` / :meth:`Rows.sum`); ``state_specs``: the ``PartitionSpec``
    pytree of one chain's state (per-row fields ``P(AXIS)``); ``row_accumulators``: the
    accumulators with a leading row axis (kept split; :attr:`Sharded.means` cuts their
    padding off).  ``what`` names the rows in the description.
    """
    devices, num_shards = check_devices(devices, num_shards)
    per_block = split_rows(num_rows, num_shards)
    data_, specs, ids = padded(num_shards, per_block)
    sd = RowData(data_, jnp.asarray(ids, jnp.int32))
    data_specs = RowData(specs, P(AXIS))
    fns = make(Rows(sd.ids, num_rows))  # the padded layout on one device: for the names of the accumulators
    acc_specs = None
    if fns.get("accumulate") is not None:
        names = jax.eval_shape(lambda d: fns["accumulate"](fns["init"](jax.random.key(0), d), d), data_)
        acc_specs = {k: P(AXIS) if k in row_accumulators else P() for k in names}
    mesh = Mesh(np.array(devices), (AXIS,))
    per_device = sd.ids.shape[0] // len(devices)
    kernel = _sharded_kernel(base, make, mesh, num_rows, per_device, state_specs, acc_specs, data_specs)
    return Sharded(
        kernel=kernel,
        data=sd,
        mesh=mesh,
        data_specs=data_specs,
        state_specs=state_specs,
        acc_specs=acc_specs,
        means=functools.partial(_in_row_order, np.asarray(ids), num_rows, tuple(row_accumulators)),
        num_shards=num_shards,
        description=f"{what} split into {num_shards} blocks of {per_block} over {len(devices)} "
                    f"{devices[0].platform} device{'s' if len(devices) > 1 else ''}",
    )


def kernel(functions: Callable[[Rows | None], dict], *, check: Callable[[Any], Any], num_rows: Callable[[Any], int],
           padded: Callable[..., tuple], state_specs: Any, row_accumulators: Sequence[str] = (), what: str = "rows",
           **fields) -> Kernel:
    """The :class:`~gibbsjax.kernel.Kernel` of a model written with :class:`Rows`, and its ``shard``.

    ``functions(rows)``: the model's kernel functions for the given rows, as for :func:`plan`;
    ``init``, ``step``, ``record``, ``log_joint``, ``accumulate`` and ``log_likelihood`` (optional) come from
    ``functions(None)`` (all rows, one device), every other :class:`~gibbsjax.kernel.Kernel`
    field (``name``, ``dims``, ``coords``, ...) from ``fields``.  ``shard(data, devices=None,
    num_shards=None)`` calls ``check(data)`` (raises ``ValueError`` for data the model does
    not take), then :func:`plan` for ``num_rows(data)`` rows, laid out by
    ``padded(data, num_shards, R)``; ``state_specs``, ``row_accumulators`` and ``what`` as
    for :func:`plan`.

    >>> from typing import NamedTuple
    >>> class S(NamedTuple):
    ...     z: jax.Array
    >>> def functions(rows):
    ...     def init(key, d):
    ...         return S(take_rows(rows, jnp.zeros(d.shape[0] if rows is None else rows.num_rows, jnp.int32)))
    ...     return {"init": init, "step": lambda key, s, d: s, "record": lambda s, d: {},
    ...             "log_joint": lambda s, d: jnp.zeros(())}
    >>> k = kernel(functions, check=lambda d: None, num_rows=lambda d: d.shape[0],
    ...            padded=lambda d, p, r: (pad_rows(d, p * r), P(AXIS), np.arange(p * r)),
    ...            state_specs=S(P(AXIS)), name="toy")
    >>> k.name, k.init(jax.random.key(0), jnp.ones(3)).z.tolist(), k.shard(jnp.ones(3), jax.devices()[:1]).num_shards
    ('toy', [0, 0, 0], 1)
    """
    one = functions(None)
    base = Kernel(init=one["init"], step=one["step"], record=one["record"], log_joint=one["log_joint"],
                  accumulate=one.get("accumulate"), log_likelihood=one.get("log_likelihood"), **fields)

    def shard(data, devices=None, num_shards=None):
        check(data)
        return plan(base=base, make=functions, num_rows=num_rows(data), devices=devices, num_shards=num_shards,
                    padded=functools.partial(padded, data), state_specs=state_specs,
                    row_accumulators=row_accumulators, what=what)

    return base._replace(shard=shard)


def _in_row_order(ids: np.ndarray, num_rows: int, row_accumulators, means: dict) -> dict:
    """Per-chain means (chains first) with the row accumulators in row order, padding cut off."""
    order = np.argsort(ids, kind="stable")[:num_rows]
    return {k: (np.asarray(v)[:, order] if k in row_accumulators else v) for k, v in means.items()}


def _sharded_kernel(base: Kernel, make, mesh, num_rows, per_device, state_specs, acc_specs, data_specs) -> Kernel:
    """``base``'s kernel on row blocks.  Its functions are the same objects for the same model and
    layout, so a second ``sample`` or a ``resume`` of a sharded run reuses the compiled programs
    instead of compiling them again (seconds per call; the persistent cache is off by default)."""
    # the specs as hashable values: a data class compares by identity, so it is keyed by its
    # flattened form (its partition specs, and its static fields in the tree structure)
    specs = tuple(jax.tree_util.tree_flatten(x, is_leaf=lambda v: isinstance(v, P))
                  for x in (state_specs, acc_specs, data_specs))
    key = (make, mesh, num_rows, per_device, tuple((tuple(leaves), tree) for leaves, tree in specs))
    try:
        hash(key)
    except TypeError:  # static fields that cannot be hashed: no reuse, as before
        functions = _sharded_functions.__wrapped__(*key)
    else:
        functions = _sharded_functions(*key)
    return Kernel(**functions, name=base.name, dims=base.dims, label_dims=base.label_dims)


@functools.lru_cache(maxsize=32)
def _sharded_functions(make, mesh, num_rows, per_device, specs) -> dict:
    state_specs, acc_specs, data_specs = (tree.unflatten(leaves) for leaves, tree in specs)
    rep = P()

    def on_blocks(fn, in_specs, out_specs):
        # check_vma=False: what leaves as replicated (P()) is replicated by construction
        # (psum / all_gather, or drawn with the same key on every device)
        return jax.shard_map(fn, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=False)

    def local(sd: RowData) -> Rows:
        return Rows(sd.ids, num_rows, AXIS, jax.lax.axis_index(AXIS) * per_device)

    def init(key, sd):
        return on_blocks(lambda key, sd: make(local(sd))["init"](key, sd.data), (rep, data_specs), state_specs)(
            key, sd)

    def step(key, state, sd):
        return on_blocks(lambda key, s, sd: make(local(sd))["step"](key, s, sd.data),
                         (rep, state_specs, data_specs), state_specs)(key, state, sd)

    def record(state, sd):
        return on_blocks(lambda s, sd: make(local(sd))["record"](s, sd.data), (state_specs, data_specs), rep)(
            state, sd)

    def log_joint(state, sd):
        return on_blocks(lambda s, sd: make(local(sd))["log_joint"](s, sd.data), (state_specs, data_specs), rep)(
            state, sd)

    accumulate = None
    if acc_specs is not None:
        def accumulate(state, sd):
            return on_blocks(lambda s, sd: make(local(sd))["accumulate"](s, sd.data), (state_specs, data_specs),
                             acc_specs)(state, sd)

    return {"init": init, "step": step, "record": record, "log_joint": log_joint, "accumulate": accumulate}
