"""restore() checks what a snapshot means, not only its checksums: every field against its range, and an
optional HMAC under a shared key for snapshots that cross an untrusted transport."""

import numpy as np
import pytest

from tests.helpers.env import config
from paddock_ma.env.batch_env import BatchEnv
from paddock_ma.errors import PaddockError
from paddock_ma.sim.core import layout as L
from paddock_ma.sim.core import state_check as C


@pytest.fixture(scope="module")
def env():
    batch = BatchEnv(config(), 2)
    batch.reset(seed=4)
    for _ in range(30):
        batch.step(np.tile(np.array([0.05, 0.8, 0.0], np.float32), (2, len(batch.controlled), 1)))
    return batch


def _forged(env, name, index, value):
    """A snapshot of ``env`` with ``arrays[name][index] = value`` and every checksum recomputed (what a
    forger, or a bug on the other end of a transport, hands over)."""
    state = env.state.copy()
    getattr(state, name)[index] = value
    return state.snapshot()


def _rejected(env, doc, field):
    before = env.checksums().tolist()
    with pytest.raises(PaddockError) as err:
        env.restore(doc)
    assert err.value.code == "snapshot_rejected" and field in err.value.message, err.value.message
    assert env.checksums().tolist() == before                   # nothing changed
    return err.value.message


def test_a_forged_snapshot_with_recomputed_checksums_is_rejected_naming_the_field(env):
    message = _rejected(env, _forged(env, "cars_i", (0, 0, L.I_COMPOUND), 10**6), "I_COMPOUND")
    assert "got 1000000" in message and "expected 0..2" in message
    env.step(np.zeros((2, len(env.controlled), 3), np.float32))      # and the env still steps


def test_every_ranged_field_is_checked(env):
    n_cars = env.state.num_cars
    for name, table in (("cars_i", C.CAR_INT_RANGES), ("world_i", C.WORLD_INT_RANGES), ("rules", C.RULE_RANGES)):
        names = C.field_names({"cars_i": "I_", "world_i": "WI_", "rules": "R_"}[name])
        for field, spec in table.items():
            lo, hi = C.field_bounds(spec, env.track, n_cars)
            index = (1, n_cars - 1, field) if name == "cars_i" else (1, field)
            dtype = getattr(env.state, name).dtype
            for bad in (lo - 1, hi + 1):
                if dtype.kind == "i" and not np.iinfo(dtype).min <= bad <= np.iinfo(dtype).max:
                    continue                    # e.g. a count's upper end: no int32 beyond it
                _rejected(env, _forged(env, name, index, bad), names[field])
    for name, prefix in (("cars_f", "F_"), ("world_f", "WF_"), ("car_params", "P_"), ("rules", "R_")):
        a = getattr(env.state, name)
        index = (0,) * (a.ndim - 1) + (a.shape[-1] - 1,)
        for bad in (np.nan, np.inf):
            _rejected(env, _forged(env, name, index, bad), C.field_names(prefix)[a.shape[-1] - 1])
    _rejected(env, _forged(env, "car_flags", (0, 0), 1 << 20), "car_flags")
    _rejected(env, _forged(env, "cars_i", (0, 0, L.I_SEG_HINT), env.track.cx.shape[0] - 1), "centreline segments")


def test_every_layout_field_of_a_discrete_array_is_classified():
    """A new field of cars_i / world_i must say its range here (or be a free integer on purpose)."""
    free_cars = {L.I_CONTACT_SLOTS_LO, L.I_CONTACT_SLOTS_HI}
    assert set(range(L.NI)) == set(C.CAR_INT_RANGES) | free_cars
    free_world = {L.WI_RNG_KEY, L.WI_SEED}
    assert set(range(L.NWI)) == set(C.WORLD_INT_RANGES) | free_world


def test_a_real_snapshot_passes_and_restores(env):
    doc = env.snapshot()
    other = BatchEnv(config(), 2)
    other.restore(doc)
    assert other.checksums().tolist() == env.checksums().tolist()


def test_an_hmac_under_a_shared_key_is_required_when_a_key_is_given(env):
    key = b"shared secret of both ends"
    doc = env.snapshot(key=key)
    other = BatchEnv(config(), 2)
    other.restore(doc, key=key)
    assert other.checksums().tolist() == env.checksums().tolist()
    for bad, why in ((env.snapshot(), "no hmac"), (env.snapshot(key=b"another key"), "another key"),
                     (dict(_forged(env, "cars_f", (0, 0, L.F_X), 1.0), hmac=doc["hmac"]), "forged body")):
        with pytest.raises(PaddockError, match="snapshot.hmac") as err:
            other.restore(bad, key=key)
        assert err.value.code == "snapshot_rejected", why
    other.restore(doc)                  # without a key the hmac is not required (nor checked)
