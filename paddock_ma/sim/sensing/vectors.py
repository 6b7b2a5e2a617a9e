"""Observation vectors: one kernel fills ``out[W, K, D]`` float32 for the K controlled cars of W worlds
(``fill_vectors``; ``fill_vectors_parallel`` splits the worlds over numba threads, same bits).

The layout is PaddockJS 2.0.0's (its golden specs are test fixtures: tests/fixtures/paddockjs-2.0.0/).
The block order is fixed; ``BASE_FIELDS`` ... ``RADAR_PHYSICAL_FIELDS`` below are its one table
(schema name, unit or None, scale string), from which the block sizes here and
``paddock_ma.env.observations.vector_schema`` are generated:

1. base (24): speed, steering, controls, body telemetry (lateral / longitudinal g, grip usage, body slip
   angle, traction limited), lap progress, offset, heading error, on-track, pit state, race position
   and mode, curvature at the car
2. physical-driver only (4 + 4*4): yaw rate, left / right boundary distance and legal width (raw m), then
   per contact patch FL, FR, RL, RR: present, surface code (PaddockJS's 6 codes / 5), on a legal
   surface, signed offset
3. lookahead, per sample (2): curvature, heading delta
4. rays, per ray: track (4) and car (3) always, plus kerb (2) and illegal surface (2) under
   physical-driver, whatever channels are requested; an unrequested channel reads its miss values
   (ratio 1, hit 0, kinds 0, speed 0)
5. radar, per slot (8, plus 5 under physical-driver): present, forward, right, distance, speed
   difference, heading, ahead, same lap [, behind, closing rate, time to contact, left / right overlap]

Scales: km/h / 400, m/s / 120, angles / pi, g / 8 (lateral) and / 6 (longitudinal), grip usage / 2,
ratios clamped to [0, 1] or [-1, 1], relative speeds km/h / 200, closing rate m/s / 100, time to
contact s / 10 clamped (none = 1); offsets and boundaries raw m, measured as PaddockJS measures them: to
the contact-patch edge farthest from the centreline (``reported_offset``, F_WHEEL_EDGE_*).
``track-curvature`` is PaddockJS's per-sample measure (the heading change from one centreline chord to
the next, divided by 28): ``curvature_entry`` of ``track.geometry.sample_curvature`` (the car's centre
sample) or ``sample_curvature_at`` (lookahead), exact on PaddockJS's 3,600-sample tracks. Entries past a slot's
own vector length (per-driver sensor configs) are zero.
"""

import math
from collections import namedtuple

from numba import prange

from ..core.jit import kernel
from ..track.geometry import edge_distances, sample_curvature
from ..track.nearest_sample import nearest_sample
from .march import CH_CAR, CH_ILLEGAL, CH_KERB, CH_ROAD_EDGE, RAY_CHANNELS
from ..vehicle.surface_table import SURFACE_LEGAL
from ..core.trig import clamp, wrap_angle
from ..core.layout import (
    CAR_LENGTH, CAR_WIDTH, F_APPLIED_BRAKE, F_APPLIED_THROTTLE, F_GRIP_USAGE,
    F_HEADING_ERROR, F_LAT_ACC, F_LONG_ACC, F_PROGRESS, F_SLIP_FRONT, F_SPEED, F_STEER_ANGLE, F_TIRE_ENERGY,
    F_WHEEL_EDGE_FL, F_X, F_Y, F_YAW_RATE, GRAVITY, I_ACTIVE, I_IN_PIT_LANE, I_ON_TRACK, I_PIT_INTENT, I_PIT_STATUS,
    I_RANK, I_SEG_HINT, I_TRACTION_LIMITED, I_WHEEL_SURFACE_FL, KPH_PER_MPS, MODE_GREEN, MODE_SAFETY_CAR, PIT_COMPLETED,
    PIT_PENDING, R_PIT_STOPS, WI_PIT_LANE_OPEN, WI_RACE_MODE,
    WI_RED_FLAG,
)

# What each controlled driver k's vector holds (``fill_vectors``): slots int32[K] its car slot, physical
# int8[K] (1: the physical-driver blocks), n_look int32[K] lookahead samples, radar_k int32[K] radar slots,
# radar_radius float64[K] m (its radar's radius, the scale of its slots).
VectorLayout = namedtuple("VectorLayout", ["slots", "physical", "n_look", "radar_k", "radar_radius"])

# PaddockJS's contact-patch surface codes (0 track, 1 kerb, 2 any pit surface, 3 grass, 4 gravel,
# 5 barrier or unknown), indexed by our SURF_* code (layout.SURFACE_NAMES order: track, kerb, gravel,
# grass, barrier, pit-entry, pit-lane, pit-exit, pit-box); legality is the surface table's.
SURFACE_CODE = (0, 1, 4, 3, 5, 2, 2, 2, 2)
SURFACE_CODE_MAX = 5
CURVATURE_SAMPLES = 3600       # PaddockJS's centreline samples a lap
CURVATURE_DIVISOR = 28.0       # its per-sample heading change is divided by this
SLIP_MIN_SPEED = 0.01          # m/s: below it the body slip angle reads 0
TIME_TO_CONTACT_SCALE = 10.0   # s
CLOSING_RATE_SCALE = 100.0     # m/s
LATERAL_G_SCALE = 8.0
LONGITUDINAL_G_SCALE = 6.0

# The vector's table: (schema name, unit or None, scale) of every entry, block by block, in the order
# ``fill_vectors`` writes them. ``env.observations.vector_schema`` names a driver's vector from it, and
# the block sizes the kernel uses are the lengths of its blocks, so the two cannot drift apart.
BASE_FIELDS = (
    ("self.speedKph", "kph", "fixed:400"),
    ("self.speedMetersPerSecond", "m/s", "fixed:120"),
    ("self.steeringAngleRadians", "rad", "fixed:pi"),
    ("self.throttle", None, "0..1"),
    ("self.brake", None, "0..1"),
    ("self.lateralG", None, "fixed:8g"),
    ("self.longitudinalG", None, "fixed:6g"),
    ("self.gripUsage", None, "0..2"),
    ("self.slipAngleRadians", "rad", "fixed:pi"),
    ("self.tractionLimited", None, "boolean"),
    ("self.lapProgressRatio", None, "0..1"),
    ("self.trackOffsetMeters", "m", "fixed:meters"),
    ("self.trackHeadingErrorRadians", "rad", "fixed:pi"),
    ("self.onTrack", None, "boolean"),
    ("self.inPitLane", None, "boolean"),
    ("self.tireEnergy", None, "0..100"),
    ("self.pitIntent", None, "0..2"),
    ("self.pitStopActive", None, "boolean"),
    ("race.positionNormalized", None, "0..1"),
    ("race.raceModeGreen", None, "boolean"),
    ("race.raceModeSafetyCar", None, "boolean"),
    ("race.redFlag", None, "boolean"),
    ("race.pitLaneOpen", None, "boolean"),
    ("track.curvature", None, "track-curvature"),
)
PHYSICAL_FIELDS = (                                   # physical-driver profile only, then per patch:
    ("self.yawRateRadiansPerSecond", "rad/s", "fixed:pi"),
    ("trackRelation.leftBoundaryMeters", "m", "fixed:meters"),
    ("trackRelation.rightBoundaryMeters", "m", "fixed:meters"),
    ("trackRelation.legalWidthMeters", "m", "fixed:meters"),
)
N_PATCHES = 4                                         # contact patches FL, FR, RL, RR
PATCH_FIELDS = (                                      # contactPatches[p].<field>
    ("present", None, "boolean"),
    ("surfaceCode", None, "surface-code"),
    ("onLegalSurface", None, "boolean"),
    ("signedOffsetMeters", "m", "fixed:meters"),
)
LOOK_FIELDS = (                                       # track.lookahead[i].<field>
    ("curvature", None, "track-curvature"),
    ("headingDeltaRadians", "rad", "fixed:pi"),
)
# The ray channels (``march.RAY_CHANNELS``) in vector order, with their fields: channel name, schema
# group, physical-driver only, fields (rays[i].<group>.<field>). Every ray has the non-physical groups
# whatever channels are asked.
RAY_VECTOR_GROUPS = (
    ("road_edge", "track", False, (("distanceRatio", None, "0..1"), ("hit", None, "boolean"),
                                   ("kindExit", None, "boolean"), ("kindEntry", None, "boolean"))),
    ("car", "car", False, (("distanceRatio", None, "0..1"), ("hit", None, "boolean"),
                           ("relativeSpeedKph", "kph", "fixed:200"))),
    ("kerb", "kerb", True, (("distanceRatio", None, "0..1"), ("hit", None, "boolean"))),
    ("illegal_surface", "illegalSurface", True, (("distanceRatio", None, "0..1"), ("hit", None, "boolean"))),
)
assert sorted(name for name, *_ in RAY_VECTOR_GROUPS) == sorted(RAY_CHANNELS)
RADAR_FIELDS = (                                      # nearbyCars[i].<field>
    ("present", None, "boolean"),
    ("relativeForwardRatio", None, "-1..1"),
    ("relativeRightRatio", None, "-1..1"),
    ("relativeDistanceRatio", None, "0..1"),
    ("relativeSpeedKph", "kph", "fixed:200"),
    ("relativeHeadingRadians", "rad", "fixed:pi"),
    ("ahead", None, "boolean"),
    ("sameLap", None, "boolean"),
)
RADAR_PHYSICAL_FIELDS = (                             # physical-driver only
    ("behind", None, "boolean"),
    ("closingRateMetersPerSecond", "m/s", "fixed:100"),
    ("timeToContactSeconds", "s", "fixed:10"),
    ("leftOverlap", None, "boolean"),
    ("rightOverlap", None, "boolean"),
)
BASE_SIZE = len(BASE_FIELDS)
PHYSICAL_SIZE = len(PHYSICAL_FIELDS) + N_PATCHES * len(PATCH_FIELDS)
LOOK_SIZE = len(LOOK_FIELDS)
RAY_SIZE = sum(len(fields) for _, _, phys, fields in RAY_VECTOR_GROUPS if not phys)
RAY_PHYSICAL_SIZE = sum(len(fields) for _, _, phys, fields in RAY_VECTOR_GROUPS if phys)
RADAR_SIZE = len(RADAR_FIELDS)
RADAR_PHYSICAL_SIZE = len(RADAR_PHYSICAL_FIELDS)


@kernel
def vector_size(physical, n_look, n_rays, radar_k):
    """Length of one car's vector for its profile (physical 0/1) and sensor counts."""
    size = BASE_SIZE + n_look * LOOK_SIZE + n_rays * RAY_SIZE + radar_k * RADAR_SIZE
    if physical:
        size += PHYSICAL_SIZE + n_rays * RAY_PHYSICAL_SIZE + radar_k * RADAR_PHYSICAL_SIZE
    return size


@kernel(inline="always")
def curvature_entry(curvature, track_length):
    """A ``track-curvature`` entry from a signed curvature (1/m) on a track of ``track_length`` m."""
    return abs(curvature) * (track_length / CURVATURE_SAMPLES) / CURVATURE_DIVISOR


@kernel(inline="always")
def body_slip_angle(vx, vy, heading):
    """Body slip angle (rad): direction of travel minus heading, wrapped; 0 below SLIP_MIN_SPEED
    (and always 0 in arcade mode, whose velocity follows the heading up to rounding)."""
    if math.sqrt(vx * vx + vy * vy) <= SLIP_MIN_SPEED:
        return 0.0
    return wrap_angle(math.atan2(vy, vx) - heading)


@kernel(inline="always")
def reported_offset(cars_f, cars_i, w, c):
    """Car ``c``'s track offset as PaddockJS reports it (``trackOffsetMeters``; m, + right): that of the
    contact patch (F_WHEEL_EDGE_*, ``vehicle.wheels``) farthest from the centreline. The state's
    F_OFFSET is the body centre's; a car centred 3.2 m left reads -4.15 m here."""
    best = cars_f[w, c, F_WHEEL_EDGE_FL]
    for p in range(1, N_PATCHES):
        off = cars_f[w, c, F_WHEEL_EDGE_FL + p]
        if abs(off) > abs(best):
            best = off
    return best


@kernel(inline="always")
def time_to_contact(distance, closing):
    """Seconds until contact at the current closing rate (m/s), or -1 when not closing."""
    return distance / closing if closing > 0.0 else -1.0


@kernel
def fill_vectors(tr, cars_f, cars_i, rules, world_i, drivers, table, senses, world_mask, out):
    """Write the observation vectors of the controlled cars.

    drivers: a VectorLayout, what each controlled driver k's vector holds (slots int32[K] its car slot;
    physical int8[K]; n_look int32[K]; radar_k int32[K]; radar_radius float64[K]); table: the
    ``sensing.sensors.SenseTable`` of the slots (ray_count int32[C], channel_mask int32[C], ray_length
    float64[C, R] read); senses: the ``SenseBuffers`` as written by ``sensing.sensors.sense_worlds``;
    world_mask int8[W] (1 = fill this world); out float32[W, K, D]; rules float64[W, NR]
    (race.pitLaneOpen reads 0 while pit stops are off).
    """
    for w in range(cars_f.shape[0]):
        if world_mask[w] != 0:
            _fill_world(tr, cars_f, cars_i, rules, world_i, drivers, table, senses, w, out)


@kernel(parallel=True)
def fill_vectors_parallel(tr, cars_f, cars_i, rules, world_i, drivers, table, senses, world_mask, out):
    """``fill_vectors`` with the worlds split over numba threads (``prange``; a thread writes only its
    worlds' rows of ``out``): bit-identical to the serial kernel for any thread count."""
    for w in prange(cars_f.shape[0]):
        if world_mask[w] != 0:
            _fill_world(tr, cars_f, cars_i, rules, world_i, drivers, table, senses, w, out)


@kernel(inline="always")
def _fill_world(tr, cars_f, cars_i, rules, world_i, drivers, table, senses, w, out):
    """The vectors of world ``w``'s controlled cars into ``out[w]`` (arguments as ``fill_vectors``)."""
    n_all = 0                                   # race.positionNormalized: N = every car in the race
    for c in range(cars_f.shape[1]):
        if cars_i[w, c, I_ACTIVE] != 0:
            n_all += 1
    for k in range(drivers.slots.shape[0]):
        c = drivers.slots[k]
        v = out[w, k]
        offset = reported_offset(cars_f, cars_i, w, c)
        i = _fill_base(tr, cars_f, cars_i, rules, world_i, w, c, n_all, offset, v)
        phys = drivers.physical[k] != 0
        if phys:
            i = _fill_physical(tr, cars_f, cars_i, w, c, offset, v, i)
        for q in range(drivers.n_look[k]):
            v[i] = curvature_entry(senses.look[w, c, q, 0], tr.length)
            v[i + 1] = senses.look[w, c, q, 1] / math.pi
            i += 2
        mask = table.channel_mask[c]
        for r in range(table.ray_count[c]):
            i = _fill_ray(table.ray_length[c, r], senses.ray_dist[w, c, r], senses.ray_hit[w, c, r],
                          senses.ray_kind[w, c, r], senses.ray_rel_speed[w, c, r], mask, phys, v, i)
        for s in range(drivers.radar_k[k]):
            i = _fill_radar_slot(senses.radar[w, c, s], senses.radar_slot[w, c, s] >= 0, drivers.radar_radius[k],
                                 phys, v, i)
        for j in range(i, v.shape[0]):
            v[j] = 0.0


@kernel(inline="always")
def _fill_base(tr, cars_f, cars_i, rules, world_i, w, c, n_all, offset, v):
    """The base block of car ``c`` into ``v[0:BASE_SIZE]`` (``offset``: its ``reported_offset``, m);
    returns BASE_SIZE."""
    speed = cars_f[w, c, F_SPEED]
    status = cars_i[w, c, I_PIT_STATUS]
    rank = cars_i[w, c, I_RANK]
    mode = world_i[w, WI_RACE_MODE]
    usage = cars_f[w, c, F_GRIP_USAGE]
    v[0] = speed * KPH_PER_MPS / 400.0
    v[1] = speed / 120.0
    v[2] = cars_f[w, c, F_STEER_ANGLE] / math.pi
    v[3] = cars_f[w, c, F_APPLIED_THROTTLE]
    v[4] = cars_f[w, c, F_APPLIED_BRAKE]
    v[5] = cars_f[w, c, F_LAT_ACC] / GRAVITY / LATERAL_G_SCALE
    v[6] = cars_f[w, c, F_LONG_ACC] / GRAVITY / LONGITUDINAL_G_SCALE
    v[7] = usage / 2.0
    # PaddockJS's telemetry slip angle, set where the tick integrates the body (simulator mode; arcade 0)
    # and not updated by the contact and runoff responses after it
    v[8] = cars_f[w, c, F_SLIP_FRONT] / math.pi
    v[9] = cars_i[w, c, I_TRACTION_LIMITED]
    v[10] = clamp(cars_f[w, c, F_PROGRESS] / tr.length, 0.0, 1.0)
    v[11] = offset
    v[12] = cars_f[w, c, F_HEADING_ERROR] / math.pi
    v[13] = cars_i[w, c, I_ON_TRACK]
    v[14] = cars_i[w, c, I_IN_PIT_LANE]
    v[15] = cars_f[w, c, F_TIRE_ENERGY] / 100.0
    v[16] = cars_i[w, c, I_PIT_INTENT] / 2.0
    v[17] = 1.0 if (status != PIT_PENDING and status != PIT_COMPLETED) else 0.0
    v[18] = clamp((rank - 1.0) / (n_all - 1.0), 0.0, 1.0) if (n_all > 1 and rank > 0) else 0.0
    v[19] = 1.0 if mode == MODE_GREEN else 0.0
    v[20] = 1.0 if mode == MODE_SAFETY_CAR else 0.0
    v[21] = world_i[w, WI_RED_FLAG]
    v[22] = world_i[w, WI_PIT_LANE_OPEN] if rules[w, R_PIT_STOPS] > 0.5 else 0.0
    # the car's centre sample, as PaddockJS's trackState (not the projection's interpolated dh/ds)
    j = nearest_sample(tr.cx, tr.cy, cars_i[w, c, I_SEG_HINT], cars_f[w, c, F_X], cars_f[w, c, F_Y])
    v[23] = curvature_entry(sample_curvature(tr.cx, tr.cy, tr.ch, tr.length, j), tr.length)
    return BASE_SIZE


@kernel(inline="always")
def _fill_physical(tr, cars_f, cars_i, w, c, offset, v, i):
    """The physical-driver block from ``v[i]`` (``offset``: the car's ``reported_offset``, m); returns the
    next index."""
    v[i] = cars_f[w, c, F_YAW_RATE] / math.pi
    left, right = edge_distances(tr, offset)
    v[i + 1] = left
    v[i + 2] = right
    v[i + 3] = 2.0 * tr.half_width
    i += 4
    for p in range(N_PATCHES):
        surface = cars_i[w, c, I_WHEEL_SURFACE_FL + p]
        v[i] = 1.0
        v[i + 1] = SURFACE_CODE[surface] / SURFACE_CODE_MAX
        v[i + 2] = SURFACE_LEGAL[surface]
        v[i + 3] = cars_f[w, c, F_WHEEL_EDGE_FL + p]
        i += 4
    return i


@kernel(inline="always")
def _fill_ray(length, dist, hit, kind, rel_speed, mask, phys, v, i):
    """One ray's slots from ``v[i]`` (channel order of RAY_VECTOR_GROUPS; a channel outside ``mask`` reads
    its miss values); dist float32[4], hit int8[4] per channel index; returns the next index."""
    if mask & CH_ROAD_EDGE:
        v[i] = clamp(dist[0] / length, 0.0, 1.0)
        v[i + 1] = hit[0]
        v[i + 2] = 1.0 if kind == 1 else 0.0
        v[i + 3] = 1.0 if kind == 2 else 0.0
    else:
        v[i] = 1.0
        v[i + 1] = 0.0
        v[i + 2] = 0.0
        v[i + 3] = 0.0
    if mask & CH_CAR:
        v[i + 4] = clamp(dist[3] / length, 0.0, 1.0)
        v[i + 5] = hit[3]
        v[i + 6] = rel_speed * KPH_PER_MPS / 200.0
    else:
        v[i + 4] = 1.0
        v[i + 5] = 0.0
        v[i + 6] = 0.0
    i += RAY_SIZE
    if phys:
        v[i] = clamp(dist[1] / length, 0.0, 1.0) if mask & CH_KERB else 1.0
        v[i + 1] = hit[1] if mask & CH_KERB else 0.0
        v[i + 2] = clamp(dist[2] / length, 0.0, 1.0) if mask & CH_ILLEGAL else 1.0
        v[i + 3] = hit[2] if mask & CH_ILLEGAL else 0.0
        i += RAY_PHYSICAL_SIZE
    return i


@kernel(inline="always")
def _fill_radar_slot(f, present, radius, phys, v, i):
    """One radar slot from ``v[i]``: f float32[N_RADAR_FIELDS] (sensors.RADAR_*); returns the next index."""
    for j in range(RADAR_SIZE):
        v[i + j] = 0.0
    if present:
        v[i] = 1.0
        v[i + 1] = clamp(f[0] / radius, -1.0, 1.0)
        v[i + 2] = clamp(f[1] / radius, -1.0, 1.0)
        v[i + 3] = clamp(f[2] / radius, 0.0, 1.0)
        v[i + 4] = f[3] * KPH_PER_MPS / 200.0
        v[i + 5] = f[4] / math.pi
        v[i + 6] = f[5]
        v[i + 7] = f[6]
    else:
        v[i + 3] = 1.0
    i += RADAR_SIZE
    if phys:
        for j in range(RADAR_PHYSICAL_SIZE):
            v[i + j] = 0.0
        v[i + 2] = 1.0
        if present:
            overlap = abs(f[0]) <= CAR_LENGTH and abs(f[1]) <= CAR_WIDTH
            ttc = time_to_contact(f[2], f[9])
            v[i] = 1.0 - f[5]
            v[i + 1] = f[9] / CLOSING_RATE_SCALE
            v[i + 2] = clamp(ttc / TIME_TO_CONTACT_SCALE, 0.0, 1.0) if ttc >= 0.0 else 1.0
            v[i + 3] = 1.0 if (overlap and f[1] < 0.0) else 0.0
            v[i + 4] = 1.0 if (overlap and f[1] > 0.0) else 0.0
        i += RADAR_PHYSICAL_SIZE
    return i
