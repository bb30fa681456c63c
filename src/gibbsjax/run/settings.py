"""How to run a sampler: :class:`Settings`, and the on-disk compilation cache
(:func:`enable_compilation_cache`)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import Any

import jax
import numpy as np

from gibbsjax._checks import check_int as _check_int
from gibbsjax._checks import check_seed as _check_seed
from gibbsjax.stopping import parse_until

__all__ = ["Settings", "enable_compilation_cache", "enable_default_cache", "DEFAULT_NUM_CHUNKS", "SHARD_MODES"]

#: a run is cut into about this many chunks per phase (warm-up, sampling)
DEFAULT_NUM_CHUNKS = 20
#: how ``Settings.devices`` are used (see :class:`Settings`)
SHARD_MODES = ("auto", "chains", "data")


# ----------------------------------------------------------------------------- settings
@dataclasses.dataclass(frozen=True)
class Settings:
    """How to run a sampler: the one settings object of :func:`sample`, of a
    config's ``[sampler]`` table and of the estimators' defaults.

    Values are checked on construction (``ValueError`` naming the field).

    Parameters
    ----------
    seed : int, optional
        An integer; ``None`` draws a fresh one (recorded in ``attrs``).
    num_chains : int, default 4
        Independent chains, run side by side with ``vmap``.
    num_warmup : int, default 1000
        Sweeps discarded at the start of every chain (burn-in).
    num_draws : int, default 1000
        Draws kept per chain.
    thin : int, default 1
        Sweeps between kept draws.
    init : mapping, optional
        Starting values overriding the kernel's random start: a mapping from state
        field names to arrays whose first axis has length ``num_chains`` (fields not
        given keep their random start).
    progress : bool, default True
        A tqdm progress bar, updated between chunks, showing the log joint of the
        chains' last sweep (``lp=min..max``) when the kernel has one.
    chunk_size : int, optional
        Draws per compiled chunk; default about ``DEFAULT_NUM_CHUNKS`` chunks per
        phase.  Draws do not depend on it.
    save_warmup : bool, default False
        Keep warm-up sweeps in a ``warmup_posterior`` group; its draw 0 is the
        starting state, draw ``t`` the state after sweep ``t``.
    until : str, optional
        Run until converged, a rule such as ``"rhat<1.01,ess>400"``
        (:mod:`gibbsjax.stopping`) on the label-invariant quantities (``lp`` and
        the recorded variables without a dimension in ``kernel.label_dims``),
        checked after ``num_draws`` draws and after every further ``num_draws``.
    max_draws : int, optional
        The cap of a run with ``until`` (default ``10 * num_draws``).
    devices : int, optional
        Run on this many devices (``jax.devices()``, e.g. GPUs) with a
        ``jax.sharding`` mesh.  Draws do not depend on it.  Default: one device.
    shard : {"auto", "chains", "data"}, default "auto"
        How ``devices`` are used: ``"chains"`` spreads the chains (``num_chains``
        a multiple of ``devices``; no communication); ``"data"`` splits the data
        along the axis the kernel declares (``Kernel.shard``, e.g. LDA's
        documents), every chain on every device, its count tables summed across
        devices each sweep; ``"auto"``: chains when ``num_chains`` is a multiple
        of ``devices``, else data.
    log_likelihood : bool, default True
        Record the pointwise log likelihood of every kept draw (kernels that define
        ``log_likelihood``: one value per observation, per document for LDA) in a
        ``log_likelihood`` group, with an ``observed_data`` group, for ``az.loo``,
        ``az.waic`` and ``az.compare``.  It costs chains × draws × observations × 4
        bytes (8 with ``JAX_ENABLE_X64``) of host memory, counted by the memory
        check; ``False`` leaves it out (very large data).

    Examples
    --------
    >>> Settings(num_chains=8).replace(num_draws=50).num_draws
    50
    """

    seed: int | None = None
    num_chains: int = 4
    num_warmup: int = 1000
    num_draws: int = 1000
    thin: int = 1
    init: Mapping[str, Any] | None = None
    progress: bool = True
    chunk_size: int | None = None
    save_warmup: bool = False
    until: str | None = None
    max_draws: int | None = None
    devices: int | None = None
    shard: str = "auto"
    log_likelihood: bool = True

    def __post_init__(self):
        for name, minimum in (("num_chains", 1), ("num_warmup", 0), ("num_draws", 1), ("thin", 1)):
            object.__setattr__(self, name, _check_int(name, getattr(self, name), minimum))
        if self.chunk_size is not None:
            object.__setattr__(self, "chunk_size", _check_int("chunk_size", self.chunk_size, 1))
        if self.seed is not None:
            object.__setattr__(self, "seed", _check_seed("seed", self.seed))  # [0, 2**32), as sample takes it
        if not isinstance(self.shard, str) or self.shard not in SHARD_MODES:
            raise ValueError(f"shard must be one of {', '.join(repr(m) for m in SHARD_MODES)}, got {self.shard!r}")
        if self.devices is not None:
            object.__setattr__(self, "devices", _check_int("devices", self.devices, 1))
            if self.shard == "chains" and self.num_chains % self.devices:
                raise ValueError(f"num_chains ({self.num_chains}) must be a multiple of devices ({self.devices}) "
                                 "with shard='chains': every device runs the same number of chains")
        if self.until is not None:
            parse_until(self.until)
        if self.max_draws is not None:
            object.__setattr__(self, "max_draws", _check_int("max_draws", self.max_draws, 1))
            if self.until is None:
                raise ValueError("max_draws is the cap of a run with until; give until as well")
            if self.max_draws < self.num_draws:
                raise ValueError(f"max_draws ({self.max_draws}) must be at least num_draws ({self.num_draws})")
        for name in ("progress", "save_warmup", "log_likelihood"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name} must be true or false, got {getattr(self, name)!r}")

    def replace(self, **changes) -> "Settings":
        """A copy with some fields changed.

        Parameters
        ----------
        **changes
            Field names and their new values.

        Returns
        -------
        Settings
            The new settings (checked like any).

        Raises
        ------
        ValueError
            For an unknown field name or a bad value.

        Examples
        --------
        >>> Settings(num_chains=8).replace(num_draws=50).num_draws
        50
        >>> Settings().replace(num_drawz=50)
        Traceback (most recent call last):
        ...
        ValueError: unknown setting 'num_drawz'; settings are: chunk_size, devices, ...
        """
        known = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise ValueError(f"unknown setting {unknown[0]!r}; settings are: {', '.join(sorted(known))}")
        return dataclasses.replace(self, **changes)


# ----------------------------------------------------------------------------- compilation cache
def enable_default_cache() -> str | None:
    """Turn on the persistent compilation cache (:func:`enable_compilation_cache`) unless it is
    off: ``GIBBSJAX_NO_CACHE`` set, or a folder already chosen (``jax_compilation_cache_dir``,
    e.g. by ``JAX_COMPILATION_CACHE_DIR``), which is kept.  :func:`gibbsjax.sample` (so
    :class:`gibbsjax.LDA` too) calls it, as the command line does, so a new process reuses the
    programs an earlier one compiled for the same model and shapes.  A folder that cannot be
    created leaves the cache off.

    Returns
    -------
    str or None
        The cache folder in use, or None when the cache is off.

    Examples
    --------
    >>> folder = enable_default_cache()
    >>> folder is None or isinstance(folder, str)
    True
    """
    current = jax.config.jax_compilation_cache_dir
    if current or os.environ.get("GIBBSJAX_NO_CACHE"):
        return current or None
    try:
        return enable_compilation_cache()
    except OSError:  # a read-only home: run without the cache
        return None


def enable_compilation_cache(path: str | None = None) -> str:
    """Keep compiled samplers on disk, so a new process skips most compilation.

    XLA takes 0.3-2 s per compiled function on a CPU; with this cache, a second
    ``gibbsjax run`` of the same model and shapes reuses the first one's code.
    This sets JAX's process-wide ``jax_compilation_cache_dir``; the command line and
    :func:`gibbsjax.sample` turn it on (:func:`enable_default_cache`; ``GIBBSJAX_NO_CACHE=1``
    turns it off).

    Parameters
    ----------
    path : str, optional
        The folder; defaults to ``$GIBBSJAX_CACHE_DIR`` or ``~/.cache/gibbsjax/xla``.

    Returns
    -------
    str
        The folder used.

    Examples
    --------
    >>> import gibbsjax, tempfile
    >>> folder = gibbsjax.enable_compilation_cache(tempfile.mkdtemp())
    """
    folder = path or os.environ.get("GIBBSJAX_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "gibbsjax", "xla"
    )
    os.makedirs(folder, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", folder)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.05)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return folder
