"""Determinism of the core: a seed fixes every bit, whatever the batch size or thread count."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from paddock_ma.sim.core import layout as L
from paddock_ma.sim.race.start import new_race
from paddock_ma.sim.core.state import WorldState
from paddock_ma.sim.step import step_state
from paddock_ma.sim.track.load import load_track
from tests.helpers.determinism import RACE, seeded_race


def run_checksums(state, steps, ticks=1):
    out = np.empty((steps, state.num_worlds), np.uint64)
    for i in range(steps):
        step_state(state, n_ticks=ticks)
        out[i] = state.checksums()
    return out


@pytest.fixture(scope="module")
def gp():
    return load_track("grand-prix")


def test_same_seed_same_checksums_every_step_and_other_seed_differs(gp):
    a = run_checksums(seeded_race(gp, 8, seed=42), 2000)
    b = run_checksums(seeded_race(gp, 8, seed=42), 2000)
    np.testing.assert_array_equal(a, b)
    other = seeded_race(gp, 8, seed=43)
    c = run_checksums(other, 2000)
    assert (a != c).all()
    # Not only the RNG words: the race itself took another course (pit service times differ).
    ref = seeded_race(gp, 8, seed=42)
    run_checksums(ref, 2000)
    assert not np.array_equal(ref.cars_f[:, :, L.F_X], other.cars_f[:, :, L.F_X])
    assert ref.cars_i[:, :, L.I_PIT_STOPS].sum() > 0


def test_world_alone_equals_world_inside_a_batch_of_256(gp):
    batch = seeded_race(gp, 256, seed=7, cars=8)
    alone = [batch.world(w) for w in (0, 17, 255)]
    for _ in range(150):
        step_state(batch, n_ticks=4)
        for w, single in zip((0, 17, 255), alone):
            step_state(single, n_ticks=4)
            assert single.checksum() == batch.checksum(w)


_THREADS_SCRIPT = """
import json, sys
import numpy as np
sys.path.insert(0, {root!r})
from tests.helpers.determinism import seeded_race
from paddock_ma.sim.step import step_state
from paddock_ma.sim.track.load import load_track
state = seeded_race(load_track("grand-prix"), 16, seed=99, cars=10)
sums = []
for _ in range(300):
    step_state(state, n_ticks=2, parallel=True)
    sums.append([int(x) for x in state.checksums()])
print(json.dumps(sums))
"""


def test_parallel_kernel_is_identical_with_one_and_two_threads_and_serial(gp):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    results = {}
    for threads in ("1", "2"):
        env = dict(os.environ, NUMBA_NUM_THREADS=threads)
        out = subprocess.run([sys.executable, "-c", _THREADS_SCRIPT.format(root=root)], env=env,
                             capture_output=True, text=True, check=True, timeout=600)
        results[threads] = json.loads(out.stdout.strip().splitlines()[-1])
    assert results["1"] == results["2"]
    serial = seeded_race(gp, 16, seed=99, cars=10)
    expected = run_checksums(serial, 300, ticks=2)
    assert np.array_equal(np.array(results["1"], dtype=np.uint64), expected)


def test_restored_snapshot_continues_bit_identically(gp):
    state = seeded_race(gp, 4, seed=5)
    run_checksums(state, 500, ticks=2)
    doc = json.loads(json.dumps(state.snapshot()))
    expected = run_checksums(state, 500, ticks=2)
    restored = WorldState.from_snapshot(doc, gp)
    np.testing.assert_array_equal(run_checksums(restored, 500, ticks=2), expected)


def test_scattered_worlds_differ_from_one_another_and_repeat_for_their_seed():
    from paddock_ma.sim.race.start import scatter_cars
    track = load_track("oval")

    def scattered(seed):
        state = new_race(track, 3, 6, seed=seed, **RACE)
        scatter_cars(track, state)
        return state

    a, b, other = scattered(4), scattered(4), scattered(5)
    assert np.array_equal(a.checksums(), b.checksums())           # the world's own draws: a seed repeats
    assert len(set(a.checksums().tolist())) == 3                   # and the worlds are not copies
    assert not np.array_equal(a.checksums(), other.checksums())
    active = a.cars_i[:, :6, L.I_ACTIVE] == 1
    assert active.all() and (a.cars_i[:, :6, L.I_DESTROYED] == 0).all()   # legal places, on the track
    assert not (a.cars_i[:, :6, L.I_GRID_LOCKED]).any()
