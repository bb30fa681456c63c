"""labels: the one home of label switching (chains and draws)."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from gibbsjax.diagnostics import to_inference_data
from gibbsjax.agreement import add_agreement, component_rhat, disagreement, estimate_source
from gibbsjax.labels import align_chains, component_permutations, permute, relabel_draws
from gibbsjax.spec import replace_group


def test_component_permutations_recover_a_known_shuffle():
    rng = np.random.default_rng(1)
    k, v, chains = 6, 40, 5
    truth = rng.dirichlet(np.ones(v) * 0.3, size=k)
    perms_true = np.array([rng.permutation(k) for _ in range(chains)])
    est = np.stack([truth[p] + rng.normal(0, 0.002, size=(k, v)) for p in perms_true])
    perms = component_permutations(est, distance="hellinger")
    aligned = np.take_along_axis(est, perms[:, :, None], axis=1)
    # every chain now lists the components in the same order as chain 0
    for c in range(chains):
        assert np.abs(aligned[c] - aligned[0]).max() < 0.05
    # and the permutation maps each reference component back to the truth
    for c in range(chains):
        np.testing.assert_array_equal(perms_true[c][perms[c]], perms_true[0])


def test_align_chains_permutes_every_variable_with_the_dim():
    # two chains, two components, means swapped in chain 1; weights follow their component
    means = np.array([[[-3.0, 3.0]] * 10, [[3.0, -3.0]] * 10])
    weights = np.array([[[0.3, 0.7]] * 10, [[0.7, 0.3]] * 10])
    idata = to_inference_data(
        {"mean": means, "weight": weights, "other": np.zeros((2, 10))},
        dims={"mean": ["component"], "weight": ["component"]},
    )
    aligned, perms = align_chains(idata, "mean", "component")
    assert perms.tolist() == [[0, 1], [1, 0]]
    np.testing.assert_array_equal(aligned.posterior["mean"].values[1], means[0])
    np.testing.assert_array_equal(aligned.posterior["weight"].values[1], weights[0])
    # the input is left alone
    np.testing.assert_array_equal(idata.posterior["mean"].values, means)


def test_align_chains_errors():
    idata = to_inference_data({"m": np.zeros((2, 3, 2))}, dims={"m": ["component"]})
    with pytest.raises(ValueError, match="no variable"):
        align_chains(idata, "nope", "component")
    with pytest.raises(ValueError, match="no dimension"):
        align_chains(idata, "m", "topic")
    with pytest.raises(ValueError, match="distance"):
        component_permutations(np.zeros((2, 2, 2)), distance="cosine")


def test_align_chains_uses_and_permutes_posterior_mean_group():
    idata = to_inference_data(
        {"size": np.array([[[10.0, 90.0]] * 4, [[90.0, 10.0]] * 4])},
        dims={"size": ["topic"], "phi": ["topic", "word"]},
        posterior_mean={"phi": np.array([[[0.9, 0.1], [0.1, 0.9]], [[0.1, 0.9], [0.9, 0.1]]])},
    )
    aligned, perms = align_chains(idata, "phi", "topic")
    assert perms.tolist() == [[0, 1], [1, 0]]
    np.testing.assert_array_equal(aligned.posterior_mean["phi"].values[1], [[0.9, 0.1], [0.1, 0.9]])
    np.testing.assert_array_equal(aligned.posterior["size"].values[1, 0], [10.0, 90.0])


def test_align_chains_also_dims_permute_a_second_axis():
    """An HMM's transition matrix has the state on two axes: both follow the permutation."""
    trans = np.array([[[[0.9, 0.1], [0.2, 0.8]]] * 3, [[[0.8, 0.2], [0.1, 0.9]]] * 3])  # chain 1 swapped
    mu = np.array([[[-1.0, 1.0]] * 3, [[1.0, -1.0]] * 3])
    idata = to_inference_data({"transition": trans, "mu": mu},
                              dims={"transition": ["state", "state_to"], "mu": ["state"]})
    aligned, perms = align_chains(idata, "mu", "state", also_dims=("state_to",))
    assert perms.tolist() == [[0, 1], [1, 0]]
    np.testing.assert_array_equal(aligned.posterior["transition"].values[1], trans[0])


def test_permute_per_draw_matches_relabel_draws():
    """Per-draw permutations from relabel_draws, applied by permute, undo within-chain switches."""
    rng = np.random.default_rng(3)
    base = np.array([[0.8, 0.1, 0.1], [0.1, 0.1, 0.8]])
    draws = np.stack([base + rng.normal(0, 0.01, base.shape) for _ in range(8)])[None]  # (1, 8, 2, 3)
    switched = draws.copy()
    switched[0, 1::2] = switched[0, 1::2, ::-1]
    idata = to_inference_data({"beta": switched}, dims={"beta": ["cluster", "word"]})
    perms = relabel_draws(switched)
    fixed = permute(idata, perms, "cluster", groups=("posterior",)).posterior["beta"].values
    assert np.abs(fixed[0] - fixed[0, :1]).max() < 0.1


def test_component_rhat_is_the_largest_arviz_rhat_per_component():
    import arviz as az

    rng = np.random.default_rng(7)
    x = rng.normal(size=(4, 60, 3, 2)) + rng.normal(size=(4, 1, 3, 2)) * np.array([0.0, 0.5, 2.0])[:, None]
    x[:, :, 0, 1] = 1.0   # constant: undefined, left out of component 0's maximum
    idata = to_inference_data({"m": x, "other": x[:, :, :, 0] * 0}, dims={"m": ["topic", "f"], "other": ["topic"]})
    got = component_rhat(idata, ["m", "other", "absent"], "topic")
    expected = [float(az.rhat(x[:, :, 0, 0]))] + [max(float(az.rhat(x[:, :, k, j])) for j in range(2))
                                                 for k in (1, 2)]
    np.testing.assert_allclose(got, expected, rtol=1e-12)   # float64 R-hat of gibbsjax.chain_stats
    assert np.isnan(component_rhat(to_inference_data({"m": x[:1]}, dims={"m": ["topic", "f"]}), ["m"], "topic")).all()


def test_add_agreement_estimate_source_and_disagreement():
    rng = np.random.default_rng(8)
    lp = rng.normal(size=(3, 100))
    share = rng.normal(size=(3, 100, 2))
    idata = to_inference_data({"share": share}, dims={"share": ["topic"]}, sample_stats={"lp": lp})
    same = np.array([[[0.7, 0.3], [0.1, 0.9]]] * 3)
    agreed, a = add_agreement(idata, same, "topic", rhat_vars=["share"])
    assert a.all_agree and a.reference_chain == int(np.argmax(lp.mean(axis=1)))
    np.testing.assert_array_equal(agreed.agreement["rhat"].values, component_rhat(idata, ["share"], "topic"))
    assert disagreement(agreed) is None
    assert estimate_source(agreed) == (None, "")

    other = same.copy()
    other[2] = [[0.1, 0.9], [0.1, 0.9]]   # chain 2 finds topic 1 twice: topic 0 is not reproduced by it
    split, _ = add_agreement(idata, other, "topic")
    estimates = xr.Dataset({"x": ("topic", [0.0, 1.0])}, attrs={"estimate_chains": "[0, 1]", "estimate_rule": "r"})
    split = replace_group(split, "estimates", estimates)
    d = disagreement(split)
    assert d.modes_differ and d.num_chains == 3 and d.estimate_chains == [0, 1]
    assert estimate_source(split) == ([0, 1], "r")
    assert disagreement(to_inference_data({"m": lp[:1]}, sample_stats={"lp": lp[:1]})) is None   # one chain
