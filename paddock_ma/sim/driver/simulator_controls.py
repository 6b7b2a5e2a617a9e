"""The built-in driver's controls in simulator mode (PaddockJS 2.0.0's simulator model,
``vehicle.simulator``), after PaddockJS's own simulator controller (``racingControls.js``
``decideSimulatorRacingControls``, ``rejoinControls.js``, ``driverController.js``): lower corner
speeds than arcade, throttle and brakes inside the friction ellipse, slip-aware steering, and a
stabilising rejoin mode for a car that slides.

Why a controller of its own. In that model the lateral acceleration a car gets is
``u * yaw_kinematic - lat_v * damping`` (u, lat_v: forward and sideways velocity in the body frame),
capped by a friction ellipse in which the pedals take a large share (longitudinal usage =
demand / (0.52 x the grip budget)); the yaw rate follows ``lateral acceleration / u`` times an
authority ``1 - 1.8 |slip|``, moving at a bounded rate. Hence:

* a steady steering angle decays into a crab: the slip damping eats the lateral acceleration, so the
  steering must include ``lat_v * damping`` (``_road_wheel_angle``);
* a body slip toward the outside of the turn grows by e^(1.8 theta) over a turn of theta radians (the
  nose lags the path), one toward the inside decays; the slip only changes otherwise where the yaw
  rate cannot follow its target (its rate limit). PaddockJS's controller answers with speed
  penalties; here the slip is regulated toward SLIP_GOAL inside the turn: while it is off, the
  steering follows a sawtooth around the angle it wants (a fast jump the yaw rate lags behind, a
  slow ramp it follows), whose net effect turns the nose in or out (``_pumped_angle``);
* throttle and brake are capped so that the lateral cap the ellipse leaves covers the turn.

The rejoin controls are PaddockJS's ``decideSimulatorRejoinControls`` (aim back at the road at a
surface-dependent speed) and the stabilising rule its ``shouldStabilizeSimulatorCar``.

All functions are ``inline="always"`` kernels; bare track arrays (``cs`` cumulative distance,
``cx``/``cy``, ``cnx``/``cny`` right normals, lap length m, half width ``hw`` m). Speeds in m/s, angles
in rad (+ = right), steering returned as a fraction of MAX_STEER_ANGLE.
"""

import math

from ..core.jit import kernel
from ..core.layout import (
    DT, F_APPLIED_STEER, F_GRIP_USAGE, F_HEADING, F_OFFSET, F_PROGRESS, F_SLIP_FRONT, F_SPEED, F_STEER_ANGLE,
    F_VX, F_VY, F_X, F_Y, GRAVITY, I_INSTABILITY, I_ON_TRACK, I_SURFACE, I_WHEEL_SURFACE_FL,
    I_WHEEL_SURFACE_FR, I_WHEEL_SURFACE_RL, I_WHEEL_SURFACE_RR, INSTAB_SPIN_RISK, MAX_SPEED, MAX_STEER_ANGLE,
    MPS_PER_KPH, P_BRAKE, P_DOWNFORCE_CL, P_MASS, P_POWER, P_TIRE_GRIP, PRE_COS, PRE_ENGINE, PRE_SIN, PRE_SLIP,
    PRE_STEER_GAIN, PRE_TYRE, SURF_BARRIER, SURF_GRASS, SURF_GRAVEL, SURF_KERB, SURF_TRACK, WHEELBASE,
)
from ..core.trig import atan_poly, clamp, lerp_at, wrap_angle
from ..track.geometry import sample_at
from ..vehicle.surface_table import SIM_SURFACE_GRIP, table_index

CAR_WIDTH = 1.9                  # m, PaddockJS's VEHICLE_LIMITS.carWidth
SLIP_GOAL = 0.01                 # rad, body slip held toward the inside of the turn
SLIP_DEAD = 0.004                # rad, no regulation this close to the goal
PUMP_LAG = 4.0                   # ticks the yaw rate lags behind a sawtooth jump
PUMP_RAMP = 8.0                  # ticks of the sawtooth's slow ramp (each step within the yaw limit)
PUMP_BOOST_MAX = 3.0             # the sawtooth's amplitude grows with the slip error, up to 4 x
BRAKE_DEADBAND = 0.8             # m/s of overspeed handled by lifting off
REJOIN_LOOK_BASE = 56.0          # m, PaddockJS's REJOIN_LOOKAHEAD_BASE
REJOIN_LOOK_MAX = 105.0          # m
STABILIZE_TICKS = 67             # floor(REJOIN_HOLD_FRAMES * 0.45)
KPH = MPS_PER_KPH


@kernel(inline="always")
def _sign(x):
    """Math.sign for a float: -1, 0 or 1."""
    if x > 0.0:
        return 1.0
    if x < 0.0:
        return -1.0
    return 0.0


@kernel(inline="always")
def should_stabilize(cars_f, cars_i, w, c, hw):
    """PaddockJS's shouldStabilizeSimulatorCar: unstable (spin risk, grip usage > 1.25 or |slip| >
    0.24) and near the edge, or sliding hard (|slip| > 0.34 or grip usage > 1.7)."""
    gu = cars_f[w, c, F_GRIP_USAGE]
    slip = abs(cars_f[w, c, F_SLIP_FRONT])
    near_edge = abs(cars_f[w, c, F_OFFSET]) > hw - CAR_WIDTH * 2.25
    unstable = cars_i[w, c, I_INSTABILITY] == INSTAB_SPIN_RISK or gu > 1.25 or slip > 0.24
    return unstable and (near_edge or slip > 0.34 or gu > 1.7)


@kernel(inline="always")
def _surface_grip(cars_i, w, c):
    """Mean simulator-table grip of the car's four wheels (as ``vehicle.simulator`` reads it)."""
    return (SIM_SURFACE_GRIP[table_index(cars_i[w, c, I_WHEEL_SURFACE_FL])]
            + SIM_SURFACE_GRIP[table_index(cars_i[w, c, I_WHEEL_SURFACE_FR])]
            + SIM_SURFACE_GRIP[table_index(cars_i[w, c, I_WHEEL_SURFACE_RL])]
            + SIM_SURFACE_GRIP[table_index(cars_i[w, c, I_WHEEL_SURFACE_RR])]) / 4.0


@kernel(inline="always")
def _road_wheel_angle(a_lat, lat_v, u, damping, speed_steer):
    """Road-wheel angle (rad) whose kinematic yaw makes the model's desired lateral acceleration
    u * yaw - lat_v * damping equal ``a_lat`` (m/s^2): the slip damping is steered out."""
    uu = max(u, 1.0)
    raw_yaw = (a_lat + lat_v * damping) / uu
    return atan_poly(WHEELBASE * raw_yaw / uu) / speed_steer


@kernel(inline="always")
def _pumped_angle(cars_f, w, c, delta, amp, jump):
    """The road-wheel angle to command so that the applied angle follows a sawtooth around ``delta``
    (rad) of amplitude ``amp``: a fast jump by ``amp`` in direction ``jump`` (+1 / -1), then a slow
    ramp back over PUMP_RAMP ticks. The car's last command (F_APPLIED_STEER) and reached angle
    (F_STEER_ANGLE) are the sawtooth's memory."""
    actual = cars_f[w, c, F_STEER_ANGLE]
    last = cars_f[w, c, F_APPLIED_STEER] * MAX_STEER_ANGLE
    jump_to = delta + jump * 0.5 * amp
    ramp_to = delta - jump * 0.5 * amp
    if (actual - jump_to) * jump > amp or (ramp_to - actual) * jump > amp:
        return delta                       # far from the band (delta moved): rejoin it first
    if (last - actual) * jump > 1e-9:
        return jump_to                     # a jump under way (the steering rate limits it)
    nxt = actual - jump * amp / PUMP_RAMP
    if (nxt - ramp_to) * jump <= 0.0:
        return jump_to                     # the ramp is done: jump
    return nxt


@kernel(inline="always")
def sim_racing_controls(cars_f, cars_i, car_params, w, c, tx, ty, v_plan, turn_ahead, cgrip, pre):
    """(steer fraction, throttle, brake) of car (w, c) racing toward the lane point (tx, ty) m at the
    planned speed ``v_plan`` (m/s); ``turn_ahead`` (rad, + = right) the heading change of the road
    just ahead, cgrip the compound's grip; ``pre`` float64[C, N_PRE] the tick's shared per-car inputs
    (layout.PRE_*): row c's cos / sin of the heading, tyre factor, and slip (body slip, rad), gain
    (steering gain of the speed) and engine curve, the car's ``vehicle.simulator.sim_start_state``, as
    the model reads them this tick.

    Pure pursuit along the velocity gives the lateral acceleration wanted; ``_road_wheel_angle``
    delivers it; the slip is regulated toward SLIP_GOAL inside the turn (module docstring); the
    pedals stay inside the friction ellipse that lateral acceleration leaves."""
    cos_h = pre[c, PRE_COS]
    sin_h = pre[c, PRE_SIN]
    tf = pre[c, PRE_TYRE]
    slip = pre[c, PRE_SLIP]
    gain = pre[c, PRE_STEER_GAIN]
    engine_curve = pre[c, PRE_ENGINE]
    vx = cars_f[w, c, F_VX]
    vy = cars_f[w, c, F_VY]
    v = math.sqrt(vx * vx + vy * vy)
    u = vx * cos_h + vy * sin_h
    lat_v = -vx * sin_h + vy * cos_h
    mass = car_params[w, c, P_MASS]
    ratio = clamp(v / MAX_SPEED, 0.0, 1.0)
    sgrip = _surface_grip(cars_i, w, c) * tf * cgrip
    total = max(0.1, (car_params[w, c, P_TIRE_GRIP] * tf * GRAVITY
                      + car_params[w, c, P_DOWNFORCE_CL] * v * v / mass) * sgrip)
    damping = 4.2 + sgrip * 2.1 + ratio * 1.6
    speed_steer = clamp(gain, 0.16, 1.0)

    # Pure pursuit in the frame of the velocity (of the heading when nearly stopped).
    dx = tx - cars_f[w, c, F_X]
    dy = ty - cars_f[w, c, F_Y]
    fx = cos_h
    fy = sin_h
    if v > 1.0:
        fx = vx / v
        fy = vy / v
    lx = dx * fx + dy * fy
    ly = -dx * fy + dy * fx
    dist2 = max(lx * lx + ly * ly, 1.0)
    if lx < 0.3 * math.sqrt(dist2):
        return (1.0 if ly >= 0.0 else -1.0), 0.2, 0.0     # target behind or far aside: full lock
    a_lat = clamp(v * v * 2.0 * ly / dist2, -0.9 * total, 0.9 * total)
    delta = _road_wheel_angle(a_lat, lat_v, u, damping, speed_steer)

    # Slip regulation toward SLIP_GOAL on the inside of the turn.
    side = a_lat if abs(a_lat) > 0.5 else turn_ahead
    goal = -SLIP_GOAL if side > 0.0 else (SLIP_GOAL if side < 0.0 else 0.0)
    err = slip - goal
    pump_a = 0.0
    if abs(err) > SLIP_DEAD and v > 5.0:
        response = 1.6 + sgrip * 0.9 + ratio * 0.5
        yaw_step = min(max(0.08, total / max(v, 0.1) * response), 6.2 if ratio < 0.18 else 3.2) * DT
        # the road-wheel angle of a yaw-rate jump of PUMP_LAG ticks of the yaw limit, larger the
        # farther the slip is off: the slip grows in proportion to itself (e^(1.8 theta)), a jump's
        # correction with its amplitude, so a fixed amplitude loses a slip past ~0.015 rad
        boost = 1.0 + clamp((abs(err) - SLIP_DEAD) / SLIP_GOAL, 0.0, PUMP_BOOST_MAX)
        amp = boost * PUMP_LAG * yaw_step * WHEELBASE / (max(u, 5.0) * speed_steer)
        pump_a = PUMP_LAG * yaw_step * max(u, 5.0)
        delta = _pumped_angle(cars_f, w, c, delta, amp, -1.0 if err > 0.0 else 1.0)
    steer = clamp(delta, -MAX_STEER_ANGLE, MAX_STEER_ANGLE) / MAX_STEER_ANGLE

    # A slip toward the outside beyond the goal: plan slower (less lateral acceleration, so it grows
    # more slowly and the sawtooth has room under the lateral cap).
    outward = -err if side < 0.0 else err
    v_plan *= 1.0 - clamp((outward - SLIP_DEAD) * 4.0, 0.0, 0.3)
    # Pedals inside the friction ellipse: the longitudinal usage (demand / (0.52 total)) that keeps
    # the lateral cap above what the turn and the sawtooth's top need.
    need = min(abs(a_lat) * 1.15 + 0.5 * pump_a + 1.5, total)
    lu = math.sqrt(max(0.0, 1.0 - (need / total) ** 2))
    a_long_max = max(lu * 0.52 * total, 1.0)
    err_v = v_plan - v
    if err_v > -BRAKE_DEADBAND:
        engine = car_params[w, c, P_POWER] * engine_curve / mass
        throttle = clamp(0.35 + 0.45 * err_v, 0.0, 1.0)
        return steer, min(throttle, a_long_max / max(engine, 1e-6)), 0.0
    a_dec = min(6.0 * (-err_v), a_long_max)
    return steer, 0.0, min(a_dec * mass / max(car_params[w, c, P_BRAKE], 1.0), 1.0)


@kernel(inline="always")
def _rejoin_surface_speed(surf):
    """PaddockJS's simulator rejoin target speed (m/s) on surface ``surf``."""
    if surf == SURF_TRACK:
        return 78.0 * KPH
    if surf == SURF_KERB:
        return 58.0 * KPH
    if surf == SURF_GRAVEL:
        return 62.0 * KPH
    if surf == SURF_GRASS:
        return 52.0 * KPH
    if surf == SURF_BARRIER:
        return 22.0 * KPH
    return 78.0 * KPH     # pit surfaces: as the track


@kernel(inline="always")
def sim_rejoin_controls(cx, cy, cs, cnx, cny, length, hw, cars_f, cars_i, w, c, v_cap):
    """(steer fraction, throttle, brake) of car (w, c) rejoining: PaddockJS's
    decideSimulatorRejoinControls (aim back at the road, a surface-dependent speed), the speed also
    capped at ``v_cap`` m/s (the preview's)."""
    v = max(cars_f[w, c, F_SPEED], 0.0)
    s = cars_f[w, c, F_PROGRESS]
    off = cars_f[w, c, F_OFFSET]
    surf = cars_i[w, c, I_SURFACE]
    on_track = cars_i[w, c, I_ON_TRACK] != 0
    gu = cars_f[w, c, F_GRIP_USAGE]
    slip = abs(cars_f[w, c, F_SLIP_FRONT])
    look = clamp(v * 0.58 + REJOIN_LOOK_BASE, REJOIN_LOOK_BASE, REJOIN_LOOK_MAX)
    dist = max(0.0, abs(off) - hw)
    ahead = 0.0 if (not on_track and dist > 2.5) else look * 0.78
    side = _sign(off)
    rejoin_off = 0.0
    if side != 0.0 and (dist > 0.5 or abs(off) > hw - CAR_WIDTH * 1.6):
        rejoin_off = -side * 2.0 * hw * 0.24
    i, t = sample_at(cs, length, s + ahead)
    tx = lerp_at(cx, i, t) + lerp_at(cnx, i, t) * rejoin_off
    ty = lerp_at(cy, i, t) + lerp_at(cny, i, t) * rejoin_off
    angle_err = wrap_angle(math.atan2(ty - cars_f[w, c, F_Y], tx - cars_f[w, c, F_X]) - cars_f[w, c, F_HEADING])
    target_kph = _rejoin_surface_speed(surf) / KPH
    align = clamp(1.0 - abs(angle_err) / math.pi, 0.22, 1.0)
    lo = 12.0 if surf == SURF_BARRIER else 24.0
    desired = clamp(target_kph * (0.62 + align * 0.38) - dist * 0.065, lo, target_kph) * KPH
    desired = min(desired, max(v_cap, lo * KPH))
    err = desired - v
    floor_thr = 0.42 if surf == SURF_BARRIER else 0.36
    low = floor_thr if v < 18.0 * KPH else 0.0
    thr_floor = floor_thr if not on_track else low
    if surf == SURF_BARRIER:
        thr_limit = 0.5
    elif surf == SURF_GRAVEL:
        thr_limit = 0.82
    elif surf == SURF_GRASS:
        thr_limit = 0.76
    else:
        thr_limit = 0.52
    brake = 0.0
    if err < -5.0 * KPH:
        brake = clamp(-err / (24.0 * KPH), 0.04, 0.34 if on_track else 0.24)
    unsettled = clamp(1.0 - max(0.0, gu - 0.55) * 0.75 - slip * 1.65, 0.22, 1.0)
    if brake > 0.05:
        throttle = 0.0
    elif err > 0.0:
        throttle = clamp((err / (24.0 * KPH) * align + thr_floor) * unsettled, 0.04, thr_limit)
    else:
        throttle = thr_floor * unsettled
    steer = clamp(angle_err * 0.94, -MAX_STEER_ANGLE, MAX_STEER_ANGLE)
    return steer / MAX_STEER_ANGLE, throttle, brake
