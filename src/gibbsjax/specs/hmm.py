"""The hidden Markov models' specs: their ``[data]`` readers, alignment of states across chains, report and SBC cases (:mod:`gibbsjax.models.hmm`).
"""

from __future__ import annotations

from gibbsjax.kernel import Kernel
from gibbsjax.models.hmm import categorical, categorical_data, gaussian, gaussian_data

# ============================================================================ label switching
def align(idata, *, var_name: str | None = None):
    """Align hidden states across chains (Hungarian matching of chain means).

    Matches chains on ``var_name`` (default: ``emission`` rows with the
    Hellinger distance for categorical emissions, ``mu`` for Gaussian ones)
    with :func:`gibbsjax.labels.align_chains` on dim ``state``, and
    applies the same permutation to the ``state_to`` axis of ``transition``,
    so every per-state variable means the same state in every chain.
    Label-invariant variables (``*_sorted``, ``log_lik``, ``lp``) are
    unchanged.

    Parameters
    ----------
    idata : arviz.InferenceData
        A run of :func:`categorical` or :func:`gaussian`.
    var_name : str, optional
        The variable to match chains on (default: ``emission``, else ``mu``).

    Returns
    -------
    arviz.InferenceData
        The aligned result; ``posterior.attrs["aligned_on"]`` names ``var_name``.

    Examples
    --------
    >>> import gibbsjax
    >>> d = categorical_data([[0, 0, 1, 2, 2, 2, 0, 1]], num_symbols=3)
    >>> idata = gibbsjax.sample(categorical(K=2), d, seed=0, num_warmup=10, num_draws=10, progress=False)
    >>> align(idata).posterior.attrs["aligned_on"]
    'emission'
    """
    from gibbsjax.labels import align_chains

    post = idata.posterior
    if var_name is None:
        var_name = "emission" if "emission" in post else "mu"
    distance = "hellinger" if var_name == "emission" else "euclidean"
    aligned, _ = align_chains(idata, var_name, "state", distance=distance, also_dims=("state_to",))
    aligned.posterior.attrs["aligned_on"] = var_name
    return aligned


def _categorical_config_data(section, base_dir):
    """``[data]``: ``dataset = "casino"`` (a sequences data set, with its own keys) or
    ``sequences = [[0, 3, ...], ...]`` inline; ``num_symbols`` and ``pad_to`` optional."""
    from gibbsjax.sources import read_sequences

    section = dict(section)
    pad_to = section.pop("pad_to", None)
    num_symbols = section.pop("num_symbols", None)
    seqs, generated = read_sequences(section, base_dir)
    if generated is not None and num_symbols is None:
        num_symbols = generated["num_symbols"]
    return categorical_data(seqs, num_symbols, pad_to=pad_to)


def _gaussian_config_data(section, base_dir):
    """``[data]``: ``sequences = [[...], ...]`` inline, or one sequence from a column
    (``dataset`` / ``file`` / ``values``, with ``column``); ``pad_to`` optional."""
    from gibbsjax.sources import read_column, read_sequences

    section = dict(section)
    pad_to = section.pop("pad_to", None)
    seqs = read_sequences(section, base_dir)[0] if "sequences" in section else [read_column(section, base_dir)]
    return gaussian_data(seqs, pad_to=pad_to)


def report(idata) -> str:
    """Aligned states: transition matrix and emission parameters (posterior means).

    Parameters
    ----------
    idata : arviz.InferenceData
        A run of :func:`categorical` or :func:`gaussian` (aligned by :func:`align`, or not:
        the report says which).

    Returns
    -------
    str
        The report, one line per state.

    Examples
    --------
    >>> import gibbsjax
    >>> d = categorical_data([[0, 0, 1, 2, 2, 2, 0, 1]], num_symbols=3)
    >>> idata = gibbsjax.sample(categorical(K=2), d, seed=0, num_warmup=10, num_draws=10, progress=False)
    >>> print(report(align(idata)).splitlines()[0])
    states (aligned across chains; posterior means):
    """
    from gibbsjax.reports import fmt

    post = idata.posterior
    aligned = "aligned across chains" if "aligned_on" in post.attrs else "NOT aligned across chains"
    trans = post["transition"].mean(("chain", "draw")).values
    lines = [f"states ({aligned}; posterior means):", "  transition matrix (row: from, column: to):"]
    lines += [f"    {k:>3}: {fmt(row)}" for k, row in enumerate(trans)]
    if "emission" in post:
        lines.append("  emission probabilities (row: state, column: symbol):")
        lines += [f"    {k:>3}: {fmt(row)}" for k, row in enumerate(post["emission"].mean(("chain", "draw")).values)]
    else:
        mu, sigma = (post[v].mean(("chain", "draw")).values for v in ("mu", "sigma"))
        lines.append("  state   mean      sd")
        lines += [f"    {k:>3}: {mu[k]:7.3f} {sigma[k]:7.3f}" for k in range(mu.shape[0])]
    return "\n".join(lines)


def _recorded(kernel: Kernel, names: tuple[str, ...]) -> dict:
    """SBC test functions: the named (label-invariant) values of ``kernel.record``."""
    return {name: (lambda s, d, _n=name: kernel.record(s, d)[_n]) for name in names}


def _sbc_categorical():
    """SBC example: two states, three symbols, two short sequences; generic hyperparameters."""
    kernel = categorical(K=2, alpha_init=(0.6, 1.4), alpha_trans=((2.5, 0.4), (0.8, 1.7)),
                         beta=((0.5, 1.2, 2.1), (1.6, 0.3, 0.9)))
    d = categorical_data([[0, 1, 2, 0, 2], [1, 2, 2]], num_symbols=3)
    return kernel, d, _recorded(kernel, ("log_lik", "transition_sorted", "emission_sorted"))


def _sbc_gaussian():
    """SBC example: two states, two short sequences; generic hyperparameters."""
    kernel = gaussian(K=2, alpha_init=(1.3, 0.7), alpha_trans=((1.8, 0.6), (0.9, 2.4)),
                      mu0=0.8, lam=0.45, a=3.2, b=1.9)
    d = gaussian_data([[0.1, -0.3, 1.2, 0.5], [2.0, 0.0]])
    return kernel, d, _recorded(kernel, ("log_lik", "transition_sorted", "mu_sorted", "sigma_sorted"))


def _specs():
    from gibbsjax.spec import ModelSpec

    def postprocess(idata, kernel, d, extras):
        return align(idata)

    return (
        ModelSpec("hmm.categorical", categorical, _categorical_config_data, postprocess, report,
                  ("log_lik", "transition_sorted", "emission_sorted"),
                  "hidden Markov model, categorical emissions, paths by FFBS (Carter & Kohn 1996)",
                  sbc_case=_sbc_categorical),
        ModelSpec("hmm.gaussian", gaussian, _gaussian_config_data, postprocess, report,
                  ("log_lik", "mu_sorted", "sigma_sorted", "transition_sorted"),
                  "hidden Markov model, Gaussian emissions with Normal-Gamma priors, paths by FFBS",
                  sbc_case=_sbc_gaussian),
    )


#: this module's models for ``gibbsjax run`` (see :class:`gibbsjax.spec.ModelSpec`)
SPECS = _specs()
