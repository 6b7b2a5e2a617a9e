"""The road-edge ray channel measures what PaddockJS 2.0.0 measures (``sim.sensing.road_edge``): checked
against an independent oracle of PaddockJS's rules (``tests.helpers.road_edge_oracle``) on the shipped
tracks and a PaddockJS trackSeed track, from origins on the track, the kerb, the gravel and the grass,
near the pits and away from them, at driver and debug precision. Against PaddockJS itself, along its own
golden traces: ``tests/env/test_paddockjs_closed_loop.py``."""

import math

import numpy as np
import pytest

from paddock_ma.sim.core import layout as L
from paddock_ma.sim.sensing import march as M
from paddock_ma.sim.sensing import road_edge as R
from paddock_ma.sim.track.geometry import locate, point_at
from paddock_ma.sim.track.load import list_tracks, load_track
from paddock_ma.sim.track.surface import pit_point_at
from tests.helpers import road_edge_oracle as O
from tests.helpers.sensing import make_world, place, pose_at, sense

TRACKS = list_tracks() + ["paddockjs:2601"]


def _poses(tr, rng, n):
    """Origins on the track, kerb, gravel and grass (a third of them within 80 m of the pit entry or
    exit, where PaddockJS marches), headings near the track's and arbitrary."""
    hw, ke, ge, gr = tr.half_width, tr.kerb_edge, tr.gravel_edge, tr.grass_edge
    poses = []
    for i in range(n):
        if i % 3 == 0 and len(tr.px):
            s = (tr.pit_entry_s if i % 2 else tr.pit_exit_s) + rng.uniform(-80.0, 80.0)
        else:
            s = rng.uniform(0.0, tr.length)
        side = rng.choice([-1.0, 1.0])
        band = i % 6
        off = (rng.uniform(-hw, hw) if band < 3 else side * rng.uniform(hw + 0.05, ke - 0.05) if band == 3
               else side * rng.uniform(ke + 0.05, ge - 0.05) if band == 4 else side * rng.uniform(ge + 0.05, gr - 0.5))
        dh = rng.normal(0.0, 0.2) if i % 3 else rng.uniform(-math.pi, math.pi)
        poses.append(pose_at(tr, s % tr.length, off, dh))
    return poses


def _compare(tr, poses, angles, lengths, *, debug=0, in_pit_lane=False, batch_training=False):
    """Run the sensing kernel (road edge only) and the oracle on every ray -> (mismatches, path counts)."""
    C = len(poses)
    cars_f, cars_i, flags = make_world(1, C)
    for c, (x, y, h) in enumerate(poses):
        place(cars_f, 0, c, x, y, h)
        cars_i[0, c, L.I_SEG_HINT] = locate(tr, x, y, -1)[0]
        cars_i[0, c, L.I_IN_PIT_LANE] = int(in_pit_lane)
        if in_pit_lane:       # the rays read the pit surfaces for a car with a wheel on one
            cars_i[0, c, L.I_WHEEL_SURFACE_FL] = L.SURF_PIT_LANE
        if batch_training:
            flags[0, c] |= L.FLAG_MAIN_TRACK_RAYS
    out = sense(tr, cars_f, cars_i, flags, angles, lengths, channels=M.CH_ROAD_EDGE, debug=debug)
    bad, paths = [], {}
    for c, (x, y, h) in enumerate(poses):
        j = int(np.argmin((tr.cx[:-1] - x) ** 2 + (tr.cy[:-1] - y) ** 2))
        include = O.include_pit_lane(tr, x, y, in_pit_lane)      # (a built-in car: its pit override allowed)
        for r in range(angles.shape[1]):
            hit, d, kind, path = O.road_edge(tr, x, y, h, math.radians(angles[c, r]), lengths[c, r], tr.cs[j],
                                             debug=bool(debug), include_pit=include,
                                             batch_training=batch_training)
            paths[path] = paths.get(path, 0) + 1
            got = (int(out["ray_hit"][0, c, r, M.RAY_ROAD_EDGE]), float(out["ray_dist"][0, c, r, M.RAY_ROAD_EDGE]),
                   int(out["ray_kind"][0, c, r]))
            if got[0] != hit or got[2] != kind or abs(got[1] - d) > 1e-4 * max(1.0, d):
                bad.append((c, r, path, got, (hit, d, kind)))
    return bad, paths


@pytest.mark.parametrize("name", TRACKS)
def test_road_edge_follows_paddockjs_rules(name):
    tr = load_track(name)
    rng = np.random.default_rng(41)
    poses = _poses(tr, rng, 48)
    angles = rng.uniform(-180.0, 180.0, size=(len(poses), 8))
    angles[:, 0] = 0.0                    # along the track: the straight edge and the march
    angles[:, 1] = 180.0
    lengths = rng.uniform(20.0, 200.0, size=angles.shape)
    bad, paths = _compare(tr, poses, angles, lengths)
    assert not bad, bad[:5]
    # the edge lines and the march were both taken (48 cars x 8 rays; the straight edge: below)
    assert paths.get("edge-lines", 0) > 100 and paths.get("march", 0) > 20, paths


def test_straight_edge_path_is_taken_on_straights():
    # On the oval's straights (curvature 0) rays that meet no white line take PaddockJS's straight edge
    tr = load_track("oval")
    rng = np.random.default_rng(43)
    poses = [pose_at(tr, s, off, dh) for s, off, dh in zip(rng.uniform(0.0, tr.length, 60),
                                                           rng.uniform(-7.0, 7.0, 60), rng.normal(0.0, 0.05, 60))]
    angles = np.tile([0.0, 3.0, -3.0, 180.0], (len(poses), 1))
    lengths = np.full(angles.shape, 60.0)
    bad, paths = _compare(tr, poses, angles, lengths)
    assert not bad, bad[:5]
    assert paths.get("straight-edge", 0) > 20, paths


def test_debug_precision_bisects_the_march():
    # Debug precision: the march's bracket is bisected 12 times (1/4096 m); driver precision reads
    # whole metres.
    tr = load_track("grand-prix")
    rng = np.random.default_rng(47)
    poses = [pose_at(tr, s, off, dh) for s, off, dh in zip(
        tr.pit_entry_s + rng.uniform(-50.0, 50.0, 16), rng.uniform(-7.0, 7.0, 16), rng.uniform(-math.pi, math.pi, 16))]
    angles = rng.uniform(-180.0, 180.0, size=(len(poses), 6))
    lengths = np.full(angles.shape, 80.0)
    for debug in (0, 1):
        bad, paths = _compare(tr, poses, angles, lengths, debug=debug)
        assert not bad, (debug, bad[:5])
        assert paths.get("march", 0) > 40, paths


def test_driver_precision_march_reads_whole_metres_near_the_pits():
    tr = load_track("grand-prix")
    x, y, h, _ = point_at(tr, tr.pit_entry_s + 10.0)
    cars_f, cars_i, flags = make_world(1, 1)
    place(cars_f, 0, 0, x, y, h)
    cars_i[0, 0, L.I_SEG_HINT] = locate(tr, x, y, -1)[0]
    out = sense(tr, cars_f, cars_i, flags, [90.0, -90.0], [120.0], channels=M.CH_ROAD_EDGE)
    d = out["ray_dist"][0, 0, :, M.RAY_ROAD_EDGE]
    # the white line lies half_width (7.5 m) to either side; the march reads the first metre past it
    assert np.all(d == math.ceil(tr.half_width)) and np.all(out["ray_kind"][0, 0] == R.KIND_EXIT)


def test_a_car_in_the_pit_lane_marches_with_pit_surfaces_inside():
    tr = load_track("grand-prix")
    rng = np.random.default_rng(53)
    poses = []
    for u in rng.uniform(0.0, tr.pit_length, 12):
        px, py, ph = pit_point_at(tr, u)
        poses.append((px, py, ph + rng.normal(0.0, 0.5)))
    angles = rng.uniform(-180.0, 180.0, size=(len(poses), 4))
    lengths = np.full(angles.shape, 60.0)
    bad, paths = _compare(tr, poses, angles, lengths, in_pit_lane=True)
    assert not bad, bad[:5]
    assert paths == {"march": 48}


@pytest.mark.parametrize("name", ["grand-prix", "paddockjs:2601"])
def test_batch_training_rays_ignore_the_pit_window_and_read_samples(name):
    # PaddockJS's batch-training rays: edge lines and the straight edge near the pits too, and every
    # query the nearest sample of the candidates (the march's samples included)
    tr = load_track(name)
    rng = np.random.default_rng(59)
    poses = _poses(tr, rng, 36)
    angles = rng.uniform(-180.0, 180.0, size=(len(poses), 6))
    angles[:, 0] = 0.0
    lengths = rng.uniform(20.0, 200.0, size=angles.shape)
    bad, paths = _compare(tr, poses, angles, lengths, batch_training=True)
    assert not bad, bad[:5]
    assert paths.get("edge-lines", 0) > 80 and paths.get("march", 0) > 5, paths
    normal, normal_paths = _compare(tr, poses, angles, lengths)
    assert not normal and normal_paths.get("march", 0) > paths.get("march", 0)   # the pit window marches
