"""Sensors of the policy-controlled cars: rays per channel, nearby-car radar, track lookahead.

One call, ``sense_worlds``, fills preallocated arrays for every car of every world whose
``sense_mask`` is set (``sense_cars`` does a list of cars); ``sense_worlds_parallel`` is the same call
with the worlds split over numba threads, bit-identical for any thread count. Semantics follow
PaddockJS 2.0.1 (spec section 6.6) in metres:

* Rays start at the car centre, direction heading + angle (+ = right). Channels (bit, index):
  road_edge (1, 0): the white line; ``ray_kind`` 1 = exit (origin inside), 2 = entry (origin outside).
  kerb (2, 1): the first point on a kerb, 0 when the origin is on one. illegal_surface (4, 2): the
  first point on gravel or grass, 0 when the origin is on one. car (8, 3): nearest other car body hit
  (4.65 x 1.24 m box, distance max(0, tmin)). A miss reads the ray's length with hit 0. There is no
  barrier channel.
* The three track channels are measured as PaddockJS 2.0.0 measures them (``sensing.road_edge``):
  the nearest intersection with its edge lines (white lines, kerbs' outer lines; ``sensing.edge_lines``),
  else a straight edge on nearly straight segments, else, and within 55 m of the pit entry or exit, a
  march in whole metres (bisected 12 times at debug precision), each sample classified by the nearest
  centreline segment around the car's progress. A car in the pit lane marches, pit surfaces counting
  as asphalt; a batch-training car's rays (``FLAG_MAIN_TRACK_RAYS``) skip the pit window and query
  nearest samples.
* Radar: the ``radar_k`` nearest other active radar-visible cars within the sensing car's own
  ``radar_radius[c]`` m (a per-slot array, so drivers may have different radar radii).
* Lookahead: curvature (PaddockJS's per-sample measure, ``track.geometry.sample_curvature_at``) and
  wrapped heading delta of the centreline ahead of the car's progress.
"""

import math

import numpy as np
from numba import prange

from ..core.jit import allocating_kernel, kernel
from ..core.layout import (
    F_HEADING, F_OFFSET, F_SPEED, F_VX, F_VY, F_X, F_Y, FLAG_MAIN_TRACK_RAYS, FLAG_RADAR_VISIBLE, FLAG_RAY_VISIBLE,
    I_ACTIVE, I_DESTROYED, I_IN_PIT_LANE, I_LAP, I_SEG_HINT,
)
from ..core.trig import wrap_angle
from ..track.geometry import edge_distances, heading_curvature_at, nearest_sample, sample_curvature_at

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

# The track channels are measured in sensing.road_edge, the geometry of their samples in sensing.geometry;
# the channels' names and bits are sensing.march's.
from .geometry import FAR, nearest_segment, pit_view  # noqa: E402
from .geometry import G_EDGE_AT, G_PX0, G_PX1, G_PY0, G_PY1  # noqa: E402
from ..track.surface import pit_override  # noqa: E402
from ..vehicle.wheels import pit_override_allowed  # noqa: E402
from .march import (  # noqa: E402
    BODY_RADIUS, CH_CAR, CH_ILLEGAL, CH_KERB, CH_ROAD_EDGE, HALF_L, HALF_W, N_RAY_CHANNELS, RAY_CAR,
)
from .road_edge import origin_paths, track_rays  # noqa: E402
from .track_state import HINT_MARGIN, hint_range, track_state  # noqa: E402


def ray_directions(ray_angle):
    """float64[C, R, 2]: cos and sin of each ray's angle (rad, relative to the heading), the form
    ``sense_worlds`` takes a ray layout in (one rotation by the heading per ray, no trigonometry)."""
    angle = np.asarray(ray_angle, dtype=np.float64)
    return np.ascontiguousarray(np.stack([np.cos(angle), np.sin(angle)], axis=-1))


@kernel
def _slab(ox, oy, dx, dy, length, tx, ty, tc, ts):
    """Ray (origin m, unit direction) against a car body centred at (tx, ty) with heading cos/sin
    (tc, ts): entry distance max(0, tmin) m, or -1 on a miss."""
    rx = ox - tx
    ry = oy - ty
    # origin and direction in the target's frame (u forward, v right)
    ou = rx * tc + ry * ts
    ov = -rx * ts + ry * tc
    du = dx * tc + dy * ts
    dv = -dx * ts + dy * tc
    tmin = -FAR
    tmax = FAR
    if abs(du) < 1e-12:
        if abs(ou) > HALF_L:
            return -1.0
    else:
        t1 = (-HALF_L - ou) / du
        t2 = (HALF_L - ou) / du
        tmin = max(tmin, min(t1, t2))
        tmax = min(tmax, max(t1, t2))
    if abs(dv) < 1e-12:
        if abs(ov) > HALF_W:
            return -1.0
    else:
        t1 = (-HALF_W - ov) / dv
        t2 = (HALF_W - ov) / dv
        tmin = max(tmin, min(t1, t2))
        tmax = min(tmax, max(t1, t2))
    if tmax < tmin or tmax < 0.0 or tmin > length:
        return -1.0
    return max(0.0, tmin)


@kernel
def sense_cars(tr, geo, cars_f, cars_i, car_flags, ray_dir, ray_length, ray_count, channel_mask, debug_precision,
               radar_k, radar_radius, lookahead_d, ray_dist, ray_hit, ray_kind, ray_car, ray_rel_speed, radar,
               radar_slot, look, order, cand, near_j, near_d):
    """Senses of the cars of ``order`` (int64 flat indices w * C + c), in that order: arguments as
    ``sense_worlds``, plus scratch: cand int64[C] (ray targets near the sensing car), near_j int64[K] /
    near_d float64[K] (radar: slots sorted by distance). Cars are independent: any order gives the same
    results. A kernel (no reference counting), because ``pit_view`` returns views of the track's
    arrays: an allocating caller would count them as its own references and release them when done.
    One loop with the car's work inside it: a call per car (~40 arguments, several machine words per
    array) cost ~0.2 us a car."""
    pv = pit_view(tr)
    cx = tr.cx
    cy = tr.cy
    gseg = tr.grid_seg
    cs = tr.cs
    chead = tr.ch
    ccurv = tr.ccurv
    cnx = tr.cnx
    cny = tr.cny
    length_l = tr.length
    hw = tr.half_width
    grass_edge = tr.grass_edge
    max_hint2 = (grass_edge + HINT_MARGIN) ** 2
    has_pit = tr.px.shape[0] > 0
    entry_s = tr.pit_entry_s
    exit_s = tr.pit_exit_s
    grid_at = int(geo[G_EDGE_AT])
    n_cars = cars_f.shape[1]
    n_rays_max = ray_dir.shape[1]
    kmax = max(0, min(radar_k, radar.shape[2]))
    for q in range(order.shape[0]):
        w = order[q] // n_cars
        c = order[q] - w * n_cars
        ox = cars_f[w, c, F_X]
        oy = cars_f[w, c, F_Y]
        oh = cars_f[w, c, F_HEADING]
        ospeed = cars_f[w, c, F_SPEED]
        destroyed = cars_i[w, c, I_DESTROYED] != 0
        mask = channel_mask[c]
        nr = min(ray_count[c], n_rays_max)
        # the track channels as PaddockJS measures them (``sensing.road_edge``): the car's progress (its
        # nearest sample's lap distance, from its nearest segment), candidate segments and own track
        # state, and the paths its rays may take
        sense_track = (mask & (CH_ROAD_EDGE | CH_KERB | CH_ILLEGAL)) != 0 and not destroyed and nr > 0
        road_edge = sense_track and (mask & CH_ROAD_EDGE) != 0
        want_kerb = sense_track and (mask & CH_KERB) != 0
        want_illegal = sense_track and (mask & CH_ILLEGAL) != 0
        seg0 = -1
        if sense_track:
            # the car's segment hint is a safe descent start: a wrong local minimum lies beyond the
            # trust radius and falls back to the raster
            hint = cars_i[w, c, I_SEG_HINT]
            if hint < 0 or hint >= cx.shape[0] - 1:
                hint = -1
            _, seg0 = nearest_segment(cx, cy, gseg, geo, ox, oy, hint)
        i0 = 0
        count = 0
        progress = 0.0
        oseg = -1
        ooff = 0.0
        include_pit = False
        pit_allowed = False
        main_only = (car_flags[w, c] & FLAG_MAIN_TRACK_RAYS) != 0    # batch-training: sample mode
        use_lines = False
        use_straight = False
        if sense_track:
            j0 = nearest_sample(cx, cy, seg0 if seg0 >= 0 else cars_i[w, c, I_SEG_HINT], ox, oy)
            progress = cs[j0]
            i0, count = hint_range(cs, length_l, progress)
            oseg, oalong, ooff = track_state(cx, cy, cs, cnx, cny, gseg, geo, i0, count, progress, max_hint2,
                                             main_only, ox, oy)
            # the track rays read the pit surfaces (PaddockJS's ``includePitLane``) for a car in the pit
            # lane (every wheel on a pit surface), or whose centre state (from its nearest sample) or
            # ray origin's state (``track_state``) its pit override puts in the pit lane
            include_pit = cars_i[w, c, I_IN_PIT_LANE] != 0
            pit_allowed = has_pit and pit_override_allowed(cars_i, w, c)
            if (not include_pit and pit_allowed and geo[G_PX0] <= ox <= geo[G_PX1]
                    and geo[G_PY0] <= oy <= geo[G_PY1]):
                c_off = (ox - cx[j0]) * cnx[j0] + (oy - cy[j0]) * cny[j0]
                # overridden at either offset: at the larger one
                include_pit = pit_override(pv, ox, oy, max(abs(c_off), abs(ooff)), tr.kerb_edge) >= 0
            use_lines, use_straight = origin_paths(cx, cy, chead, oseg, ooff, oalong, hw, grass_edge, has_pit,
                                                   entry_s, exit_s, length_l, include_pit, main_only)
        # ---- rays
        cos_h = math.cos(oh)
        sin_h = math.sin(oh)
        max_len = 0.0
        for r in range(nr):
            max_len = max(max_len, ray_length[c, r])
        n_cand = 0
        if (mask & CH_CAR) and not destroyed:
            reach = max_len + BODY_RADIUS
            for j in range(n_cars):
                if j == c or cars_i[w, j, I_ACTIVE] == 0 or (car_flags[w, j] & FLAG_RAY_VISIBLE) == 0:
                    continue
                ddx = cars_f[w, j, F_X] - ox
                ddy = cars_f[w, j, F_Y] - oy
                if ddx * ddx + ddy * ddy <= reach * reach:
                    cand[n_cand] = j
                    n_cand += 1
        for r in range(n_rays_max):
            if r >= nr:
                for ch in range(N_RAY_CHANNELS):
                    ray_dist[w, c, r, ch] = 0.0
                    ray_hit[w, c, r, ch] = 0
                ray_kind[w, c, r] = 0
                ray_car[w, c, r] = -1
                ray_rel_speed[w, c, r] = 0.0
                continue
            length = ray_length[c, r]
            for ch in range(N_RAY_CHANNELS):
                ray_dist[w, c, r, ch] = length
                ray_hit[w, c, r, ch] = 0
            ray_kind[w, c, r] = 0
            ray_car[w, c, r] = -1
            ray_rel_speed[w, c, r] = 0.0
            if destroyed:
                continue   # miss values, no march (PaddockJS: terminal placements read misses)
            # direction heading + angle, by rotating the angle's cos / sin by the heading's
            ca = ray_dir[c, r, 0]
            sa = ray_dir[c, r, 1]
            dx = cos_h * ca - sin_h * sa
            dy = sin_h * ca + cos_h * sa
            if sense_track:
                ray_kind[w, c, r] = track_rays(cx, cy, cs, cnx, cny, gseg, pv, geo, grid_at, i0, count, progress,
                                               max_hint2, main_only, oseg, ooff, use_lines, use_straight,
                                               include_pit, pit_allowed, road_edge, want_kerb, want_illegal, ox, oy,
                                               dx, dy,
                                               length, debug_precision, ray_dist[w, c, r], ray_hit[w, c, r])
            if n_cand > 0:
                best = FAR
                best_j = -1
                for q in range(n_cand):
                    j = cand[q]
                    tx = cars_f[w, j, F_X]
                    ty = cars_f[w, j, F_Y]
                    rx = tx - ox
                    ry = ty - oy
                    along = rx * dx + ry * dy
                    if along < -BODY_RADIUS or along > length + BODY_RADIUS:
                        continue
                    perp = rx * dy - ry * dx
                    if abs(perp) > BODY_RADIUS:
                        continue
                    th = cars_f[w, j, F_HEADING]
                    d = _slab(ox, oy, dx, dy, length, tx, ty, math.cos(th), math.sin(th))
                    if d >= 0.0 and d < best:
                        best = d
                        best_j = j
                if best_j >= 0:
                    ray_dist[w, c, r, RAY_CAR] = best
                    ray_hit[w, c, r, RAY_CAR] = 1
                    ray_car[w, c, r] = best_j
                    ray_rel_speed[w, c, r] = cars_f[w, best_j, F_SPEED] - ospeed
        # ---- radar (every slot of the K axis is written; slots past radar_k read empty)
        if radar.shape[2] > 0:
            n_near = 0
            radius = radar_radius[c]
            r2max = radius * radius
            for j in range(n_cars):
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
            ch_ = cos_h
            sh_ = sin_h
            ovx = cars_f[w, c, F_VX]
            ovy = cars_f[w, c, F_VY]
            for s in range(radar.shape[2]):
                f = radar[w, c, s]
                for i in range(N_RADAR_FIELDS):
                    f[i] = 0.0
                if s >= n_near:
                    f[RADAR_DISTANCE] = radius
                    radar_slot[w, c, s] = -1
                    continue
                j = near_j[s]
                d = near_d[s]
                ddx = cars_f[w, j, F_X] - ox
                ddy = cars_f[w, j, F_Y] - oy
                fwd = ddx * ch_ + ddy * sh_
                rvx = cars_f[w, j, F_VX] - ovx
                rvy = cars_f[w, j, F_VY] - ovy
                f[RADAR_FORWARD] = fwd
                f[RADAR_RIGHT] = -ddx * sh_ + ddy * ch_
                f[RADAR_DISTANCE] = d
                f[RADAR_SPEED] = cars_f[w, j, F_SPEED] - ospeed
                f[RADAR_HEADING] = wrap_angle(cars_f[w, j, F_HEADING] - oh)
                f[RADAR_AHEAD] = 1.0 if fwd > 0.0 else 0.0
                f[RADAR_SAME_LAP] = 1.0 if cars_i[w, j, I_LAP] == cars_i[w, c, I_LAP] else 0.0
                f[RADAR_VEL_FORWARD] = rvx * ch_ + rvy * sh_
                f[RADAR_VEL_RIGHT] = -rvx * sh_ + rvy * ch_
                f[RADAR_CLOSING] = -(ddx * rvx + ddy * rvy) / d if d > 0.0 else 0.0
                radar_slot[w, c, s] = j
        # ---- lookahead
        nq = lookahead_d.shape[0]
        if nq > 0:
            # from the distance of the car's nearest centreline sample, as PaddockJS (its progress)
            prog = cs[nearest_sample(cx, cy, cars_i[w, c, I_SEG_HINT], cars_f[w, c, F_X], cars_f[w, c, F_Y])]
            h0, k0 = heading_curvature_at(cs, chead, ccurv, length_l, prog)
            for q in range(nq):
                h1, k1 = heading_curvature_at(cs, chead, ccurv, length_l, prog + lookahead_d[q])
                # PaddockJS's curvature (its per-sample measure, unsigned), not our centreline's dh/ds
                look[w, c, q, 0] = sample_curvature_at(cx, cy, cs, chead, length_l, prog + lookahead_d[q])
                look[w, c, q, 1] = wrap_angle(h1 - h0)


@allocating_kernel
def sense_worlds(tr, geo, cars_f, cars_i, car_flags, sense_mask, ray_dir, ray_length, ray_count,
                 channel_mask, debug_precision, radar_k, radar_radius, lookahead_d, ray_dist, ray_hit,
                 ray_kind, ray_car, ray_rel_speed, radar, radar_slot, look):
    """Rays, radar and lookahead of every car with ``sense_mask`` set, in every world.

    tr: TrackArrays; geo: ``sensor_geometry(tr)``, computed once per track by the caller (~25 us on
    the grand prix: a sizeable share of a one-world step if it were redone per call). cars_f
    float64[W, C, NF], cars_i int32[W, C, NI], car_flags int32[W, C]
    (targets need FLAG_RAY_VISIBLE / FLAG_RADAR_VISIBLE), sense_mask int8[W, C] (1 = compute).
    Ray layout per car slot: ray_dir float64[C, R, 2] the cos and sin of each ray's angle relative to
    the heading (+ right; ``ray_directions``),
    ray_length float64[C, R] m, ray_count int32[C] rays used, channel_mask int32[C] (CH_* bits).
    debug_precision: int, 1 = debug precision (1 cm), 0 = driver precision (0.1 m).
    radar_k: int slots filled (the rest of the K axis reads empty), radar_radius: float64[C] m per car
    slot (each driver's nearby_cars.radius_meters).
    lookahead_d float64[Q] m ahead.

    Work: per masked car one origin classification (descending from its I_SEG_HINT), per ray ~4-8
    march samples and ~0.5 bisection steps (grand-prix env benchmark), the car channel against the
    ray-visible cars within reach, radar over the car slots, lookahead by interpolation.

    Outputs (written for masked cars only; other cars' rows are left untouched):
    ray_dist float32[W, C, R, 4] m per channel (road_edge, kerb, illegal_surface, car), miss = the
    ray's length; ray_hit int8[W, C, R, 4]; ray_kind int8[W, C, R] (0 miss, 1 exit, 2 entry);
    ray_car int32[W, C, R] slot of the car hit or -1; ray_rel_speed float32[W, C, R] m/s, hit car's
    speed minus own. Unrequested channels read as misses; rays past ray_count[c] are zeros (car -1).
    A destroyed car reads misses on every ray. radar float32[W, C, K, N_RADAR_FIELDS] (RADAR_*),
    radar_slot int32[W, C, K] (-1 empty; empty fields are 0 except distance = radius).
    look float32[W, C, Q, 2]: curvature (1/m, unsigned, ``sample_curvature_at``) at progress + d, heading
    delta (rad, wrapped).
    """
    kmax = max(0, min(radar_k, radar.shape[2]))
    cand = np.empty(cars_f.shape[1], dtype=np.int64)
    near_j = np.empty(kmax, dtype=np.int64)
    near_d = np.empty(kmax, dtype=np.float64)
    # The cars in track order (by segment hint), not world by world: consecutive cars then march over
    # nearby track, whose arrays and branch history are still warm (~5 % of the sweep with 64 worlds
    # spread over the lap). Each car's senses depend on the state only, so the order changes no result.
    order = _track_order(cars_i, sense_mask, tr.cx.shape[0] - 1)
    sense_cars(tr, geo, cars_f, cars_i, car_flags, ray_dir, ray_length, ray_count, channel_mask, debug_precision,
               radar_k, radar_radius, lookahead_d, ray_dist, ray_hit, ray_kind, ray_car, ray_rel_speed, radar,
               radar_slot, look, order, cand, near_j, near_d)



@allocating_kernel(parallel=True)
def sense_worlds_parallel(tr, geo, cars_f, cars_i, car_flags, sense_mask, ray_dir, ray_length, ray_count,
                          channel_mask, debug_precision, radar_k, radar_radius, lookahead_d, ray_dist, ray_hit,
                          ray_kind, ray_car, ray_rel_speed, radar, radar_slot, look):
    """``sense_worlds`` (same arguments, same outputs) with the worlds split over numba threads.

    ``prange`` over worlds: a world's masked cars are sensed by one thread, in slot order, through
    ``sense_cars`` (the one per-car body), with that world's own rows of scratch (order and cand
    int64[W, C], near_j int64[W, K], near_d float64[W, K]): no scratch is shared between threads,
    a thread writes only its worlds' output rows, and nothing is reduced across worlds. A car's
    senses depend on the state only, so the results are bit-identical to the serial kernel's for any
    thread count (``numba.set_num_threads``)."""
    n_worlds, n_cars = sense_mask.shape
    kmax = max(0, min(radar_k, radar.shape[2]))
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
            sense_cars(tr, geo, cars_f, cars_i, car_flags, ray_dir, ray_length, ray_count, channel_mask,
                       debug_precision, radar_k, radar_radius, lookahead_d, ray_dist, ray_hit, ray_kind, ray_car,
                       ray_rel_speed, radar, radar_slot, look, order[w, :n], cand[w], near_j[w], near_d[w])

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
