"""Label switching, in one place: matching components across chains and draws
(:mod:`gibbsjax.agreement` then says which components the chains reproduce).

Mixture components, topics and hidden states are exchangeable: chain 1's
component 0 may be chain 2's component 3, and a chain may switch labels
between draws when components overlap.  Per-component R-hat and averages only
mean something after the labels are matched.  Everything here works on
posterior summaries with numpy and SciPy's Hungarian algorithm
(``scipy.optimize.linear_sum_assignment``; Kuhn 1955), never on the hot path.

* :func:`component_permutations`: per-chain permutations from per-chain
  estimates (iterated matching to the mean of the aligned chains).
* :func:`relabel_draws`: per-draw permutations (Stephens 2000's iterative
  relabelling with a quadratic loss), for switching *within* chains.
* :func:`permute`: apply per-chain or per-draw permutations to every variable
  of an InferenceData that has a component dimension.
* :func:`align_chains`: the three together for the common case.

>>> import numpy as np
>>> est = np.array([[[0.9, 0.1], [0.2, 0.8]], [[0.25, 0.75], [0.85, 0.15]]])
>>> component_permutations(est).tolist()
[[0, 1], [1, 0]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gibbsjax.diagnostics import copy_sharing_arrays

__all__ = [
    "component_permutations",
    "relabel_draws",
    "permute",
    "align_chains",
    "distance_matrix",
]

_GROUPS = ("posterior", "warmup_posterior", "posterior_mean")


def distance_matrix(a: np.ndarray, b: np.ndarray, kind: str) -> np.ndarray:
    """Pairwise distances between the rows of ``a`` (K, F) and ``b`` (K', F).

    Parameters
    ----------
    a : array_like, shape (K, F)
        Rows to compare.
    b : array_like, shape (K', F)
        Rows to compare them with.
    kind : {"hellinger", "euclidean", "l1"}
        The distance; ``"hellinger"`` takes rows that are probability vectors.

    Returns
    -------
    numpy.ndarray, shape (K, K')
        Entry ``[i, j]`` is the distance between ``a[i]`` and ``b[j]``.

    Raises
    ------
    ValueError
        When ``kind`` is none of the three.

    Examples
    --------
    >>> distance_matrix(np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]]), "hellinger").round(3).tolist()
    [[1.0]]
    """
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if kind == "hellinger":
        # H^2 = (|ra|^2 + |rb|^2) / 2 - ra . rb with ra = sqrt(a): one matrix product, (K, K') memory,
        # never the (K, K', F) differences (2 GiB for 300 topics of 3,000 words)
        ra, rb = np.sqrt(np.clip(a, 0, None)), np.sqrt(np.clip(b, 0, None))
        half = 0.5 * ((ra * ra).sum(-1)[:, None] + (rb * rb).sum(-1)[None, :])
        return np.sqrt(np.maximum(half - ra @ rb.T, 0.0))
    if kind == "euclidean":
        return _blockwise(a, b, lambda x, y: np.sqrt(np.maximum(((x - y) ** 2).sum(-1), 0.0)))
    if kind == "l1":
        return _blockwise(a, b, lambda x, y: np.abs(x - y).sum(-1))
    raise ValueError(f"distance must be 'hellinger', 'euclidean' or 'l1', got {kind!r}")


#: :func:`distance_matrix` by differences (euclidean, l1) holds at most this many bytes of them at once
DISTANCE_BLOCK_BYTES = 2**25


def _blockwise(a: np.ndarray, b: np.ndarray, fn) -> np.ndarray:
    """``fn(a[i:j, None, :], b[None])`` stacked over blocks of rows of ``a``: the same values as one
    call (each entry is its own sum over features), with (block, K', F) differences, not (K, K', F)."""
    rows = max(1, DISTANCE_BLOCK_BYTES // max(8 * b.shape[0] * max(a.shape[-1], 1), 1))
    out = np.empty((a.shape[0], b.shape[0]))
    for i in range(0, a.shape[0], rows):
        out[i:i + rows] = fn(a[i:i + rows, None, :], b[None, :, :])
    return out


def _assign(cost: np.ndarray) -> np.ndarray:
    """``perm`` with ``perm[i]`` = the column matched to row ``i`` (Hungarian algorithm)."""
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(cost)
    perm = np.empty(cost.shape[0], np.int64)
    perm[rows] = cols
    return perm


def component_permutations(
    chain_estimates, *, distance: str = "euclidean", reference_chain: int = 0, max_iter: int = 20
) -> np.ndarray:
    """Permutations that align the components of every chain (Hungarian matching).

    ``chain_estimates`` has shape ``(chain, K, ...)``: one estimate per chain of
    each component's parameters (e.g. the chain's posterior mean of a topic's
    word distribution).  The reference starts as ``reference_chain`` and becomes
    the mean of the aligned chains, re-matching until no permutation changes.

    Parameters
    ----------
    chain_estimates : array_like, shape (chain, K, ...)
        One estimate per chain of each component's parameters.
    distance : {"euclidean", "hellinger", "l1"}, default "euclidean"
        The cost of matching two components (:func:`distance_matrix`).
    reference_chain : int, default 0
        The chain the first reference is taken from.
    max_iter : int, default 20
        Re-matching rounds at most.

    Returns
    -------
    numpy.ndarray of int, shape (chain, K)
        ``perm`` such that component ``perm[c, k]`` of chain ``c`` matches
        component ``k`` of the reference.

    Raises
    ------
    ValueError
        When ``chain_estimates`` has fewer than 2 axes or non-finite values, or
        ``reference_chain`` is out of range.

    Examples
    --------
    >>> import numpy as np
    >>> est = np.array([[[0.9, 0.1], [0.2, 0.8]], [[0.25, 0.75], [0.85, 0.15]]])
    >>> component_permutations(est).tolist()
    [[0, 1], [1, 0]]
    """
    est = np.asarray(chain_estimates, dtype=np.float64)
    if est.ndim < 2:
        raise ValueError(f"chain_estimates must have shape (chain, K, ...), got {est.shape}")
    n_chains, k = est.shape[:2]
    if not 0 <= reference_chain < n_chains:
        raise ValueError(f"reference_chain must be in [0, {n_chains}), got {reference_chain}")
    flat = est.reshape(n_chains, k, -1)
    if not np.all(np.isfinite(flat)):
        raise ValueError("chain_estimates contain NaN or infinite values")
    perms = np.tile(np.arange(k), (n_chains, 1))
    reference = flat[reference_chain]
    for _ in range(max_iter):
        # chains, not draws: a handful of small assignment problems
        new = np.stack([_assign(distance_matrix(reference, flat[c], distance)) for c in range(n_chains)])
        reference = np.take_along_axis(flat, new[:, :, None], axis=1).mean(axis=0)
        if np.array_equal(new, perms):
            break
        perms = new
    return perms


def relabel_draws(draws: Any, *, max_iter: int = 20) -> np.ndarray:
    """Per-draw permutations that undo label switching, (chain, draw, K).

    ``draws`` has shape ``(chain, draw, K, ...)``: one estimate of every
    component per draw (e.g. each draw's cluster-word distributions).  Every
    draw's components are matched to a common reference by the Hungarian
    algorithm on squared Euclidean distances; the reference starts as the
    last draw of chain 0 and becomes the mean of the relabelled draws, until
    no permutation changes (the iterative relabelling of Stephens 2000 with a
    quadratic loss).

    Unlike :func:`component_permutations`, which permutes whole chains, this
    also undoes switches *within* a chain, which happen when components
    overlap (small data, e.g. the a/b/c corpus).

    Parameters
    ----------
    draws : array_like, shape (chain, draw, K, ...)
        One estimate of every component per draw.
    max_iter : int, default 20
        Re-matching rounds at most.

    Returns
    -------
    numpy.ndarray of int, shape (chain, draw, K)
        ``perm[c, t, k]`` is the component of draw ``(c, t)`` that plays the role
        of reference component ``k``.

    Raises
    ------
    ValueError
        When ``draws`` has fewer than 3 axes or non-finite values.

    Examples
    --------
    >>> d = np.array([[[[1., 0.], [0., 1.]], [[0., 1.], [1., 0.]]]])   # (1 chain, 2 draws, K=2, 2)
    >>> relabel_draws(d)[0].tolist()   # the reference is the last draw: draw 0 is swapped
    [[1, 0], [0, 1]]
    """
    x = np.asarray(draws, dtype=np.float64)
    if x.ndim < 3:
        raise ValueError(f"draws must have shape (chain, draw, K, ...), got {x.shape}")
    n_chain, n_draw, k = x.shape[:3]
    flat = x.reshape(n_chain * n_draw, k, -1)
    if not np.all(np.isfinite(flat)):
        raise ValueError("draws contain NaN or infinite values")
    sq = np.einsum("nkf,nkf->nk", flat, flat)
    reference = flat[(n_draw - 1)]  # last draw of chain 0
    perms = np.tile(np.arange(k), (flat.shape[0], 1))
    # cost[n, i, j] = |reference_i - draw_n,j|^2, by blocks of draws: (block, K, K), not (draws, K, K)
    block = max(1, DISTANCE_BLOCK_BYTES // (8 * k * k))
    for it in range(max_iter):
        ref_sq = (reference * reference).sum(-1)[None, :, None]
        new = np.empty_like(perms)
        for start in range(0, flat.shape[0], block):
            part = slice(start, start + block)
            cost = ref_sq + sq[part, None, :] - 2 * np.einsum("if,njf->nij", reference, flat[part])
            new[part] = [_assign(c) for c in cost]
        reference = np.take_along_axis(flat, new[:, :, None], axis=1).mean(axis=0)
        if it > 0 and np.array_equal(new, perms):
            break
        perms = new
    return perms.reshape(n_chain, n_draw, k)


def _take(da, perms: np.ndarray, dim: str):
    """``da`` with axis ``dim`` permuted per chain (perms (chain, K)) or per draw ((chain, draw, K))."""
    lead = ("chain", "draw")[: perms.ndim - 1]
    moved = da.transpose(*lead, dim, ...)
    index = perms.reshape(perms.shape + (1,) * (moved.ndim - perms.ndim))
    values = np.take_along_axis(moved.values, np.broadcast_to(index, moved.shape), axis=perms.ndim - 1)
    return moved.copy(data=values).transpose(*da.dims)


def permute(idata, perms, dims: str | Sequence[str], *, groups: Sequence[str] = _GROUPS):
    """Apply component permutations to every variable with one of ``dims``, in place.

    Parameters
    ----------
    idata : arviz.InferenceData
        A result; changed in place.
    perms : array_like of int, shape (chain, K) or (chain, draw, K)
        The same permutation for all draws of a chain (as
        :func:`component_permutations` gives) or one per draw (as
        :func:`relabel_draws` gives; only for groups whose draws match, i.e.
        ``groups=("posterior",)``).  New component ``k`` is old ``perms[..., k]``.
    dims : str or sequence of str
        The dimensions that index the components; several may index the same
        components (an HMM's ``state`` and ``state_to``).
    groups : sequence of str, default ("posterior", "warmup_posterior", "posterior_mean")
        The groups to permute (those ``idata`` lacks are skipped).

    Returns
    -------
    arviz.InferenceData
        ``idata`` itself.

    Examples
    --------
    >>> from gibbsjax.diagnostics import to_inference_data
    >>> idata = to_inference_data({"m": np.array([[[0., 5.]], [[5., 0.]]])}, dims={"m": ["component"]})
    >>> permute(idata, np.array([[0, 1], [1, 0]]), "component").posterior["m"].values[1, 0].tolist()
    [0.0, 5.0]
    """
    perms = np.asarray(perms)
    dims = (dims,) if isinstance(dims, str) else tuple(dims)
    for group in groups:
        if group not in idata.groups():
            continue
        ds = idata[group]
        for name in list(ds.data_vars):
            da = ds[name]
            hit = [dim for dim in dims if dim in da.dims]
            for dim in hit:
                da = _take(da, perms, dim)
            if hit:
                ds[name] = da
    return idata


def align_chains(idata, var_name: str, component_dim: str, *, distance: str = "euclidean",
                 reference_chain: int = 0, also_dims: Sequence[str] = ()):
    """Relabel components so they mean the same thing in every chain.

    Matches each chain's posterior mean of ``var_name`` (from ``posterior``, or
    from ``posterior_mean`` for quantities accumulated by the runner) to a
    common reference (:func:`component_permutations`) and permutes every
    posterior, warm-up and posterior-mean variable that has ``component_dim``
    (or one of ``also_dims``) accordingly, in a copy of ``idata``
    (:func:`gibbsjax.diagnostics.copy_sharing_arrays`: the arrays it does not relabel are
    those of ``idata``, not copies).

    Within-chain label switching is not undone here (see
    :func:`relabel_draws`; the log joint, which is label-invariant, shows it).

    Parameters
    ----------
    idata : arviz.InferenceData
        A result.
    var_name : str
        The variable whose per-chain means are matched.
    component_dim : str
        Its dimension that indexes the components.
    distance : {"euclidean", "hellinger", "l1"}, default "euclidean"
        The cost of matching two components (:func:`distance_matrix`).
    reference_chain : int, default 0
        The chain the first reference is taken from.
    also_dims : sequence of str, default ()
        Other dimensions that index the same components (e.g. an HMM
        transition's ``state_to``).

    Returns
    -------
    aligned_idata : arviz.InferenceData
        The aligned copy; the permutations are also stored in each group's
        ``attrs["component_permutations"]``.
    perms : numpy.ndarray of int, shape (chain, K)
        The permutations (:func:`component_permutations`).

    Raises
    ------
    ValueError
        When ``var_name`` is in neither ``posterior`` nor ``posterior_mean``, or
        lacks ``component_dim``.

    Examples
    --------
    >>> from gibbsjax.diagnostics import to_inference_data
    >>> idata = to_inference_data({"m": np.array([[[0., 5.]] * 3, [[5., 0.]] * 3])},
    ...                           dims={"m": ["component"]})
    >>> aligned, perms = align_chains(idata, "m", "component")
    >>> aligned.posterior["m"].values[1, 0].tolist()
    [0.0, 5.0]
    """
    post = idata.posterior
    means = idata["posterior_mean"] if "posterior_mean" in idata.groups() else None
    if var_name in post:
        var = post[var_name].mean("draw")
    elif means is not None and var_name in means:
        var = means[var_name]
    else:
        known = sorted(post.data_vars) + (sorted(means.data_vars) if means is not None else [])
        raise ValueError(f"no variable {var_name!r} in the posterior; variables: {known}")
    if component_dim not in var.dims:
        raise ValueError(f"{var_name!r} has no dimension {component_dim!r}; dims: {var.dims}")
    order = ("chain", component_dim) + tuple(d for d in var.dims if d not in ("chain", component_dim))
    perms = component_permutations(var.transpose(*order).values, distance=distance,
                                   reference_chain=reference_chain)
    # a copy sharing the arrays: permute replaces the variables it relabels, never writes into one
    aligned = permute(copy_sharing_arrays(idata), perms, (component_dim, *also_dims))
    for group in _GROUPS:
        if group in aligned.groups():
            aligned[group].attrs["component_permutations"] = perms.ravel().tolist()
    return aligned, perms
