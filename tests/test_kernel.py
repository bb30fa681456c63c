"""kernel: the Kernel protocol's fields and sweep's composition and key splitting."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from gibbsjax.kernel import Kernel, set_field, sweep


def test_sweep_runs_updates_in_order_and_each_sees_the_newest_state():
    step = sweep(("a", lambda k, s, d: s["b"] + 1.0), ("b", lambda k, s, d: s["a"] * 2.0))
    out = step(jax.random.key(0), {"a": jnp.array(0.0), "b": jnp.array(1.0)}, None)
    assert float(out["a"]) == 2.0 and float(out["b"]) == 4.0


def test_sweep_gives_each_update_its_own_key_from_one_split():
    seen = []

    def grab(k, s, d):
        seen.append(jax.random.key_data(k))
        return s["x"]

    key = jax.random.key(3)
    sweep(("x", grab), ("x", grab), ("x", grab))(key, {"x": jnp.zeros(())}, None)
    expected = jax.random.key_data(jax.random.split(key, 3))
    for i in range(3):
        assert jnp.array_equal(seen[i], expected[i])
    assert not jnp.array_equal(seen[0], seen[1])


def test_sweep_accepts_full_updates_and_rejects_bad_ones():
    def full(k, s, d):
        return s._replace(x=s.x + 1) if hasattr(s, "_replace") else {**s, "x": s["x"] + 1}

    assert float(sweep(full)(jax.random.key(0), {"x": jnp.zeros(())}, None)["x"]) == 1.0
    with pytest.raises(ValueError, match="at least one"):
        sweep()
    with pytest.raises(TypeError, match="pair"):
        sweep(("x", lambda k, s, d: 0, "extra"))
    with pytest.raises(TypeError, match="callable"):
        sweep(42)


def test_set_field_on_dicts_and_namedtuples():
    from typing import NamedTuple

    class S(NamedTuple):
        a: int
        b: int

    assert set_field(S(1, 2), "b", 5) == S(1, 5)
    assert set_field({"a": 1}, "a", 3) == {"a": 3}
    with pytest.raises(KeyError, match="no field"):
        set_field(S(1, 2), "c", 0)
    with pytest.raises(KeyError, match="no field"):
        set_field({"a": 1}, "c", 0)
    with pytest.raises(TypeError):
        set_field(5, "a", 1)


def test_kernel_optional_fields_default_to_none():
    k = Kernel(init=lambda key, d: 0, step=lambda key, s, d: s, record=lambda s, d: {})
    for field in ("dims", "log_joint", "coords", "sample_prior", "simulate_data", "accumulate", "log_likelihood",
                  "observed_data"):
        assert getattr(k, field) is None
    assert k.name == "kernel"


def _one_field_kernel(draw, init_value=0.0):
    from typing import NamedTuple

    class State(NamedTuple):
        mu: jax.Array

    return Kernel(init=lambda key, d: State(jnp.asarray(init_value, jnp.float32)),
                  step=sweep(("mu", draw)), record=lambda s, d: {"mu": s.mu}, name="toy.one_field")


@pytest.mark.parametrize("draw, message", [
    (lambda key, s, d: jax.random.normal(key, (3,)),
     r"state field 'mu' returned shape \(3,\) per chain, but the field holds shape \(\) per chain"),
    (lambda key, s, d: jnp.int32(1), r"state field 'mu' returned integer values \(int32\), but the field holds "
                                     r"float values \(float32\)"),
    (lambda key, s, d: {"a": s.mu}, r"state field 'mu' returned PyTreeDef.*but the field holds"),
])
def test_a_conditional_of_the_wrong_shape_is_named_before_sampling(draw, message):
    """One ValueError naming the field and both shapes per chain (the chain axis left out), raised while
    the sweep is traced: the step's jit-compiled chunk never runs (no progress callback)."""
    import gibbsjax

    seen = []
    with pytest.raises(ValueError, match=message):
        gibbsjax.sample(_one_field_kernel(draw), None, num_chains=5, num_warmup=2, num_draws=3, progress=False,
                        callback=seen.append)
    assert seen == []


def test_a_conditional_of_the_right_shape_passes_the_check():
    import gibbsjax

    idata = gibbsjax.sample(_one_field_kernel(lambda key, s, d: s.mu + jax.random.normal(key)), None, seed=0,
                            num_chains=3, num_warmup=0, num_draws=4, progress=False)
    assert idata.posterior["mu"].shape == (3, 4)


def _sample_refused(kernel, message):
    """``gibbsjax.sample`` refuses ``kernel`` with one ValueError matching ``message`` before any chunk
    has run (no progress callback) and before anything is compiled."""
    import gibbsjax
    from gibbsjax.run import chunks

    seen = []
    before = chunks.chunk_fn.cache_info().misses
    with pytest.raises(ValueError, match=message):
        gibbsjax.sample(kernel, None, num_chains=5, num_warmup=2, num_draws=3, progress=False, callback=seen.append)
    assert seen == []
    assert chunks.chunk_fn.cache_info().misses == before  # refused before the chunk function was even built


def _ok_draw(key, s, d):
    return s.mu + jax.random.normal(key)


@pytest.mark.parametrize("record, dims, message", [
    (lambda s, d: {"mu": s.mu}, {"mu": ("school",)},
     r"record returned 'mu' of shape \(\) per chain, but the kernel's dims declare \('school',\) for it "
     r"\(1 dimension\)"),
    (lambda s, d: {"mu": jnp.zeros((2, 3))}, {"mu": ("school",)},
     r"record returned 'mu' of shape \(2, 3\) per chain, but the kernel's dims declare \('school',\)"),
    (lambda s, d: {"a": jnp.zeros(3), "b": jnp.zeros(4)}, {"a": ("school",), "b": ("school",)},
     r"record returned 'b' with dimension 'school' of size 4 per chain, but record's 'a' has it of size 3"),
    (lambda s, d: [s.mu], None, r"record must return a dict of names to arrays, got list"),
    (lambda s, d: {"mu": "text"}, None, r"record returned 'mu' as str; return one array per name"),
])
def test_a_record_that_does_not_fit_its_dims_is_named_before_sampling(record, dims, message):
    kernel = _one_field_kernel(_ok_draw)._replace(record=record, dims=dims)
    _sample_refused(kernel, message)


def test_a_log_likelihood_that_does_not_fit_its_dims_is_named_and_can_be_left_out():
    import gibbsjax

    kernel = _one_field_kernel(_ok_draw)._replace(
        log_likelihood=lambda s, d: {"y": jnp.zeros((2, 2))}, dims={"mu": (), "y": ("observation",)})
    _sample_refused(kernel, r"log_likelihood returned 'y' of shape \(2, 2\) per chain, but the kernel's dims "
                            r"declare \('observation',\)")
    idata = gibbsjax.sample(kernel, None, seed=0, num_chains=2, num_warmup=0, num_draws=2, progress=False,
                            log_likelihood=False)  # not recorded: not checked
    assert "log_likelihood" not in idata.groups()


def test_coords_of_another_length_than_the_record_are_named():
    kernel = _one_field_kernel(_ok_draw)._replace(
        record=lambda s, d: {"theta": jnp.zeros(3)}, dims={"theta": ("school",)},
        coords=lambda d: {"school": ["a", "b"]})
    _sample_refused(kernel, r"record returned 'theta' with dimension 'school' of size 3 per chain, but coords "
                            r"'school' has it of size 2")


def test_an_init_state_without_a_field_the_sweep_updates_is_named():
    kernel = _one_field_kernel(_ok_draw)
    kernel = kernel._replace(step=sweep(("mu", _ok_draw), ("sigma", lambda key, s, d: s.mu)))
    _sample_refused(kernel, r"init returned a state without field 'sigma', which step \(a sweep\) updates; the "
                            r"state's fields are \['mu'\]")
    nested = kernel._replace(step=_ok_draw, warmup_step=sweep(sweep(("tau", _ok_draw))))
    _sample_refused(nested, r"without field 'tau', which warmup_step \(a sweep\) updates")


def test_an_init_state_that_holds_no_arrays_is_named():
    kernel = _one_field_kernel(_ok_draw)._replace(init=lambda key, d: {"mu": jnp.zeros(()), "label": "x"},
                                                  step=lambda key, s, d: s)
    _sample_refused(kernel, r"init returned state field .label. as str; a state holds arrays")


def test_every_builtin_kernel_passes_the_output_checks():
    from gibbsjax import config
    from gibbsjax.kernel import check_outputs

    for name in sorted(config._BUILTIN):  # the package's own models (another test may register one without an SBC case)
        kernel, data, _ = config.get_spec(name).sbc_case()
        check_outputs(kernel, data)  # raises for a kernel whose record does not fit its dims
