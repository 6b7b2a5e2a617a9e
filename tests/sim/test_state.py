"""WorldState: checksums, copies and snapshots (versioned, checksummed, JSON-safe, tamper-evident)."""

import base64
import json

import numpy as np
import pytest

from paddock_ma.sim.core import layout as L
from paddock_ma.sim.race.start import new_race
from paddock_ma.sim.core.rng import rng_uniform, world_keys
from paddock_ma.sim.core.state import SnapshotError, WorldState, fnv1a64, track_fingerprint
from paddock_ma.sim.step import step_state
from paddock_ma.sim.track.load import load_track


@pytest.fixture(scope="module")
def oval():
    return load_track("oval")


def fnv_reference(data: bytes) -> int:
    """FNV-1a-64 written out in plain Python (the published algorithm) as the oracle."""
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def test_fnv1a64_matches_reference_and_known_vectors():
    # Published FNV-1a-64 test vectors: "" and "a".
    assert fnv1a64(np.frombuffer(b"", np.uint8)) == 0xCBF29CE484222325
    assert fnv1a64(np.frombuffer(b"a", np.uint8)) == 0xAF63DC4C8601EC8C
    data = np.arange(1000, dtype=np.float64)
    assert fnv1a64(data) == fnv_reference(data.tobytes())


def test_checksum_covers_every_state_array_and_per_world_checksums_agree(oval):
    state = new_race(oval, 3, 4, seed=5)
    base = state.checksum()
    per_world = state.checksums()
    assert [state.checksum(w) for w in range(3)] == [int(x) for x in per_world]
    for name in ("cars_f", "cars_i", "world_f", "world_i"):
        other = state.copy()
        arr = getattr(other, name)
        arr.reshape(-1)[-1] += 1
        assert other.checksum() != base, name
    assert state.checksum() == base


def test_copy_is_deep_and_world_slice_has_the_same_bytes(oval):
    state = new_race(oval, 2, 3, seed=1)
    copy = state.copy()
    copy.cars_f[0, 0, L.F_X] += 1.0
    assert state.cars_f[0, 0, L.F_X] != copy.cars_f[0, 0, L.F_X]
    assert state.world(1).checksum() == state.checksum(1)


def test_snapshot_is_json_safe_and_restores_bit_identically(oval):
    state = new_race(oval, 2, 6, seed=11, standing_start=0)
    for _ in range(30):
        step_state(state, n_ticks=2)
    doc = json.loads(json.dumps(state.snapshot(), allow_nan=False))
    restored = WorldState.from_snapshot(doc, oval)
    assert restored.checksum() == state.checksum()
    for name, arr in state.arrays().items():
        np.testing.assert_array_equal(getattr(restored, name), arr)
    # Both continue identically.
    for _ in range(60):
        step_state(state, n_ticks=2)
        step_state(restored, n_ticks=2)
        assert restored.checksum() == state.checksum()


def test_restore_in_place_keeps_array_identity(oval):
    state = new_race(oval, 1, 4, seed=2, standing_start=0)
    doc = state.snapshot()
    cars_f = state.cars_f
    step_state(state, n_ticks=10)
    state.restore(doc)
    assert state.cars_f is cars_f
    assert f"{state.checksum():016x}" == doc["state_checksum"]


def test_snapshot_rejects_other_version_track_and_modified_payload(oval):
    state = new_race(oval, 1, 4, seed=3)
    doc = state.snapshot()

    with pytest.raises(SnapshotError, match=r"snapshot.version: this build reads version 2, got 3"):
        WorldState.from_snapshot(dict(doc, version=3), oval)
    # a snapshot of the version before DRS (version 1) is refused by its version, not by its layout
    with pytest.raises(SnapshotError, match=r"snapshot.version: this build reads version 2, got 1; take the "):
        WorldState.from_snapshot(dict(doc, version=1), oval)

    gp = load_track("grand-prix")
    with pytest.raises(SnapshotError, match=r"snapshot.track: the snapshot belongs to track"):
        WorldState.from_snapshot(doc, gp)

    raw = bytearray(base64.b64decode(doc["arrays"]["cars_f"]))
    raw[10] ^= 0xFF
    tampered = json.loads(json.dumps(doc))
    tampered["arrays"]["cars_f"] = base64.b64encode(bytes(raw)).decode()
    with pytest.raises(SnapshotError, match=r"payload does not match its checksum"):
        WorldState.from_snapshot(tampered, oval)

    with pytest.raises(SnapshotError, match=r"snapshot.format"):
        WorldState.from_snapshot(dict(doc, format="other"), oval)
    with pytest.raises(SnapshotError, match=r"snapshot.arrays"):
        WorldState.from_snapshot(dict(doc, arrays={"cars_f": doc["arrays"]["cars_f"]}), oval)
    assert track_fingerprint(oval) != track_fingerprint(gp)


def test_world_rng_is_stored_in_state_and_independent_of_batch_size():
    keys4 = world_keys(123, 4)
    keys1 = world_keys(123, 1)
    assert keys4[0] == keys1[0]
    assert len(set(keys4.tolist())) == 4
    world_i = np.zeros((2, L.NWI), np.int64)
    world_i[:, L.WI_RNG_KEY] = world_keys(9, 2)
    draws = [rng_uniform(world_i, 0) for _ in range(1000)]
    assert world_i[0, L.WI_RNG_COUNTER] == 1000 and world_i[1, L.WI_RNG_COUNTER] == 0
    assert 0.0 <= min(draws) and max(draws) < 1.0
    assert abs(np.mean(draws) - 0.5) < 0.05          # 1000 uniforms: sd of the mean ~0.009
    world_i[0, L.WI_RNG_COUNTER] = 0                   # rewinding the counter replays the stream
    assert [rng_uniform(world_i, 0) for _ in range(5)] == draws[:5]


def test_memory_per_world_is_small(oval):
    state = new_race(oval, 8, 20, seed=0)
    per_world = state.memory_bytes() / 8
    # 20 cars x (47 float64 + 45 int32 + 13 float64 params + 1 flag) ~ 16 KiB: the state stays compact.
    assert per_world < 24 * 1024
