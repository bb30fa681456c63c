"""Rows (documents, observations, sequences) split over devices: gibbsjax.rows and the
``Kernel.shard`` of the mixtures, naive Bayes, the Gaussian mixture and the HMMs.

JAX fixes the number of host (CPU) devices when it starts, so the multi-device checks run
in a subprocess with XLA_FLAGS=--xla_force_host_platform_device_count=4 (as
tests/test_lda_shard.py); the references are the same kernels on one device.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gibbsjax import random as gr
from gibbsjax import rows as rw
from gibbsjax.models.one_label import documents, pad_documents
from gibbsjax.corpus import Corpus


def test_categorical_at_gives_the_rows_of_the_full_draw():
    logits = jnp.log(jax.random.dirichlet(jax.random.key(1), jnp.ones(5), (300,)))
    full = np.asarray(gr.categorical(jax.random.key(2), logits))
    perm = np.random.default_rng(0).permutation(300)[:120]
    part = gr.categorical_at(jax.random.key(2), logits[perm], jnp.asarray(perm))
    np.testing.assert_array_equal(np.asarray(part), full[perm])
    # another key gives other draws: the test can fail
    assert not np.array_equal(np.asarray(gr.categorical_at(jax.random.key(3), logits[perm], jnp.asarray(perm))),
                              full[perm])
    with pytest.raises(ValueError, match="batch shape"):
        gr.categorical_at(jax.random.key(0), logits, jnp.arange(3))
    with pytest.raises(ValueError, match="integers"):
        gr.categorical_at(jax.random.key(0), logits, jnp.zeros(300))


def test_pad_documents_keeps_every_token_in_its_document():
    docs = [["a", "b"], ["b"], ["a", "a", "c"], ["c"], ["b", "c"]]
    d = documents(Corpus.from_token_lists(docs))
    padded, specs, ids = pad_documents(d, 2, rw.split_rows(5, 2))
    rows_per_block = 4  # 3 documents at most, then at least one padding row
    assert ids.shape == (2 * rows_per_block,)
    real = ids < 5
    assert sorted(ids[real].tolist()) == [0, 1, 2, 3, 4]
    tokens, doc_of = np.asarray(padded.tokens), np.asarray(padded.doc_ids)
    for position in np.flatnonzero(real):
        mine = tokens[doc_of == position]
        np.testing.assert_array_equal(mine, np.asarray(d.tokens)[np.asarray(d.doc_ids) == ids[position]])
    # padding tokens sit in padding rows only
    assert np.all(ids[doc_of[~np.isin(doc_of, np.flatnonzero(real))]] >= 5)
    assert int(np.asarray(padded.doc_lengths)[real].sum()) == d.num_tokens


def test_split_rows_rejects_more_blocks_than_rows():
    assert rw.split_rows(10, 4) == 3
    with pytest.raises(ValueError, match="at most the number of rows"):
        rw.split_rows(3, 4)


_SCRIPT = """
import warnings
warnings.simplefilter("ignore")
import numpy as np, jax
import gibbsjax
from gibbsjax.corpus import Corpus
from gibbsjax.models import mixtures, naive_bayes as nb, hmm, gaussian_mixture as gm
assert len(jax.devices()) == 4, jax.devices()
rng = np.random.default_rng(0)
docs = [[str(w) for w in rng.integers(0, 12, rng.integers(1, 9))] for _ in range(21)]
labels = rng.integers(-1, 2, 21).tolist()
x = (rng.random((23, 7)) < rng.random((1, 7))).astype(int)
seqs = [rng.integers(0, 4, rng.integers(3, 12)).tolist() for _ in range(9)]
gseqs = [rng.normal(size=rng.integers(3, 12)).tolist() for _ in range(9)]
corpus = Corpus.from_token_lists(docs)
kw = dict(seed=3, num_chains=2, num_warmup=0, num_draws=6, progress=False)
ROUNDED = {"lp", "log_lik", "doc_probs"}  # float sums over rows, or a matrix product's rounding

def compare(a, b, exact=True):
    gaps = []
    for g in ("posterior", "sample_stats", "posterior_mean"):
        if g not in a.groups():
            continue
        for v in a[g].data_vars:
            p, q = a[g][v].values, b[g][v].values
            assert p.shape == q.shape, (v, p.shape, q.shape)
            if exact and v not in ROUNDED:
                np.testing.assert_array_equal(p, q, err_msg=g + "." + v)
            else:
                np.testing.assert_allclose(p, q, rtol=1e-4, atol=1e-5, err_msg=g + "." + v)
                gaps.append(float(np.abs(p - q).max()))
    return max(gaps or [0.0])

cases = [
    ("unigrams", mixtures.unigrams(3), mixtures.unigram_data(corpus), True),
    ("unigrams_means", mixtures.unigrams(3, keep_draws=False), mixtures.unigram_data(corpus), True),
    ("bernoulli", mixtures.bernoulli(3), mixtures.bernoulli_data(x), True),
    ("naive_bayes", nb.uncollapsed(), nb.data(Corpus.from_token_lists(docs, labels=labels), num_classes=2), True),
    ("hmm_categorical", hmm.categorical(2), hmm.categorical_data(seqs, 4), True),
    ("hmm_gaussian", hmm.gaussian(2), hmm.gaussian_data(gseqs), False),
    ("gaussian_mixture", gm.normal_gamma(2), gm.data(rng.normal(size=23)), False),
    ("gaussian_mixture_2d", gm.normal_gamma(3, dim=2), gm.data(rng.normal(size=(19, 2))), False),
]
ALL = {all_cases}
for name, k, d, exact in cases:
    if not ALL and name not in ("unigrams", "naive_bayes", "hmm_categorical", "gaussian_mixture"):
        continue
    one = gibbsjax.sample(k, d, **kw)
    four = gibbsjax.sample(k, d, devices=4, shard="data", **kw)
    assert four.attrs["sharding"].startswith("data: "), four.attrs["sharding"]
    gap = compare(one, four, exact)
    if ALL or name == "unigrams":  # 4 blocks on 2 devices: the same draws as on 4
        p = k.shard(d, jax.devices()[:2], 4)
        two = gibbsjax.sample(p.kernel, p.data, **kw)
        for v in four.posterior.data_vars:
            if exact and v not in ROUNDED:
                np.testing.assert_array_equal(two.posterior[v].values, four.posterior[v].values, err_msg=v)
        print("two devices", name)
    print("same", name, "exact" if exact else "rounding", gap)

# the draws moved: a sharded run is not a copy of its start
u = gibbsjax.sample(mixtures.unigrams(3), mixtures.unigram_data(corpus), devices=4, shard="data", **kw)
assert np.ptp(u.posterior["pi"].values, axis=1).min() > 0

# resume continues a sharded run exactly
k, d = hmm.categorical(2), hmm.categorical_data(seqs, 4)
whole = gibbsjax.sample(k, d, devices=4, shard="data", **kw)
first = gibbsjax.sample(k, d, devices=4, shard="data", **{**kw, "num_draws": 2})
compare(whole, gibbsjax.resume(first, k, d, 4, progress=False))
print("resumed")

# exactness of a sharded kernel: the unigram mixture's label frequencies against enumeration
import sys
sys.path.insert(0, {tests!r})
from _exact import exact_unigram_posterior, final_states
from test_mixtures import ALPHA, LAM, TINY_DOCS, TINY_V, _tiny_corpus, state_counts
from gibbsjax.testing import chi_square_test
plan = mixtures.unigrams(2, alpha=ALPHA, lam=LAM).shard(mixtures.unigram_data(_tiny_corpus()), jax.devices()[:2])
z = final_states(plan.kernel, plan.data, num_chains=8_000, sweeps=15, seed=11).z
ids = np.asarray(plan.data.ids)
z = z[:, np.argsort(ids, kind="stable")[: len(TINY_DOCS)]]
_, probs = exact_unigram_posterior(TINY_DOCS, TINY_V, 2, ALPHA, LAM)
result = chi_square_test(state_counts(z, 2), probs)
assert result.p_value > 1e-4, result
print("enumeration p", result.p_value)

# refusals: samplers whose rows are drawn one after another
for kernel, data, msg in [(nb.dirichlet_multinomial(), nb.data(Corpus.from_token_lists(docs, labels=labels), num_classes=2),
                           "naive_bayes.uncollapsed"),
                          (mixtures.unigrams_collapsed(3), mixtures.unigram_data(corpus), "declares no Kernel.shard")]:
    try:
        gibbsjax.sample(kernel, data, devices=4, **{**kw, "num_chains": 1})
    except ValueError as e:
        assert msg in str(e), e
        print("refused", kernel.name)

# the command line: a mixture with fewer chains than devices splits its documents.  The corpus above,
# from a file, with the unigram mixture's K and run lengths above: its compiled programs serve the command
import contextlib, io, pathlib
from gibbsjax.cli import main
from gibbsjax.corpus import write_ldac
write_ldac(corpus, "c.ldac", "v.txt")
toml = ['[model]', 'name = "mixtures.unigrams"', 'K = 3', '[data]', 'file = "c.ldac"', 'format = "ldac"',
        'vocab = "v.txt"', '[sampler]', 'num_chains = 2', 'num_warmup = 0', 'num_draws = 6', 'seed = 0']
pathlib.Path("m.toml").write_text(chr(10).join(toml) + chr(10))
for argv in (["run", "m.toml", "--devices", "4", "--no-progress"], ["summary", "m.nc"]):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(argv) == 0, argv
assert "devices: data: documents split into 4 blocks" in buf.getvalue(), buf.getvalue()
print("cli")
"""


def _run(tmp_path, all_cases: bool) -> str:
    env = dict(os.environ)
    env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4").strip()
    env["JAX_PLATFORMS"] = "cpu"
    env.pop("PYTHONWARNINGS", None)
    script = _SCRIPT.replace("{tests!r}", repr(str(Path(__file__).parent))).replace("{all_cases}", str(all_cases))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "resumed" in out and "enumeration p" in out and "cli" in out
    assert "refused naive_bayes.dirichlet_multinomial" in out and "refused mixtures.unigrams_collapsed" in out
    return out


def test_rows_over_four_devices_give_the_draws_of_one(tmp_path):
    """One model of each family (the unigram mixture, naive Bayes, the categorical HMM, the
    Gaussian mixture); the slow test runs every model and the two-device check for each."""
    out = _run(tmp_path, all_cases=False)
    for name in ("unigrams", "naive_bayes", "hmm_categorical"):
        assert f"same {name} exact" in out, out
    assert "same gaussian_mixture rounding" in out and "two devices unigrams" in out, out


@pytest.mark.slow
def test_every_row_model_over_four_devices_gives_the_draws_of_one(tmp_path):
    out = _run(tmp_path, all_cases=True)
    for name in ("unigrams", "unigrams_means", "bernoulli", "naive_bayes", "hmm_categorical"):
        assert f"same {name} exact" in out and f"two devices {name}" in out, out
    for name in ("hmm_gaussian", "gaussian_mixture", "gaussian_mixture_2d"):
        assert f"same {name} rounding" in out and f"two devices {name}" in out, out


def test_a_second_sharded_run_reuses_the_compiled_programs():
    """The sharded kernel of the same model and layout is made of the same functions each time
    (``Kernel.shard`` of data built again, as a second ``sample`` or a ``resume`` makes it), so
    its chunk functions are not lowered again; another layout gets functions of its own."""
    import gibbsjax
    from gibbsjax.models import mixtures

    rng = np.random.default_rng(5)
    docs = [[str(w) for w in rng.integers(0, 9, rng.integers(1, 7))] for _ in range(11)]
    kernel = mixtures.unigrams(2)
    device = jax.devices()[:1]
    plans = [kernel.shard(mixtures.unigram_data(Corpus.from_token_lists(docs)), device, 2) for _ in range(2)]
    assert plans[0].kernel.step is plans[1].kernel.step and plans[0].kernel.init is plans[1].kernel.init
    other = kernel.shard(mixtures.unigram_data(Corpus.from_token_lists(docs)), device, 3)
    assert other.kernel.step is not plans[0].kernel.step
    assert plans[0].kernel.name == kernel.name and plans[0].kernel.dims == kernel.dims

    lowered = []

    def listen(event, secs, fun_name="", **_):
        if event == "/jax/core/compile/jaxpr_to_mlir_module_duration" and fun_name in ("jit(run)", "jit(start)"):
            lowered.append(fun_name)

    kw = dict(seed=1, num_chains=2, num_warmup=2, num_draws=3, progress=False)
    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        first = gibbsjax.sample(plans[0].kernel, plans[0].data, **kw)
        n_first = len(lowered)
        second = gibbsjax.sample(plans[1].kernel, plans[1].data, **kw)
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)
    assert n_first >= 2 and len(lowered) == n_first, lowered
    np.testing.assert_array_equal(first.posterior["pi"].values, second.posterior["pi"].values)
