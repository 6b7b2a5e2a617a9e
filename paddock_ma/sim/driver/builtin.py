"""Built-in driver for cars no policy controls (PaddockJS spec section 5, in outline).

One decision per car per tick, from the car's own state, its parameters and the cars around it:

* **Speed.** A preview of the centreline ahead in short intervals (the track's precomputed
  ``ai_preview`` table, interpolated between the two samples around the car): each interval's mean
  curvature (heading change / length) gives a corner speed from
  ``v^2 kappa = margin * (A + B v^2)``, the lateral grip budget of this car in this physics mode
  (tyre friction with wear and compound factors, plus downforce); an interval that starts ``d``
  metres ahead caps the current speed at ``sqrt(v^2 + 2 a_b d)`` (a conservative deceleration
  ``a_b``). Arcade plans with PaddockJS's grip budget; simulator mode with PaddockJS's simulator
  driver's much smaller lateral budget (``simulator_controls.sim_plan_budget``, ~11 m/s^2), since
  there a cornering car's slip grows and its pedals take lateral grip. Arcade throttle is
  proportional to the speed error; braking is a deceleration demand inside the friction circle.
* **Steering.** Arcade: pure pursuit toward a point on the car's lane (the centreline shifted by the
  lane offset) one lookahead ahead (12 m + 0.75 s of travel, shrunk in tight corners, 25..110 m);
  arcade yaw scales with the tyre factor, so the lock is divided by it. A target behind or far to the
  side (a spun car) gets full lock toward it.
* **Simulator mode** steers, brakes and accelerates as PaddockJS's own simulator controller does
  (``driver.simulator_controls``): nose aimed at the lane point with heading feed-forward inside a
  speed- and grip-dependent steering limit, penalties on the planned speed for slip, grip usage and
  edge pressure, throttle scaled down inside the friction ellipse, and a stabilising rejoin mode for a
  sliding car.
* **Lane.** ``F_AI_LANE_OFFSET`` moves at a bounded rate toward a target: a small inside-of-corner
  bias, or a passing lane beside a car ahead within ~30 m that is in the way. A car ahead in the
  same lane also caps the speed (a speed-dependent following gap). Only cars that collide with this
  car count as traffic (``driver.traffic``): a phantom or batch-training car is invisible to the
  built-in driver.
* **Rejoin.** Off the legal surfaces (``I_ON_TRACK == 0``) the driver aims back at the track edge
  at a moderate, surface-dependent speed and keeps that mode (``I_AI_REJOIN`` ticks) until the car
  is settled on the track again.
* **DRS.** While the car's DRS is open (``race.drs``) it plans 22 km/h faster, as PaddockJS's driver
  raises its corner target.
* **Pit intent.** With pit stops on, an AI car asks for a stop (intent 1) below the request tyre
  energy and commits (intent 2) below the commit energy.
"""

import math
from collections import namedtuple

import numpy as np

from ..core.jit import allocating_kernel, kernel
from ..core.layout import (
    CONTROL_BUILTIN, DT, F_AI_LANE_OFFSET, F_HEADING_ERROR, F_LAT_ACC, F_OFFSET, F_PROGRESS,
    F_SPEED, F_TIRE_ENERGY, F_X, F_Y, FLAG_COLLIDES, FLAG_CONTROLLED, GRAVITY, I_DRS_ACTIVE,
    I_AI_REJOIN, I_COMPOUND, I_GRID_LOCKED, I_ON_TRACK, I_PIT_INTENT, I_PIT_STATUS, I_SURFACE, MAX_SPEED,
    MAX_STEER_ANGLE, MPS_PER_KPH, P_AGGRESSION, P_BRAKE, P_DOWNFORCE_CL, P_MASS, P_PACE,
    P_TIRE_GRIP, PHYSICS_SIMULATOR, PIT_COMPLETED, PIT_PENDING, N_PRE, PRE_COS, PRE_SIN, PRE_TYRE,
    R_PHYSICS_MODE, R_PIT_STOPS, R_TIRE_COMMIT_PCT, R_TIRE_REQUEST_PCT, SURF_GRASS, SURF_GRAVEL, SURF_KERB,
    SURF_TRACK, WHEELBASE,
)
from ..track.preview import N_PREVIEW, PREVIEW_D, PREVIEW_KMAX, PREVIEW_NEAR, PREVIEW_TURN
from ..track.geometry import sample_at
from ..core.trig import atan_poly, lerp_at
from .simulator_controls import (
    STABILIZE_TICKS, should_stabilize, sim_racing_controls, sim_rejoin_controls,
)
from .traffic import Traffic, gather_traffic, scan_traffic
from ..vehicle.dynamics import prepare_car
from ..vehicle.tyres import COMPOUND_GRIP, compound_index

# Preview interval boundaries (m ahead) and the per-track table: see track.preview.PREVIEW_D.

# What the built-in driver reads of the track, gathered once per world (``ai_world``): the centreline
# arrays (cx, cy, cs, cnx, cny; m), its preview table (prev, ``track.preview``), the lap length and the
# half width (m).
DriverTrack = namedtuple("DriverTrack", ["cx", "cy", "cs", "cnx", "cny", "prev", "length", "hw"])

GRIP_MARGIN = 0.80       # fraction of the lateral grip budget used in corners
SIM_GRIP_MARGIN = 0.50   # simulator: its share (slip grows faster the harder a car corners)
BRAKE_FRAC_ARCADE = 0.7  # fraction of the arcade brake cap assumed for braking
SIM_BRAKE_PLAN = 9.0     # m/s^2, simulator: braking distances assume this (braking takes lateral grip)
MIN_TARGET = 55.0 * MPS_PER_KPH  # m/s, never plan slower than this on track
DRS_TARGET_BONUS = 22.0 * MPS_PER_KPH  # m/s added to the planned speed while DRS is open (PaddockJS's)
LOOK_MIN = 10.0          # m, pure-pursuit lookahead bounds
LOOK_MAX = 110.0
LOOK_BASE = 12.0         # m, lookahead = LOOK_BASE + LOOK_TIME * v, then shrunk in corners
LOOK_TIME = 0.75         # s
INSIDE_GAIN = 250.0      # m of inside bias per 1/m of curvature ahead (R = 100 m -> 2.5 m)
INSIDE_MAX = 2.5         # m
LANE_RATE = 4.0          # m/s, how fast the lane target moves sideways
LANE_CORNER = 60.0       # m, lane-change slow-down per 1/m of curvature ahead (R = 60 m -> half)
LANE_EDGE = 2.5          # m, lane targets stay this far inside the asphalt edge
REJOIN_TICKS = 150       # ticks of rejoin mode after leaving the legal surfaces (PaddockJS)
THROTTLE_GAIN = 0.45     # per m/s of speed error
THROTTLE_FF = 0.35       # throttle at zero speed error (holds speed against drag)
BRAKE_GAIN = 6.0         # m/s^2 of deceleration demand per m/s of overspeed
BRAKE_DEADBAND = 0.8     # m/s of overspeed handled by lifting off
BRAKE_USE = 0.85         # share of the grip budget a brake demand may use
BRAKE_FLOOR = 0.25       # share of the grip budget always available to the brakes


@kernel(inline="always")
def _lane_point(cx, cy, cs, cnx, cny, length, s, lane):
    """Point (x, y) m at lap distance s (m, wrapped) shifted ``lane`` m along the right normal.

    Takes bare arrays of TrackArrays, so an inlined call unpacks nothing; the normal is interpolated
    from the samples' (cnx, cny), no sin/cos.
    """
    i, t = sample_at(cs, length, s)
    return lerp_at(cx, i, t) + lerp_at(cnx, i, t) * lane, lerp_at(cy, i, t) + lerp_at(cny, i, t) * lane


@kernel(inline="always")
def corner_speed(kappa, mu_g, aero_k):
    """Highest speed (m/s) through curvature ``kappa`` (1/m, >= 0).

    Solves v^2 kappa = mu_g + aero_k v^2 (grip plus downforce growing with v^2); mu_g in m/s^2,
    aero_k in 1/m (downforce coefficient over mass, times the margin). Capped at MAX_SPEED.
    """
    den = kappa - aero_k
    if den <= 1e-9:
        return MAX_SPEED
    v = math.sqrt(mu_g / den)
    return min(v, MAX_SPEED)


@kernel(inline="always")
def update_pit_intent(cars_f, cars_i, car_flags, rules, w, c):
    """Latch an AI car's pit intent from its tyre energy (request -> 1, commit -> 2)."""
    if rules[w, R_PIT_STOPS] < 0.5 or (car_flags[w, c] & FLAG_CONTROLLED) != 0:
        return
    st = cars_i[w, c, I_PIT_STATUS]
    if st != PIT_PENDING and st != PIT_COMPLETED:
        return
    e = cars_f[w, c, F_TIRE_ENERGY]
    if e < rules[w, R_TIRE_COMMIT_PCT]:
        cars_i[w, c, I_PIT_INTENT] = 2
    elif e < rules[w, R_TIRE_REQUEST_PCT] and cars_i[w, c, I_PIT_INTENT] < 1:
        cars_i[w, c, I_PIT_INTENT] = 1


@kernel(inline="always")
def _grip_budget(car_params, cars_f, cars_i, rules, w, c, tf):
    """The lateral grip budget a_lat(v) = mu g + aero_b v^2 of car (w, c) in its physics mode (tf:
    tyre factor), and what the planner uses of it. Returns (sim, mass kg, mu, aero_b 1/m, mu_g m/s^2
    and aero_k 1/m for corner speeds, brake_a m/s^2 and brake_b 1/m for braking distances)."""
    mass = car_params[w, c, P_MASS]
    tf_cg = tf * COMPOUND_GRIP[compound_index(cars_i[w, c, I_COMPOUND])]
    cl_m = car_params[w, c, P_DOWNFORCE_CL] / mass
    sim = rules[w, R_PHYSICS_MODE] == PHYSICS_SIMULATOR
    # Both modes (PaddockJS 2.0.0): the grip budget is (grip tf g + Cl v^2 / m) * surface * tf *
    # compound; the wear factor tf enters twice, so worn tyres lose grip fast.
    mu = car_params[w, c, P_TIRE_GRIP] * tf * tf_cg
    aero_b = cl_m * tf_cg
    pace = car_params[w, c, P_PACE]
    aggr = car_params[w, c, P_AGGRESSION]
    margin = (SIM_GRIP_MARGIN if sim else GRIP_MARGIN) * (1.0 + 0.5 * (pace - 1.0) + 0.04 * (aggr - 0.5))
    brake_b = 0.0
    if sim:
        # Braking takes lateral grip in the simulator's friction ellipse: plan gentler braking.
        return sim, mass, mu, aero_b, margin * mu * GRAVITY, margin * aero_b, SIM_BRAKE_PLAN * tf_cg, brake_b
    # Braking is capped at grip * (20 + 14 r) m/s^2: assume the low end.
    brake_a = BRAKE_FRAC_ARCADE * min(car_params[w, c, P_BRAKE] / mass, 20.0 * tf_cg)
    return sim, mass, mu, aero_b, margin * mu * GRAVITY, margin * aero_b, brake_a, brake_b


@kernel(inline="always")
def _preview_speed(prev, i, t, mu_g, aero_k, brake_a, brake_b):
    """Speed cap (m/s) from the curvature ahead: the track's preview table ``prev`` interpolated at
    fraction t between samples i and i + 1. Squared speeds, one square root at the end (sqrt is
    monotonic: same minimum). An interval d m ahead with corner speed vc (vc^2 = mu_g / den,
    den = kappa - aero_k, from v^2 kappa = mu_g + aero_k v^2) allows v^2 = vc^2 (1 + 2 brake_b d)
    + 2 brake_a d, decelerating down to vc with the budget at vc (the smaller one: conservative).
    Whether it lowers the cap is decided without a division (den > 0 and the cap left over
    2 brake_a d is positive), so the division runs only for the intervals that do lower it. A corner
    speed above MAX_SPEED never lowers a cap that starts at MAX_SPEED^2, so it needs no clamp."""
    max2 = MAX_SPEED * MAX_SPEED
    v2_target = max2
    for k in range(1, N_PREVIEW):
        d = PREVIEW_D[k - 1]
        room = v2_target - 2.0 * brake_a * d
        if room <= 0.0:
            break   # this interval and the farther ones allow at least that much: no new cap
        den = prev[i, k - 1] + t * (prev[i + 1, k - 1] - prev[i, k - 1]) - aero_k
        grow = 1.0 + 2.0 * brake_b * d
        if den > 1e-9 and mu_g * grow < room * den:
            v2_target = mu_g / den * grow + 2.0 * brake_a * d
    return math.sqrt(v2_target)


@kernel(inline="always")
def _rejoin_ticks(cars_f, cars_i, w, c, off, hw):
    """Rejoin mode of car (w, c): set while off the legal surfaces, counted down once back and
    settled (|offset| off < hw - 1 m from the half width hw, heading error < 0.2 rad). Writes and
    returns I_AI_REJOIN."""
    rejoin = cars_i[w, c, I_AI_REJOIN]
    if cars_i[w, c, I_ON_TRACK] == 0:
        rejoin = REJOIN_TICKS
    elif rejoin > 0:
        # heading error to the track at the car's projection (vehicle.wheels, same pose)
        herr = abs(cars_f[w, c, F_HEADING_ERROR])
        if abs(off) < hw - 1.0 and herr < 0.2:
            rejoin = 0          # settled: back on the asphalt and pointing down the track
        else:
            rejoin -= 1
    cars_i[w, c, I_AI_REJOIN] = rejoin
    return rejoin


@kernel(inline="always")
def _rejoin_speed(surf):
    """Target speed (m/s) of a rejoining car on surface ``surf`` (SURF_* code)."""
    if surf == SURF_TRACK:
        return 88.0 * MPS_PER_KPH
    if surf == SURF_KERB:
        return 72.0 * MPS_PER_KPH
    if surf == SURF_GRAVEL:
        return 56.0 * MPS_PER_KPH
    if surf == SURF_GRASS:
        return 48.0 * MPS_PER_KPH
    return 34.0 * MPS_PER_KPH


@kernel(inline="always")
def _racing_lane(cars_f, car_flags, w, c, traffic, s, off, lane, lane_lim, turn_near, kappa_max_near, length):
    """The lane of a car on track: toward an inside-of-corner bias (from the heading change
    turn_near rad over the next PREVIEW_NEAR m), or a passing lane around a car in the way (``traffic``,
    the world's ``Traffic``), at a bounded rate, slower in corners (kappa_max_near 1/m). lane, lane_lim:
    current lane and its bound (m). Returns (new lane m, following speed cap m/s)."""
    target = min(max(turn_near / PREVIEW_NEAR * INSIDE_GAIN, -INSIDE_MAX), INSIDE_MAX)
    pass_lane, follow_v, block_l, block_r = scan_traffic(
        traffic.idx, traffic.prog, traffic.offs, traffic.spd, traffic.m, c, (car_flags[w, c] & FLAG_COLLIDES) != 0,
        cars_f[w, c, F_SPEED], s, off, lane, length)
    if not math.isnan(pass_lane):
        target = pass_lane
    target = min(max(target, -lane_lim), lane_lim)
    step = LANE_RATE * DT / (1.0 + LANE_CORNER * kappa_max_near)   # slower in corners
    dlane = target - lane
    if (dlane < 0.0 and block_l) or (dlane > 0.0 and block_r):
        dlane = 0.0
    lane += min(max(dlane, -step), step)
    return min(max(lane, -lane_lim), lane_lim), follow_v


@kernel(inline="always")
def _pursuit_steer(dx, dy, cos_h, sin_h, tf):
    """Arcade pure-pursuit steering in [-1, 1] toward a target (dx, dy) m from a car whose heading has
    cos/sin (cos_h, sin_h), tf its tyre factor. A target far to the side or behind (a spun car) gets
    full lock."""
    lx = dx * cos_h + dy * sin_h
    ly = -dx * sin_h + dy * cos_h
    dist2 = max(lx * lx + ly * ly, 1.0)
    if lx < 0.3 * math.sqrt(dist2):
        return 1.0 if ly >= 0.0 else -1.0
    curv = 2.0 * ly / dist2
    # Arcade yaw rate is v / L tan(delta) * tf: worn tyres need proportionally more lock.
    steer = atan_poly(WHEELBASE * curv / tf) / MAX_STEER_ANGLE
    return min(max(steer, -1.0), 1.0)


@kernel(inline="always")
def _pedals(cars_f, car_params, w, c, v, v_target, mass, mu, aero_b, rejoin):
    """(throttle, brake) in [0, 1] toward v_target (m/s) from speed v: throttle from the speed
    error; brake as a deceleration demand capped below the tyres' limit so the car can still steer
    while braking."""
    err = v_target - v
    if err > -BRAKE_DEADBAND:
        throttle = min(max(THROTTLE_FF + THROTTLE_GAIN * err, 0.0), 1.0)
        return throttle, 0.0
    # Friction circle: what the lateral acceleration leaves of the grip budget.
    budget = mu * GRAVITY + aero_b * v * v
    a_lat = abs(cars_f[w, c, F_LAT_ACC])
    a_cap = BRAKE_USE * math.sqrt(max(budget * budget - a_lat * a_lat, 0.0))
    a_cap = max(a_cap, BRAKE_FLOOR * budget)
    if rejoin > 0:
        a_cap *= 0.5
    a_dec = min(BRAKE_GAIN * (-err), a_cap)
    return 0.0, min(a_dec * mass / max(car_params[w, c, P_BRAKE], 1.0), 1.0)


@kernel(inline="always")
def _ai_one(dtrack, traffic, cars_f, cars_i, car_params, car_flags, rules, w, c, pre):
    """One built-in car's controls (steer, throttle, brake) on the world's ``DriverTrack`` dtrack (inlined into
    ``ai_world``): ``traffic`` the world's ``Traffic``; pre float64[C, N_PRE]: row c (layout.PRE_*) the
    tyre factor of the car's F_TIRE_ENERGY, cos / sin of its F_HEADING and its simulator start state
    (``vehicle.simulator.sim_start_state``; simulator mode only)."""
    cx, cy, cs, cnx, cny, prev, length, hw = dtrack
    tf = pre[c, PRE_TYRE]
    update_pit_intent(cars_f, cars_i, car_flags, rules, w, c)
    if cars_i[w, c, I_GRID_LOCKED] != 0:
        return 0.0, 0.0, 1.0
    v = max(cars_f[w, c, F_SPEED], 0.0)
    s = cars_f[w, c, F_PROGRESS]
    off = cars_f[w, c, F_OFFSET]
    sim, mass, mu, aero_b, mu_g, aero_k, brake_a, brake_b = _grip_budget(car_params, cars_f, cars_i, rules, w,
                                                                         c, tf)
    # Preview: speed cap from the curvature ahead, and the heading change / largest curvature of
    # the next PREVIEW_NEAR m (the track's table, interpolated between the samples around s).
    i, t = sample_at(cs, length, s)
    v_target = _preview_speed(prev, i, t, mu_g, aero_k, brake_a, brake_b)
    if cars_i[w, c, I_DRS_ACTIVE] != 0:
        v_target += DRS_TARGET_BONUS        # racingControls.js: the corner target + 22 km/h with DRS open
    turn_near = prev[i, PREVIEW_TURN] + t * (prev[i + 1, PREVIEW_TURN] - prev[i, PREVIEW_TURN])
    kappa_max_near = prev[i, PREVIEW_KMAX] + t * (prev[i + 1, PREVIEW_KMAX] - prev[i, PREVIEW_KMAX])
    v_target = max(v_target, MIN_TARGET)

    rejoin = _rejoin_ticks(cars_f, cars_i, w, c, off, hw)
    if sim and should_stabilize(cars_f, cars_i, w, c, hw):
        rejoin = max(rejoin, STABILIZE_TICKS)
        cars_i[w, c, I_AI_REJOIN] = rejoin
    lane = cars_f[w, c, F_AI_LANE_OFFSET]
    lane_lim = hw - LANE_EDGE
    if rejoin > 0:
        # Aim at the track on the side the car is on, a little inside the edge.
        lane = min(max(off, -lane_lim), lane_lim) * 0.6
        v_target = min(v_target, _rejoin_speed(cars_i[w, c, I_SURFACE]))
        look = LOOK_MIN + 0.3 * v
    else:
        lane, follow_v = _racing_lane(cars_f, car_flags, w, c, traffic, s, off, lane, lane_lim, turn_near,
                                      kappa_max_near, length)
        v_target = min(v_target, follow_v)
        # Lookahead grows with speed, shrinks in tight corners (R = 50 m -> x0.6).
        look = LOOK_BASE + LOOK_TIME * v
        look *= 1.0 / (1.0 + 30.0 * kappa_max_near)
    cars_f[w, c, F_AI_LANE_OFFSET] = lane
    look = min(max(look, LOOK_MIN), LOOK_MAX)
    if sim:
        if rejoin > 0:
            return sim_rejoin_controls(cx, cy, cs, cnx, cny, length, hw, cars_f, cars_i, w, c, v_target)
        tx, ty = _lane_point(cx, cy, cs, cnx, cny, length, s + look, lane)
        return sim_racing_controls(cars_f, cars_i, car_params, w, c, tx, ty, v_target, turn_near,
                                   COMPOUND_GRIP[compound_index(cars_i[w, c, I_COMPOUND])], pre)

    # Pure pursuit toward the lane point one lookahead ahead.
    tx, ty = _lane_point(cx, cy, cs, cnx, cny, length, s + look, lane)
    steer = _pursuit_steer(tx - cars_f[w, c, F_X], ty - cars_f[w, c, F_Y], pre[c, PRE_COS], pre[c, PRE_SIN], tf)
    throttle, brake = _pedals(cars_f, car_params, w, c, v, v_target, mass, mu, aero_b, rejoin)
    return steer, throttle, brake


@kernel
def ai_world(tr, cars_f, cars_i, car_params, car_flags, rules, w, n_cars, source, controls, pre, tidx,
             tbuf):
    """The built-in driver's controls of every car of world ``w`` whose ``source[c]`` (int8[C]) is
    CONTROL_BUILTIN, written to ``controls`` float64[C, 3] (steer in [-1, 1] as a fraction of the
    maximum road-wheel angle, throttle, brake in [0, 1]). pre float64[C, N_PRE] (columns PRE_*: heading,
    its cos, its sin, tyre factor, the simulator start state) of each such car, filled by
    ``vehicle.dynamics.prepare_car``. Side effects:
    F_AI_LANE_OFFSET (smoothed lane), I_AI_REJOIN (rejoin ticks left), I_PIT_INTENT (tyre-driven
    pit requests). Reads the car's track position as ``vehicle.wheels.classify_car`` wrote it. Scratch:
    tidx int64[C], tbuf float64[3, C] (the gathered traffic). One call per world: the track
    arrays are gathered (``DriverTrack``), and the traffic (``Traffic``), once, not per car."""
    dtrack = DriverTrack(tr.cx, tr.cy, tr.cs, tr.cnx, tr.cny, tr.ai_preview, tr.length, tr.half_width)
    tm = gather_traffic(cars_f, cars_i, car_flags, w, n_cars, tidx, tbuf[0], tbuf[1], tbuf[2])
    traffic = Traffic(tidx, tbuf[0], tbuf[1], tbuf[2], tm)
    for c in range(n_cars):
        if source[c] != CONTROL_BUILTIN:
            continue
        st, th, br = _ai_one(dtrack, traffic, cars_f, cars_i, car_params, car_flags, rules, w, c, pre)
        controls[c, 0] = st
        controls[c, 1] = th
        controls[c, 2] = br


@allocating_kernel
def ai_actions(tr, cars_f, cars_i, car_params, car_flags, rules, slots, out):
    """The built-in driver as a policy: its controls for car slots ``slots`` (int64[K]) of every
    world, written to ``out`` float32[W, K, 3] as actions (steering, throttle, brake), e.g. for
    a baseline, an expert for imitation, or a benchmark in which the controlled cars drive laps.

    Decides from the current state exactly as a tick's ``ai_world`` would for a built-in car, and
    like it keeps the driver's memory of those cars (F_AI_LANE_OFFSET, I_AI_REJOIN) up to date.
    """
    n_cars = cars_f.shape[1]
    source = np.zeros(n_cars, np.int8)
    controls = np.zeros((n_cars, 3))
    pre = np.full((n_cars, N_PRE), np.nan)
    tidx = np.empty(n_cars, np.int64)
    tbuf = np.empty((3, n_cars))
    for k in range(slots.shape[0]):
        source[slots[k]] = CONTROL_BUILTIN
    for w in range(cars_f.shape[0]):
        for k in range(slots.shape[0]):
            prepare_car(cars_f, rules, w, slots[k], pre)
        ai_world(tr, cars_f, cars_i, car_params, car_flags, rules, w, n_cars, source, controls, pre, tidx, tbuf)
        for k in range(slots.shape[0]):
            for j in range(3):
                out[w, k, j] = controls[slots[k], j]
