"""The multi-chain runner: :func:`sample`.

Chains are ``vmap``-ped, sweeps are ``lax.scan``-ned, and the run is cut into
chunks so that a progress bar moves and an interrupt keeps every finished draw.
The runner knows nothing of any model: it only calls the :class:`Kernel`.

Keys
----
Chain ``c`` uses ``chain_key = fold_in(key, c)``; ``split(chain_key)`` gives
its initial-state key and its run key, and sweep ``t`` (counted from 0 over
warm-up and sampling together) uses ``fold_in(run_key, t)``.  So chain ``c``'s
draws do not depend on how many chains run beside it, nor on the chunk size.

Modules (each imports only those above it): :mod:`~gibbsjax.run.settings`
(:class:`Settings`, the compilation cache), :mod:`~gibbsjax.run.chunks` (the
compiled pieces: initial states, records, a chunk of sweeps), :mod:`~gibbsjax.run.placement`
(devices, the layout of a run over them, placing arrays, the memory checks),
:mod:`~gibbsjax.run.results` (a run in progress and the InferenceData it
becomes, with its ``sampler_state``), :mod:`~gibbsjax.run.driver` (checks,
interrupts, progress, the chunk loop and :func:`sample`),
:mod:`~gibbsjax.run.resuming` (:func:`resume`).
"""

from __future__ import annotations

# every public name of the former module gibbsjax.run, from its new home
from gibbsjax.run.driver import SEED_LIMIT, STOP_SIGNALS, data_fingerprint, sample, warmup_description  # noqa: F401
from gibbsjax.run.placement import check_memory, estimate_result_bytes, splits_data  # noqa: F401
from gibbsjax.run.results import DRAW_GROUPS, STATE_GROUP, keep_raw_draws  # noqa: F401
from gibbsjax.run.resuming import resume
from gibbsjax.run.settings import (DEFAULT_NUM_CHUNKS, SHARD_MODES, Settings, enable_compilation_cache,  # noqa: F401
                                   enable_default_cache)

__all__ = ["sample", "resume", "keep_raw_draws", "Settings", "enable_compilation_cache", "enable_default_cache",
           "DEFAULT_NUM_CHUNKS"]
