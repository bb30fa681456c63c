"""Steps for full conditionals without a closed form: slice sampling and random-walk Metropolis.

A Gibbs sweep may update a variable with any transition that leaves its full
conditional invariant, not only with an exact draw (Metropolis-within-Gibbs;
Tierney 1994, "Markov chains for exploring posterior distributions", Ann.
Statist. 22(4)).  The steps here take a log density known up to a constant and
slot into :func:`gibbsjax.kernel.sweep` beside the exact conditionals:

>>> import jax, jax.numpy as jnp
>>> from gibbsjax.kernel import sweep
>>> from gibbsjax.steps import slice_step
>>> def log_tau(state, data):  # log p(log tau | rest) up to a constant: Exp(1) on tau, with its Jacobian
...     return state["log_tau"] - jnp.exp(state["log_tau"])
>>> step = sweep(("mu", lambda k, s, d: jax.random.normal(k) * jnp.exp(s["log_tau"])),
...              slice_step("log_tau", log_tau))
>>> state = step(jax.random.key(0), {"mu": jnp.float32(0.0), "log_tau": jnp.float32(0.0)}, None)
>>> sorted(state)
['log_tau', 'mu']

* :func:`slice_step` / :func:`slice_sample`: univariate slice sampling with
  stepping out and shrinkage (Neal 2003, "Slice sampling", Ann. Statist.
  31(3):705-767, §4, Figs. 3 and 5), applied to one coordinate after another
  (coordinate-wise) or to all coordinates at once when they are conditionally
  independent (``elementwise=True``).  No tuning is needed for exactness: the
  interval ``width`` only sets the cost.
* :func:`metropolis_step` / :func:`metropolis`: random-walk Metropolis with a
  normal proposal of a fixed ``scale`` (Metropolis et al. 1953), one block
  move of the whole field or one accept/reject per element.  The scale is
  fixed while sampling; nothing adapts it (an adapted scale would break the
  chain's invariance unless adaptation stopped before the kept draws).  Pick
  it from a pilot run: for one coordinate, about 2.4 times its conditional
  standard deviation, aiming at an acceptance rate near 0.44 (Roberts,
  Gelman & Gilks 1997, "Weak convergence and optimal scaling of random walk
  Metropolis algorithms", Ann. Appl. Probab. 7(1)); the rate of a run is the
  fraction of draws that differ from the one before.

The ``log_density(state, data)`` a step takes is evaluated on the state with the
step's field replaced by the candidate value; any function equal to the log
full conditional of that field up to terms that do not depend on it will do --
the model's whole log joint, or only the terms that involve the field (cheaper).
A non-finite value (``-inf`` outside the support, ``nan``) counts as zero density.

Both steps are pure JAX: an explicit key, a bounded ``lax.while_loop`` or a
fixed number of operations, no Python loop over chains, so a kernel using them
jit-compiles once and vmaps over chains like any other.  Their arguments are
checked when the step is built, before anything is compiled.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from gibbsjax import random as gr
from gibbsjax._checks import as_numbers
from gibbsjax._checks import check_int as _check_int
from gibbsjax.kernel import set_field

__all__ = ["slice_sample", "slice_step", "metropolis", "metropolis_step",
           "SLICE_WIDTH", "SLICE_MAX_STEPS_OUT", "SLICE_MAX_SHRINKS"]

#: the initial interval width of a slice step (in the units of the variable)
SLICE_WIDTH = 1.0
#: Neal's bound m on the stepping-out steps: J = ⌊mV⌋ steps at most to the left, m − 1 − J to the right
SLICE_MAX_STEPS_OUT = 8
#: the most shrinkage proposals of one slice update; after them the current value is kept
SLICE_MAX_SHRINKS = 32

_LEFT, _RIGHT, _SHRINK, _DONE = 0, 1, 2, 3


# ============================================================================ argument checks
def _check_spread(name: str, value: Any) -> Any:
    """A positive finite number, or an array of them (a width or a scale), as float64 numpy.

    A traced value (inside ``jit``) cannot be checked before compilation and is taken as it is."""
    if isinstance(value, jax.core.Tracer):
        return value
    arr = as_numbers(name, value, "a positive number or an array of them")
    bad = ~(np.isfinite(arr) & (arr > 0))
    if bad.any():
        at = tuple(int(i) for i in np.argwhere(bad)[0])
        where = name if arr.ndim == 0 else f"{name}[{', '.join(map(str, at))}]"
        raise ValueError(f"{where} must be a positive finite number, got {float(arr[at])!r}")
    return arr


def _check_field(field: Any, log_density: Any) -> None:
    if not isinstance(field, str) or not field:
        raise ValueError(f"field must be the name of a state field (a non-empty string), got {field!r}")
    if not callable(log_density):
        raise ValueError(f"log_density must be a callable log_density(state, data), got {log_density!r}")


def _check_point(x: Any) -> jax.Array:
    """``x`` as an array; a concrete (not traced) non-finite value is refused, naming it."""
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        raise ValueError(f"x must hold floating-point numbers, got dtype {x.dtype}")
    if not isinstance(x, jax.core.Tracer):
        arr = np.asarray(x)
        if not np.all(np.isfinite(arr)):
            at = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
            where = "x" if arr.ndim == 0 else f"x[{', '.join(map(str, at))}]"
            raise ValueError(f"{where} must be finite (the current point of the chain), got {float(arr[at])!r}")
    return x


def _check_log_density_shape(value: Any, shape: tuple, elementwise: bool, what: str) -> jax.Array:
    value = jnp.asarray(value)
    want = shape if elementwise else ()
    if value.shape != want:
        raise ValueError(f"{what} must return {'one log density per element, shape ' + str(want) if elementwise else 'a scalar'}"
                         f", got shape {value.shape}")
    return value


# ============================================================================ slice sampling
def _inside(value: jax.Array, level: jax.Array) -> jax.Array:
    """Whether points with log density ``value`` lie in the slice above ``level`` (non-finite: outside)."""
    return jnp.isfinite(value) & (value > level)


def _shrink(lo, hi, candidate, x0, rejected):
    """Neal's shrinkage (Fig. 5): a rejected candidate becomes the end of the interval on its side of x0."""
    lo = jnp.where(rejected & (candidate < x0), candidate, lo)
    hi = jnp.where(rejected & (candidate >= x0), candidate, hi)
    return lo, hi


def _initial_interval(x0, width, u, v, max_steps_out: int):
    """Neal's Fig. 3 start: an interval of ``width`` placed uniformly around x0 (``u``), and the
    stepping-out budget split at random between the ends (``v``): J = ⌊mV⌋ left, m − 1 − J right."""
    lo = x0 - width * u
    steps_left = jnp.minimum(jnp.floor(max_steps_out * v).astype(jnp.int32), max_steps_out - 1)  # V = 1: J ≤ m − 1
    return lo, lo + width, steps_left, max_steps_out - 1 - steps_left


def _slice_elementwise(key, x0, logf, width, max_steps_out: int, max_shrinks: int):
    """One slice update of every element of ``x0`` at once, each on its own slice.

    ``logf(x)`` returns one log density per element (element ``i`` depending on
    ``x[i]`` only).  Every element runs Neal's procedure with its own level,
    interval, stepping-out budget and shrinkage count; the loop runs until all are
    done and evaluates ``logf`` once per iteration on the whole array.
    """
    dtype, shape = x0.dtype, x0.shape
    width = jnp.asarray(width, dtype)
    k_level, k_place, k_split, k_shrink = jax.random.split(key, 4)
    # the slice's level: log f(x0) − E, E ~ Exp(1)   (y = f(x0) U, U uniform on (0, 1])
    level = logf(x0) + jnp.log(gr.uniform(k_level, shape, dtype))
    lo, hi, steps_left, steps_right = _initial_interval(x0, width, gr.uniform(k_place, shape, dtype),
                                                        gr.uniform(k_split, shape, dtype), max_steps_out)

    def cond(c):
        return jnp.any(c[0] < _DONE)

    def body(c):
        phase, lo, hi, n_left, n_right, shrinks, x1, t = c
        candidate = lo + gr.uniform(jax.random.fold_in(k_shrink, t), shape, dtype) * (hi - lo)
        probe = jnp.where(phase == _LEFT, lo, jnp.where(phase == _RIGHT, hi, candidate))
        inside = _inside(logf(probe), level)
        # stepping out (Neal's Fig. 3, bounded by m): move the probed end while it is inside the slice
        go_left = (phase == _LEFT) & inside & (n_left > 0)
        go_right = (phase == _RIGHT) & inside & (n_right > 0)
        lo = jnp.where(go_left, lo - width, lo)
        hi = jnp.where(go_right, hi + width, hi)
        n_left = n_left - go_left
        n_right = n_right - go_right
        # shrinkage (Fig. 5): accept a candidate inside the slice, else shrink the interval to it
        shrinking = phase == _SHRINK
        accepted = shrinking & inside
        lo, hi = _shrink(lo, hi, candidate, x0, shrinking & ~inside)
        x1 = jnp.where(accepted, candidate, x1)
        shrinks = shrinks + shrinking
        phase = jnp.where(phase == _LEFT, jnp.where(go_left, _LEFT, _RIGHT),
                          jnp.where(phase == _RIGHT, jnp.where(go_right, _RIGHT, _SHRINK),
                                    jnp.where(phase == _SHRINK,
                                              jnp.where(accepted | (shrinks >= max_shrinks), _DONE, _SHRINK),
                                              _DONE))).astype(jnp.int32)
        return phase, lo, hi, n_left, n_right, shrinks, x1, t + 1

    zeros = jnp.zeros(shape, jnp.int32)
    start = (zeros + _LEFT, lo, hi, steps_left, steps_right, zeros, x0, jnp.int32(0))
    return lax.while_loop(cond, body, start)[6]


def _slice_coordinatewise(key, x0, logf, width, max_steps_out: int, max_shrinks: int):
    """Slice updates of the elements of ``x0`` one after another (``logf(x)`` a scalar)."""
    if x0.ndim == 0:
        return _slice_elementwise(key, x0, logf, width, max_steps_out, max_shrinks)
    flat = x0.reshape(-1)
    widths = jnp.broadcast_to(jnp.asarray(width, x0.dtype), x0.shape).reshape(-1)

    def one(i, x):
        def logf_i(v):
            return logf(x.at[i].set(v).reshape(x0.shape))

        xi = _slice_elementwise(jax.random.fold_in(key, i), x[i], logf_i, widths[i], max_steps_out, max_shrinks)
        return x.at[i].set(xi)

    return lax.fori_loop(0, flat.shape[0], one, flat).reshape(x0.shape)


def slice_sample(key, x, log_density: Callable[[jax.Array], jax.Array], *, width: Any = SLICE_WIDTH,
                 max_steps_out: int = SLICE_MAX_STEPS_OUT, max_shrinks: int = SLICE_MAX_SHRINKS,
                 elementwise: bool = False) -> jax.Array:
    """One slice-sampling transition of ``x`` for the density ``exp(log_density(x))`` (Neal 2003, §4).

    For each coordinate: a level ``y = log f(x) − E`` with ``E ~ Exp(1)``; an
    interval of ``width`` placed uniformly around the coordinate, stepped out by
    Neal's bounded procedure (at most ``J = ⌊mV⌋`` steps to the left and
    ``m − 1 − J`` to the right, ``m = max_steps_out``, V uniform: exact for every
    m ≥ 1, Neal §4.1); then points drawn uniformly from the interval, the first
    above the level accepted and each rejected one shrinking the interval to it
    (Fig. 5).  After ``max_shrinks`` rejected points the coordinate keeps its
    value: Neal's reversibility argument pairs each path of rejected points from
    x to x' with the same rejected points, equally likely, from x' to x, of the
    same length, so the transition truncated at a fixed length is still
    reversible.  The transition leaves the density invariant for any ``width``;
    a width near the density's scale makes it cheap.

    Parameters
    ----------
    key : jax.Array
        A PRNG key.
    x : array_like
        The current point (a scalar or an array of floats), finite.
    log_density : callable
        ``log_density(x)``: the log density at a point of ``x``'s shape, up to a
        constant; a scalar, or with ``elementwise=True`` one value per element
        of ``x`` (element ``i`` depending on ``x[i]`` only).  Non-finite values
        count as zero density.
    width : float or array_like, default :data:`SLICE_WIDTH`
        The initial interval width, positive (one for all coordinates, or one
        per coordinate).
    max_steps_out : int, default :data:`SLICE_MAX_STEPS_OUT`
        Neal's m, the most stepping-out steps (both sides together), at least 1.
    max_shrinks : int, default :data:`SLICE_MAX_SHRINKS`
        The most shrinkage proposals per coordinate, at least 1.
    elementwise : bool, default False
        False: the coordinates are updated one after another, each on its
        conditional given the others (coordinate-wise slice sampling, for any
        density).  True: the coordinates are conditionally independent and all
        are updated at once.

    Returns
    -------
    jax.Array
        The new point, of ``x``'s shape and dtype.

    Raises
    ------
    ValueError
        For a non-positive or non-finite ``width``, ``max_steps_out`` or
        ``max_shrinks`` below 1, a non-finite ``x`` (when it is concrete), or a
        ``log_density`` of the wrong shape (when traced).

    Examples
    --------
    Draws from N(1, 2²) by repeated slice updates:

    >>> import jax, jax.numpy as jnp
    >>> def chain(key):
    ...     def one(x, k):
    ...         x = slice_sample(k, x, lambda v: -0.5 * ((v - 1.0) / 2.0) ** 2, width=3.0)
    ...         return x, x
    ...     return jax.lax.scan(one, jnp.float32(0.0), jax.random.split(key, 200))[1]
    >>> xs = jax.vmap(chain)(jax.random.split(jax.random.key(0), 100))
    >>> bool(abs(xs.mean() - 1.0) < 0.1), bool(abs(xs.std() - 2.0) < 0.1)
    (True, True)
    """
    width, max_steps_out, max_shrinks, elementwise = _slice_settings(width, max_steps_out, max_shrinks,
                                                                     elementwise)
    x = _check_point(x)
    return _slice(key, x, log_density, width, max_steps_out, max_shrinks, elementwise, "log_density")


def _slice_settings(width, max_steps_out, max_shrinks, elementwise):
    width = _check_spread("width", width)
    max_steps_out = _check_int("max_steps_out", max_steps_out, 1)
    max_shrinks = _check_int("max_shrinks", max_shrinks, 1)
    if not isinstance(elementwise, (bool, np.bool_)):
        raise ValueError(f"elementwise must be True or False, got {elementwise!r}")
    return width, max_steps_out, max_shrinks, bool(elementwise)


def _broadcast_spread(name: str, value: Any, shape: tuple, dtype) -> jax.Array:
    try:
        fits = np.broadcast_shapes(np.shape(value), shape) == tuple(shape)
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{name} of shape {np.shape(value)} does not broadcast to the variable's shape {tuple(shape)}")
    return jnp.asarray(value, dtype)


def _slice(key, x, log_density, width, max_steps_out, max_shrinks, elementwise, what):
    width = _broadcast_spread("width", width, x.shape, x.dtype)

    def logf(v):
        return _check_log_density_shape(log_density(v), x.shape, elementwise, what)

    run = _slice_elementwise if elementwise else _slice_coordinatewise
    return run(key, x, logf, width, max_steps_out, max_shrinks)


def slice_step(field: str, log_density: Callable[[Any, Any], jax.Array], *, width: Any = SLICE_WIDTH,
               max_steps_out: int = SLICE_MAX_STEPS_OUT, max_shrinks: int = SLICE_MAX_SHRINKS,
               elementwise: bool = False) -> Callable[[jax.Array, Any, Any], Any]:
    """A slice-sampling update of one state field, for :func:`gibbsjax.kernel.sweep`.

    The update replaces ``state.field`` by one :func:`slice_sample` transition
    of its full conditional, which leaves that conditional invariant (Neal 2003),
    so the sweep stays a valid Gibbs sampler.

    Parameters
    ----------
    field : str
        The state field updated (a float scalar or array).
    log_density : callable
        ``log_density(state, data)``: the log full conditional of ``field`` up to a
        constant, evaluated on ``state`` with ``field`` set to the candidate value
        (the model's log joint will do); a scalar, or with ``elementwise=True``
        one value per element of the field.
    width : float or array_like, default :data:`SLICE_WIDTH`
        The initial interval width, positive (broadcast to the field's shape).
    max_steps_out : int, default :data:`SLICE_MAX_STEPS_OUT`
        Neal's m, the most stepping-out steps, at least 1.
    max_shrinks : int, default :data:`SLICE_MAX_SHRINKS`
        The most shrinkage proposals per coordinate, at least 1.
    elementwise : bool, default False
        True when the field's elements are conditionally independent given the
        rest of the state: all are updated at once.  False: one after another.

    Returns
    -------
    callable
        ``update(key, state, data) -> state``, an entry of :func:`~gibbsjax.kernel.sweep`.

    Raises
    ------
    ValueError
        For a bad ``field``, ``width``, ``max_steps_out``, ``max_shrinks`` or
        ``elementwise``, when the step is built.

    Examples
    --------
    y_i ~ Poisson(e^η), η ~ N(0, 1): η has no closed-form conditional.

    >>> import jax, jax.numpy as jnp
    >>> from gibbsjax.kernel import sweep
    >>> y = jnp.array([3.0, 5.0, 4.0])
    >>> def log_eta(state, y):
    ...     return jnp.sum(y * state["eta"] - jnp.exp(state["eta"])) - 0.5 * state["eta"] ** 2
    >>> step = sweep(slice_step("eta", log_eta))
    >>> s = step(jax.random.key(0), {"eta": jnp.float32(0.0)}, y)
    >>> s["eta"].shape
    ()
    >>> slice_step("eta", log_eta, width=0.0)
    Traceback (most recent call last):
    ...
    ValueError: width must be a positive finite number, got 0.0
    """
    _check_field(field, log_density)
    width, max_steps_out, max_shrinks, elementwise = _slice_settings(width, max_steps_out, max_shrinks,
                                                                     elementwise)

    def update(key, state, data):
        x = _field_value(state, field)

        def logf(v):
            return log_density(set_field(state, field, v), data)

        what = f"log_density of field {field!r}"
        return set_field(state, field, _slice(key, x, logf, width, max_steps_out, max_shrinks, elementwise, what))

    update.__name__ = f"slice_{field}"
    return update


def _field_value(state, field: str) -> jax.Array:
    value = state.get(field) if isinstance(state, Mapping) else getattr(state, field, None)
    if value is None:
        raise ValueError(f"the state has no field {field!r}")
    value = jnp.asarray(value)
    if not jnp.issubdtype(value.dtype, jnp.floating):
        raise ValueError(f"field {field!r} must hold floating-point numbers for a slice or Metropolis step, "
                         f"got dtype {value.dtype}")
    return value


# ============================================================================ random-walk Metropolis
def _propose(key, x, scale):
    """The random-walk proposal x' = x + scale · N(0, 1), symmetric: q(x' | x) = q(x | x')."""
    return x + scale * gr.normal(key, shape=x.shape, dtype=x.dtype)


def _log_accept_ratio(log_new, log_old):
    """log of Metropolis's ratio f(x') / f(x) (the proposal is symmetric); nan (no density) rejects."""
    ratio = log_new - log_old
    return jnp.where(jnp.isfinite(log_new), jnp.where(jnp.isnan(ratio), jnp.inf, ratio), -jnp.inf)


def _metropolis(key, x, log_density, scale, elementwise, what):
    scale = _broadcast_spread("scale", scale, x.shape, x.dtype)
    k_prop, k_accept = jax.random.split(key)

    def logf(v):
        return _check_log_density_shape(log_density(v), x.shape, elementwise, what)

    proposal = _propose(k_prop, x, scale)
    log_ratio = _log_accept_ratio(logf(proposal), logf(x))
    u = gr.uniform(k_accept, x.shape if elementwise else (), x.dtype)
    accept = jnp.log(u) < log_ratio  # u in (0, 1]: a ratio ≥ 1 always accepts
    return jnp.where(accept, proposal, x)


def _metropolis_settings(scale, elementwise):
    scale = _check_spread("scale", scale)
    if not isinstance(elementwise, (bool, np.bool_)):
        raise ValueError(f"elementwise must be True or False, got {elementwise!r}")
    return scale, bool(elementwise)


def metropolis(key, x, log_density: Callable[[jax.Array], jax.Array], scale: Any, *,
               elementwise: bool = False) -> jax.Array:
    """One random-walk Metropolis transition of ``x`` for the density ``exp(log_density(x))``.

    Propose ``x' = x + scale · Z``, ``Z ~ N(0, I)``, and accept it with
    probability ``min(1, f(x') / f(x))`` (Metropolis, Rosenbluth, Rosenbluth,
    Teller & Teller 1953; the normal proposal is symmetric, so no Hastings
    correction is needed), else keep ``x``.  A proposal with non-finite log
    density is rejected.

    Parameters
    ----------
    key : jax.Array
        A PRNG key.
    x : array_like
        The current point (a scalar or an array of floats), finite.
    log_density : callable
        ``log_density(x)``: the log density up to a constant; a scalar (one block
        move of all of ``x``), or with ``elementwise=True`` one value per
        element (element ``i`` depending on ``x[i]`` only; one accept/reject per
        element).
    scale : float or array_like
        The proposal's standard deviation, positive (one for all coordinates or
        one per coordinate).  Fixed: nothing adapts it.
    elementwise : bool, default False
        Whether the elements are independent targets, each accepted on its own.

    Returns
    -------
    jax.Array
        The new point, of ``x``'s shape and dtype.

    Raises
    ------
    ValueError
        For a non-positive or non-finite ``scale``, or a non-finite ``x`` (when
        it is concrete).

    Examples
    --------
    Draws from N(1, 2²):

    >>> import jax, jax.numpy as jnp
    >>> def chain(key):
    ...     def one(x, k):
    ...         x = metropolis(k, x, lambda v: -0.5 * ((v - 1.0) / 2.0) ** 2, scale=5.0)
    ...         return x, x
    ...     return jax.lax.scan(one, jnp.float32(1.0), jax.random.split(key, 400))[1]
    >>> xs = jax.vmap(chain)(jax.random.split(jax.random.key(0), 100))
    >>> bool(abs(xs.mean() - 1.0) < 0.15), bool(abs(xs.std() - 2.0) < 0.15)
    (True, True)
    """
    scale, elementwise = _metropolis_settings(scale, elementwise)
    x = _check_point(x)
    return _metropolis(key, x, log_density, scale, elementwise, "log_density")


def metropolis_step(field: str, log_density: Callable[[Any, Any], jax.Array], scale: Any, *,
                    elementwise: bool = False) -> Callable[[jax.Array, Any, Any], Any]:
    """A random-walk Metropolis update of one state field, for :func:`gibbsjax.kernel.sweep`.

    The update replaces ``state.field`` by one :func:`metropolis` transition of
    its full conditional, which leaves that conditional invariant, so the sweep
    stays a valid (Metropolis-within-Gibbs) sampler.  ``scale`` is fixed: choose
    it from a pilot run (module notes).

    Parameters
    ----------
    field : str
        The state field updated (a float scalar or array).
    log_density : callable
        ``log_density(state, data)``: the log full conditional of ``field`` up to a
        constant, evaluated on ``state`` with ``field`` set to the proposal; a
        scalar, or with ``elementwise=True`` one value per element of the field.
    scale : float or array_like
        The proposal's standard deviation, positive (broadcast to the field's shape).
    elementwise : bool, default False
        True when the field's elements are conditionally independent given the
        rest of the state: each is accepted or rejected on its own.  False: one
        block move of the whole field.

    Returns
    -------
    callable
        ``update(key, state, data) -> state``, an entry of :func:`~gibbsjax.kernel.sweep`.

    Raises
    ------
    ValueError
        For a bad ``field``, ``scale`` or ``elementwise``, when the step is built.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> from gibbsjax.kernel import sweep
    >>> y = jnp.array([3.0, 5.0, 4.0])
    >>> def log_eta(state, y):   # y_i ~ Poisson(e^η), η ~ N(0, 1)
    ...     return jnp.sum(y * state["eta"] - jnp.exp(state["eta"])) - 0.5 * state["eta"] ** 2
    >>> step = sweep(metropolis_step("eta", log_eta, scale=0.5))
    >>> step(jax.random.key(0), {"eta": jnp.float32(1.0)}, y)["eta"].dtype
    dtype('float32')
    >>> metropolis_step("eta", log_eta, scale=-1.0)
    Traceback (most recent call last):
    ...
    ValueError: scale must be a positive finite number, got -1.0
    """
    _check_field(field, log_density)
    scale, elementwise = _metropolis_settings(scale, elementwise)

    def update(key, state, data):
        x = _field_value(state, field)

        def logf(v):
            return log_density(set_field(state, field, v), data)

        what = f"log_density of field {field!r}"
        return set_field(state, field, _metropolis(key, x, logf, scale, elementwise, what))

    update.__name__ = f"metropolis_{field}"
    return update

