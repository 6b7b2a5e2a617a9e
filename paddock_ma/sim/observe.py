"""Observation vectors: one kernel fills ``out[W, K, D]`` float32 for the K controlled cars of W worlds
(``fill_vectors``; ``fill_vectors_parallel`` splits the worlds over numba threads, same bits).

The block order is fixed; ``BASE_FIELDS`` ... ``RADAR_RICH_FIELDS`` below are its one table (names,
units, scales), from which the block sizes here and ``paddock_ma.env.observations.vector_schema`` are
generated:

1. base (19): speed, steering, controls, lap progress, offset, heading error, on-track, pit state,
   race position and mode, curvature at the car
2. physical-driver only (3 + 4*3): yaw rate, left/right boundary distance, then per contact patch
   FL, FR, RL, RR: surface code, signed offset, cross-track error
3. lookahead, per sample (2): curvature, heading delta
4. rays, per ray, per requested channel in the order road_edge (4), kerb (2), illegal_surface (2),
   car (3)
5. radar, per slot (8, or 11 with rich radar): present, forward, right, distance, speed difference,
   heading, ahead, same lap [, relative velocity forward, right, closing speed]

Scales follow PaddockJS's vector: km/h / 400, m/s / 120, angles / pi, ratios clamped to [0, 1] or
[-1, 1], relative speeds in km/h / 200; the offset and curvature stay raw (m and 1/m).
Entries past a slot's own vector length (per-driver sensor configs) are zero.
"""

import math

from numba import prange

from .jit import kernel
from .sensors import boundary_distances
from .sensors_march import CH_CAR, CH_ILLEGAL, CH_KERB, CH_ROAD_EDGE
from .trig import clamp
from .layout import (
    F_APPLIED_BRAKE, F_APPLIED_THROTTLE, F_CURVATURE, F_HEADING_ERROR, F_OFFSET, F_PROGRESS, F_SPEED,
    F_STEER_ANGLE, F_TIRE_ENERGY, F_WHEEL_OFFSET_FL, F_YAW_RATE, FLAG_CLASSIFIED, I_ACTIVE, I_IN_PIT_LANE,
    I_ON_TRACK, I_PIT_INTENT, I_PIT_STATUS, I_RANK, I_WHEEL_SURFACE_FL, MODE_GREEN, MODE_SAFETY_CAR,
    KPH_PER_MPS, N_SURFACES, PIT_COMPLETED, PIT_PENDING, WI_PIT_LANE_OPEN, WI_RACE_MODE, WI_RED_FLAG,
)

BOUNDARY_SCALE = 20.0          # m: boundary distances are divided by this
RADAR_VELOCITY_SCALE = 50.0    # m/s: rich radar velocities are divided by this

# The vector's table: (schema name, unit, scale) of every entry, block by block, in the order
# ``fill_vectors`` writes them. ``env.observations.vector_schema`` names a driver's vector from it, and
# the block sizes the kernel uses are the lengths of its blocks, so the two cannot drift apart.
BASE_FIELDS = (
    ("self.speedKph", "kph", "/400"),
    ("self.speedMetersPerSecond", "m/s", "/120"),
    ("self.steeringAngleRadians", "rad", "/pi"),
    ("self.throttle", "normalized", "1"),
    ("self.brake", "normalized", "1"),
    ("self.lapProgressRatio", "ratio", "clamp 0..1"),
    ("self.trackOffsetMeters", "m", "fixed:meters"),
    ("self.trackHeadingErrorRadians", "rad", "/pi"),
    ("self.onTrack", "boolean", "1"),
    ("self.inPitLane", "boolean", "1"),
    ("self.tireEnergy", "percent", "/100"),
    ("self.pitIntent", "0:none|1:if-free|2:committed", "/2"),
    ("self.pitStopActive", "boolean", "1"),
    ("race.positionNormalized", "ratio", "(rank-1)/(N-1)"),
    ("race.raceModeGreen", "boolean", "1"),
    ("race.raceModeSafetyCar", "boolean", "1"),
    ("race.redFlag", "boolean", "1"),
    ("race.pitLaneOpen", "boolean", "1"),
    ("track.curvature", "1/m", "fixed:1/m"),
)
PHYSICAL_FIELDS = (                                   # physical-driver profile only, then per wheel:
    ("self.yawRateRadiansPerSecond", "rad/s", "/pi"),
    ("self.leftBoundaryMeters", "m", f"/{BOUNDARY_SCALE:g}"),
    ("self.rightBoundaryMeters", "m", f"/{BOUNDARY_SCALE:g}"),
)
WHEEL_SCHEMA_NAMES = ("frontLeft", "frontRight", "rearLeft", "rearRight")    # contact patches FL, FR, RL, RR
WHEEL_FIELDS = (                                      # self.contactPatches.<wheel>.<field>
    ("surfaceCode", "code", f"/{N_SURFACES - 1}"),
    ("signedOffsetMeters", "m", "fixed:meters"),
    ("crossTrackErrorMeters", "m", "fixed:meters"),
)
LOOK_FIELDS = (                                       # track.lookahead[i].<field>
    ("curvature", "1/m", "fixed:1/m"),
    ("headingDeltaRadians", "rad", "/pi"),
)
# Ray channels in vector order (= the last axis of ray_dist): config name, channel_mask bit, schema
# group, fields (rays[i].<group>.<field>).
RAY_CHANNELS = (
    ("road_edge", CH_ROAD_EDGE, "track", (("distanceRatio", "ratio", "distance/length"), ("hit", "boolean", "1"),
                                          ("kindExit", "boolean", "1"), ("kindEntry", "boolean", "1"))),
    ("kerb", CH_KERB, "kerb", (("distanceRatio", "ratio", "distance/length"), ("hit", "boolean", "1"))),
    ("illegal_surface", CH_ILLEGAL, "illegalSurface", (("distanceRatio", "ratio", "distance/length"),
                                                       ("hit", "boolean", "1"))),
    ("car", CH_CAR, "car", (("distanceRatio", "ratio", "distance/length"), ("hit", "boolean", "1"),
                            ("relativeSpeedKph", "kph", "/200"))),
)
RADAR_FIELDS = (                                      # nearbyCars[i].<field>
    ("present", "boolean", "1"),
    ("relativeForwardRatio", "ratio", "forward/radius clamp -1..1"),
    ("relativeRightRatio", "ratio", "right/radius clamp -1..1"),
    ("relativeDistanceRatio", "ratio", "distance/radius, empty 1"),
    ("relativeSpeedKph", "kph", "/200"),
    ("relativeHeadingRadians", "rad", "/pi"),
    ("ahead", "boolean", "1"),
    ("sameLap", "boolean", "1"),
)
RADAR_RICH_FIELDS = (                                 # rich radar only
    ("relativeVelocityForwardMetersPerSecond", "m/s", f"/{RADAR_VELOCITY_SCALE:g}"),
    ("relativeVelocityRightMetersPerSecond", "m/s", f"/{RADAR_VELOCITY_SCALE:g}"),
    ("closingSpeedMetersPerSecond", "m/s", f"/{RADAR_VELOCITY_SCALE:g}"),
)
BASE_SIZE = len(BASE_FIELDS)
PHYSICAL_SIZE = len(PHYSICAL_FIELDS) + len(WHEEL_SCHEMA_NAMES) * len(WHEEL_FIELDS)
LOOK_SIZE = len(LOOK_FIELDS)
CHANNEL_SIZES = tuple(len(fields) for _, _, _, fields in RAY_CHANNELS)
RADAR_SIZE = len(RADAR_FIELDS)
RADAR_RICH_SIZE = RADAR_SIZE + len(RADAR_RICH_FIELDS)


@kernel
def vector_size(physical, n_look, n_rays, channel_mask, radar_k, rich_radar):
    """Length of one car's vector for its sensor configuration."""
    size = BASE_SIZE + n_look * LOOK_SIZE
    if physical:
        size += PHYSICAL_SIZE
    per_ray = 0
    for ch in range(4):
        if channel_mask & (1 << ch):
            per_ray += CHANNEL_SIZES[ch]
    size += n_rays * per_ray
    size += radar_k * (RADAR_RICH_SIZE if rich_radar else RADAR_SIZE)
    return size


@kernel
def fill_vectors(tr, cars_f, cars_i, car_flags, world_i, slots, physical, n_look, radar_k, rich_radar,
                 radar_radius, ray_count, channel_mask, ray_length, ray_dist, ray_hit, ray_kind,
                 ray_rel_speed, radar, radar_slot, look, world_mask, out):
    """Write the observation vectors of the controlled cars.

    slots int32[K] car slot of each controlled driver; physical int8[K]; n_look int32[K]; radar_k int32[K];
    rich_radar int8[K]; radar_radius float64[K]; ray_count int32[C]; channel_mask int32[C];
    ray_length float64[C, R]; sensor outputs as written by
    ``sensors.sense_worlds``; world_mask int8[W] (1 = fill this world); out float32[W, K, D].
    """
    for w in range(cars_f.shape[0]):
        if world_mask[w] != 0:
            _fill_world(tr, cars_f, cars_i, car_flags, world_i, slots, physical, n_look, radar_k, rich_radar,
                        radar_radius, ray_count, channel_mask, ray_length, ray_dist, ray_hit, ray_kind,
                        ray_rel_speed, radar, radar_slot, look, w, out)


@kernel(parallel=True)
def fill_vectors_parallel(tr, cars_f, cars_i, car_flags, world_i, slots, physical, n_look, radar_k, rich_radar,
                          radar_radius, ray_count, channel_mask, ray_length, ray_dist, ray_hit, ray_kind,
                          ray_rel_speed, radar, radar_slot, look, world_mask, out):
    """``fill_vectors`` with the worlds split over numba threads (``prange``; a thread writes only its
    worlds' rows of ``out``): bit-identical to the serial kernel for any thread count."""
    for w in prange(cars_f.shape[0]):
        if world_mask[w] != 0:
            _fill_world(tr, cars_f, cars_i, car_flags, world_i, slots, physical, n_look, radar_k, rich_radar,
                        radar_radius, ray_count, channel_mask, ray_length, ray_dist, ray_hit, ray_kind,
                        ray_rel_speed, radar, radar_slot, look, w, out)


@kernel(inline="always")
def _fill_world(tr, cars_f, cars_i, car_flags, world_i, slots, physical, n_look, radar_k, rich_radar,
                radar_radius, ray_count, channel_mask, ray_length, ray_dist, ray_hit, ray_kind,
                ray_rel_speed, radar, radar_slot, look, w, out):
    """The vectors of world ``w``'s controlled cars into ``out[w]`` (arguments as ``fill_vectors``)."""
    n_cars = cars_f.shape[1]
    length = tr.length
    classified = 0
    for c in range(n_cars):
        if cars_i[w, c, I_ACTIVE] != 0 and (car_flags[w, c] & FLAG_CLASSIFIED) != 0:
            classified += 1
    mode = world_i[w, WI_RACE_MODE]
    for k in range(slots.shape[0]):
        c = slots[k]
        v = out[w, k]
        speed = cars_f[w, c, F_SPEED]
        status = cars_i[w, c, I_PIT_STATUS]
        rank = cars_i[w, c, I_RANK]
        v[0] = speed * KPH_PER_MPS / 400.0
        v[1] = speed / 120.0
        v[2] = cars_f[w, c, F_STEER_ANGLE] / math.pi
        v[3] = cars_f[w, c, F_APPLIED_THROTTLE]
        v[4] = cars_f[w, c, F_APPLIED_BRAKE]
        v[5] = clamp(cars_f[w, c, F_PROGRESS] / length, 0.0, 1.0)
        v[6] = cars_f[w, c, F_OFFSET]
        v[7] = cars_f[w, c, F_HEADING_ERROR] / math.pi
        v[8] = cars_i[w, c, I_ON_TRACK]
        v[9] = cars_i[w, c, I_IN_PIT_LANE]
        v[10] = cars_f[w, c, F_TIRE_ENERGY] / 100.0
        v[11] = cars_i[w, c, I_PIT_INTENT] / 2.0
        v[12] = 1.0 if (status != PIT_PENDING and status != PIT_COMPLETED) else 0.0
        v[13] = (rank - 1.0) / (classified - 1.0) if (classified > 1 and rank > 0) else 0.0
        v[14] = 1.0 if mode == MODE_GREEN else 0.0
        v[15] = 1.0 if mode == MODE_SAFETY_CAR else 0.0
        v[16] = world_i[w, WI_RED_FLAG]
        v[17] = world_i[w, WI_PIT_LANE_OPEN]
        v[18] = cars_f[w, c, F_CURVATURE]
        i = BASE_SIZE
        if physical[k]:
            v[i] = cars_f[w, c, F_YAW_RATE] / math.pi
            left, right = boundary_distances(tr, cars_f, w, c)
            v[i + 1] = left / BOUNDARY_SCALE
            v[i + 2] = right / BOUNDARY_SCALE
            i += 3
            for wheel in range(4):
                off = cars_f[w, c, F_WHEEL_OFFSET_FL + wheel]
                v[i] = cars_i[w, c, I_WHEEL_SURFACE_FL + wheel] / (N_SURFACES - 1.0)
                v[i + 1] = off
                v[i + 2] = abs(off)
                i += 3
        for q in range(n_look[k]):
            v[i] = look[w, c, q, 0]
            v[i + 1] = look[w, c, q, 1] / math.pi
            i += 2
        mask = channel_mask[c]
        for r in range(ray_count[c]):
            if mask & 1:
                v[i] = clamp(ray_dist[w, c, r, 0] / ray_length[c, r], 0.0, 1.0)
                v[i + 1] = ray_hit[w, c, r, 0]
                v[i + 2] = 1.0 if ray_kind[w, c, r] == 1 else 0.0
                v[i + 3] = 1.0 if ray_kind[w, c, r] == 2 else 0.0
                i += 4
            if mask & 2:
                v[i] = clamp(ray_dist[w, c, r, 1] / ray_length[c, r], 0.0, 1.0)
                v[i + 1] = ray_hit[w, c, r, 1]
                i += 2
            if mask & 4:
                v[i] = clamp(ray_dist[w, c, r, 2] / ray_length[c, r], 0.0, 1.0)
                v[i + 1] = ray_hit[w, c, r, 2]
                i += 2
            if mask & 8:
                v[i] = clamp(ray_dist[w, c, r, 3] / ray_length[c, r], 0.0, 1.0)
                v[i + 1] = ray_hit[w, c, r, 3]
                v[i + 2] = ray_rel_speed[w, c, r] * KPH_PER_MPS / 200.0
                i += 3
        radius = radar_radius[k]
        for s in range(radar_k[k]):
            present = radar_slot[w, c, s] >= 0
            f = radar[w, c, s]
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
                for j in range(8):
                    v[i + j] = 0.0
                v[i + 3] = 1.0
            i += 8
            if rich_radar[k]:
                if present:
                    v[i] = f[7] / RADAR_VELOCITY_SCALE
                    v[i + 1] = f[8] / RADAR_VELOCITY_SCALE
                    v[i + 2] = f[9] / RADAR_VELOCITY_SCALE
                else:
                    v[i] = 0.0
                    v[i + 1] = 0.0
                    v[i + 2] = 0.0
                i += 3
        for j in range(i, v.shape[0]):
            v[j] = 0.0
