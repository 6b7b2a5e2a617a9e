"""The track rays' march skips no answer: the sensing kernel's track channels (road edge, kerb,
illegal surface: hit, distance, kind) equal, bit for bit, a reference recorded from the kernel that
marched every whole metre (``tests/fixtures/sensing/ray_march_reference.npz``), on every shipped track
and a PaddockJS trackSeed track, from origins on the track, kerb, gravel, grass, far off the track and
in the pit lane, at driver and debug precision, for batch-training rays (sample mode) and the others
(projection mode, the pit window).

Re-record (only when the measured answer is meant to change): ``PYTHONPATH=. python
tests/sim/test_ray_march_reference.py``.
"""

import math
import pathlib

import numpy as np

from paddock_ma.sim.core import layout as L
from paddock_ma.sim.sensing import march as M
from paddock_ma.sim.track.geometry import locate
from paddock_ma.sim.track.load import list_tracks, load_track
from tests.helpers.sensing import make_world, place, pose_at, random_poses, sense

FIXTURE = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "sensing" / "ray_march_reference.npz"
TRACKS = list_tracks() + ["paddockjs:2601"]
CHANNELS = M.CH_ROAD_EDGE | M.CH_KERB | M.CH_ILLEGAL
CASES = [(batch, pit, debug) for batch in (False, True) for pit in (False, True) for debug in (0, 1)]


def _poses(tr, rng):
    """random_poses' mix, plus origins 2-150 m beyond the grass edge (the march's longest walks)."""
    poses = random_poses(tr, rng, 40)
    for _ in range(12):
        off = rng.choice([-1.0, 1.0]) * (tr.grass_edge + rng.uniform(2.0, 150.0))
        poses.append(pose_at(tr, rng.uniform(0.0, tr.length), off, rng.uniform(-math.pi, math.pi)))
    return poses


def measure():
    """Every case's track channels -> {key: array}."""
    out = {}
    for name in TRACKS:
        tr = load_track(name)
        rng = np.random.default_rng(7)
        poses = _poses(tr, rng)
        angles = rng.uniform(-180.0, 180.0, size=(len(poses), 12))
        angles[:, 0] = 0.0
        angles[:, 1] = 180.0
        angles[:, 2] = 90.0
        lengths = rng.uniform(20.0, 240.0, size=angles.shape)
        for batch, pit, debug in CASES:
            cars_f, cars_i, flags = make_world(1, len(poses))
            for c, (x, y, h) in enumerate(poses):
                place(cars_f, 0, c, x, y, h)
                cars_i[0, c, L.I_SEG_HINT] = locate(tr, x, y, -1)[0]
                cars_i[0, c, L.I_IN_PIT_LANE] = int(pit)
                if pit:       # the rays read the pit surfaces for a car with a wheel on one
                    cars_i[0, c, L.I_WHEEL_SURFACE_FL] = L.SURF_PIT_LANE
                if batch:
                    flags[0, c] |= L.FLAG_MAIN_TRACK_RAYS
            got = sense(tr, cars_f, cars_i, flags, angles, lengths, channels=CHANNELS, debug=debug)
            key = f"{name}|{int(batch)}{int(pit)}{debug}"
            out[key + "|dist"] = got["ray_dist"][..., :3]
            out[key + "|hit"] = got["ray_hit"][..., :3]
            out[key + "|kind"] = got["ray_kind"]
    return out


def test_track_rays_equal_the_whole_metre_march():
    ref = np.load(FIXTURE)
    got = measure()
    assert sorted(ref.files) == sorted(got)
    bad = [k for k in ref.files if not np.array_equal(ref[k], got[k])]
    assert not bad, bad


if __name__ == "__main__":
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(FIXTURE, **measure())
    print("wrote", FIXTURE)
