"""Agreement of chains, after their labels are aligned (:mod:`gibbsjax.labels`): which
components every chain reproduces, the reference chain and the one decision "do the chains disagree?".

* :func:`chain_agreement`: after alignment, which components every chain
  reproduces (Hellinger distances between chains), the reference chain and a
  one-line verdict (:class:`Agreement`; stored as the ``agreement`` group).
* :func:`add_agreement`: :func:`chain_agreement` of an InferenceData's aligned
  estimates, stored as its ``agreement`` group; :func:`component_rhat`: R-hat
  of each aligned component.
* :func:`disagreement`: the one decision "do the chains disagree?" that the
  reports and the estimators' warnings share (:class:`Disagreement`, the facts
  that :func:`gibbsjax.reports.chains_disagree` puts into words);
  :func:`estimate_source`: which chains a model's saved estimates come from.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gibbsjax.diagnostics import RHAT_LIMIT, rhat, rhat_lp
from gibbsjax.spec import replace_group

__all__ = [
    "Agreement",
    "chain_agreement",
    "reference_chain",
    "AGREEMENT_THRESHOLD",
    "REFERENCE_RULE",
    "ESTIMATE_RULES",
    "component_rhat",
    "add_agreement",
    "estimate_source",
    "Disagreement",
    "disagreement",
]

#: A chain reproduces a component of the reference chain when the Hellinger distance between
#: the two (aligned) components is at most this.  Hellinger distances lie in [0, 1] whatever
#: the component (a word distribution, a vector of Bernoulli features, a normal), so one value
#: serves every model.  0.4 is well above the within-chain noise (Monte Carlo noise plus
#: drift within a mode) and below half the distance between distinct topics, as measured on
#: ``configs/lda-demo.toml`` and ``configs/old-faithful.toml`` (the distances are in
#: benchmarks/README.md, "Stable topics of the demo").
AGREEMENT_THRESHOLD = 0.4

#: the documented rule that picks the reference chain (whose estimates a report gives)
REFERENCE_RULE = "the chain with the highest mean log joint (lp) over the sampling phase"

#: where estimates come from, by name (:meth:`Agreement.estimate_chains`): never a blend of modes
ESTIMATE_RULES = {
    "best": f"the reference chain alone ({REFERENCE_RULE})",
    "agreeing": f"the mean of the chains that reproduce every component of the reference chain ({REFERENCE_RULE})",
}

_DISTANCES = ("hellinger", "bernoulli", "normal")


def reference_chain(lp) -> int:
    """The chain with the highest mean log joint over its draws (:data:`REFERENCE_RULE`).

    Parameters
    ----------
    lp : array_like, shape (chain, draw) or (chain,)
        The log joint (e.g. ``idata.sample_stats["lp"]``), or already per-chain
        means.  NaN draws are ignored.

    Returns
    -------
    int
        The chain's index.  A chain with no finite draw is never chosen (chain 0
        when none has one); ties go to the lower index.

    Raises
    ------
    ValueError
        When ``lp`` has another shape, or no chain.

    Examples
    --------
    >>> reference_chain(np.array([[-10.0, -12.0], [-5.0, -6.0], [-7.0, -7.0]]))
    1
    """
    x = np.asarray(lp, dtype=np.float64)
    if x.ndim == 2:
        finite = np.isfinite(x)
        with np.errstate(invalid="ignore", divide="ignore"):
            x = np.where(finite, x, 0.0).sum(axis=1) / finite.sum(axis=1)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"lp must have shape (chain,) or (chain, draw), got {np.shape(lp)}")
    if not np.any(np.isfinite(x)):
        return 0
    return int(np.argmax(np.where(np.isfinite(x), x, -np.inf)))


def _log_bhattacharyya(x: np.ndarray, y: np.ndarray, kind: str) -> np.ndarray:
    """log of the Bhattacharyya coefficient BC = ∫ sqrt(p q) between components, summed
    over the trailing feature axis; ``x``, ``y`` broadcast to (..., F) (normal: (..., 2, D))."""
    if kind == "bernoulli":  # independent Bernoulli features: BC = Π_f sqrt(pq) + sqrt((1-p)(1-q))
        bc = np.sqrt(x * y) + np.sqrt((1.0 - x) * (1.0 - y))
        with np.errstate(divide="ignore"):
            return np.log(np.clip(bc, 0.0, 1.0)).sum(-1)
    # normal, diagonal: per dimension BC = sqrt(2 s1 s2 / (s1² + s2²)) exp(-(m1 - m2)² / (4 (s1² + s2²)))
    m1, s1, m2, s2 = x[..., 0, :], x[..., 1, :], y[..., 0, :], y[..., 1, :]
    v = s1**2 + s2**2
    return (0.5 * np.log(2.0 * s1 * s2 / v) - (m1 - m2) ** 2 / (4.0 * v)).sum(-1)


#: up to this many chains the ``agreement`` group holds every pairwise distance;
#: beyond, only each chain's distance to the reference chain
PAIRWISE_MAX_CHAINS = 64


def _first(est: np.ndarray, bad: np.ndarray) -> str:
    """The first entry of ``est`` where ``bad`` holds, as ``value at estimates[i, j, ...]``."""
    where = tuple(int(i) for i in np.argwhere(bad)[0])
    return f"{est[where].item()!r} at estimates[{', '.join(map(str, where))}]"


def _pairwise_distances(est: np.ndarray, kind: str, others: np.ndarray) -> np.ndarray:
    """Hellinger distances (K, chain, other) between every chain and the chains ``others``, per component."""
    n_chains, k = est.shape[:2]
    if kind == "hellinger":
        p = est.reshape(n_chains, k, -1)
        if np.any(p < 0):
            raise ValueError(f"estimates must be probabilities (non-negative) for distance='hellinger', got "
                             f"{_first(est, est < 0)}")
        total = p.sum(-1, keepdims=True)
        if np.any(total <= 0):
            chain, comp = (int(i) for i in np.argwhere(total[..., 0] <= 0)[0])
            raise ValueError("every component of estimates needs a positive total for distance='hellinger', got "
                             f"{float(total[chain, comp, 0])!r} for estimates[{chain}, {comp}]")
        root = np.sqrt(p / total)
        bc = np.einsum("akf,bkf->kab", root, root[others])  # chains, not draws: one matrix product per component
        return np.sqrt(np.clip(1.0 - bc, 0.0, 1.0))
    if kind == "bernoulli":
        p = est.reshape(n_chains, k, -1)
        if np.any((p < 0) | (p > 1)):
            raise ValueError(f"estimates must be probabilities in [0, 1] for distance='bernoulli', got "
                             f"{_first(est, (est < 0) | (est > 1))}")
    else:
        if est.ndim not in (3, 4) or est.shape[2] != 2:
            raise ValueError("distance='normal' needs estimates of shape (chain, K, 2) or (chain, K, 2, D): "
                             f"means then standard deviations, got {est.shape}")
        p = est.reshape(n_chains, k, 2, -1)
        if np.any(p[:, :, 1] <= 0):
            sd = np.zeros(est.shape, bool)
            sd[:, :, 1] = est[:, :, 1] <= 0
            raise ValueError("standard deviations in estimates[:, :, 1] must be positive for distance='normal', "
                             f"got {_first(est, sd)}")
    out = np.empty((k, n_chains, len(others)))
    for j, b in enumerate(others):  # one chain at a time: memory (K, chain, F), not (K, chain², F)
        log_bc = _log_bhattacharyya(p[b][None], p, kind)  # (chain, K)
        out[:, :, j] = np.sqrt(np.clip(1.0 - np.exp(log_bc), 0.0, 1.0)).T
    return out


@dataclass(frozen=True)
class Agreement:
    """Which components the chains reproduce, from :func:`chain_agreement`.

    Parameters
    ----------
    distance : numpy.ndarray, shape (K, chain, other_chain)
        Hellinger distance between the chains' estimates of each (aligned)
        component and those of the chains ``other_chains`` (every chain, up to
        :data:`PAIRWISE_MAX_CHAINS` chains; beyond, the reference chain only, so
        thousands of chains cost K × chains, not K × chains²).
    reference_chain : int
        The chain the others are compared with.
    threshold : float
        A chain reproduces a component when its distance to the reference
        chain's is at most this.
    rhat : numpy.ndarray, shape (K,)
        R-hat of each aligned component (NaN where not available).
    rule : str, default REFERENCE_RULE
        Why the reference chain was chosen.
    component_name : str, default "component"
        "topic", "cluster", "component" (for the verdict).
    components : tuple, default ()
        The components' labels (default: their indices).
    other_chains : tuple of int, default ()
        The chains of ``distance``'s last axis (default: every chain); must
        include the reference chain.

    Raises
    ------
    ValueError
        When ``other_chains`` does not match ``distance`` or lacks the reference chain.

    Notes
    -----
    Derived: ``distance_to_reference`` (chain, K), ``reproduced`` (chain, K),
    ``reproduced_by_all`` (K,), ``agreeing_chains`` (the chains that reproduce
    every component of the reference chain, the reference included),
    ``all_agree`` and ``verdict``.  :meth:`to_dataset` gives the InferenceData
    group ``agreement``; :meth:`from_dataset` reads it back.

    Examples
    --------
    >>> a = chain_agreement(np.array([[[0.5, 0.5]], [[0.5, 0.5]]]), component_name="topic")
    >>> a.verdict
    '1 of 1 topics reproduced by all 2 chains'
    """

    distance: np.ndarray
    reference_chain: int
    threshold: float
    rhat: np.ndarray
    rule: str = REFERENCE_RULE
    component_name: str = "component"
    components: tuple = ()
    other_chains: tuple = ()

    def __post_init__(self):
        if not self.other_chains:
            object.__setattr__(self, "other_chains", tuple(range(int(self.distance.shape[2]))))
        if len(self.other_chains) != self.distance.shape[2]:
            raise ValueError(f"other_chains names {len(self.other_chains)} chains, distance has "
                             f"{self.distance.shape[2]} columns")
        if self.reference_chain not in self.other_chains:
            raise ValueError("the reference chain must be among other_chains")

    @property
    def num_chains(self) -> int:
        """The number of chains."""
        return int(self.distance.shape[1])

    @property
    def num_components(self) -> int:
        """K, the number of components."""
        return int(self.distance.shape[0])

    @property
    def distance_to_reference(self) -> np.ndarray:
        """(chain, K): each chain's distance to the reference chain, per component."""
        return self.distance[:, :, list(self.other_chains).index(self.reference_chain)].T

    @property
    def reproduced(self) -> np.ndarray:
        """(chain, K) bool: the chain's component is within ``threshold`` of the reference's."""
        return self.distance_to_reference <= self.threshold

    @property
    def reproduced_by_all(self) -> np.ndarray:
        """(K,) bool: every chain reproduces the component."""
        return self.reproduced.all(axis=0)

    @property
    def agreeing_chains(self) -> list[int]:
        """The chains that reproduce every component of the reference chain (it included)."""
        return np.flatnonzero(self.reproduced.all(axis=1)).tolist()

    @property
    def all_agree(self) -> bool:
        """Every chain reproduces every component of the reference chain."""
        return bool(self.reproduced.all())

    def estimate_chains(self, chains: str = "best") -> list[int]:
        """The chains estimates come from, by rule (:data:`ESTIMATE_RULES`).

        Parameters
        ----------
        chains : {"best", "agreeing"}, default "best"
            ``"best"``: the reference chain alone; ``"agreeing"``: the
            :attr:`agreeing_chains` (one mode, several chains).

        Returns
        -------
        list of int
            The chains.

        Raises
        ------
        ValueError
            When ``chains`` names no rule.

        Examples
        --------
        >>> chain_agreement(np.array([[[0.5, 0.5]], [[0.5, 0.5]]]), lp=[-3.0, -1.0]).estimate_chains()
        [1]
        """
        if chains == "best":
            return [int(self.reference_chain)]
        if chains == "agreeing":
            return self.agreeing_chains
        raise ValueError(f"chains must be one of {tuple(ESTIMATE_RULES)}, got {chains!r}")

    @property
    def verdict(self) -> str:
        """One line: ``"6 of 8 topics reproduced by all 4 chains"``."""
        noun = f"{self.component_name}s"
        if self.num_chains == 1:
            return f"one chain: nothing to compare its {self.num_components} {noun} with"
        return (f"{int(self.reproduced_by_all.sum())} of {self.num_components} {noun} "
                f"reproduced by all {self.num_chains} chains")

    def to_dataset(self, component_dim: str | None = None):
        """The ``agreement`` InferenceData group.

        Parameters
        ----------
        component_dim : str, optional
            The components' dimension name (default: ``component_name``).

        Returns
        -------
        xarray.Dataset
            Variables: ``distance`` (component_dim, chain, other_chain),
            ``distance_to_reference`` (chain, component_dim), ``reproduced``
            (chain, component_dim; int8 1/0), ``rhat`` (component_dim,).
            Attributes: ``component_dim``, ``threshold``, ``reference_chain``,
            ``rule``, ``verdict``, ``agreeing_chains`` (a JSON list of chain
            indices).

        Examples
        --------
        >>> ds = chain_agreement(np.array([[[0.5, 0.5]], [[0.5, 0.5]]])).to_dataset("topic")
        >>> ds["reproduced"].dims, ds.attrs["agreeing_chains"]
        (('chain', 'topic'), '[0, 1]')
        """
        import xarray as xr

        dim = component_dim or self.component_name
        chains = np.arange(self.num_chains)
        comps = list(self.components) if len(self.components) == self.num_components else np.arange(self.num_components)
        return xr.Dataset(
            {
                "distance": ((dim, "chain", "other_chain"), self.distance.astype(np.float32)),
                "distance_to_reference": (("chain", dim), self.distance_to_reference.astype(np.float32)),
                "reproduced": (("chain", dim), self.reproduced.astype(np.int8)),
                "rhat": ((dim,), np.asarray(self.rhat, dtype=np.float64)),
            },
            coords={dim: comps, "chain": chains, "other_chain": np.asarray(self.other_chains)},
            attrs={
                "component_dim": dim,
                "threshold": float(self.threshold),
                "reference_chain": int(self.reference_chain),
                "rule": self.rule,
                "verdict": self.verdict,
                "agreeing_chains": json.dumps(self.agreeing_chains),
            },
        )

    @classmethod
    def from_dataset(cls, ds) -> "Agreement":
        """Read back the group :meth:`to_dataset` wrote.

        Parameters
        ----------
        ds : xarray.Dataset
            The group, e.g. ``idata.agreement`` of a saved file.

        Returns
        -------
        Agreement
            The agreement it holds.

        Examples
        --------
        >>> a = chain_agreement(np.array([[[0.02, 0.98]], [[0.9, 0.1]]]), lp=[[-2.0], [-1.0]])
        >>> Agreement.from_dataset(a.to_dataset("topic")).agreeing_chains
        [1]
        """
        dim = str(ds.attrs["component_dim"])
        return cls(
            distance=np.asarray(ds["distance"].transpose(dim, "chain", "other_chain").values, dtype=np.float64),
            reference_chain=int(ds.attrs["reference_chain"]),
            threshold=float(ds.attrs["threshold"]),
            rhat=np.asarray(ds["rhat"].values, dtype=np.float64),
            rule=str(ds.attrs["rule"]),
            component_name=dim,
            components=tuple(ds[dim].values.tolist()),
            other_chains=tuple(int(c) for c in ds["other_chain"].values),
        )


def chain_agreement(estimates, *, lp=None, rhat=None, threshold: float = AGREEMENT_THRESHOLD,
                    distance: str = "hellinger", component_name: str = "component",
                    components: Sequence | None = None) -> Agreement:
    """Which components every chain reproduces, after alignment (:func:`align_chains`).

    For every component the Hellinger distance H = sqrt(1 − BC),
    BC = ∫ sqrt(p q), between every pair of chains is computed (up to
    :data:`PAIRWISE_MAX_CHAINS` chains; beyond, each chain's to the reference
    chain); ``distance`` says what a component is:

    * ``"hellinger"``: a discrete distribution over the trailing axes (a
      topic's or cluster's word distribution; rows are normalised);
    * ``"bernoulli"``: independent Bernoulli probabilities (a Bernoulli-mixture
      cluster), BC = Π_f sqrt(p_f q_f) + sqrt((1 − p_f)(1 − q_f));
    * ``"normal"``: a normal with diagonal covariance, trailing shape ``(2,)`` or
      ``(2, D)``: means, then standard deviations; per dimension
      BC = sqrt(2 σ₁σ₂ / (σ₁² + σ₂²)) exp(−(μ₁ − μ₂)² / (4 (σ₁² + σ₂²)))
      (the closed form for two normals, e.g. Pardo 2006, *Statistical Inference
      Based on Divergence Measures*, table 1.1; a product over independent
      dimensions).

    All three are Hellinger distances between the components' data
    distributions, in [0, 1], so one ``threshold`` (:data:`AGREEMENT_THRESHOLD`,
    justified there) serves every model.

    Parameters
    ----------
    estimates : array_like, shape (chain, K, ...)
        Each chain's estimate of every aligned component (e.g.
        ``idata.posterior_mean["topic_word"]``, chain × topic × word).
    lp : array_like, shape (chain, draw) or (chain,), optional
        The log joint or its per-chain means; the reference chain is
        :func:`reference_chain` of it (chain 0 without ``lp``).
    rhat : array_like, shape (K,), optional
        R-hat of each aligned component, stored alongside (NaN when not given).
    threshold : float, default AGREEMENT_THRESHOLD
        A chain reproduces a component within this distance, in (0, 1].
    distance : {"hellinger", "bernoulli", "normal"}, default "hellinger"
        What a component is (above).
    component_name : str, default "component"
        The components' name, for the verdict.
    components : sequence, optional
        The components' labels, K of them.

    Returns
    -------
    Agreement
        The distances and which chains reproduce which components.

    Raises
    ------
    ValueError
        When an argument has the wrong shape or values (non-finite estimates,
        negative probabilities, ``threshold`` outside (0, 1], ...).

    Examples
    --------
    >>> est = np.array([[[0.7, 0.3], [0.02, 0.98]],     # chain 0: two topics
    ...                 [[0.7, 0.3], [0.9, 0.1]]])      # chain 1: topic 1 differs
    >>> a = chain_agreement(est, lp=[-10.0, -12.0], component_name="topic")
    >>> a.reference_chain, a.reproduced.astype(int).tolist(), a.verdict
    (0, [[1, 1], [1, 0]], '1 of 2 topics reproduced by all 2 chains')
    """
    est = np.asarray(estimates, dtype=np.float64)
    if est.ndim < 3:
        raise ValueError(f"estimates must have shape (chain, K, ...), got {est.shape}")
    if not np.all(np.isfinite(est)):
        raise ValueError(f"estimates contain NaN or infinite values, got {_first(est, ~np.isfinite(est))}")
    if distance not in _DISTANCES:
        raise ValueError(f"distance must be one of {_DISTANCES}, got {distance!r}")
    threshold = float(threshold)
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must lie in (0, 1] (a Hellinger distance), got {threshold}")
    n_chains, k = est.shape[:2]
    if lp is None:
        ref, rule = 0, "chain 0 (no log joint given)"
    else:
        lp = np.asarray(lp, dtype=np.float64)
        if lp.shape[:1] != (n_chains,):
            raise ValueError(f"lp must have one row per chain ({n_chains}), got shape {lp.shape}")
        ref, rule = reference_chain(lp), REFERENCE_RULE
    if rhat is None:
        rhat = np.full(k, np.nan)
    rhat = np.asarray(rhat, dtype=np.float64)
    if rhat.shape != (k,):
        raise ValueError(f"rhat must have shape ({k},), one per component, got {rhat.shape}")
    if components is not None and len(components) != k:
        raise ValueError(f"components must name the {k} components, got {len(components)}")
    others = np.arange(n_chains) if n_chains <= PAIRWISE_MAX_CHAINS else np.array([ref])
    return Agreement(distance=_pairwise_distances(est, distance, others), reference_chain=ref, threshold=threshold,
                     rhat=rhat, rule=rule, component_name=str(component_name),
                     components=tuple(components) if components is not None else (),
                     other_chains=tuple(int(c) for c in others))


# ============================================================================ agreement of an InferenceData
def component_rhat(idata, var_names, component_dim: str) -> np.ndarray:
    """R-hat of each aligned component: the largest over its variables' elements.

    Parameters
    ----------
    idata : arviz.InferenceData
        A result (aligned).
    var_names : sequence of str
        Posterior variables; those without ``component_dim`` are skipped.
    component_dim : str
        The dimension that indexes the components.

    Returns
    -------
    numpy.ndarray, shape (K,)
        Per component, the largest R-hat (:func:`gibbsjax.diagnostics.rhat`) over
        the variables' elements that belong to it (NaN where none is defined,
        e.g. one chain).

    Examples
    --------
    >>> from gibbsjax.diagnostics import to_inference_data
    >>> x = np.random.default_rng(0).normal(size=(4, 100, 2))
    >>> r = component_rhat(to_inference_data({"m": x}, dims={"m": ["topic"]}), ["m"], "topic")
    >>> r.shape, bool(np.all(r < 1.05))
    ((2,), True)
    """
    post = idata.posterior
    k = int(post.sizes[component_dim]) if component_dim in post.sizes else 0
    out = np.full(k, np.nan)
    for name in var_names:
        if name not in post or component_dim not in post[name].dims:
            continue
        da = post[name].transpose("chain", "draw", component_dim, ...)
        x = da.values.reshape(da.shape[0], da.shape[1], k, -1)
        r = rhat(x.reshape(x.shape[0], x.shape[1], -1)).reshape(k, -1)
        with np.errstate(invalid="ignore"):
            r = np.where(np.isnan(r), -np.inf, r).max(axis=1)
        out = np.fmax(out, np.where(np.isfinite(r), r, np.nan))
    return out


def add_agreement(idata, estimates, component_dim: str, *, distance: str = "hellinger", rhat_vars=(),
                  threshold: float | None = None):
    """Compute :func:`chain_agreement` for aligned ``estimates`` and store it as the ``agreement`` group.

    The reference chain comes from ``sample_stats.lp``.

    Parameters
    ----------
    idata : arviz.InferenceData
        A result (aligned).
    estimates : array_like or xarray.DataArray
        Per-chain estimates of every component, an array ``(chain, K, ...)`` or
        a DataArray with dims ``chain`` and ``component_dim``.
    component_dim : str
        The dimension that indexes the components.
    distance : {"hellinger", "bernoulli", "normal"}, default "hellinger"
        What a component is (:func:`chain_agreement`).
    rhat_vars : sequence of str, default ()
        Posterior variables for R-hat per component (:func:`component_rhat`).
    threshold : float, optional
        Default :data:`AGREEMENT_THRESHOLD`.

    Returns
    -------
    idata : arviz.InferenceData
        ``idata`` with the ``agreement`` group (added or replaced).
    agreement : Agreement
        The agreement.

    Examples
    --------
    >>> from gibbsjax.diagnostics import to_inference_data
    >>> idata = to_inference_data({"share": np.full((2, 5, 2), 0.5)}, dims={"share": ["topic"]})
    >>> est = np.array([[[0.7, 0.3], [0.2, 0.8]]] * 2)
    >>> idata, a = add_agreement(idata, est, "topic")
    >>> idata.agreement.attrs["verdict"]
    '2 of 2 topics reproduced by all 2 chains'
    """
    if hasattr(estimates, "dims"):
        estimates = estimates.transpose("chain", component_dim, ...).values
    lp = None
    if "sample_stats" in idata.groups() and "lp" in idata.sample_stats:
        lp = idata.sample_stats["lp"].transpose("chain", "draw").values
    post = idata.posterior
    components = post[component_dim].values.tolist() if component_dim in post.coords else None
    agreement = chain_agreement(
        estimates, lp=lp, rhat=component_rhat(idata, rhat_vars, component_dim),
        threshold=AGREEMENT_THRESHOLD if threshold is None else threshold,
        distance=distance, component_name=component_dim, components=components)
    return replace_group(idata, "agreement", agreement.to_dataset(component_dim)), agreement


def estimate_source(idata) -> tuple[list[int] | None, str]:
    """Which chains a model's saved estimates come from, and the rule.

    Parameters
    ----------
    idata : arviz.InferenceData
        A result of :func:`gibbsjax.sample` (or a file's).

    Returns
    -------
    chains : list of int or None
        The ``estimate_chains`` attribute of its ``topics`` or ``estimates``
        group; None when neither group says.
    rule : str
        The ``estimate_rule`` attribute ("" when there is none).

    Examples
    --------
    >>> from gibbsjax.diagnostics import to_inference_data
    >>> estimate_source(to_inference_data({"m": np.zeros((2, 3))}))
    (None, '')
    """
    for group in ("topics", "estimates"):
        if group in idata.groups() and "estimate_chains" in idata[group].attrs:
            attrs = idata[group].attrs
            return json.loads(str(attrs["estimate_chains"])), str(attrs.get("estimate_rule", ""))
    return None, ""


@dataclass(frozen=True)
class Disagreement:
    """Why the chains of a result disagree, from :func:`disagreement`.

    Parameters
    ----------
    num_chains : int
        How many chains the result has.
    rhat_lp : float
        R-hat of the log joint (:func:`gibbsjax.diagnostics.rhat_lp`; NaN without one).
    rhat_components : numpy.ndarray
        The finite R-hats of the aligned components (the ``agreement`` group's).
    agreement : Agreement or None
        The ``agreement`` group read back, ``None`` for results saved before it existed.
    modes_differ : bool
        Some chain does not reproduce every component of the reference chain.
    estimate_chains : list of int or None
        The chains the saved estimates come from (:func:`estimate_source`), or ``None``.

    Examples
    --------
    See :func:`disagreement`.
    """

    num_chains: int
    rhat_lp: float
    rhat_components: np.ndarray
    agreement: Agreement | None
    modes_differ: bool
    estimate_chains: list[int] | None


def disagreement(idata) -> Disagreement | None:
    """The one decision "do the chains disagree?".

    Shared by the reports (``gibbsjax run``, ``gibbsjax summary``) and the
    estimators' warnings.

    Chains disagree when some chain does not reproduce every component of the
    reference chain (the ``agreement`` group, :func:`add_agreement`), or when
    R-hat of ``lp`` or of an aligned component exceeds
    :data:`gibbsjax.diagnostics.RHAT_LIMIT`.

    Parameters
    ----------
    idata : arviz.InferenceData
        A result with its ``agreement`` group, if any.

    Returns
    -------
    Disagreement or None
        ``None`` when the chains agree (or there is one chain: nothing to
        compare), else the facts that :func:`gibbsjax.reports.chains_disagree`
        puts into words.

    Examples
    --------
    >>> from gibbsjax.diagnostics import to_inference_data
    >>> x = np.random.default_rng(0).normal(size=(4, 500))
    >>> disagreement(to_inference_data({"m": x}, sample_stats={"lp": x})) is None
    True
    >>> d = disagreement(to_inference_data({"m": x}, sample_stats={"lp": x + np.arange(4)[:, None]}))
    >>> d.rhat_lp > 1.01, d.modes_differ
    (True, False)
    """
    total = int(idata.posterior.sizes["chain"])
    if total < 2:
        return None
    r_lp = rhat_lp(idata)
    agreement = Agreement.from_dataset(idata.agreement) if "agreement" in idata.groups() else None
    r_comp = agreement.rhat if agreement is not None else np.full(0, np.nan)
    finite = r_comp[np.isfinite(r_comp)]
    worst = max([r_lp] * bool(np.isfinite(r_lp)) + finite.tolist(), default=float("nan"))
    modes_differ = agreement is not None and not agreement.all_agree
    if not modes_differ and not worst > RHAT_LIMIT:
        return None
    source, _ = estimate_source(idata)
    return Disagreement(num_chains=total, rhat_lp=r_lp, rhat_components=finite, agreement=agreement,
                        modes_differ=modes_differ, estimate_chains=source)
