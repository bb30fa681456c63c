"""The Gaussian mixture's spec: its ``[data]`` reader, alignment of components across chains, post-processing, report and SBC case (:mod:`gibbsjax.models.gaussian_mixture`).
"""

from __future__ import annotations

import numpy as np

from gibbsjax.models.gaussian_mixture import data, log_likelihood, normal_gamma

# ============================================================================ label switching
def align(idata, *, var_name: str = "mu"):
    """Align components across chains by their posterior means of ``var_name``.

    Uses :func:`gibbsjax.labels.align_chains` on dim ``component``, so the
    raw per-component variables (``weights``, ``mu``, ``sigma``) mean the same
    component in every chain and their R-hat means something.  Label-invariant
    variables (``*_sorted``, ``log_lik``, ``lp``) are unchanged.  The
    permutations are stored in ``posterior.attrs["component_permutations"]``.

    Parameters
    ----------
    idata : arviz.InferenceData
        A result of :func:`gibbsjax.sample` with this model.
    var_name : str, default "mu"
        The variable whose posterior means are matched.

    Returns
    -------
    arviz.InferenceData
        The aligned result.

    Examples
    --------
    >>> import arviz as az, numpy as np
    >>> rng = np.random.default_rng(0)
    >>> mu = np.array([[[1.0, 5.0]] * 10, [[5.0, 1.0]] * 10]) + 0.01 * rng.normal(size=(2, 10, 2))
    >>> idata = az.from_dict(posterior={"mu": mu, "weights": np.full((2, 10, 2), 0.5), "sigma": np.ones((2, 10, 2))},
    ...                      dims={v: ["component"] for v in ("mu", "weights", "sigma")})   # chain 1 has the labels swapped
    >>> aligned = align(idata)
    >>> aligned.posterior["mu"].mean("draw").round(1).values.tolist(), aligned.posterior.attrs["component_permutations"]
    ([[1.0, 5.0], [1.0, 5.0]], [0, 1, 1, 0])
    """
    from gibbsjax.labels import align_chains

    aligned, _ = align_chains(idata, var_name, "component")
    aligned.posterior.attrs["aligned_on"] = var_name
    return aligned


def _config_data(section, base_dir):
    """``[data]``: one column as for ``normal.semiconjugate`` (``dataset`` / ``file`` /
    ``values``, with ``column``), or ``columns = ["a", "b"]`` for the diagonal model."""
    from gibbsjax.sources import read_columns

    return data(read_columns(section, base_dir))


def postprocess(idata, kernel=None, d=None, extras=None):
    """:func:`align` the components, measure which components every chain reproduces,
    and store the estimates of one mode in an ``estimates`` group.

    The ``agreement`` group (:func:`gibbsjax.agreement.add_agreement`) compares each
    chain's components as normal distributions: the Hellinger distance between
    N(μ̄, σ̄²) of two chains (per-chain posterior means of ``mu`` and ``sigma``;
    a product over dimensions for the diagonal model), with R-hat per component
    the largest of ``weights``, ``mu`` and ``sigma``.  ``estimates`` holds the
    posterior means of ``weights``, ``mu`` and ``sigma`` over the chains that
    reproduce every component of the reference chain (the chain with the highest
    mean ``lp``): every chain when they agree, never a blend of modes
    (``attrs["estimate_chains"]``, ``attrs["estimate_rule"]``).  The spec's
    ``postprocess`` for ``gibbsjax run``.

    Parameters
    ----------
    idata : arviz.InferenceData
        A result of :func:`gibbsjax.sample` with this model.
    kernel : Kernel, optional
        Unused (the spec's signature).
    d : MixtureData, optional
        Unused (the spec's signature).
    extras : dict, optional
        Unused (the spec's signature).

    Returns
    -------
    arviz.InferenceData
        The new result (aligned, with its ``estimates`` group).

    Examples
    --------
    >>> import arviz as az, numpy as np
    >>> mu = np.array([[[1.0, 5.0]] * 10, [[5.0, 1.0]] * 10]) + 0.01 * np.random.default_rng(0).normal(size=(2, 10, 2))
    >>> idata = az.from_dict(posterior={"mu": mu, "weights": np.full((2, 10, 2), 0.5), "sigma": np.ones((2, 10, 2))},
    ...                      dims={v: ["component"] for v in ("mu", "weights", "sigma")})   # chain 1 has the labels swapped
    >>> result = postprocess(idata)
    >>> result.groups()
    ['posterior', 'agreement', 'estimates']
    >>> result.estimates["mu_mean"].round(1).values.tolist()
    [1.0, 5.0]
    """
    import json

    import xarray as xr

    from gibbsjax.agreement import ESTIMATE_RULES
    from gibbsjax.agreement import add_agreement
    from gibbsjax.spec import replace_group

    idata = align(idata)
    post = idata.posterior
    mu = post["mu"].mean("draw").transpose("chain", "component", ...).values
    sigma = post["sigma"].mean("draw").transpose("chain", "component", ...).values
    idata, agreement = add_agreement(idata, np.stack([mu, sigma], axis=2), "component", distance="normal",
                                     rhat_vars=("weights", "mu", "sigma"))
    chains = agreement.estimate_chains("agreeing")
    means = idata.posterior[["weights", "mu", "sigma"]].isel(chain=chains).mean(("chain", "draw"))
    estimates = xr.Dataset({f"{v}_mean": means[v] for v in ("weights", "mu", "sigma")},
                           attrs={"estimate_chains": json.dumps(chains), "estimate_rule": ESTIMATE_RULES["agreeing"]})
    return replace_group(idata, "estimates", estimates)


def report(idata) -> str:
    """Aligned components: posterior mean weight, mean(s) and sd(s) per component (from the
    chains named in ``estimates``), then the agreement of the chains and R-hat per component.

    Parameters
    ----------
    idata : arviz.InferenceData
        A post-processed result (:func:`postprocess`).

    Returns
    -------
    str
        The report's text.

    Examples
    --------
    >>> import arviz as az
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> mu = np.array([[[1.0, 5.0]] * 10, [[5.0, 1.0]] * 10]) + 0.01 * rng.normal(size=(2, 10, 2))
    >>> idata = az.from_dict(posterior={"mu": mu, "weights": np.full((2, 10, 2), 0.5), "sigma": np.ones((2, 10, 2))},
    ...                      dims={v: ["component"] for v in ("mu", "weights", "sigma")})   # chain 1 has the labels swapped
    >>> text = report(postprocess(idata))
    >>> print(text.splitlines()[0]); print(text.splitlines()[4])
    components (aligned across chains; posterior means):
    agreement: 2 of 2 components reproduced by all 2 chains
    """
    import json

    from gibbsjax.reports import agreement_lines, fmt

    post = idata.posterior
    source = ""
    if "estimates" in idata.groups() and "weights_mean" in idata.estimates:
        means = {v: idata.estimates[f"{v}_mean"].values for v in ("weights", "mu", "sigma")}
        chains = json.loads(str(idata.estimates.attrs.get("estimate_chains", "[]")))
        if chains and len(chains) < int(post.sizes["chain"]):
            source = f", chain{'s' if len(chains) > 1 else ''} {', '.join(map(str, chains))}"
    else:
        means = {v: post[v].mean(("chain", "draw")).values for v in ("weights", "mu", "sigma")}
    aligned = "aligned across chains" if "aligned_on" in post.attrs else "NOT aligned across chains"
    lines = [f"components ({aligned}; posterior means{source}):", "  component  weight    mean(s)   sd(s)"]
    for k in range(means["weights"].shape[0]):
        lines.append(f"  {k:>9}  {means['weights'][k]:6.3f}  {fmt(means['mu'][k])}  {fmt(means['sigma'][k])}")
    return "\n".join(lines + agreement_lines(idata))


def _sbc_case():
    """SBC example: two components with generic hyperparameters, six observations; label-invariant
    test functions (sorted means and precisions, the log-likelihood, co-clustered pairs)."""
    from gibbsjax.testing import co_clustered_pairs, sorted_values

    kernel = normal_gamma(K=2, alpha=(0.8, 2.1), mu0=1.3, lam=0.45, a=3.4, b=1.9)
    fns = {"mu_sorted": lambda s, d: sorted_values(s.mu), "tau_sorted": lambda s, d: sorted_values(s.tau),
           "log_lik": log_likelihood, "co_clustered": lambda s, d: co_clustered_pairs(s.z)}
    return kernel, data(np.array([0.2, 1.0, 2.5, 3.1, -0.4, 1.7])), fns


def _specs():
    from gibbsjax.spec import ModelSpec

    return (ModelSpec("gaussian_mixture.normal_gamma", normal_gamma, _config_data, postprocess, report,
                      ("log_lik", "mu_sorted", "sigma_sorted", "weights_sorted", "mu"),
                      "Gaussian mixture, Normal-Gamma priors, univariate or diagonal (the CSE 5523 lecture notes 23, section 23.4)",
                      sbc_case=_sbc_case),)


#: this module's models for ``gibbsjax run`` (see :class:`gibbsjax.spec.ModelSpec`)
SPECS = _specs()
