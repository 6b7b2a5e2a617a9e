"""Simulator-mode vehicle dynamics (``PHYSICS_SIMULATOR``): PaddockJS 2.0.0's simulator model
(``src/simulation/vehicle/vehiclePhysics.js``, ``integrateSimulatorVehiclePhysics``), the same state,
constants and per-tick order, in SI (PaddockJS's 12 u/m cancel: its formulas are in m/s inside).

State: the world velocity (F_VX, F_VY, m/s), the yaw rate (F_YAW_RATE, rad/s, a state here: it moves
toward a target at a bounded rate), the heading, the road-wheel angle, and F_SPEED = |velocity| (m/s)
of the previous tick (the acceleration and braking limits read it). One tick:

1. surface: the mean of the four wheels' simulator-table rows (grip, drag, rolling, scrub); the
   "surface name" (kerb / gravel / grass rules below) is the worst wheel's;
2. grip budget a = max(0.1, (tireGrip tf g + Cl v^2 / m) * surface grip * tf), v = |velocity|;
3. longitudinal: engine P throttle max(0.08, 1 - r^1.22) / m and brake B brake / m, each capped by
   the arcade limits (on F_SPEED); drag (0.28 Cd + 0.018 surface drag) v^2 / m; rolling rr g; with DRS
   open (``race.drs``) P x 1.07 and Cd x 0.46;
4. lateral: a speed-sensitive steering angle gives a kinematic yaw rate; the desired lateral
   acceleration u * yaw - damping * v_lat is capped by the friction ellipse left by the longitudinal
   demand (grip usage = the combined demand over the budget); steering scrub slows a steered car;
5. yaw rate: toward (lateral acceleration / u) * slip authority + wheel-drag yaw (x1.6 on a kerb),
   at most |a| / v, moving at a bounded rate;
6. heading += yaw dt; velocity += (forward * long + right * lat) dt in the OLD body frame; |velocity|
   capped at MAX_SPEED; position += velocity dt.

Derived outputs (PaddockJS's telemetry): lateral acceleration = the applied lateral acceleration,
longitudinal = the applied longitudinal one, grip usage, body slip angle (F_SLIP_FRONT and F_SLIP_REAR
both hold it), traction limited (I_TRACTION_LIMITED) and the stability label (I_INSTABILITY).
No reverse gear, but a spun car may move backwards (braking then acts against its motion).

Performance: ``simulator_tick`` is ``inline="always"``; one body in the step's per-car loop.
"""

import math

from ..core.jit import kernel
from ..core.layout import (
    F_GRIP_USAGE, F_HEADING, F_LAT_ACC, F_LONG_ACC, F_SLIP_FRONT, F_SLIP_REAR, F_SPEED, F_VX, F_VY, F_X, F_Y,
    F_YAW_RATE, GRAVITY, I_DRS_ACTIVE, I_INSTABILITY, I_TRACTION_LIMITED, I_WHEEL_SURFACE_FL, I_WHEEL_SURFACE_FR,
    I_WHEEL_SURFACE_RL, I_WHEEL_SURFACE_RR, INSTAB_NONE, INSTAB_OVERSTEER, INSTAB_SPIN_RISK,
    INSTAB_UNDERSTEER, MAX_SPEED, MAX_STEER_ANGLE, P_BRAKE, P_DOWNFORCE_CL, P_DRAG_CD, P_MASS, P_POWER,
    P_TIRE_CARE, P_TIRE_GRIP, SURF_GRASS, SURF_GRAVEL, SURF_KERB, WHEELBASE,
)
from ..core.trig import atan2_poly, clamp, power, sincos, tan_small
from .surface_table import (
    SIM_SURFACE_DRAG, SIM_SURFACE_GRIP, SIM_SURFACE_ROLLING, SIM_SURFACE_SCRUB, SURFACE_PRIORITY, table_index,
)
from .limits import braking_limit, capped_drive, normalize_angle, speed_ratio, wheel_drag_yaw_rate

SIM_DRS_POWER = 1.07       # DRS open (I_DRS_ACTIVE, race.drs): of the engine force
SIM_DRS_DRAG = 0.46        # of the aero drag coefficient
# Below this forward speed (m/s) the car has no kinematic yaw (PaddockJS: 0.05 m/s).
STILL_SPEED = 0.05
STOP_SPEED = 0.5           # m/s: below it the resistive forces stop a car instead of reversing it
# Slip angle reads 0 below this speed (m/s): PaddockJS's 0.01 sim units/s.
SLIP_MIN_SPEED = 0.01 / 12.0


@kernel(error_model="numpy", inline="always")
def sim_start_state(cars_f, w, c, ch, sh):
    """What the simulator model and the built-in driver's simulator controls both derive from car (w, c)'s
    velocity at the start of a tick (ch, sh: cos and sin of its heading), computed once a tick:
    (body slip rad: atan2(sideways, max(|forward|, 0.1)) velocity; steering gain of the forward speed,
    1 / (1 + (|u| / 58)^1.85 x 2.35), unclamped; engine curve max(0.08, 1 - r^1.22); log r, r =
    v / MAX_SPEED clamped to [0, 1] (``limits.speed_ratio``; the tick's other powers of r share it))."""
    vx = cars_f[w, c, F_VX]
    vy = cars_f[w, c, F_VY]
    v = math.sqrt(vx * vx + vy * vy)
    log_r = speed_ratio(v)[1]
    fwd = vx * ch + vy * sh
    lat_v = vx * -sh + vy * ch
    slip = atan2_poly(lat_v, max(abs(fwd), 0.1))
    gain = 1.0 / (1.0 + power(abs(fwd) / 58.0, 1.85) * 2.35)
    return slip, gain, max(0.08, 1.0 - math.exp(1.22 * log_r)), log_r


@kernel(error_model="numpy", inline="always")
def _stability(grip_usage, slip, worst, brake, throttle):
    """PaddockJS's simulator stability label as an INSTAB_* code."""
    if grip_usage > 1.32 or abs(slip) > 0.42:
        return INSTAB_SPIN_RISK
    if grip_usage > 1.02:
        return INSTAB_OVERSTEER if (brake > 0.2 and throttle < 0.2) else INSTAB_UNDERSTEER
    if worst == SURF_KERB and grip_usage > 0.72:
        return INSTAB_OVERSTEER
    if (worst == SURF_GRAVEL or worst == SURF_GRASS) and grip_usage > 0.5:
        return INSTAB_UNDERSTEER
    return INSTAB_NONE


@kernel(error_model="numpy", inline="always")
def _sign_or_one(x):
    """JavaScript's Math.sign(x || 1): 1 for 0, else the sign of x."""
    if x == 0.0:
        return 1.0
    return 1.0 if x > 0.0 else -1.0


@kernel(error_model="numpy", inline="always")
def _surface_mean(cars_i, w, c):
    """Car (w, c)'s wheels in the surface tables: (the four wheels' rows FL, FR, RL, RR, the worst wheel's
    row, and the four rows' mean grip, drag, rolling and scrub)."""
    fl = table_index(cars_i[w, c, I_WHEEL_SURFACE_FL])
    fr = table_index(cars_i[w, c, I_WHEEL_SURFACE_FR])
    rl = table_index(cars_i[w, c, I_WHEEL_SURFACE_RL])
    rr = table_index(cars_i[w, c, I_WHEEL_SURFACE_RR])
    worst = fl
    for s in (fr, rl, rr):
        if SURFACE_PRIORITY[s] > SURFACE_PRIORITY[worst]:
            worst = s
    s_grip = (SIM_SURFACE_GRIP[fl] + SIM_SURFACE_GRIP[fr] + SIM_SURFACE_GRIP[rl] + SIM_SURFACE_GRIP[rr]) / 4.0
    s_drag = (SIM_SURFACE_DRAG[fl] + SIM_SURFACE_DRAG[fr] + SIM_SURFACE_DRAG[rl] + SIM_SURFACE_DRAG[rr]) / 4.0
    s_roll = (SIM_SURFACE_ROLLING[fl] + SIM_SURFACE_ROLLING[fr] + SIM_SURFACE_ROLLING[rl]
              + SIM_SURFACE_ROLLING[rr]) / 4.0
    s_scrub = (SIM_SURFACE_SCRUB[fl] + SIM_SURFACE_SCRUB[fr] + SIM_SURFACE_SCRUB[rl]
               + SIM_SURFACE_SCRUB[rr]) / 4.0
    return fl, fr, rl, rr, worst, s_grip, s_drag, s_roll, s_scrub


@kernel(error_model="numpy", inline="always")
def _lateral(delta, speed_steer, fwd, lat_v, surface_grip, ratio, total_grip, drive, braking):
    """Steering and the friction ellipse (step 4): the speed-sensitive steering's kinematic yaw, the
    desired lateral acceleration capped by the grip the longitudinal demand leaves -> (normalised steer
    |delta| / MAX_STEER_ANGLE, lateral acceleration m/s^2, the yaw rate it steers rad/s, longitudinal
    usage, grip usage, traction limited)."""
    norm_steer = abs(delta) / MAX_STEER_ANGLE
    eff_steer = delta * clamp(speed_steer, 0.16, 1.0)
    raw_yaw = 0.0 if abs(fwd) <= STILL_SPEED else (fwd / WHEELBASE) * tan_small(eff_steer)
    damping = 4.2 + surface_grip * 2.1 + ratio * 1.6
    desired_lat = fwd * raw_yaw - lat_v * damping
    long_usage = clamp(max(drive, braking) / max(total_grip * 0.52, 1.0), 0.0, 0.94)
    lat_cap = total_grip * math.sqrt(max(0.08, 1.0 - long_usage * long_usage))
    lat_usage = abs(desired_lat) / max(lat_cap, 0.1)
    grip_usage = math.sqrt(lat_usage * lat_usage + long_usage * long_usage)
    limited = grip_usage > 1.0 or long_usage > 0.9
    lat_acc = clamp(desired_lat, -lat_cap, lat_cap)
    steer_yaw = 0.0 if abs(fwd) <= STILL_SPEED else lat_acc / max(abs(fwd), 0.1)
    return norm_steer, lat_acc, steer_yaw, long_usage, grip_usage, limited


@kernel(error_model="numpy", inline="always")
def _scrub_and_power(norm_steer, log_ratio, s_scrub, grip_usage, long_usage, limited):
    """(steering scrub m/s^2, the drive's scale when traction is limited)."""
    # norm_steer^1.55 r^1.05 as one exp (both bases in [0, 1]: the logs are <= 0, -inf at 0)
    scrub = (math.exp(1.55 * math.log(norm_steer) + 1.05 * log_ratio)
             * (42.0 + s_scrub + max(0.0, grip_usage - 0.55) * 18.0))
    power_scale = clamp(1.0 - (grip_usage - 1.0) * 0.55 - long_usage * 0.18, 0.12, 1.0) if limited else 1.0
    return scrub, power_scale


@kernel(error_model="numpy", inline="always")
def _long_acc(drive, power_scale, braking, drag, rolling, scrub, fwd, v, dt):
    """The applied longitudinal acceleration (m/s^2): the scaled drive less braking, drag, rolling
    resistance and scrub, each against the motion; a car coming to rest stops."""
    brake_dir = 1.0 if fwd >= -0.2 else -1.0
    motion = _sign_or_one(fwd)
    long_acc = drive * power_scale - braking * brake_dir - drag * motion - rolling * motion - scrub
    if v <= STOP_SPEED and fwd >= 0.0 and fwd + long_acc * dt < 0.0:
        # Deliberate difference to PaddockJS 2.0.0: there a car at rest reads motion +1, so its brakes
        # and rolling resistance push it backwards and a fully braked car creeps (2 m in 20 s from a
        # standing start). Braking, drag, rolling resistance and scrub resist motion: a car coming to
        # rest stops and is not reversed (drive is never negative). A sliding car is not at rest.
        long_acc = -fwd / dt
    return long_acc


@kernel(error_model="numpy", inline="always")
def _yaw_step(yaw, steer_yaw, drag_yaw, current_slip, total_grip, v, surface_grip, ratio, dt):
    """Step 5: the yaw rate ``yaw`` (rad/s) moved toward its target (the steered yaw times the slip
    authority, plus the wheels' drag yaw; at most the grip's |a| / v) at a bounded rate."""
    max_yaw = 0.0 if v <= STILL_SPEED else total_grip / max(v, 0.1)
    authority = clamp(1.0 - abs(current_slip) * 1.8, 0.35, 1.0)
    target = clamp(steer_yaw * authority + drag_yaw, -max_yaw, max_yaw)
    response = 1.6 + surface_grip * 0.9 + ratio * 0.5
    yaw_acc_cap = 6.2 if ratio < 0.18 else 3.2
    max_step = min(max(0.08, max_yaw * response), yaw_acc_cap) * dt
    return clamp(yaw + clamp(target - yaw, -max_step, max_step), -max_yaw, max_yaw)


@kernel(error_model="numpy", inline="always")
def _integrate(cars_f, w, c, ch, sh, long_acc, lat_acc, yaw, h, dt):
    """Step 6: car (w, c)'s velocity advanced by the accelerations (m/s^2) in the old body frame (ch, sh),
    capped at MAX_SPEED; writes position, velocity, speed, yaw rate and heading ``h``; returns the body
    slip angle (rad)."""
    vx = cars_f[w, c, F_VX]
    vy = cars_f[w, c, F_VY]
    vx += (ch * long_acc + -sh * lat_acc) * dt
    vy += (sh * long_acc + ch * lat_acc) * dt
    speed = math.sqrt(vx * vx + vy * vy)
    if speed > MAX_SPEED and speed > 0.0:
        scale = MAX_SPEED / speed
        vx *= scale
        vy *= scale
        speed = MAX_SPEED
    cars_f[w, c, F_X] += vx * dt
    cars_f[w, c, F_Y] += vy * dt
    cars_f[w, c, F_VX] = vx
    cars_f[w, c, F_VY] = vy
    cars_f[w, c, F_SPEED] = speed
    cars_f[w, c, F_YAW_RATE] = yaw
    cars_f[w, c, F_HEADING] = h
    return 0.0 if speed <= SLIP_MIN_SPEED else normalize_angle(atan2_poly(vy, vx) - h)


@kernel(error_model="numpy", inline="always")
def simulator_tick(cars_f, cars_i, car_params, w, c, delta, throttle, brake, tf, cgrip, dt, ch, sh, start):
    """One simulator tick (module docstring) of car (w, c): delta the road-wheel angle after this
    tick's rate limit (rad), throttle and brake in [0, 1], tf the tyre factor, cgrip the compound
    grip (1 for the medium), dt (s), ch, sh the cos and sin of the current heading, start the car's
    ``sim_start_state`` (current slip, speed steer, engine curve, log ratio; the same values). Writes pose,
    velocity, speed, yaw rate, accelerations, grip usage, slip, traction-limited and stability.
    Returns (lateral acceleration m/s^2, new heading rad, its cos, its sin, tyre wear %/s before the
    compound's factor)."""
    current_slip, speed_steer, engine_curve, log_ratio = start
    mass = car_params[w, c, P_MASS]
    fl, fr, rl, rr, worst, s_grip, s_drag, s_roll, s_scrub = _surface_mean(cars_i, w, c)
    surface_grip = s_grip * tf * cgrip
    vx = cars_f[w, c, F_VX]
    vy = cars_f[w, c, F_VY]
    prev_speed = cars_f[w, c, F_SPEED]
    v = math.sqrt(vx * vx + vy * vy)
    ratio = clamp(v / MAX_SPEED, 0.0, 1.0)
    downforce = car_params[w, c, P_DOWNFORCE_CL] * v * v / mass
    total_grip = max(0.1, (car_params[w, c, P_TIRE_GRIP] * tf * GRAVITY + downforce) * surface_grip)
    fwd = vx * ch + vy * sh
    lat_v = vx * -sh + vy * ch

    drs = cars_i[w, c, I_DRS_ACTIVE] != 0       # DRS open (race.drs): power x 1.07, drag x 0.46
    engine = throttle * car_params[w, c, P_POWER] * (SIM_DRS_POWER if drs else 1.0) * engine_curve
    # the limits read the speed of the previous tick, nearly always the velocity's norm (then its log is known)
    prev_r, prev_log_r = (ratio, log_ratio) if prev_speed == v else speed_ratio(prev_speed)
    drive = capped_drive(engine / mass, prev_r, prev_log_r, surface_grip)
    braking = min(brake * car_params[w, c, P_BRAKE] / mass, braking_limit(prev_speed, surface_grip))
    drag = (car_params[w, c, P_DRAG_CD] * (SIM_DRS_DRAG if drs else 1.0) * 0.28 + s_drag * 0.018) * v * v / mass
    rolling = s_roll * GRAVITY

    norm_steer, lat_acc, steer_yaw, long_usage, grip_usage, limited = _lateral(
        delta, speed_steer, fwd, lat_v, surface_grip, ratio, total_grip, drive, braking)
    scrub, power_scale = _scrub_and_power(norm_steer, log_ratio, s_scrub, grip_usage, long_usage, limited)
    long_acc = _long_acc(drive, power_scale, braking, drag, rolling, scrub, fwd, v, dt)
    drag_yaw = wheel_drag_yaw_rate(SIM_SURFACE_DRAG, SIM_SURFACE_ROLLING, SIM_SURFACE_GRIP, fl, fr, rl, rr,
                                   prev_speed)
    if worst == SURF_KERB:
        drag_yaw *= 1.6
    yaw = _yaw_step(cars_f[w, c, F_YAW_RATE], steer_yaw, drag_yaw, current_slip, total_grip, v, surface_grip,
                    ratio, dt)
    h = normalize_angle(cars_f[w, c, F_HEADING] + yaw * dt)
    slip = _integrate(cars_f, w, c, ch, sh, long_acc, lat_acc, yaw, h, dt)
    cars_f[w, c, F_LAT_ACC] = lat_acc
    cars_f[w, c, F_LONG_ACC] = long_acc
    cars_f[w, c, F_GRIP_USAGE] = grip_usage
    cars_f[w, c, F_SLIP_FRONT] = slip
    cars_f[w, c, F_SLIP_REAR] = slip
    cars_i[w, c, I_TRACTION_LIMITED] = 1 if limited else 0
    cars_i[w, c, I_INSTABILITY] = _stability(grip_usage, slip, worst, brake, throttle)
    care = clamp(car_params[w, c, P_TIRE_CARE], 0.45, 1.8)
    heat = max(0.0, grip_usage - 0.72) * 0.24 + norm_steer * ratio * 0.08
    wear = (0.045 + abs(lat_acc) / GRAVITY * 0.16 + brake * 0.09 + throttle * 0.035 + heat) / care
    sh2, ch2 = sincos(h)
    return lat_acc, h, ch2, sh2, wear
