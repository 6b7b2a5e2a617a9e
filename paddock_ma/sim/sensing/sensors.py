"""Sensors of the policy-controlled cars: rays per channel, nearby-car radar, track lookahead.

One call, ``sense_worlds``, fills preallocated arrays for every car of every world whose
``sense_mask`` is set (``sense_cars`` does a list of cars); ``sense_worlds_parallel`` is the same call
with the worlds split over numba threads, bit-identical for any thread count. Semantics follow
PaddockJS 2.0.1 (spec section 6.6) in metres:

* Rays start at the car centre, direction heading + angle (+ = right). Channels (bit, index):
  road_edge (1, 0): the white line; ``ray_kind`` 1 = exit (origin inside), 2 = entry (origin outside).
  kerb (2, 1): the first point on a kerb, 0 when the origin is on one. illegal_surface (4, 2): the
  first point on gravel or grass, 0 when the origin is on one. car (8, 3): nearest other car body hit
  (4.65 x 1.24 m box, distance max(0, tmin); ``sensing.car_rays``). A miss reads the ray's length with
  hit 0. There is no barrier channel.
* The three track channels are measured as PaddockJS 2.0.0 measures them (``sensing.road_edge``):
  the nearest intersection with its edge lines (white lines, kerbs' outer lines; ``sensing.edge_lines``),
  else a straight edge on nearly straight segments, else, and within 55 m of the pit entry or exit, a
  march in whole metres (bisected 12 times at debug precision), each sample classified by the nearest
  centreline segment around the car's progress (``sensing.ray_origin``: the car's hint, state and paths,
  once per car). A car in the pit lane marches, pit surfaces counting
  as asphalt; a batch-training car's rays (``FLAG_MAIN_TRACK_RAYS``) skip the pit window and query
  nearest samples.
* Radar: the ``radar_k`` nearest other active radar-visible cars within the sensing car's own
  ``radar_radius[c]`` m (a per-slot array, so drivers may have different radar radii).
* Lookahead: curvature (PaddockJS's per-sample measure, ``track.geometry.sample_curvature_at``) and
  wrapped heading delta of the centreline ahead of the car's progress.

The arrays travel grouped: ``SenseTable`` (what each car slot senses), ``SenseBuffers`` (what sensing
writes), ``SenseScratch`` (``sense_cars``' scratch).
"""

import math
from collections import namedtuple

import numpy as np
from numba import prange

from ..core.jit import allocating_kernel, kernel
from ..core.layout import (
    F_HEADING, F_OFFSET, F_SPEED, F_VX, F_VY, F_X, F_Y, FLAG_RADAR_VISIBLE, I_ACTIVE, I_DESTROYED, I_LAP, I_SEG_HINT,
)
from ..core.trig import wrap_angle
from ..track.geometry import edge_distances, heading_curvature_at, sample_curvature_at
from ..track.nearest_sample import nearest_sample
from .car_rays import car_channel, ray_targets
from .march import CH_CAR, CH_ILLEGAL, CH_KERB, CH_ROAD_EDGE, N_RAY_CHANNELS
from .ray_origin import ray_origin, ray_track
from .road_edge import track_rays

# Radar fields: last axis of ``radar``.
RADAR_FORWARD = 0     # m, other centre ahead of the sensing car (its frame)
RADAR_RIGHT = 1       # m, to the right
RADAR_DISTANCE = 2    # m, Euclidean distance between centres (empty slot: the radius)
RADAR_SPEED = 3       # m/s, other speed minus own speed (scalars)
RADAR_HEADING = 4     # rad, other heading minus own, wrapped
RADAR_AHEAD = 5       # 1 when forward > 0
RADAR_SAME_LAP = 6    # 1 when both cars are on the same lap
RADAR_VEL_FORWARD = 7  # m/s, relative world velocity on the own forward axis
RADAR_VEL_RIGHT = 8    # m/s, on the own right axis
RADAR_CLOSING = 9      # m/s, -(d/dt distance): positive when approaching
N_RADAR_FIELDS = 10

# PaddockJS 2.0.0's ray layout presets (degrees, + = right; lengths m). ``compact`` (the default):
# 8 rays of the configured length (120 m unless set).
DEFAULT_ANGLES_DEG = (-135.0, -60.0, -20.0, 0.0, 20.0, 60.0, 135.0, 180.0)
DEFAULT_RAY_LENGTH = 120.0
# ``driver-front-heavy``: 16 rays, 240 m within 70 degrees of ahead, 90 m to 100 degrees, 60 m beyond.
FRONT_HEAVY_ANGLES_DEG = (-140.0, -100.0, -70.0, -50.0, -35.0, -20.0, -10.0, 0.0, 10.0, 20.0, 35.0, 50.0,
                          70.0, 100.0, 140.0, 180.0)
FRONT_HEAVY_LENGTHS = tuple(240.0 if abs(a) <= 70 else 90.0 if abs(a) <= 100 else 60.0 for a in FRONT_HEAVY_ANGLES_DEG)
# ``lidar-lite``: 25 rays from -120 to 120 degrees every 10, 260 m within 70 degrees of ahead, else 100 m.
LIDAR_LITE_ANGLES_DEG = tuple(float(a) for a in range(-120, 121, 10))
LIDAR_LITE_LENGTHS = tuple(260.0 if abs(a) <= 70 else 100.0 for a in LIDAR_LITE_ANGLES_DEG)

# What sense_worlds reads per car slot: ray_dir float64[C, R, 2] (cos and sin of each ray's angle relative
# to the heading, + right; ``ray_directions``), ray_length float64[C, R] m, ray_count int32[C] rays used,
# channel_mask int32[C] (CH_* bits), radar_radius float64[C] m (each driver's nearby_cars.radius_meters),
# and lookahead_d float64[Q] m ahead (every slot's).
SenseTable = namedtuple("SenseTable", ["ray_dir", "ray_length", "ray_count", "channel_mask", "radar_radius",
                                       "lookahead_d"])
# What it writes, per car slot (``sense_worlds``): the rays (ray_dist, ray_hit, ray_kind, ray_car,
# ray_rel_speed), the radar (radar, radar_slot) and the lookahead (look).
SenseBuffers = namedtuple("SenseBuffers", ["ray_dist", "ray_hit", "ray_kind", "ray_car", "ray_rel_speed", "radar",
                                           "radar_slot", "look"])
# sense_cars' scratch: cand int64[C] (ray targets near the sensing car), near_j int64[K] / near_d
# float64[K] (radar: slots sorted by distance).
SenseScratch = namedtuple("SenseScratch", ["cand", "near_j", "near_d"])


def ray_directions(ray_angle):
    """float64[C, R, 2]: cos and sin of each ray's angle (rad, relative to the heading), the form
    ``sense_worlds`` takes a ray layout in (one rotation by the heading per ray, no trigonometry)."""
    angle = np.asarray(ray_angle, dtype=np.float64)
    return np.ascontiguousarray(np.stack([np.cos(angle), np.sin(angle)], axis=-1))


@kernel(inline="always")
def _clear_rays(ray_length, out, w, c, nr):
    """Car (w, c)'s ray rows to their miss values: the first ``nr`` rays read their length (ray_length
    float64[C, R] m) with no hit on every channel, the rays past them zeros; no kind, no car (-1),
    relative speed 0."""
    for r in range(ray_length.shape[1]):
        miss = ray_length[c, r] if r < nr else 0.0
        for ch in range(N_RAY_CHANNELS):
            out.ray_dist[w, c, r, ch] = miss
            out.ray_hit[w, c, r, ch] = 0
        out.ray_kind[w, c, r] = 0
        out.ray_car[w, c, r] = -1
        out.ray_rel_speed[w, c, r] = 0.0


@kernel(inline="always")
def _longest_ray(ray_length, c, nr):
    """The longest of slot c's first ``nr`` rays (m; 0 for none)."""
    max_len = 0.0
    for r in range(nr):
        max_len = max(max_len, ray_length[c, r])
    return max_len


@kernel(inline="always")
def _nearest_cars(cars_f, cars_i, car_flags, w, c, radius, kmax, near_j, near_d):
    """The at most ``kmax`` nearest other active radar-visible cars (FLAG_RADAR_VISIBLE) within ``radius`` m
    of car (w, c), nearest first, into near_j (slots) and near_d (m); returns how many."""
    ox = cars_f[w, c, F_X]
    oy = cars_f[w, c, F_Y]
    n_near = 0
    r2max = radius * radius
    for j in range(cars_f.shape[1]):
        if j == c or cars_i[w, j, I_ACTIVE] == 0 or (car_flags[w, j] & FLAG_RADAR_VISIBLE) == 0:
            continue
        ddx = cars_f[w, j, F_X] - ox
        ddy = cars_f[w, j, F_Y] - oy
        d2 = ddx * ddx + ddy * ddy
        if d2 > r2max:
            continue
        d = math.sqrt(d2)
        if n_near == kmax and (kmax == 0 or d >= near_d[kmax - 1]):
            continue
        # insertion after every entry <= d: ties keep the lower slot first
        p = min(n_near, kmax - 1)
        while p > 0 and near_d[p - 1] > d:
            near_d[p] = near_d[p - 1]
            near_j[p] = near_j[p - 1]
            p -= 1
        near_d[p] = d
        near_j[p] = j
        if n_near < kmax:
            n_near += 1
    return n_near


@kernel(inline="always")
def _radar_slots(cars_f, cars_i, w, c, radius, n_near, ch_, sh_, scratch, out):
    """Car (w, c)'s radar rows (every slot of the K axis): slot s < n_near the s-th of scratch's nearest
    cars (RADAR_* fields in the car's frame, heading cos / sin (ch_, sh_)); the others empty (fields 0,
    distance the radius ``radius`` m, slot -1)."""
    ox = cars_f[w, c, F_X]
    oy = cars_f[w, c, F_Y]
    ovx = cars_f[w, c, F_VX]
    ovy = cars_f[w, c, F_VY]
    for s in range(out.radar.shape[2]):
        f = out.radar[w, c, s]
        for i in range(N_RADAR_FIELDS):
            f[i] = 0.0
        if s >= n_near:
            f[RADAR_DISTANCE] = radius
            out.radar_slot[w, c, s] = -1
            continue
        j = scratch.near_j[s]
        d = scratch.near_d[s]
        ddx = cars_f[w, j, F_X] - ox
        ddy = cars_f[w, j, F_Y] - oy
        fwd = ddx * ch_ + ddy * sh_
        rvx = cars_f[w, j, F_VX] - ovx
        rvy = cars_f[w, j, F_VY] - ovy
        f[RADAR_FORWARD] = fwd
        f[RADAR_RIGHT] = -ddx * sh_ + ddy * ch_
        f[RADAR_DISTANCE] = d
        f[RADAR_SPEED] = cars_f[w, j, F_SPEED] - cars_f[w, c, F_SPEED]
        f[RADAR_HEADING] = wrap_angle(cars_f[w, j, F_HEADING] - cars_f[w, c, F_HEADING])
        f[RADAR_AHEAD] = 1.0 if fwd > 0.0 else 0.0
        f[RADAR_SAME_LAP] = 1.0 if cars_i[w, j, I_LAP] == cars_i[w, c, I_LAP] else 0.0
        f[RADAR_VEL_FORWARD] = rvx * ch_ + rvy * sh_
        f[RADAR_VEL_RIGHT] = -rvx * sh_ + rvy * ch_
        f[RADAR_CLOSING] = -(ddx * rvx + ddy * rvy) / d if d > 0.0 else 0.0
        out.radar_slot[w, c, s] = j


@kernel(inline="always")
def _lookahead(tr, cars_f, cars_i, w, c, lookahead_d, look):
    """Car (w, c)'s lookahead rows: at each distance of lookahead_d ahead of its progress (the lap distance
    of its nearest centreline sample, as PaddockJS), PaddockJS's curvature (its per-sample measure,
    unsigned, not our centreline's dh/ds) and the wrapped heading change."""
    prog = tr.cs[nearest_sample(tr.cx, tr.cy, cars_i[w, c, I_SEG_HINT], cars_f[w, c, F_X], cars_f[w, c, F_Y])]
    h0, k0 = heading_curvature_at(tr.cs, tr.ch, tr.ccurv, tr.length, prog)
    for q in range(lookahead_d.shape[0]):
        h1, k1 = heading_curvature_at(tr.cs, tr.ch, tr.ccurv, tr.length, prog + lookahead_d[q])
        look[w, c, q, 0] = sample_curvature_at(tr.cx, tr.cy, tr.cs, tr.ch, tr.length, prog + lookahead_d[q])
        look[w, c, q, 1] = wrap_angle(h1 - h0)


@kernel
def sense_cars(tr, geo, cars_f, cars_i, car_flags, table, debug_precision, radar_k, out, order, scratch):
    """Senses of the cars of ``order`` (int64 flat indices w * C + c), in that order: arguments as
    ``sense_worlds``, plus ``scratch`` (a SenseScratch). Cars are independent: any order gives the same
    results. A kernel (no reference counting), because ``ray_track`` holds ``pit_view``'s views of the
    track's arrays: an allocating caller would count them as its own references and release them when
    done. One loop with the car's work inside it, its stages inlined: a call per car (~40 arguments,
    several machine words per array) cost ~0.2 us a car."""
    rt = ray_track(tr, geo)
    n_cars = cars_f.shape[1]
    kmax = max(0, min(radar_k, out.radar.shape[2]))
    for q in range(order.shape[0]):
        w = order[q] // n_cars
        c = order[q] - w * n_cars
        oh = cars_f[w, c, F_HEADING]
        destroyed = cars_i[w, c, I_DESTROYED] != 0
        mask = table.channel_mask[c]
        nr = min(table.ray_count[c], table.ray_dir.shape[1])
        # the track channels as PaddockJS measures them (``sensing.road_edge``), from the car's ray origin
        track = mask & (CH_ROAD_EDGE | CH_KERB | CH_ILLEGAL) if not destroyed and nr > 0 else 0
        o = ray_origin(tr, rt, cars_i, car_flags, cars_f[w, c, F_X], cars_f[w, c, F_Y], w, c, track)
        # ---- rays (a destroyed car reads misses: PaddockJS's terminal placements do)
        cos_h = math.cos(oh)
        sin_h = math.sin(oh)
        n_cand = 0
        if (mask & CH_CAR) and not destroyed:
            n_cand = ray_targets(cars_f, cars_i, car_flags, w, c, _longest_ray(table.ray_length, c, nr), scratch.cand)
        _clear_rays(table.ray_length, out, w, c, nr)
        for r in range(0 if destroyed else nr):
            # direction heading + angle, by rotating the angle's cos / sin by the heading's
            ca = table.ray_dir[c, r, 0]
            sa = table.ray_dir[c, r, 1]
            dx = cos_h * ca - sin_h * sa
            dy = sin_h * ca + cos_h * sa
            length = table.ray_length[c, r]
            if track != 0:
                out.ray_kind[w, c, r] = track_rays(rt, o, dx, dy, length, debug_precision, out.ray_dist[w, c, r],
                                                   out.ray_hit[w, c, r])
            if n_cand > 0:
                car_channel(cars_f, w, c, r, dx, dy, length, scratch.cand, n_cand, out)
        # ---- radar (every slot of the K axis is written; slots past radar_k read empty)
        if out.radar.shape[2] > 0:
            radius = table.radar_radius[c]
            n_near = _nearest_cars(cars_f, cars_i, car_flags, w, c, radius, kmax, scratch.near_j, scratch.near_d)
            _radar_slots(cars_f, cars_i, w, c, radius, n_near, cos_h, sin_h, scratch, out)
        # ---- lookahead
        if table.lookahead_d.shape[0] > 0:
            _lookahead(tr, cars_f, cars_i, w, c, table.lookahead_d, out.look)


@allocating_kernel
def sense_worlds(tr, geo, cars_f, cars_i, car_flags, sense_mask, table, debug_precision, radar_k, out):
    """Rays, radar and lookahead of every car with ``sense_mask`` set, in every world.

    tr: TrackArrays; geo: ``sensor_geometry(tr)``, computed once per track by the caller (~25 us on
    the grand prix: a sizeable share of a one-world step if it were redone per call). cars_f
    float64[W, C, NF], cars_i int32[W, C, NI], car_flags int32[W, C]
    (targets need FLAG_RAY_VISIBLE / FLAG_RADAR_VISIBLE), sense_mask int8[W, C] (1 = compute).
    table: a SenseTable, the ray layout per car slot (ray_dir float64[C, R, 2], the cos and sin of each
    ray's angle relative to the heading, + right, ``ray_directions``; ray_length float64[C, R] m;
    ray_count int32[C] rays used; channel_mask int32[C] CH_* bits), radar_radius float64[C] m per car
    slot (each driver's nearby_cars.radius_meters) and lookahead_d float64[Q] m ahead.
    debug_precision: int, 1 = debug precision (1 cm), 0 = driver precision (0.1 m).
    radar_k: int slots filled (the rest of the K axis reads empty).

    Work: per masked car one origin classification (descending from its I_SEG_HINT), per ray ~4-8
    march samples and ~0.5 bisection steps (grand-prix env benchmark), the car channel against the
    ray-visible cars within reach, radar over the car slots, lookahead by interpolation.

    Outputs, ``out`` a SenseBuffers (written for masked cars only; other cars' rows are left untouched):
    ray_dist float32[W, C, R, 4] m per channel (road_edge, kerb, illegal_surface, car), miss = the
    ray's length; ray_hit int8[W, C, R, 4]; ray_kind int8[W, C, R] (0 miss, 1 exit, 2 entry);
    ray_car int32[W, C, R] slot of the car hit or -1; ray_rel_speed float32[W, C, R] m/s, hit car's
    speed minus own. Unrequested channels read as misses; rays past ray_count[c] are zeros (car -1).
    A destroyed car reads misses on every ray. radar float32[W, C, K, N_RADAR_FIELDS] (RADAR_*),
    radar_slot int32[W, C, K] (-1 empty; empty fields are 0 except distance = radius).
    look float32[W, C, Q, 2]: curvature (1/m, unsigned, ``sample_curvature_at``) at progress + d, heading
    delta (rad, wrapped).
    """
    kmax = max(0, min(radar_k, out.radar.shape[2]))
    scratch = SenseScratch(np.empty(cars_f.shape[1], dtype=np.int64), np.empty(kmax, dtype=np.int64),
                           np.empty(kmax, dtype=np.float64))
    # The cars in track order (by segment hint), not world by world: consecutive cars then march over
    # nearby track, whose arrays and branch history are still warm (~5 % of the sweep with 64 worlds
    # spread over the lap). Each car's senses depend on the state only, so the order changes no result.
    order = _track_order(cars_i, sense_mask, tr.cx.shape[0] - 1)
    sense_cars(tr, geo, cars_f, cars_i, car_flags, table, debug_precision, radar_k, out, order, scratch)


@allocating_kernel(parallel=True)
def sense_worlds_parallel(tr, geo, cars_f, cars_i, car_flags, sense_mask, table, debug_precision, radar_k, out):
    """``sense_worlds`` (same arguments, same outputs) with the worlds split over numba threads.

    ``prange`` over worlds: a world's masked cars are sensed by one thread, in slot order, through
    ``sense_cars`` (the one per-car body), with that world's own rows of scratch (order and cand
    int64[W, C], near_j int64[W, K], near_d float64[W, K]): no scratch is shared between threads,
    a thread writes only its worlds' output rows, and nothing is reduced across worlds. A car's
    senses depend on the state only, so the results are bit-identical to the serial kernel's for any
    thread count (``numba.set_num_threads``)."""
    n_worlds, n_cars = sense_mask.shape
    kmax = max(0, min(radar_k, out.radar.shape[2]))
    order = np.empty((n_worlds, n_cars), dtype=np.int64)
    cand = np.empty((n_worlds, n_cars), dtype=np.int64)
    near_j = np.empty((n_worlds, kmax), dtype=np.int64)
    near_d = np.empty((n_worlds, kmax), dtype=np.float64)
    for w in prange(n_worlds):
        n = 0
        for c in range(n_cars):
            if sense_mask[w, c] != 0:
                order[w, n] = w * n_cars + c
                n += 1
        if n > 0:
            sense_cars(tr, geo, cars_f, cars_i, car_flags, table, debug_precision, radar_k, out, order[w, :n],
                       SenseScratch(cand[w], near_j[w], near_d[w]))


_ORDER_BLOCK = 16     # segments per bucket of the sensing order (~40 m of track)


@kernel(inline="always")
def _bucket(hint, n_seg):
    """Bucket of a segment hint in ``_track_order``: 0 for no valid hint, then one per block."""
    return 0 if hint < 0 or hint >= n_seg else 1 + hint // _ORDER_BLOCK


@allocating_kernel
def _track_order(cars_i, sense_mask, n_seg):
    """Flat indices w * C + c of the cars with ``sense_mask`` set, bucketed by their segment hint in
    blocks of _ORDER_BLOCK segments (a counting sort: stable, O(cars + buckets)); a hint outside
    [0, n_seg) goes first."""
    n_worlds, n_cars = sense_mask.shape
    n_buckets = n_seg // _ORDER_BLOCK + 2
    start = np.zeros(n_buckets + 1, dtype=np.int64)
    for w in range(n_worlds):
        for c in range(n_cars):
            if sense_mask[w, c] != 0:
                start[_bucket(cars_i[w, c, I_SEG_HINT], n_seg) + 1] += 1
    for b in range(n_buckets):
        start[b + 1] += start[b]
    order = np.empty(start[n_buckets], dtype=np.int64)
    for w in range(n_worlds):
        for c in range(n_cars):
            if sense_mask[w, c] != 0:
                b = _bucket(cars_i[w, c, I_SEG_HINT], n_seg)
                order[start[b]] = w * n_cars + c
                start[b] += 1
    return order


@kernel
def boundary_distances(tr, cars_f, w, c):
    """Distances (m) from car c's centre to the white line on its left and right, along the track
    normal, from its offset ``F_OFFSET``: (left_m, right_m), negative beyond that line."""
    return edge_distances(tr, cars_f[w, c, F_OFFSET])
