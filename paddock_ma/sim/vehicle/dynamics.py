"""Vehicle dynamics: one tick of one car, in arcade or simulator mode: PaddockJS 2.0.0's vehicle
model (``src/simulation/vehicle/vehiclePhysics.js``), the same state, constants and per-tick order,
in SI (PaddockJS's 12 u/m cancel in its formulas). ``docs/paddockjs-compatibility.md`` lists what
differs and the golden-trace parity.

Both modes read the controls as normalised inputs (steer in [-1, 1] of ``MAX_STEER_ANGLE``, throttle
and brake in [0, 1]), rate-limit the road-wheel angle to ``STEER_RATE`` and write the pose, velocity
and the bookkeeping fields of ``cars_f``. Frame (layout.py): x right, y down, heading = angle of the
forward vector (cos h, sin h), right vector (-sin h, cos h); positive steer / yaw rate / lateral
velocity all mean "to the right".

Arcade (``PHYSICS_ARCADE``, this module): the heading-aligned model. The speed is a scalar in
[0, MAX_SPEED], the velocity points along the heading, the yaw rate is the kinematic v/L*tan(delta)
capped by a grip budget, plus a yaw bias toward the side whose wheels are on the draggier surface
(``limits.wheel_drag_yaw_rate``). The car's surface is the worst of its four wheels. With DRS open
(``I_DRS_ACTIVE``, ``race.drs``) the drag is x 0.42, the power x 1.08 and the drive 6 % more; in simulator
mode the drag x 0.46 and the power x 1.07.

Simulator (``PHYSICS_SIMULATOR``): ``vehicle.simulator``.

Performance: the kernels use ``error_model="numpy"`` (a float division by zero gives inf/nan instead
of raising; none is expected) and ``integrate_car_pre`` / ``simulator_tick`` / ``_arcade`` are inlined
into their callers (``inline="always"``): without raise paths and call boundaries numba drops the
atomic reference-count updates of the array arguments.

Tyre compounds (tyres.py): labels only in PaddockJS; here they scale grip (both modes) and wear, the
medium (the default) by exactly 1. The surface tables are ``vehicle.surface_table``.
"""

import math

from ..core.jit import kernel
from ..core.layout import (
    F_APPLIED_BRAKE, F_APPLIED_STEER, F_APPLIED_THROTTLE, F_HEADING, F_LAT_ACC, F_LONG_ACC, F_SLIP_FRONT,
    F_SLIP_REAR, F_SPEED, F_STEER_ANGLE, F_TIRE_ENERGY, F_VX, F_VY, F_X, F_Y, F_YAW_RATE, F_GRIP_USAGE,
    GRAVITY, I_COMPOUND, I_DRS_ACTIVE, I_INSTABILITY, I_TRACTION_LIMITED, I_WHEEL_SURFACE_FL, I_WHEEL_SURFACE_FR,
    I_WHEEL_SURFACE_RL, I_WHEEL_SURFACE_RR, INSTAB_NONE, INSTAB_UNDERSTEER, MAX_SPEED, MAX_STEER_ANGLE,
    P_BRAKE, P_DOWNFORCE_CL, P_DRAG_CD, P_MASS, P_POWER, P_TIRE_CARE, P_TIRE_GRIP, PHYSICS_SIMULATOR, PRE_COS,
    PRE_ENGINE, PRE_HEADING, PRE_LOG_RATIO, PRE_SIN, PRE_SLIP, PRE_STEER_GAIN, PRE_TYRE, R_PHYSICS_MODE,
    R_TIRE_DEGRADATION, STEER_RATE, WHEELBASE,
)
from .limits import braking_limit, capped_drive, normalize_angle, speed_ratio, wheel_drag_yaw_rate
from .simulator import sim_start_state, simulator_tick
from .surface_table import SURFACE_DRAG, SURFACE_GRIP, SURFACE_PRIORITY, SURFACE_ROLLING, table_index
from ..core.trig import clamp, sincos, tan_small
from .tyres import COMPOUND_GRIP, COMPOUND_WEAR, compound_index, tyre_factor

__all__ = ["integrate_car", "integrate_car_pre", "prepare_car", "hold_car"]

# DRS open (I_DRS_ACTIVE, race.drs): PaddockJS's arcade multipliers (vehiclePhysics.js)
ARCADE_DRS_DRAG = 0.42      # of the aero drag coefficient
ARCADE_DRS_POWER = 1.08     # of the engine force
ARCADE_DRS_DRIVE = 0.06     # extra share of the drive acceleration (after its grip limit)


@kernel(error_model="numpy")
def _clean_input(x, lo, hi):
    """Clamp a control input; NaN reads as 0."""
    if x != x:
        return 0.0
    return clamp(x, lo, hi)


@kernel(error_model="numpy")
def _steer_step(current, target, dt):
    """Road-wheel angle after one tick moving toward target at most STEER_RATE rad/s."""
    step = STEER_RATE * dt
    return current + clamp(target - current, -step, step)


@kernel(error_model="numpy", inline="always")
def _arcade(cars_f, cars_i, car_params, w, c, delta, throttle, brake, tf, cgrip, dt):
    """PaddockJS's arcade tick (``integrateArcadeVehiclePhysics``) in SI. Returns (lateral
    acceleration m/s^2, new heading rad, its cos, its sin, tyre wear %/s before the compound's factor)."""
    mass = car_params[w, c, P_MASS]
    v = cars_f[w, c, F_SPEED]
    fl = table_index(cars_i[w, c, I_WHEEL_SURFACE_FL])
    fr = table_index(cars_i[w, c, I_WHEEL_SURFACE_FR])
    rl = table_index(cars_i[w, c, I_WHEEL_SURFACE_RL])
    rr = table_index(cars_i[w, c, I_WHEEL_SURFACE_RR])
    worst = fl
    for s in (fr, rl, rr):
        if SURFACE_PRIORITY[s] > SURFACE_PRIORITY[worst]:
            worst = s
    sgrip = SURFACE_GRIP[worst] * tf * cgrip
    r, log_r = speed_ratio(v)
    # DRS open (race.drs): drag x 0.42, power x 1.08, and 6 % more of the (limited) drive on top
    drs = cars_i[w, c, I_DRS_ACTIVE] != 0
    drag_mult = ARCADE_DRS_DRAG if drs else 1.0
    engine = (throttle * car_params[w, c, P_POWER] * (ARCADE_DRS_POWER if drs else 1.0)
              * max(0.12, 1.0 - math.exp(1.15 * log_r)))
    drag_force = (car_params[w, c, P_DRAG_CD] * drag_mult * 0.12 + SURFACE_DRAG[worst]) * v * v
    roll_force = SURFACE_ROLLING[worst] * mass * GRAVITY
    drive = capped_drive(engine / mass, r, log_r, sgrip)     # engine >= 0: the same as clamping to [0, limit]
    drs_drive = drive * ARCADE_DRS_DRIVE if drs else 0.0
    braking = clamp(brake * car_params[w, c, P_BRAKE] / mass, 0.0, braking_limit(v, sgrip))
    acc = drive + drs_drive - braking - (drag_force + roll_force) / mass
    v_new = clamp(v + acc * dt, 0.0, MAX_SPEED)
    raw = (v_new / WHEELBASE) * tan_small(delta) * tf
    budget = (car_params[w, c, P_TIRE_GRIP] * tf * GRAVITY
              + car_params[w, c, P_DOWNFORCE_CL] * v_new * v_new / mass) * sgrip
    cap = budget / max(v_new, 1.0)
    steer_yaw = clamp(raw, -cap, cap)
    yaw = clamp(steer_yaw + wheel_drag_yaw_rate(SURFACE_DRAG, SURFACE_ROLLING, SURFACE_GRIP, fl, fr, rl, rr,
                                                v_new), -cap, cap)
    h = normalize_angle(cars_f[w, c, F_HEADING] + yaw * dt)
    sh, ch = sincos(h)
    cars_f[w, c, F_HEADING] = h
    cars_f[w, c, F_X] += ch * v_new * dt
    cars_f[w, c, F_Y] += sh * v_new * dt
    cars_f[w, c, F_SPEED] = v_new
    cars_f[w, c, F_VX] = v_new * ch
    cars_f[w, c, F_VY] = v_new * sh
    cars_f[w, c, F_YAW_RATE] = yaw
    lat = v_new * yaw
    limited = abs(raw) > abs(steer_yaw) + 1e-6
    cars_f[w, c, F_LAT_ACC] = lat
    cars_f[w, c, F_LONG_ACC] = acc
    cars_f[w, c, F_SLIP_FRONT] = 0.0
    cars_f[w, c, F_SLIP_REAR] = 0.0
    cars_f[w, c, F_GRIP_USAGE] = min(1.0, abs(lat) / max(budget, 1.0))
    cars_i[w, c, I_TRACTION_LIMITED] = 1 if limited else 0
    cars_i[w, c, I_INSTABILITY] = INSTAB_UNDERSTEER if limited else INSTAB_NONE
    care = clamp(car_params[w, c, P_TIRE_CARE], 0.45, 1.8)
    wear = (0.035 + abs(lat) / GRAVITY * 0.11 + brake * 0.07 + throttle * 0.025) / care
    return lat, h, ch, sh, wear


@kernel(error_model="numpy")
def integrate_car(cars_f, cars_i, car_params, rules, w, c, steer, throttle, brake, dt):
    """Advance car (w, c) by one physics tick.

    cars_f: float64[W, C, NF]; cars_i: int32[W, C, NI]; car_params: float64[W, C, NP];
    rules: float64[W, NR] (R_PHYSICS_MODE selects the model, R_TIRE_DEGRADATION > 0.5 wears tyres);
    w, c: int indices; steer: [-1, 1] fraction of MAX_STEER_ANGLE (absolute target, + = right);
    throttle, brake: [0, 1] (inputs are clamped, NaN reads 0); dt: s.
    Reads the wheel surfaces classified by the previous tick, F_TIRE_ENERGY and I_COMPOUND.
    Writes pose, speed, velocity, yaw rate, steering angle, accelerations, slips, instability label,
    the applied inputs and (degradation on) the tyre energy. Leaves F_PREV_* alone.
    """
    sh, ch = sincos(cars_f[w, c, F_HEADING])
    slip, gain, engine, log_ratio = sim_start_state(cars_f, w, c, ch, sh)
    integrate_car_pre(cars_f, cars_i, car_params, rules, w, c, steer, throttle, brake, dt,
                      tyre_factor(cars_f[w, c, F_TIRE_ENERGY]), ch, sh, slip, gain, engine, log_ratio)


@kernel(error_model="numpy", inline="always")
def prepare_car(cars_f, rules, w, c, pre):
    """Fill row ``c`` of a tick's shared per-car inputs ``pre`` float64[C, N_PRE] (layout.PRE_*) for car
    (w, c) before anyone reads it: cos and sin of F_HEADING (kept when the row already holds this
    heading), the tyre factor, and in simulator mode ``sim_start_state``."""
    h = cars_f[w, c, F_HEADING]
    if pre[c, PRE_HEADING] != h:
        pre[c, PRE_HEADING] = h
        pre[c, PRE_SIN], pre[c, PRE_COS] = sincos(h)
    pre[c, PRE_TYRE] = tyre_factor(cars_f[w, c, F_TIRE_ENERGY])
    if int(rules[w, R_PHYSICS_MODE] + 0.5) == PHYSICS_SIMULATOR:
        pre[c, PRE_SLIP], pre[c, PRE_STEER_GAIN], pre[c, PRE_ENGINE], pre[c, PRE_LOG_RATIO] = sim_start_state(
            cars_f, w, c, pre[c, PRE_COS], pre[c, PRE_SIN])


@kernel(error_model="numpy", inline="always")
def integrate_car_pre(cars_f, cars_i, car_params, rules, w, c, steer, throttle, brake, dt, tf, ch, sh, slip, gain,
                      engine, log_ratio):
    """``integrate_car`` with precomputed inputs the step shares between kernels: tf, the tyre
    factor of the current F_TIRE_ENERGY (``tyre_factor``), ch, sh, the cos and sin of the
    current F_HEADING, and (simulator mode; ignored in arcade) slip, gain, engine, log_ratio, its
    ``sim_start_state`` (the same values the caller would compute: results are identical).

    Returns (new heading rad, its cos, its sin), so the next users of the heading need no sin/cos.
    The returned cos/sin are ``core.trig.sincos`` of the new heading, the one function the tick's users of
    a heading's cos and sin call (the ``pre`` cache of step.py reuses them).
    """
    steer = _clean_input(steer, -1.0, 1.0)
    throttle = _clean_input(throttle, 0.0, 1.0)
    brake = _clean_input(brake, 0.0, 1.0)
    delta = _steer_step(cars_f[w, c, F_STEER_ANGLE], steer * MAX_STEER_ANGLE, dt)
    delta = clamp(delta, -MAX_STEER_ANGLE, MAX_STEER_ANGLE)
    cars_f[w, c, F_STEER_ANGLE] = delta
    cars_f[w, c, F_APPLIED_STEER] = steer
    cars_f[w, c, F_APPLIED_THROTTLE] = throttle
    cars_f[w, c, F_APPLIED_BRAKE] = brake
    energy = cars_f[w, c, F_TIRE_ENERGY]
    compound = compound_index(cars_i[w, c, I_COMPOUND])
    cgrip = COMPOUND_GRIP[compound]
    if int(rules[w, R_PHYSICS_MODE] + 0.5) == PHYSICS_SIMULATOR:
        lat, h2, ch2, sh2, wear = simulator_tick(cars_f, cars_i, car_params, w, c, delta, throttle, brake,
                                                 tf, cgrip, dt, ch, sh, slip, gain, engine, log_ratio)
    else:
        lat, h2, ch2, sh2, wear = _arcade(cars_f, cars_i, car_params, w, c, delta, throttle, brake, tf,
                                          cgrip, dt)
    if rules[w, R_TIRE_DEGRADATION] > 0.5:
        cars_f[w, c, F_TIRE_ENERGY] = clamp(energy - wear * COMPOUND_WEAR[compound] * dt, 1.0, 100.0)
    return h2, ch2, sh2


@kernel(error_model="numpy")
def hold_car(cars_f, w, c):
    """Freeze a held or terminal car: zero speed, velocity, yaw rate and accelerations; the applied
    controls read throttle 0, brake 1; its grip usage stays the last tick's, as PaddockJS's does.
    cars_f: float64[W, C, NF]; w, c: int indices."""
    cars_f[w, c, F_SPEED] = 0.0
    cars_f[w, c, F_VX] = 0.0
    cars_f[w, c, F_VY] = 0.0
    cars_f[w, c, F_YAW_RATE] = 0.0
    cars_f[w, c, F_LAT_ACC] = 0.0
    cars_f[w, c, F_LONG_ACC] = 0.0
    cars_f[w, c, F_APPLIED_THROTTLE] = 0.0
    cars_f[w, c, F_APPLIED_BRAKE] = 1.0
