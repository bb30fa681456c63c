"""The runner: key scheme invariances, thinning, init, warm-up, validation, interrupts."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gibbsjax
from gibbsjax.kernel import Kernel, sweep
from gibbsjax.run import sample


class AR(NamedTuple):
    x: jax.Array
    count: jax.Array


def _ar_kernel() -> Kernel:
    """x_t = 0.5 x_{t-1} + noise, and a sweep counter (to check thinning/warm-up)."""

    def step_x(key, s, d):
        return 0.5 * s.x + jax.random.normal(key, s.x.shape)

    def step_count(key, s, d):
        return s.count + 1

    return Kernel(
        init=lambda key, d: AR(jax.random.normal(key, (2,)) * 5.0, jnp.int32(0)),
        step=sweep(("x", step_x), ("count", step_count)),
        record=lambda s, d: {"x": s.x, "count": s.count},
        dims={"x": ("coord",), "count": ()},
        coords=lambda d: {"coord": ["a", "b"]},
        log_joint=lambda s, d: -0.5 * jnp.sum(s.x**2) / (1 / 0.75),
        name="ar",
    )


KERNEL = _ar_kernel()


def _x(idata):
    return idata.posterior["x"].values


def test_chain_c_same_whatever_number_of_chains():
    four = sample(KERNEL, seed=11, num_chains=4, num_warmup=13, num_draws=40, progress=False)
    eight = sample(KERNEL, seed=11, num_chains=8, num_warmup=13, num_draws=40, progress=False)
    np.testing.assert_array_equal(_x(four), _x(eight)[:4])
    # and the other chains are different ones
    assert not np.allclose(_x(eight)[4], _x(eight)[0])


@pytest.mark.parametrize("chunk", [1, 7, None])
def test_chunk_size_does_not_change_draws(chunk):
    whole = sample(KERNEL, seed=5, num_chains=3, num_warmup=10, num_draws=30, chunk_size=1000, progress=False)
    other = sample(KERNEL, seed=5, num_chains=3, num_warmup=10, num_draws=30, chunk_size=chunk, progress=False)
    np.testing.assert_array_equal(_x(whole), _x(other))
    np.testing.assert_array_equal(whole.sample_stats["lp"].values, other.sample_stats["lp"].values)


def test_thinning_and_warmup_count_sweeps():
    idata = sample(KERNEL, seed=0, num_chains=2, num_warmup=9, num_draws=5, thin=3, progress=False)
    counts = idata.posterior["count"].values
    expected = 9 + 3 * np.arange(1, 6)
    np.testing.assert_array_equal(counts, np.broadcast_to(expected, (2, 5)))
    # thinning keeps every third draw of the unthinned run
    full = sample(KERNEL, seed=0, num_chains=2, num_warmup=9, num_draws=15, progress=False)
    np.testing.assert_array_equal(_x(idata), _x(full)[:, 2::3])


def test_save_warmup_and_dims_coords():
    idata = sample(KERNEL, seed=0, num_chains=2, num_warmup=6, num_draws=4, save_warmup=True, progress=False)
    # draw 0 of the warm-up is the starting state, then one draw per warm-up sweep
    assert idata.warmup_posterior["count"].values.tolist() == [[0, 1, 2, 3, 4, 5, 6]] * 2
    assert idata.warmup_sample_stats["lp"].shape == (2, 7)
    sweeps = gibbsjax.diagnostics.all_sweeps(idata)
    assert sweeps["count"].values.tolist() == [list(range(11))] * 2
    assert sweeps["lp"].shape == (2, 11)
    assert idata.posterior["x"].dims == ("chain", "draw", "coord")
    assert list(idata.posterior["coord"].values) == ["a", "b"]
    assert "lp" in idata.sample_stats
    assert idata.attrs["interrupted"] == 0


def test_user_init_overrides_random_start():
    init = {"x": np.array([[100.0, -100.0], [50.0, 50.0]])}
    idata = sample(KERNEL, seed=0, num_chains=2, num_warmup=0, num_draws=1, init=init, progress=False)
    first = _x(idata)[:, 0]
    # one sweep from x0: 0.5 x0 + N(0, 1): within 6 sd of half the start
    assert np.all(np.abs(first - 0.5 * init["x"]) < 6)


def test_key_and_seed_agree_and_seed_is_recorded():
    a = sample(KERNEL, seed=3, num_chains=2, num_warmup=0, num_draws=5, progress=False)
    b = sample(KERNEL, key=jax.random.key(3), num_chains=2, num_warmup=0, num_draws=5, progress=False)
    np.testing.assert_array_equal(_x(a), _x(b))
    assert a.attrs["seed"] == 3
    c = sample(KERNEL, num_chains=2, num_warmup=0, num_draws=5, progress=False)
    d = sample(KERNEL, seed=int(c.attrs["seed"]), num_chains=2, num_warmup=0, num_draws=5, progress=False)
    np.testing.assert_array_equal(_x(c), _x(d))


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"num_chains": 0}, "num_chains"),
        ({"num_draws": 0}, "num_draws"),
        ({"num_warmup": -1}, "num_warmup"),
        ({"thin": 0}, "thin"),
        ({"num_chains": 2.5}, "num_chains"),
        ({"chunk_size": 0}, "chunk_size"),
        ({"seed": -4}, "seed"),
        ({"seed": 1, "key": jax.random.key(1)}, "seed or key"),
        ({"init": {"nope": [0.0, 0.0]}}, "nope"),
        ({"init": {"x": [0.0, 0.0]}}, "init"),
        ({"init": {"x": [[np.nan, 0.0]] * 4}}, "NaN"),
    ],
)
def test_bad_arguments_raise_value_error(kwargs, name):
    with pytest.raises(ValueError, match=name):
        sample(KERNEL, **{"num_chains": 4, "num_draws": 3, "progress": False, **kwargs})


def test_not_a_kernel():
    with pytest.raises(ValueError, match="kernel"):
        sample(lambda k, s, d: s, num_draws=2)


def test_interrupt_keeps_finished_draws(monkeypatch):
    """A KeyboardInterrupt during the run keeps every chunk finished before it."""
    import gibbsjax.run.driver as run_module

    real = run_module.to_host
    calls = {"n": 0}

    def flaky(out, n):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return real(out, n)

    monkeypatch.setattr(run_module, "to_host", flaky)
    with pytest.warns(RuntimeWarning, match="interrupted"):
        idata = sample(KERNEL, seed=0, num_chains=2, num_warmup=5, num_draws=50, chunk_size=5, progress=False)
    assert idata.attrs["interrupted"] == 1
    assert idata.posterior.sizes["draw"] == 15
    full = sample(KERNEL, seed=0, num_chains=2, num_warmup=5, num_draws=50, chunk_size=5, progress=False)
    np.testing.assert_array_equal(_x(idata), _x(full)[:, :15])


def test_interrupt_before_any_draw_reraises(monkeypatch):
    import gibbsjax.run.driver as run_module

    def boom(out, n):
        raise KeyboardInterrupt

    monkeypatch.setattr(run_module, "to_host", boom)
    with pytest.raises(KeyboardInterrupt):
        sample(KERNEL, seed=0, num_chains=2, num_warmup=0, num_draws=5, progress=False)


def test_no_recompilation_for_same_shapes():
    """Same kernel and shapes: the compiled chunk function is reused (cache hit)."""
    import gibbsjax.run.chunks as run_module

    sample(KERNEL, seed=0, num_chains=2, num_warmup=4, num_draws=8, progress=False)
    before = run_module.chunk_fn.cache_info()
    sample(KERNEL, seed=1, num_chains=2, num_warmup=4, num_draws=8, progress=False)
    after = run_module.chunk_fn.cache_info()
    assert after.misses == before.misses
    fn = run_module.chunk_fn(KERNEL.step, KERNEL.record, KERNEL.log_joint, 1, 1)
    size = fn._cache_size()
    sample(KERNEL, seed=2, num_chains=2, num_warmup=0, num_draws=1, chunk_size=1, progress=False)
    sample(KERNEL, seed=3, num_chains=2, num_warmup=0, num_draws=1, chunk_size=1, progress=False)
    assert fn._cache_size() <= size + 1


def _lowered_chunks(run):
    """The chunk functions (``jit(run)``) lowered while ``run()`` runs: one lowering precedes
    every compilation (a persistent-cache hit included)."""
    lowered = []

    def listen(event, secs, fun_name="", **_):
        if event == "/jax/core/compile/jaxpr_to_mlir_module_duration" and fun_name == "jit(run)":
            lowered.append(fun_name)

    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        return run(), len(lowered)
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)


def test_a_run_compiles_only_the_chunk_functions_it_runs():
    """A warm-up transition of its own: the warm-up chunk function is compiled only when there is a
    warm-up, and without the records it would never keep; without one (``thin = 1``) warm-up and
    sampling share one function.  Fresh kernels (nothing compiled for them yet) with the draws
    compared: what is left out of the program changes no draw."""
    from gibbsjax.run.chunks import compiled
    from gibbsjax.run.settings import Settings

    def fresh(warmup: bool) -> Kernel:
        k = _ar_kernel()
        if warmup:  # the same transition, as a kernel with a warm-up step of its own runs it
            k = k._replace(warmup_step=sweep(("x", lambda key, s, d: 0.5 * s.x + jax.random.normal(key, s.x.shape)),
                                             ("count", lambda key, s, d: s.count + 1)))
        return k

    kw = dict(seed=3, num_chains=2, num_draws=8, progress=False)
    no_warmup, n = _lowered_chunks(lambda: sample(fresh(True), num_warmup=0, **kw))
    assert n == 1, n  # the sampling chunk only (the memory check compiled it; the run reused it)
    warm, n = _lowered_chunks(lambda: sample(fresh(True), num_warmup=5, **kw))
    assert n == 2, n
    shared, n = _lowered_chunks(lambda: sample(fresh(False), num_warmup=5, **kw))
    assert n == 1, n  # no warm-up step, thin 1: one function for both phases
    np.testing.assert_array_equal(_x(warm), _x(shared))  # the same transition: the same draws
    assert not np.array_equal(_x(warm), _x(no_warmup))

    k = fresh(True)
    _, warm_fn, draw_fn = compiled(k, Settings(num_chains=2, num_warmup=5, num_draws=8), 8)
    args = (jax.random.split(jax.random.key(0), 2), jax.vmap(lambda key: k.init(key, None))(
        jax.random.split(jax.random.key(1), 2)), {}, None, np.int32(0), np.int32(8), np.bool_(True), np.bool_(False))
    assert jax.eval_shape(warm_fn, *args)[2] == {}  # no records in a warm-up that keeps none
    assert set(jax.eval_shape(draw_fn, *args)[2]) == {"posterior", "lp"}
    _, kept_fn, _ = compiled(k, Settings(num_chains=2, num_warmup=5, num_draws=8, save_warmup=True), 8)
    assert set(jax.eval_shape(kept_fn, *args)[2]) == {"posterior", "lp"}


def test_progress_bar_runs(capsys):
    idata = sample(KERNEL, seed=0, num_chains=2, num_warmup=4, num_draws=8, progress=True)
    assert idata.posterior.sizes["draw"] == 8
    assert "sweep" in capsys.readouterr().err


def test_top_level_exports():
    assert gibbsjax.sample is sample


def test_real_sigint_stops_after_the_chunk_in_flight(monkeypatch):
    """A real SIGINT sets a flag; the run stops between chunks and keeps what finished."""
    import os
    import signal

    import gibbsjax.run.driver as run_module

    real = run_module.to_host
    calls = {"n": 0}

    def signalling(out, n):
        calls["n"] += 1
        if calls["n"] == 2:
            os.kill(os.getpid(), signal.SIGINT)
        return real(out, n)

    monkeypatch.setattr(run_module, "to_host", signalling)
    before = signal.getsignal(signal.SIGINT)
    with pytest.warns(RuntimeWarning, match="interrupted"):
        idata = sample(KERNEL, seed=0, num_chains=2, num_warmup=0, num_draws=50, chunk_size=5, progress=False)
    assert idata.attrs["interrupted"] == 1
    assert idata.posterior.sizes["draw"] == 10  # the chunk in flight when the signal came is kept
    assert signal.getsignal(signal.SIGINT) is before  # handler restored


def test_accumulate_gives_per_chain_means_of_kept_draws():
    acc_kernel = KERNEL._replace(
        accumulate=lambda s, d: {"x_sum": s.x, "count_acc": s.count},
        dims={**KERNEL.dims, "x_sum": ("coord",)},
    )
    idata = sample(acc_kernel, seed=4, num_chains=3, num_warmup=6, num_draws=20, chunk_size=7, progress=False)
    means = idata.posterior_mean
    np.testing.assert_allclose(means["x_sum"].values, _x(idata).mean(axis=1), rtol=1e-5)
    # counts are ints: accumulated in float32; the mean of 7..26 over kept draws
    np.testing.assert_allclose(means["count_acc"].values, np.full(3, np.arange(7, 27).mean()))
    assert means["x_sum"].dims == ("chain", "coord")
    thinned = sample(acc_kernel, seed=4, num_chains=3, num_warmup=6, num_draws=5, thin=4, progress=False)
    np.testing.assert_allclose(thinned.posterior_mean["count_acc"].values, np.full(3, np.mean(6 + 4 * np.arange(1, 6))))


def test_running_means_do_not_depend_on_the_shape_they_are_summed_at():
    """Each draw's accumulated quantity is rounded before it joins the running sum, so the means of
    the same values are the same bits whatever the array's shape.  Fused into the sum, a product may
    become a fused multiply-add in some elements and not in others: under jax 0.12 on a CPU this
    test failed without the rounding (12 of 44 means), and a run with documents over four devices
    gave posterior means that differed from one device's in the last bit.  jax 0.10 contracts every
    element alike, so there the test passes either way; it guards the newer releases."""
    rng = np.random.default_rng(1)
    counts = jnp.asarray(rng.integers(0, 12, size=(41, 4)), jnp.float32)
    lengths = counts.sum(axis=1) + 1.0

    def means(n):
        kernel = KERNEL._replace(
            accumulate=lambda s, d: {"ratio": (d[0] + 0.1 * s.count) / (d[1][:, None] + 0.4)},
            dims={**KERNEL.dims, "ratio": ("row", "topic")}, coords=None)
        idata = sample(kernel, (counts[:n], lengths[:n]), seed=0, num_chains=1, num_warmup=0, num_draws=6,
                       progress=False)
        return idata.posterior_mean["ratio"].values[0]

    np.testing.assert_array_equal(means(11), means(41)[:11])


def test_the_data_fingerprint_hashed_beside_the_sweeps_is_the_datas_and_its_error_surfaces(monkeypatch):
    from gibbsjax.models import normal
    from gibbsjax.run import driver

    d = normal.data(np.array([98.2, 98.6, 99.1, 97.9, 98.4]))
    idata = sample(normal.semiconjugate(), d, seed=0, num_chains=2, num_warmup=2, num_draws=3, progress=False)
    assert idata.attrs["data_sha256"] == driver.data_fingerprint(d)  # the same digest, computed apart

    def broken(data):
        raise RuntimeError("hash failed")

    monkeypatch.setattr(driver, "data_fingerprint", broken)  # what the thread calls
    with pytest.raises(RuntimeError, match="hash failed"):
        sample(normal.semiconjugate(), d, seed=0, num_chains=2, num_warmup=2, num_draws=3, progress=False)
