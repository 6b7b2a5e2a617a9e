"""Sensors: the kerb and illegal-surface rays against an oracle of PaddockJS's rules, the car channel
against geometry, radar against a numpy oracle, lookahead against point_at, destroyed cars, masks and
layouts. The road-edge channel: tests/sim/test_road_edge_rays.py."""

import math

import numpy as np
import pytest

from paddock_ma.sim.core import layout as L
from paddock_ma.sim.sensing import march as M
from paddock_ma.sim.sensing import sensors as S
from paddock_ma.sim.sensing import geometry as G
from paddock_ma.sim.track.geometry import locate, point_at
from paddock_ma.sim.track.load import list_tracks, load_track
from paddock_ma.sim.track.point_surface import surface_at
from paddock_ma.sim.track.surface import GARAGE_DEPTH, PIT_WORK_GAP, PIT_WORK_WIDTH, pit_lane_frame, pit_point_at
from tests.helpers import road_edge_oracle
from tests.helpers.sense_oracle import nearest_sample_index, oracle_lookahead

TOLERANCE = 0.1   # m: the whole-metre march's answers checked against exact distances allow this

TRACKS = list_tracks()
ALL_FLAGS = (L.FLAG_COLLIDES | L.FLAG_RAY_VISIBLE | L.FLAG_RADAR_VISIBLE | L.FLAG_CLASSIFIED
             | L.FLAG_PIT_OCCUPIES)
HALF_L = L.CAR_LENGTH / 2     # 2.325 m
HALF_W = L.CAR_WIDTH / 2      # 0.62 m


# ------------------------------------------------------------------------------------------------
# Helpers
# ------------------------------------------------------------------------------------------------
def make_world(W, C):
    cars_f = np.zeros((W, C, L.NF))
    cars_i = np.zeros((W, C, L.NI), dtype=np.int32)
    cars_i[:, :, L.I_ACTIVE] = 1
    cars_i[:, :, L.I_LAP] = 1
    flags = np.full((W, C), ALL_FLAGS, dtype=np.int32)
    return cars_f, cars_i, flags


def place(cars_f, w, c, x, y, h, v=0.0, progress=0.0):
    cars_f[w, c, L.F_X] = x
    cars_f[w, c, L.F_Y] = y
    cars_f[w, c, L.F_HEADING] = h
    cars_f[w, c, L.F_SPEED] = v
    cars_f[w, c, L.F_VX] = v * math.cos(h)
    cars_f[w, c, L.F_VY] = v * math.sin(h)
    cars_f[w, c, L.F_PROGRESS] = progress


def sense(tr, cars_f, cars_i, flags, angles_deg, lengths, *, mask=None, channels=M.CH_ALL, debug=0,
          radar_k=6, radius=150.0, look=(20.0, 50.0, 100.0, 150.0), ray_count=None, fill=None):
    """Run sense_worlds with one ray layout for every slot; returns the output arrays by name."""
    W, C = cars_f.shape[:2]
    ang = np.atleast_2d(np.radians(np.asarray(angles_deg, dtype=np.float64)))
    ang = np.broadcast_to(ang, (C, ang.shape[-1])).copy()
    R = ang.shape[1]
    ln = np.broadcast_to(np.asarray(lengths, dtype=np.float64), (C, R)).copy()
    if mask is None:
        mask = np.ones((W, C), np.int8)
    count = np.full(C, R, np.int32) if ray_count is None else np.asarray(ray_count, np.int32)
    ch = np.full(C, channels, np.int32)
    look_d = np.asarray(look, dtype=np.float64)
    K, Q = radar_k, look_d.shape[0]
    v = 0 if fill is None else fill
    out = dict(
        ray_dist=np.full((W, C, R, 4), v, np.float32), ray_hit=np.full((W, C, R, 4), v, np.int8),
        ray_kind=np.full((W, C, R), v, np.int8), ray_car=np.full((W, C, R), v, np.int32),
        ray_rel_speed=np.full((W, C, R), v, np.float32),
        radar=np.full((W, C, K, S.N_RADAR_FIELDS), v, np.float32), radar_slot=np.full((W, C, K), v, np.int32),
        look=np.full((W, C, Q, 2), v, np.float32))
    table = S.SenseTable(S.ray_directions(ang), ln, count, ch,
                         np.broadcast_to(np.asarray(radius, np.float64), (C,)).copy(), look_d)
    S.sense_worlds(tr, G.sensor_geometry(tr), cars_f, cars_i, flags, mask, table, debug, radar_k,
                   S.SenseBuffers(*out.values()))
    return out


def pose_at(tr, s, offset, dh):
    x, y, h, _ = point_at(tr, s)
    return x - math.sin(h) * offset, y + math.cos(h) * offset, h + dh


def random_poses(tr, rng, n):
    """Mixed origins: on track, on the kerb, in gravel, in grass, in the pit lane; headings near the
    track's and arbitrary."""
    hw, ke, ge, gr = tr.half_width, tr.kerb_edge, tr.gravel_edge, tr.grass_edge
    poses = []
    for i in range(n):
        kind = i % 10
        s = rng.uniform(0.0, tr.length)
        side = rng.choice([-1.0, 1.0])
        if kind < 5:
            off = rng.uniform(-hw, hw)
        elif kind < 7:
            off = side * rng.uniform(hw + 0.05, ke - 0.05)
        elif kind < 8:
            off = side * rng.uniform(ke + 0.05, ge - 0.05)
        elif kind < 9:
            off = side * rng.uniform(ge + 0.05, gr - 0.05)
        else:
            off = None
        dh = rng.normal(0.0, 0.15) if i % 3 else rng.uniform(-math.pi, math.pi)
        if off is None:   # pit path: connectors and fast lane
            px, py, ph = pit_point_at(tr, rng.uniform(0.0, tr.pit_length))
            poses.append((px, py, ph + dh))
        else:
            poses.append(pose_at(tr, s, off, dh))
    return poses


# ------------------------------------------------------------------------------------------------
# Surface channels
# ------------------------------------------------------------------------------------------------
def _compare_surface(tr, poses, rng, debug, n_rays=8):
    """The kerb and illegal-surface channels of random rays from ``poses`` against PaddockJS's rules
    (``tests.helpers.road_edge_oracle.surface_rays``) -> (mismatches, hits per channel [road edge
    unused, kerb, illegal])."""
    C = len(poses)
    cars_f, cars_i, flags = make_world(1, C)
    for c, (x, y, h) in enumerate(poses):
        place(cars_f, 0, c, x, y, h)
        # half the cars carry a current segment hint (as physics leaves it), half a stale one (0)
        cars_i[0, c, L.I_SEG_HINT] = locate(tr, x, y, -1)[0] if c % 2 == 0 else 0
    # the car channel is off so the other cars do not matter here
    angles = rng.uniform(-180.0, 180.0, size=(C, n_rays))
    angles[:, 0] = 0.0
    lengths = rng.uniform(15.0, 120.0, size=(C, n_rays))
    out = sense(tr, cars_f, cars_i, flags, angles, lengths,
                channels=M.CH_ROAD_EDGE | M.CH_KERB | M.CH_ILLEGAL, debug=debug)
    bad = []
    hits = np.zeros(3, int)
    for c, (x, y, h) in enumerate(poses):
        progress = tr.cs[nearest_sample_index(tr, x, y)]
        for r in range(n_rays):
            # (built-in cars: PaddockJS's pit override allowed, their samples read pit surfaces)
            want, path = road_edge_oracle.surface_rays(tr, x, y, h, math.radians(angles[c, r]), lengths[c, r],
                                                       progress, debug=bool(debug),
                                                       include_pit=road_edge_oracle.include_pit_lane(tr, x, y),
                                                       pit_override=True)
            for ch, name in ((M.RAY_KERB, "kerb"), (M.RAY_ILLEGAL, "illegal")):
                hit, d = want[name]
                hits[ch] += hit
                got = (int(out["ray_hit"][0, c, r, ch]), float(out["ray_dist"][0, c, r, ch]))
                if got[0] != hit or abs(got[1] - d) > 1e-4 * max(1.0, d):
                    bad.append((c, r, name, path, got, (hit, d)))
    return bad, hits


@pytest.mark.parametrize("name", TRACKS)
def test_surface_rays_follow_paddockjs_rules(name):
    # Origins on the track, kerb, gravel, grass and pit lane; PaddockJS's edge lines, straight edge and
    # whole-metre march (its pit window) all occur.
    tr = load_track(name)
    rng = np.random.default_rng(11)
    poses = random_poses(tr, rng, 60)
    bad, hits = _compare_surface(tr, poses, rng, 0)
    assert not bad, bad[:5]
    # the sample must exercise both channels (hits counted over 480 rays)
    assert hits[1:].min() > 50, hits


def pit_area_poses(tr, rng, n):
    """Origins all over the pit lane's frame (fast lane, working lane and boxes, garages, and a
    margin round them), headings arbitrary or along the lane."""
    sx, sy, dx, dy, nx, ny, lane_len = pit_lane_frame(tr.px, tr.py, tr.pit_side)
    hw = 0.5 * tr.pit_width
    v_garage = hw + PIT_WORK_GAP + PIT_WORK_WIDTH + PIT_WORK_GAP + GARAGE_DEPTH
    poses = []
    for i in range(n):
        u = rng.uniform(-15.0, lane_len + 15.0)
        v = rng.uniform(-hw - 3.0, v_garage)
        x = sx + u * dx + v * nx
        y = sy + u * dy + v * ny
        lane_h = math.atan2(dy, dx)
        h = lane_h + rng.normal(0.0, 0.1) if i % 2 else rng.uniform(-math.pi, math.pi)
        poses.append((x, y, h))
    return poses


def connector_poses(tr, rng, n):
    """Origins in and around the pit connectors (up to 2 m beyond their width), headings along the
    connector or arbitrary."""
    from paddock_ma.sim.track.surface import PIT_CONN_STEPS

    m = tr.px.shape[0]
    poses = []
    for i in range(n):
        j = int(rng.integers(0, PIT_CONN_STEPS)) + (0 if i % 2 else m - 1 - PIT_CONN_STEPS)
        ax, ay, bx, by = tr.px[j], tr.py[j], tr.px[j + 1], tr.py[j + 1]
        heading = math.atan2(by - ay, bx - ax)
        t = rng.uniform(0.0, 1.0)
        side = rng.uniform(-0.5 * tr.pit_width - 2.0, 0.5 * tr.pit_width + 2.0)
        x = ax + t * (bx - ax) - math.sin(heading) * side
        y = ay + t * (by - ay) + math.cos(heading) * side
        h = heading + rng.normal(0.0, 0.2) if i % 3 else rng.uniform(-math.pi, math.pi)
        poses.append((x, y, h))
    return poses


@pytest.mark.parametrize("name", TRACKS)
@pytest.mark.parametrize("where", ["lane", "connectors"])
def test_pit_area_rays_follow_paddockjs_rules(name, where):
    # Rays from all over the pit lane and its connectors (built-in cars: PaddockJS's pit override applies
    # to their samples, and the car whose centre it puts in the pit lane marches).
    tr = load_track(name)
    assert pit_lane_frame(tr.px, tr.py, tr.pit_side)[-1] > 100.0
    if where == "lane":
        rng = np.random.default_rng(23)
        poses = pit_area_poses(tr, rng, 48)
    else:
        rng = np.random.default_rng(29)
        poses = connector_poses(tr, rng, 48)
        origins = [surface_at(tr, x, y, -1)[0] for x, y, _ in poses]
        assert sum(c in (L.SURF_PIT_ENTRY, L.SURF_PIT_EXIT) for c in origins) > 12, origins
    bad, hits = _compare_surface(tr, poses, rng, 0)
    assert not bad, bad[:5]
    assert hits[1:].min() > 20, hits




@pytest.mark.parametrize("name", TRACKS)
def test_off_track_rays_follow_paddockjs_rules(name):
    # Origins in the gravel and the grass, mostly heading along the track.
    tr = load_track(name)
    rng = np.random.default_rng(31)
    poses = []
    for i in range(40):
        side = rng.choice([-1.0, 1.0])
        off = side * rng.uniform(tr.kerb_edge + 0.05, tr.grass_edge - 0.05)
        dh = rng.normal(0.0, 0.1) if i % 4 else rng.uniform(-math.pi, math.pi)
        poses.append(pose_at(tr, rng.uniform(0.0, tr.length), off, dh))
    bad, hits = _compare_surface(tr, poses, rng, 0)
    assert not bad, bad[:5]
    assert hits[1] > 20 and hits[2] > 20, hits


@pytest.mark.parametrize("name", TRACKS[:1])
def test_debug_precision_bisects_the_surface_march(name):
    # Debug precision: the march's bracket is bisected 12 times (driver precision: whole metres).
    tr = load_track(name)
    rng = np.random.default_rng(5)
    poses = random_poses(tr, rng, 20)
    bad, hits = _compare_surface(tr, poses, rng, 1, n_rays=4)
    assert not bad, bad[:5]
    assert hits[1:].min() > 5, hits


def test_origin_on_kerb_and_gravel_read_zero():
    tr = load_track("oval")
    cars_f, cars_i, flags = make_world(1, 2)
    # (away from the pit exit at 86 m, where PaddockJS marches in whole metres)
    place(cars_f, 0, 0, *pose_at(tr, 300.0, 8.2, 0.0))     # kerb: 7.5 < 8.2 <= 9 m
    place(cars_f, 0, 1, *pose_at(tr, 400.0, -15.0, 0.0))   # gravel: 9 < 15 <= 21 m
    out = sense(tr, cars_f, cars_i, flags, [0.0, 90.0, -90.0], [120.0], channels=M.CH_ALL)
    d, hit, kind = out["ray_dist"][0], out["ray_hit"][0], out["ray_kind"][0]
    # kerb origin: kerb 0 on the rays across the track; outside the white line, so the road edge is an
    # entry. Along the straight the ray meets no kerb outer line, so PaddockJS's surface rays take its
    # straight edge, which reads a miss on both surface channels, the kerb too.
    assert np.all(d[0, 1:, M.RAY_KERB] == 0.0) and np.all(hit[0, 1:, M.RAY_KERB] == 1)
    assert np.all(d[0, 0, 1:3] == 120.0) and np.all(hit[0, 0, 1:3] == 0)
    # +90 deg (right, away from the track): gravel starts at 9 - 8.2 = 0.8 m
    assert d[0, 1, M.RAY_ILLEGAL] == pytest.approx(0.8, abs=TOLERANCE + 0.01)
    # -90 deg (left, toward the track): the white line is 8.2 - 7.5 = 0.7 m away, kind entry
    assert d[0, 2, M.RAY_ROAD_EDGE] == pytest.approx(0.7, abs=TOLERANCE + 0.01)
    assert kind[0, 2] == M.KIND_ENTRY
    # gravel origin: illegal 0; the kerb (toward the track, +90 deg on the left side) at 6 m
    assert np.all(d[1, 1:, M.RAY_ILLEGAL] == 0.0) and np.all(hit[1, 1:, M.RAY_ILLEGAL] == 1)
    assert d[1, 1, M.RAY_KERB] == pytest.approx(15.0 - 9.0, abs=TOLERANCE + 0.01)
    assert d[1, 1, M.RAY_ROAD_EDGE] == pytest.approx(15.0 - 7.5, abs=TOLERANCE + 0.01)


def test_straight_geometry_and_kinds():
    # On the oval's straight (curvature 0) a car on the centreline sees the white line at
    # 7.5 / sin(angle) and gravel at 9 / sin(angle); kind exit; a ray along the straight misses.
    tr = load_track("oval")
    s = 0.0
    x, y, h, k = point_at(tr, s)
    assert abs(k) < 1e-9
    cars_f, cars_i, flags = make_world(1, 1)
    place(cars_f, 0, 0, x, y, h)
    out = sense(tr, cars_f, cars_i, flags, [0.0, 30.0, -60.0, 90.0], [120.0])
    d = out["ray_dist"][0, 0]
    for r, a in enumerate([30.0, -60.0, 90.0], start=1):
        sa = abs(math.sin(math.radians(a)))
        assert 0.0 <= d[r, M.RAY_ROAD_EDGE] - 7.5 / sa <= TOLERANCE + 1e-3
        assert 0.0 <= d[r, M.RAY_KERB] - 7.5 / sa <= TOLERANCE + 1e-3
        assert 0.0 <= d[r, M.RAY_ILLEGAL] - 9.0 / sa <= TOLERANCE + 1e-3
        assert out["ray_kind"][0, 0, r] == M.KIND_EXIT
    assert np.all(d[0, :3] == 120.0) and np.all(out["ray_hit"][0, 0, 0, :3] == 0)
    assert out["ray_kind"][0, 0, 0] == M.KIND_MISS


def test_only_requested_channels():
    tr = load_track("oval")
    cars_f, cars_i, flags = make_world(1, 2)
    place(cars_f, 0, 0, *pose_at(tr, 300.0, 0.0, 0.0))
    place(cars_f, 0, 1, *pose_at(tr, 300.0 + 20.0, 0.0, 0.0))
    full = sense(tr, cars_f, cars_i, flags, [0.0, 90.0], [120.0])
    car = sense(tr, cars_f, cars_i, flags, [0.0, 90.0], [120.0], channels=M.CH_CAR)
    kerb = sense(tr, cars_f, cars_i, flags, [0.0, 90.0], [120.0], channels=M.CH_KERB)
    # car-only: surface channels read misses, the car hit is the full config's
    assert np.all(car["ray_dist"][0, 0, :, :3] == 120.0) and np.all(car["ray_hit"][0, 0, :, :3] == 0)
    assert np.all(car["ray_kind"] == 0)
    assert car["ray_dist"][0, 0, 0, 3] == full["ray_dist"][0, 0, 0, 3] == pytest.approx(20.0 - HALF_L, abs=1e-3)
    # kerb-only: the kerb reading (white line 7.5 m to the right) is the full config's; road edge and
    # car read misses
    assert 0.0 <= kerb["ray_dist"][0, 0, 1, 1] - 7.5 <= TOLERANCE + 1e-3
    assert kerb["ray_dist"][0, 0, 1, 1] == pytest.approx(full["ray_dist"][0, 0, 1, 1], abs=TOLERANCE)
    assert kerb["ray_hit"][0, 0, 1, 0] == 0 and kerb["ray_kind"][0, 0, 1] == 0
    assert kerb["ray_hit"][0, 0, 0, 3] == 0 and kerb["ray_car"][0, 0, 0] == -1


# ------------------------------------------------------------------------------------------------
# Car channel
# ------------------------------------------------------------------------------------------------
def test_car_channel_analytic():
    tr = load_track("oval")
    cars_f, cars_i, flags = make_world(1, 6)
    x, y, h = 1000.0, 1000.0, 0.3       # geometry only: surfaces are not requested
    ux, uy = math.cos(h), math.sin(h)
    place(cars_f, 0, 0, x, y, h, v=50.0)
    place(cars_f, 0, 1, x + 30 * ux, y + 30 * uy, h, v=55.0)              # ahead, same heading
    place(cars_f, 0, 2, x - 12 * ux, y - 12 * uy, h + math.pi / 2, v=40)  # behind, crosswise
    place(cars_f, 0, 3, x + 10 * ux, y + 10 * uy, h, v=99.0)              # nearer, but hidden
    flags[0, 3] = ALL_FLAGS & ~L.FLAG_RAY_VISIBLE
    place(cars_f, 0, 4, x + 60 * ux, y + 60 * uy, h, v=10.0)              # farther, behind car 1
    place(cars_f, 0, 5, x + 5 * ux, y + 5 * uy, h, v=10.0)                # nearest, but inactive
    cars_i[0, 5, L.I_ACTIVE] = 0
    out = sense(tr, cars_f, cars_i, flags, [0.0, 180.0, 90.0], [120.0], channels=M.CH_CAR)
    d, hit, car = out["ray_dist"][0, 0, :, 3], out["ray_hit"][0, 0, :, 3], out["ray_car"][0, 0]
    # ahead: the gap to car 1's rear face = 30 - 4.65 / 2; relative speed 55 - 50
    assert d[0] == pytest.approx(30.0 - HALF_L, abs=1e-4) and car[0] == 1 and hit[0] == 1
    assert out["ray_rel_speed"][0, 0, 0] == pytest.approx(5.0)
    # behind, car 2 is crosswise: its side face is 12 - 1.24 / 2 away
    assert d[1] == pytest.approx(12.0 - HALF_W, abs=1e-4) and car[1] == 2
    assert out["ray_rel_speed"][0, 0, 1] == pytest.approx(-10.0)
    # sideways: nothing; miss = length, car -1, relative speed 0
    assert d[2] == 120.0 and hit[2] == 0 and car[2] == -1 and out["ray_rel_speed"][0, 0, 2] == 0.0
    # car 4 sees car 1 (phantom-like profile: visible without collision) when looking back
    flags[0, 1] = L.FLAG_RAY_VISIBLE
    out = sense(tr, cars_f, cars_i, flags, [180.0], [120.0], channels=M.CH_CAR)
    assert out["ray_car"][0, 4, 0] == 1
    # rays start at the centre: 30 m between centres minus car 1's half length to its front face
    assert out["ray_dist"][0, 4, 0, 3] == pytest.approx(30.0 - HALF_L, abs=1e-4)
    # hiding car 1 too: car 4's backward ray now hits the next visible car, car 0 (hidden 3 skipped)
    flags[0, 1] = 0
    out = sense(tr, cars_f, cars_i, flags, [180.0], [120.0], channels=M.CH_CAR)
    assert out["ray_car"][0, 4, 0] == 0
    assert out["ray_dist"][0, 4, 0, 3] == pytest.approx(60.0 - HALF_L, abs=1e-4)


def test_car_channel_origin_inside_other_car_reads_zero():
    tr = load_track("oval")
    cars_f, cars_i, flags = make_world(1, 2)
    place(cars_f, 0, 0, 500.0, 500.0, 0.0)
    place(cars_f, 0, 1, 501.0, 500.2, 0.4)
    out = sense(tr, cars_f, cars_i, flags, [0.0, 90.0, 180.0], [50.0], channels=M.CH_CAR)
    assert np.all(out["ray_dist"][0, 0, :, 3] == 0.0) and np.all(out["ray_car"][0, 0] == 1)


def _box_contains(px, py, tx, ty, th):
    rx, ry = px - tx, py - ty
    u = rx * math.cos(th) + ry * math.sin(th)
    v = -rx * math.sin(th) + ry * math.cos(th)
    return (np.abs(u) <= HALF_L) & (np.abs(v) <= HALF_W)


def test_car_channel_matches_sampled_boxes():
    # Random packs: sample each ray at 1 cm and test the points against every visible body.
    tr = load_track("oval")
    rng = np.random.default_rng(3)
    C = 12
    cars_f, cars_i, flags = make_world(2, C)
    for w in range(2):
        for c in range(C):
            place(cars_f, w, c, rng.uniform(0, 40), rng.uniform(0, 20), rng.uniform(-math.pi, math.pi),
                  v=rng.uniform(0, 80))
        flags[w, rng.choice(C, 3, replace=False)] = ALL_FLAGS & ~L.FLAG_RAY_VISIBLE
    angles = np.arange(-180.0, 180.0, 15.0)
    out = sense(tr, cars_f, cars_i, flags, angles, [30.0], channels=M.CH_CAR)
    t = np.arange(0, 3001) * 0.01
    n_hits = 0
    for w in range(2):
        for c in range(C):
            x, y, h = cars_f[w, c, [L.F_X, L.F_Y, L.F_HEADING]]
            for r, a in enumerate(angles):
                px = x + t * math.cos(h + math.radians(a))
                py = y + t * math.sin(h + math.radians(a))
                best, best_j = 30.0, -1
                for j in range(C):
                    if j == c or not flags[w, j] & L.FLAG_RAY_VISIBLE:
                        continue
                    inside = _box_contains(px, py, *cars_f[w, j, [L.F_X, L.F_Y, L.F_HEADING]])
                    if inside.any():
                        first = t[np.argmax(inside)]
                        if first < best:
                            best, best_j = first, j
                got = out["ray_dist"][w, c, r, 3]
                assert out["ray_car"][w, c, r] == best_j
                # the first inside sample is at most 1 cm past the exact entry
                assert -1e-4 <= best - got <= 0.0101, (w, c, r, best, got)
                n_hits += best_j >= 0
    assert n_hits > 100   # dense packs: plenty of hits among 576 rays


# ------------------------------------------------------------------------------------------------
# Radar, lookahead, destroyed cars, masks
# ------------------------------------------------------------------------------------------------
def test_radar_matches_numpy_oracle():
    tr = load_track("oval")
    rng = np.random.default_rng(9)
    W, C, K, radius = 3, 16, 5, 60.0
    cars_f, cars_i, flags = make_world(W, C)
    for w in range(W):
        for c in range(C):
            place(cars_f, w, c, rng.uniform(0, 100), rng.uniform(0, 60), rng.uniform(-math.pi, math.pi),
                  v=rng.uniform(0, 80))
            cars_f[w, c, L.F_VX] += rng.normal(0, 3)   # simulator mode: velocity off the heading
            cars_i[w, c, L.I_LAP] = rng.integers(1, 3)
        flags[w, rng.choice(C, 3, replace=False)] = ALL_FLAGS & ~L.FLAG_RADAR_VISIBLE
        cars_i[w, rng.choice(C, 2, replace=False), L.I_ACTIVE] = 0
    # exact tie: car 1 and car 2 of world 0 at the same distance from car 0 -> lower slot first
    place(cars_f, 0, 0, 50.0, 30.0, 0.0, v=10.0)
    place(cars_f, 0, 1, 53.0, 34.0, 1.0, v=10.0)
    place(cars_f, 0, 2, 47.0, 26.0, 1.0, v=10.0)
    cars_i[0, :3, L.I_ACTIVE] = 1
    flags[0, :3] = ALL_FLAGS
    out = sense(tr, cars_f, cars_i, flags, [0.0], [10.0], channels=M.CH_CAR, radar_k=K, radius=radius)
    n_present = 0
    for w in range(W):
        for c in range(C):
            me = cars_f[w, c]
            cand = [j for j in range(C) if j != c and cars_i[w, j, L.I_ACTIVE]
                    and flags[w, j] & L.FLAG_RADAR_VISIBLE]
            d = {j: math.hypot(cars_f[w, j, L.F_X] - me[L.F_X], cars_f[w, j, L.F_Y] - me[L.F_Y])
                 for j in cand}
            near = sorted((j for j in cand if d[j] <= radius), key=lambda j: (d[j], j))[:K]
            assert list(out["radar_slot"][w, c, :len(near)]) == near
            assert np.all(out["radar_slot"][w, c, len(near):] == -1)
            ch, sh = math.cos(me[L.F_HEADING]), math.sin(me[L.F_HEADING])
            for s, j in enumerate(near):
                o = cars_f[w, j]
                rx, ry = o[L.F_X] - me[L.F_X], o[L.F_Y] - me[L.F_Y]
                vx, vy = o[L.F_VX] - me[L.F_VX], o[L.F_VY] - me[L.F_VY]
                fwd = rx * ch + ry * sh
                dh = (o[L.F_HEADING] - me[L.F_HEADING] + math.pi) % (2 * math.pi) - math.pi
                want = [fwd, -rx * sh + ry * ch, d[j], o[L.F_SPEED] - me[L.F_SPEED], dh, float(fwd > 0),
                        float(cars_i[w, j, L.I_LAP] == cars_i[w, c, L.I_LAP]), vx * ch + vy * sh,
                        -vx * sh + vy * ch, -(rx * vx + ry * vy) / d[j]]
                np.testing.assert_allclose(out["radar"][w, c, s], want, rtol=1e-5, atol=1e-4)
                n_present += 1
            for s in range(len(near), K):
                want = np.zeros(S.N_RADAR_FIELDS)
                want[S.RADAR_DISTANCE] = radius
                np.testing.assert_array_equal(out["radar"][w, c, s], want)
    assert n_present > 60
    assert list(out["radar_slot"][0, 0, :2]) == [1, 2]


def test_radar_radius_is_per_slot():
    """Issue 14, defect 6: each car senses within its own radius (an array over slots)."""
    tr = load_track("oval")
    cars_f, cars_i, flags = make_world(1, 4)
    for c in range(4):
        place(cars_f, 0, c, 40.0 * c, 0.0, 0.0)
    radii = np.array([30.0, 90.0, 150.0, 45.0])
    out = sense(tr, cars_f, cars_i, flags, [0.0], [10.0], channels=M.CH_CAR, radar_k=3, radius=radii)
    slots = out["radar_slot"][0]
    assert list(slots[0]) == [-1, -1, -1]           # nearest car 40 m away, radius 30 m
    assert list(slots[1]) == [0, 2, 3]               # 40, 40, 80 m within 90 m
    assert list(slots[2]) == [1, 3, 0]               # 40, 40, 80 m within 150 m
    assert list(slots[3]) == [2, -1, -1]             # 40 m within 45 m, the next at 80 m is not
    for c in range(4):                               # an empty slot reads the car's own radius
        empty = out["radar"][0, c, slots[c] < 0, S.RADAR_DISTANCE]
        assert np.all(empty == radii[c])


def test_closing_speed_sign():
    # A car 20 m ahead, 5 m/s slower: we approach it, closing speed +5 m/s.
    tr = load_track("oval")
    cars_f, cars_i, flags = make_world(1, 2)
    place(cars_f, 0, 0, 0.0, 0.0, 0.0, v=30.0)
    place(cars_f, 0, 1, 20.0, 0.0, 0.0, v=25.0)
    out = sense(tr, cars_f, cars_i, flags, [0.0], [10.0], channels=M.CH_CAR, radar_k=2)
    f = out["radar"][0, 0, 0]
    assert f[S.RADAR_CLOSING] == pytest.approx(5.0) and f[S.RADAR_VEL_FORWARD] == pytest.approx(-5.0)
    assert f[S.RADAR_AHEAD] == 1.0 and out["radar"][0, 1, 0, S.RADAR_AHEAD] == 0.0


@pytest.mark.parametrize("name", TRACKS)
def test_lookahead_reads_paddockjs_samples(name):
    """PaddockJS's lookahead (``buildTrackLookahead``): from the lap distance of the car's nearest
    centreline sample (its progress), the centreline's heading delta d m further and PaddockJS's sample
    curvature there (``recalculateSampleGeometry``'s chord angle, interpolated as ``pointAt``), against
    a brute-force oracle on the sample positions; cars off the centreline read their nearest sample's."""
    tr = load_track(name)
    rng = np.random.default_rng(2)
    C = 10
    cars_f, cars_i, flags = make_world(1, C)
    progress = rng.uniform(0, tr.length, C)
    progress[0] = tr.length - 30.0    # lookahead across the finish line
    offsets = rng.uniform(-6.0, 6.0, C)
    for c in range(C):
        x, y, h = pose_at(tr, progress[c], offsets[c], 0.0)
        place(cars_f, 0, c, x, y, h, progress=progress[c])
        cars_i[0, c, L.I_SEG_HINT] = locate(tr, x, y, -1)[0]    # the step keeps it (vehicle.wheels)
    look = (20.0, 50.0, 100.0, 150.0)
    out = sense(tr, cars_f, cars_i, flags, [0.0], [10.0], channels=M.CH_CAR, look=look)
    for c in range(C):
        j = nearest_sample_index(tr, cars_f[0, c, L.F_X], cars_f[0, c, L.F_Y])
        for q, (k, dh) in enumerate(oracle_lookahead(tr, tr.cs[j], look)):
            assert out["look"][0, c, q, 0] == pytest.approx(k, abs=1e-7)
            assert out["look"][0, c, q, 1] == pytest.approx(dh, abs=1e-6)


def test_destroyed_car_reads_misses_and_others_unaffected():
    tr = load_track("technical")
    cars_f, cars_i, flags = make_world(1, 3)
    place(cars_f, 0, 0, *pose_at(tr, 300.0, 50.0, 0.0))     # beyond the barrier (41 m)
    place(cars_f, 0, 1, *pose_at(tr, 310.0, 0.0, 0.0))
    place(cars_f, 0, 2, *pose_at(tr, 300.0, 40.0, math.pi / 2))
    cars_i[0, 0, L.I_DESTROYED] = 1
    angles = S.FRONT_HEAVY_ANGLES_DEG
    out = sense(tr, cars_f, cars_i, flags, angles, [80.0], fill=7)
    assert np.all(out["ray_dist"][0, 0] == 80.0) and np.all(out["ray_hit"][0, 0] == 0)
    assert np.all(out["ray_kind"][0, 0] == 0) and np.all(out["ray_car"][0, 0] == -1)
    assert np.all(out["ray_rel_speed"][0, 0] == 0.0)
    # the others still sense (car 2 sits 10 m beside car 0; destroyed cars stay visible targets)
    assert out["ray_hit"][0, 1].any()
    assert out["radar_slot"][0, 0, 0] == 2


def test_mask_ray_count_and_layout_constants():
    tr = load_track("oval")
    cars_f, cars_i, flags = make_world(2, 3)
    for w in range(2):
        for c in range(3):
            place(cars_f, w, c, *pose_at(tr, 100.0 + 30 * c, 0.0, 0.0))
    mask = np.zeros((2, 3), np.int8)
    mask[1, 2] = 1
    out = sense(tr, cars_f, cars_i, flags, S.DEFAULT_ANGLES_DEG, [S.DEFAULT_RAY_LENGTH], mask=mask,
                ray_count=[8, 8, 5], fill=7)
    # unmasked rows untouched
    assert np.all(out["ray_dist"][0] == 7) and np.all(out["ray_dist"][1, :2] == 7)
    assert np.all(out["radar_slot"][0] == 7) and np.all(out["look"][1, 0] == 7)
    # rays past ray_count read zeros (car -1)
    assert np.all(out["ray_dist"][1, 2, 5:] == 0.0) and np.all(out["ray_car"][1, 2, 5:] == -1)
    assert np.all(out["ray_dist"][1, 2, :5, :3] > 0.0)
    assert S.DEFAULT_ANGLES_DEG == (-135.0, -60.0, -20.0, 0.0, 20.0, 60.0, 135.0, 180.0)
    assert S.DEFAULT_RAY_LENGTH == 120.0
    fh = S.FRONT_HEAVY_ANGLES_DEG
    assert 0.0 in fh and 180.0 in fh and all(-a in fh for a in fh if abs(a) < 180.0)
    assert S.N_RADAR_FIELDS == S.RADAR_CLOSING + 1 == 10


def test_each_cars_senses_do_not_depend_on_which_other_cars_are_sensed():
    """``sense_worlds`` sweeps the masked cars in track order (by segment hint), across worlds: a car's
    outputs must be the same bits whether it is sensed alone or with every car of every world."""
    tr = load_track("grand-prix")
    rng = np.random.default_rng(4)
    W, C = 3, 6
    cars_f, cars_i, flags = make_world(W, C)
    for w in range(W):
        for c in range(C):
            s = rng.uniform(0.0, tr.length)
            place(cars_f, w, c, *pose_at(tr, s, rng.uniform(-12.0, 12.0), rng.uniform(-0.5, 0.5)), v=30.0,
                  progress=s)
            cars_i[w, c, L.I_SEG_HINT] = rng.integers(0, tr.cx.shape[0] - 1)
    together = sense(tr, cars_f, cars_i, flags, S.FRONT_HEAVY_ANGLES_DEG, [120.0])
    for w, c in [(0, 0), (1, 3), (2, 5), (2, 1)]:
        mask = np.zeros((W, C), np.int8)
        mask[w, c] = 1
        alone = sense(tr, cars_f, cars_i, flags, S.FRONT_HEAVY_ANGLES_DEG, [120.0], mask=mask)
        for name, arr in alone.items():
            np.testing.assert_array_equal(arr[w, c], together[name][w, c], err_msg=f"{name} of car {w}/{c}")


def test_boundary_distances():
    tr = load_track("oval")
    cars_f, _, _ = make_world(1, 2)
    cars_f[0, 0, L.F_OFFSET] = 2.0      # 2 m right of the centreline
    cars_f[0, 1, L.F_OFFSET] = -9.5     # beyond the left white line
    assert S.boundary_distances(tr, cars_f, 0, 0) == pytest.approx((9.5, 5.5))
    assert S.boundary_distances(tr, cars_f, 0, 1) == pytest.approx((-2.0, 17.0))
