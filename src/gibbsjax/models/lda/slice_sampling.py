"""Slice sampling of a scalar (Neal 2003, Ann. Statist. 31(3) 705-767, §4): stepping out, then shrinkage.

The learned priors of LDA (:mod:`gibbsjax.models.lda.priors`) move each log concentration
with :func:`slice_sample`; it knows nothing of LDA (a scalar and a log density ratio).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from gibbsjax import random as gr

__all__ = ["SLICE_WIDTH", "SLICE_MAX_STEPS_OUT", "SLICE_MAX_SHRINKS", "slice_sample"]

#: slice sampling of a log concentration: initial interval width (in log units), Neal's
#: bound m on the stepping-out steps (J = ⌊mV⌋ to the left, m − 1 − J to the right) and
#: the most shrinkage steps; if none is accepted the current value is kept.  Each
#: bound keeps the transition reversible (see :func:`slice_sample`).
SLICE_WIDTH = 1.0
SLICE_MAX_STEPS_OUT = 8
SLICE_MAX_SHRINKS = 32


def slice_sample(key, x0, log_density_ratio, *, width: float = SLICE_WIDTH,
                 max_steps_out: int = SLICE_MAX_STEPS_OUT, max_shrinks: int = SLICE_MAX_SHRINKS):
    """One slice-sampling transition of a scalar (Neal 2003, §4.1-4.2): stepping out, then shrinkage.

    ``log_density_ratio(x)`` is log f(x) − log f(x0) for the target density f (0 at
    ``x0``; a non-finite value counts as −∞).  The level is y = −E, E ~ Exp(1); an
    interval of ``width`` placed uniformly around x0 is stepped out by Neal's bounded
    procedure (J = ⌊mV⌋ steps at most to the left, m − 1 − J to the right, m =
    ``max_steps_out``, V uniform), which is exact for every m ≥ 1; then points drawn
    uniformly from the interval are accepted if above the level, else the interval
    shrinks to them.  Shrinkage stops after ``max_shrinks`` proposals and then keeps
    x0: Neal's reversibility argument pairs every path of rejected points from x0 to x1
    with the path of the same rejected points, equally likely, from x1 to x0 — of the
    same length — so the transition truncated at any fixed length is still reversible
    with respect to f.  One ``lax.while_loop`` evaluates the density at most
    ``max_steps_out + 1 + max_shrinks`` times (vmap-safe; chains stop independently).

    Parameters
    ----------
    key : jax.Array
        PRNG key.
    x0 : jax.Array
        The current value (a scalar).
    log_density_ratio : callable
        x -> log f(x) − log f(x0).
    width : float, default :data:`SLICE_WIDTH`
        Initial interval width.
    max_steps_out : int, default :data:`SLICE_MAX_STEPS_OUT`
        m, the bound on the stepping-out steps.
    max_shrinks : int, default :data:`SLICE_MAX_SHRINKS`
        The most shrinkage proposals.

    Returns
    -------
    jax.Array
        The new value, of ``x0``'s shape and dtype.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> x = slice_sample(jax.random.key(0), jnp.float32(0.0), lambda x: -0.5 * x**2)
    >>> bool(jnp.isfinite(x))
    True
    """
    x0 = jnp.asarray(x0)
    dtype = x0.dtype
    # every uniform the transition may use, drawn at once (one generator, compiled once)
    u = gr.uniform(key, (3 + max_shrinks,), dtype)
    level = jnp.log(u[0])  # = −Exp(1), relative to f(x0) = 0
    left = x0 - width * u[1]
    steps_left = jnp.floor(max_steps_out * u[2]).astype(jnp.int32)
    steps_left = jnp.minimum(steps_left, max_steps_out - 1)  # U = 1 is possible: keep J ≤ m − 1
    # One loop, one evaluation of the density per iteration (so it is compiled once):
    # phase 0 probes the left end and steps it out, phase 1 the right end, phase 2
    # shrinks; phase 3 is done.
    _LEFT, _RIGHT, _SHRINK, _DONE = 0, 1, 2, 3

    def cond(c):
        return c[0] < _DONE

    def body(c):
        phase, lo, hi, n_left, n_right, i, x1 = c
        candidate = lo + u[3 + jnp.minimum(i, max_shrinks - 1)] * (hi - lo)
        probe = jnp.where(phase == _LEFT, lo, jnp.where(phase == _RIGHT, hi, candidate))
        v = log_density_ratio(probe)
        inside = jnp.isfinite(v) & (v > level)
        # stepping out (Neal's bounded procedure): move the probed end while inside and steps remain
        go_left = (phase == _LEFT) & inside & (n_left > 0)
        go_right = (phase == _RIGHT) & inside & (n_right > 0)
        lo = jnp.where(go_left, lo - width, lo)
        hi = jnp.where(go_right, hi + width, hi)
        n_left = n_left - go_left
        n_right = n_right - go_right
        # shrinkage: accept the candidate, or shrink the interval to it
        shrinking = phase == _SHRINK
        accepted = shrinking & inside
        rejected = shrinking & ~inside
        lo = jnp.where(rejected & (candidate < x0), candidate, lo)
        hi = jnp.where(rejected & (candidate >= x0), candidate, hi)
        x1 = jnp.where(accepted, candidate, x1)
        i = i + shrinking
        next_phase = jnp.where(phase == _LEFT, jnp.where(go_left, _LEFT, _RIGHT),
                               jnp.where(phase == _RIGHT, jnp.where(go_right, _RIGHT, _SHRINK),
                                         jnp.where(accepted | (i >= max_shrinks), _DONE, _SHRINK)))
        return next_phase, lo, hi, n_left, n_right, i, x1

    start = (jnp.int32(_LEFT), left, left + width, steps_left, max_steps_out - 1 - steps_left, jnp.int32(0), x0)
    return jax.lax.while_loop(cond, body, start)[-1]
