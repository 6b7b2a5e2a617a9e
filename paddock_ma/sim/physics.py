"""Vehicle dynamics: one tick of one car, in arcade or simulator mode (spec §3.4, §3.7).

Both modes read the controls as normalised inputs (steer in [-1, 1] of ``MAX_STEER_ANGLE``, throttle
and brake in [0, 1]), rate-limit the road-wheel angle to ``STEER_RATE`` and write the pose, velocity
and the bookkeeping fields of ``cars_f``. Frame (layout.py): x right, y down, heading = angle of the
forward vector (cos h, sin h), right vector (-sin h, cos h); positive steer / yaw rate / lateral
velocity all mean "to the right". In the body frame this is the SAE convention (x forward, y right,
z down), so the usual vehicle-dynamics equations hold with their usual signs.

Arcade (``PHYSICS_ARCADE``): PaddockJS 1.0.0's heading-aligned model converted to SI (12 u = 1 m).
The speed is a scalar >= 0, the velocity points along the heading, the yaw rate is the kinematic
v/L*tan(delta) capped by a grip budget, plus a yaw bias toward the side whose wheels are on the
slower surface. The car's surface is the worst of its four wheels, as in 1.0.0.

Simulator (``PHYSICS_SIMULATOR``): our design (PaddockJS 2.0.1 documents the mode, not its equations).
A dynamic bicycle model with world velocity (VX, VY) and yaw rate as state (F_SPEED = body-forward u):
  * per-axle normal load = static share (CG at the body centre, 50/50) + aero downforce share
    - longitudinal load transfer (from the previous tick's acceleration: no algebraic loop);
  * per-axle peak friction mu = tireGrip * mean surface grip of the axle's two wheels
    * compound grip * tyre factor * load sensitivity (mu falls as the axle load grows);
  * lateral tyre force = simplified Pacejka  F = mu Fz sin(C atan(B alpha)), peak at ALPHA_PEAK;
    rear tyres have the smaller peak slip (stiffer), which gives a mildly understeering, stable car;
  * rear-wheel drive, force- and power-limited (force <= P_POWER, power = P_POWER * POWER_SPEED),
    brakes split by axle load; an axle's longitudinal demand and lateral force share its friction
    circle, so wheelspin (power oversteer) and locking take the lateral grip away;
  * aero drag, surface drag (mean over wheels) and rolling resistance (base + surface, per axle load);
  * the stiff lateral/yaw tyre terms are integrated linearly implicitly (one 2x2 solve per tick:
    backward Euler on the tyre Jacobian), and slip angles use a 3 m/s rolling-speed floor, so
    dt = 1/60 s is stable at every speed; below 3 m/s the motion blends into the kinematic bicycle
    model (fully kinematic below 1 m/s).
No reverse in either mode: brakes and resistances stop a slow car at zero forward speed and never
push it backwards (in simulator mode a spinning car may slide backwards at speed; it is stopped, at a
tyre-like rate, once slow).

Aero conversion (simulator): the spec's Cd 0.33 and Cl 6.1 are game-scale numbers, not coefficients
on one reference area (1.0.0 uses drag = 0.12 Cd v^2 N and downforce = Cl v^2 N, i.e. about 31 N
and 4.7 kN at 100 km/h, a lift-to-drag ratio of ~150). We map them to areas typical of published
F1 figures: CdA = Cd * 3.6 m^2 = 1.19 m^2 (F1: ~1.0-1.5 m^2) and ClA = Cl * 0.7 m^2 = 4.27 m^2
(F1: ~3.5-5 m^2; L/D ~3.6), with F = 0.5 rho CxA v^2, rho = 1.225 kg/m^3. The arcade mode keeps the
spec's own formulas.

Performance notes (the simulator step is the core's largest per-car cost): the kernels use
``error_model="numpy"`` (a float division by zero gives inf/nan instead of raising; none is expected)
and ``integrate_car_pre`` / ``_simulator`` / ``_arcade`` are inlined into their callers
(``inline="always"``): without raise paths and call boundaries numba drops the atomic reference-count
updates of the array arguments. The simulator takes the new heading's cos/sin by angle addition from
the old one's (no libm call), the road-wheel angle's sin/cos by Taylor polynomial, and the Pacejka
slope's cosine from the sine; results agree with the libm forms to ~1e-15.

Tyre compounds (tyres.py): labels only in PaddockJS 1.0.0; here they scale grip (both modes) and wear.

Surface tables (spec §2.3), indexed by SURF_* code: SURFACE_GRIP is a friction multiplier,
SURFACE_DRAG is N/(m/s)^2 (the spec's drag force is coeff * v_ms^2 in newtons once its 12 u/m
scalings cancel), SURFACE_ROLLING is a rolling-resistance coefficient (force = coeff * normal load).
"""

import math

import numpy as np

from . import layout as L
from .jit import kernel
from .layout import (
    F_APPLIED_BRAKE, F_APPLIED_STEER, F_APPLIED_THROTTLE, F_HEADING, F_LAT_ACC, F_LONG_ACC,
    F_SLIP_FRONT, F_SLIP_REAR, F_SPEED, F_STEER_ANGLE, F_TIRE_ENERGY, F_VX, F_VY, F_X, F_Y,
    F_YAW_RATE, F_GRIP_USAGE, GRAVITY, I_COMPOUND, I_INSTABILITY, I_WHEEL_SURFACE_FL, I_WHEEL_SURFACE_FR,
    I_WHEEL_SURFACE_RL, I_WHEEL_SURFACE_RR, INSTAB_NONE, INSTAB_OVERSTEER, INSTAB_SPIN_RISK,
    INSTAB_UNDERSTEER, MAX_SPEED, MAX_STEER_ANGLE, N_SURFACES, P_BRAKE, P_DOWNFORCE_CL, P_DRAG_CD,
    P_MASS, P_POWER, P_TIRE_CARE, P_TIRE_GRIP, PHYSICS_SIMULATOR, R_PHYSICS_MODE,
    R_TIRE_DEGRADATION, STEER_RATE, WHEELBASE,
)
from .trig import SINCOS_POLY_MAX, SINCOS_TINY_MAX, _sincos_small, _sincos_tiny, clamp, wrap_angle  # noqa: F401
from .tyres import (  # noqa: F401
    COMPOUND_GRIP, COMPOUND_WEAR, PAC_BA_PEAK, PAC_C, V_SLIP_FLOOR, _axle_force, _pacejka, compound_index,
    tyre_factor, tyre_wear_rate,
)

__all__ = [
    "SURFACE_GRIP", "SURFACE_DRAG", "SURFACE_ROLLING", "SURFACE_PRIORITY", "COMPOUND_GRIP",
    "COMPOUND_WEAR", "integrate_car", "integrate_car_pre", "hold_car", "tyre_factor", "neutral_car_params",
    "car_params_from_ratings",
]

# --------------------------------------------------------------------------------------------
# Surface tables (spec §2.3), indexed by SURF_* code
# --------------------------------------------------------------------------------------------
SURFACE_GRIP = np.zeros(N_SURFACES, dtype=np.float64)      # friction multiplier
SURFACE_DRAG = np.zeros(N_SURFACES, dtype=np.float64)      # N/(m/s)^2
SURFACE_ROLLING = np.zeros(N_SURFACES, dtype=np.float64)   # rolling coefficient (force / normal load)
SURFACE_PRIORITY = np.zeros(N_SURFACES, dtype=np.int64)    # "worst wheel" order, higher = worse
for _code, _grip, _drag, _rr, _prio in (
    (L.SURF_TRACK, 1.00, 0.00, 0.000, 0),
    (L.SURF_PIT_ENTRY, 0.96, 0.04, 0.012, 1),
    (L.SURF_PIT_EXIT, 0.96, 0.04, 0.012, 1),
    (L.SURF_PIT_LANE, 0.96, 0.04, 0.012, 2),
    (L.SURF_PIT_BOX, 0.94, 0.08, 0.025, 3),
    (L.SURF_KERB, 0.92, 0.12, 0.045, 4),
    (L.SURF_GRASS, 0.34, 1.90, 0.360, 5),
    (L.SURF_GRAVEL, 0.43, 4.00, 0.680, 6),
    (L.SURF_BARRIER, 0.18, 9.00, 1.200, 7),
):
    SURFACE_GRIP[_code] = _grip
    SURFACE_DRAG[_code] = _drag
    SURFACE_ROLLING[_code] = _rr
    SURFACE_PRIORITY[_code] = _prio

# --------------------------------------------------------------------------------------------
# Simulator-mode constants (our design; sources in the comments)
# --------------------------------------------------------------------------------------------
RHO_AIR = 1.225              # kg/m^3, ISA sea level
DRAG_AREA_PER_CD = 3.6       # m^2: CdA = Cd * 3.6 (neutral 1.19 m^2; F1 ~1.0-1.5 m^2)
LIFT_AREA_PER_CL = 0.7       # m^2: ClA = Cl * 0.7 (neutral 4.27 m^2; F1 ~3.5-5 m^2)
AERO_FRONT = 0.45            # share of downforce on the front axle (more on the rear = stable at speed)
CG_HEIGHT = 0.30             # m, F1 centre of gravity height ~0.25-0.30 m
CG_TO_FRONT = 0.5 * WHEELBASE  # m, CG at the body centre (wheel patches at +-1.8 m): static 50/50
CG_TO_REAR = 0.5 * WHEELBASE
YAW_RADIUS = 1.2             # m, yaw radius of gyration: Iz = m * 1.2^2 = 1149 kg m^2 (F1 est. ~1000-1300)
POWER_SPEED = 13.0           # m/s, drive power = P_POWER * 13 = 559 kW at the wheels for the neutral car
TYRE_ROLLING = 0.015         # base rolling coefficient of a racing tyre on asphalt (~0.01-0.02)
# The spec's surface rolling coefficients act on the whole weight against a drive limit of ~0.63 g
# on grass; our rear-drive car has ~0.4 g of traction there, so simulator mode halves them (a car in
# the grass or gravel can still crawl out, as in 1.0.0, but slowly).
SURFACE_ROLLING_SIM_SCALE = 0.5
ALPHA_PEAK_FRONT = 0.11      # rad, slip angle of peak lateral force (racing slicks ~5-8 degrees)
ALPHA_PEAK_REAR = 0.09       # rad, stiffer rear -> mild understeer, stable limit behaviour
PAC_B_FRONT = math.tan(math.pi / (2.0 * PAC_C)) / ALPHA_PEAK_FRONT
PAC_B_REAR = math.tan(math.pi / (2.0 * PAC_C)) / ALPHA_PEAK_REAR
LOAD_SENSITIVITY = 0.15      # mu drops 15 % per extra static axle load (tyre load sensitivity)
V_KIN_LOW = 1.0              # m/s, fully kinematic below this speed
V_KIN_HIGH = 3.0             # m/s, fully dynamic above this speed
INSTAB_MIN_SPEED = 8.0       # m/s, no instability label below this speed
SPIN_SLIP = 0.25             # rad, |rear slip| or |body slip| above this = spin risk
TAN_SPIN_SLIP = math.tan(SPIN_SLIP)
INV_IZ_PER_INV_M = 1.0 / (YAW_RADIUS * YAW_RADIUS)  # 1/Iz = (1/m) / YAW_RADIUS^2


@kernel(error_model="numpy")
def _clean_input(x, lo, hi):
    """Clamp a control input; NaN reads as 0."""
    if x != x:
        return 0.0
    return clamp(x, lo, hi)


@kernel(error_model="numpy")
def _surf(code):
    """SURF_* code clamped to a valid table index (unknown codes read as barrier, the worst)."""
    if code < 0 or code >= N_SURFACES:
        return L.SURF_BARRIER
    return code


@kernel(error_model="numpy")
def _steer_step(current, target, dt):
    """Road-wheel angle after one tick moving toward target at most STEER_RATE rad/s."""
    step = STEER_RATE * dt
    return current + clamp(target - current, -step, step)


@kernel(error_model="numpy", inline="always")
def _arcade(cars_f, cars_i, car_params, w, c, delta, throttle, brake, tf, cgrip, dt):
    """PaddockJS 1.0.0 vehicle model (spec §3.4 steps 2-6) in SI. Returns (lateral acceleration
    m/s^2, new heading rad, its cos, its sin)."""
    mass = car_params[w, c, P_MASS]
    v = max(cars_f[w, c, F_SPEED], 0.0)
    fl = _surf(cars_i[w, c, I_WHEEL_SURFACE_FL])
    fr = _surf(cars_i[w, c, I_WHEEL_SURFACE_FR])
    rl = _surf(cars_i[w, c, I_WHEEL_SURFACE_RL])
    rr = _surf(cars_i[w, c, I_WHEEL_SURFACE_RR])
    worst = fl
    for s in (fr, rl, rr):
        if SURFACE_PRIORITY[s] > SURFACE_PRIORITY[worst]:
            worst = s
    # 1.0.0 has no compound effect; ours multiplies the surface grip (M = 1 keeps 1.0.0 numbers).
    sgrip = SURFACE_GRIP[worst] * tf * cgrip
    r = clamp(v / MAX_SPEED, 0.0, 1.0)
    # Longitudinal (spec step 3; the 12 u/m factors cancel in SI).
    engine = throttle * car_params[w, c, P_POWER] * max(0.12, 1.0 - math.pow(r, 1.15))
    drive = clamp(engine / mass, 0.0, sgrip * (17.0 * (1.0 - math.pow(r, 2.1)) + 1.2))
    braking = clamp(brake * car_params[w, c, P_BRAKE] / mass, 0.0, sgrip * (20.0 + 14.0 * r))
    drag_force = (car_params[w, c, P_DRAG_CD] * 0.12 + SURFACE_DRAG[worst]) * v * v
    roll_force = SURFACE_ROLLING[worst] * mass * GRAVITY
    v_new = clamp(v + (drive - braking - (drag_force + roll_force) / mass) * dt, 0.0, MAX_SPEED)
    # Yaw (spec step 4) with the new speed.
    raw = v_new / WHEELBASE * math.tan(delta) * tf
    cap = ((car_params[w, c, P_TIRE_GRIP] * tf * GRAVITY
            + car_params[w, c, P_DOWNFORCE_CL] * v_new * v_new / mass) * sgrip) / max(v_new, 1.0)
    yaw = clamp(raw, -cap, cap)
    # grip usage (telemetry only): |v yaw| over the grip acceleration, 1 when the yaw was capped
    usage = 1.0 if abs(raw) > cap else min(1.0, abs(v_new * yaw) / max(cap * max(v_new, 1.0), 1e-9))
    res_l = 0.0
    res_r = 0.0
    for s, right in ((fl, False), (fr, True), (rl, False), (rr, True)):
        res = 0.14 * SURFACE_DRAG[s] + 2.4 * SURFACE_ROLLING[s] + 0.65 * (1.0 - SURFACE_GRIP[s])
        if right:
            res_r += 0.5 * res
        else:
            res_l += 0.5 * res
    bias = clamp((res_r - res_l) * r * 0.08, -0.22, 0.22)  # pulls toward the draggier side
    yaw = clamp(yaw + bias, -cap, cap)
    # Pose, semi-implicit Euler (spec step 5).
    h = wrap_angle(cars_f[w, c, F_HEADING] + yaw * dt)
    ch = math.cos(h)
    sh = math.sin(h)
    cars_f[w, c, F_HEADING] = h
    cars_f[w, c, F_X] += ch * v_new * dt
    cars_f[w, c, F_Y] += sh * v_new * dt
    cars_f[w, c, F_SPEED] = v_new
    cars_f[w, c, F_VX] = v_new * ch
    cars_f[w, c, F_VY] = v_new * sh
    cars_f[w, c, F_YAW_RATE] = yaw
    lat = v_new * yaw
    cars_f[w, c, F_LAT_ACC] = lat
    cars_f[w, c, F_LONG_ACC] = (v_new - v) / dt
    cars_f[w, c, F_SLIP_FRONT] = 0.0
    cars_f[w, c, F_SLIP_REAR] = 0.0
    cars_f[w, c, F_GRIP_USAGE] = usage
    cars_i[w, c, I_INSTABILITY] = INSTAB_NONE
    return lat, h, ch, sh


@kernel(error_model="numpy", inline="always")
def _simulator(cars_f, cars_i, car_params, w, c, delta, throttle, brake, tf, cgrip, dt, ch, sh):
    """Dynamic bicycle model (module docstring). ch, sh: cos and sin of the current heading.
    Returns (lateral acceleration m/s^2, new heading rad, its cos, its sin)."""
    mass = car_params[w, c, P_MASS]
    inv_m = 1.0 / mass
    inv_iz = inv_m * INV_IZ_PER_INV_M
    a = CG_TO_FRONT
    b = CG_TO_REAR
    h = cars_f[w, c, F_HEADING]
    vx = cars_f[w, c, F_VX]
    vy = cars_f[w, c, F_VY]
    yaw = cars_f[w, c, F_YAW_RATE]
    u = vx * ch + vy * sh            # body forward velocity
    v = -vx * sh + vy * ch           # body lateral velocity (+ right)
    spd = math.sqrt(u * u + v * v)
    sd, cd = _sincos_small(delta)  # |delta| <= MAX_STEER_ANGLE = 0.56 rad

    # Surfaces per wheel.
    fl = _surf(cars_i[w, c, I_WHEEL_SURFACE_FL])
    fr = _surf(cars_i[w, c, I_WHEEL_SURFACE_FR])
    rl = _surf(cars_i[w, c, I_WHEEL_SURFACE_RL])
    rr = _surf(cars_i[w, c, I_WHEEL_SURFACE_RR])
    grip_f = 0.5 * (SURFACE_GRIP[fl] + SURFACE_GRIP[fr])
    grip_r = 0.5 * (SURFACE_GRIP[rl] + SURFACE_GRIP[rr])
    k_roll = 0.5 * SURFACE_ROLLING_SIM_SCALE
    roll_f = TYRE_ROLLING + k_roll * (SURFACE_ROLLING[fl] + SURFACE_ROLLING[fr])
    roll_r = TYRE_ROLLING + k_roll * (SURFACE_ROLLING[rl] + SURFACE_ROLLING[rr])
    surf_drag = 0.25 * (SURFACE_DRAG[fl] + SURFACE_DRAG[fr] + SURFACE_DRAG[rl] + SURFACE_DRAG[rr])

    # Normal loads: static + downforce - longitudinal transfer (previous tick's acceleration).
    weight = mass * GRAVITY
    downforce = 0.5 * RHO_AIR * car_params[w, c, P_DOWNFORCE_CL] * LIFT_AREA_PER_CL * u * u
    transfer = mass * clamp(cars_f[w, c, F_LONG_ACC], -60.0, 60.0) * CG_HEIGHT / WHEELBASE
    fz_f = max(weight * b / WHEELBASE + AERO_FRONT * downforce - transfer, 0.05 * weight)
    fz_r = max(weight * a / WHEELBASE + (1.0 - AERO_FRONT) * downforce + transfer, 0.05 * weight)
    inv_fz0 = inv_m * (2.0 / GRAVITY)  # 1 / (static axle load)
    mu0 = car_params[w, c, P_TIRE_GRIP] * cgrip * tf
    mu_f = mu0 * grip_f * clamp(1.0 - LOAD_SENSITIVITY * (fz_f * inv_fz0 - 1.0), 0.5, 1.2)
    mu_r = mu0 * grip_r * clamp(1.0 - LOAD_SENSITIVITY * (fz_r * inv_fz0 - 1.0), 0.5, 1.2)
    fmax_f = mu_f * fz_f
    fmax_r = mu_r * fz_r

    # Slip angles in each wheel's frame (exact for any direction of travel).
    vf = v + a * yaw
    ufw = u * cd + vf * sd
    vfw = -u * sd + vf * cd
    vr = v - b * yaw
    roll_spd_f = max(abs(ufw), V_SLIP_FLOOR)
    roll_spd_r = max(abs(u), V_SLIP_FLOOR)
    alpha_f = math.atan(vfw / roll_spd_f)  # = atan2(vfw, roll_spd_f): the rolling speed is > 0
    alpha_r = math.atan(vr / roll_spd_r)
    # d(alpha)/d(lateral velocity at the axle), for the implicit step.
    g_f = roll_spd_f * cd / (roll_spd_f * roll_spd_f + vfw * vfw)
    g_r = roll_spd_r / (roll_spd_r * roll_spd_r + vr * vr)
    nf, kf = _pacejka(alpha_f, PAC_B_FRONT, PAC_C)
    nr, kr = _pacejka(alpha_r, PAC_B_REAR, PAC_C)
    fy_f = nf * fmax_f
    fy_r = nr * fmax_r
    kf *= fmax_f
    kr *= fmax_r

    # Longitudinal demand: rear drive (force and power limited), brakes split by axle load.
    drive = throttle * min(car_params[w, c, P_POWER],
                           car_params[w, c, P_POWER] * POWER_SPEED / max(abs(u), 1.0))
    brake_force = brake * car_params[w, c, P_BRAKE]
    share_f = fz_f / (fz_f + fz_r)
    sgn_f = 1.0 if ufw >= 0.0 else -1.0
    sgn_r = 1.0 if u >= 0.0 else -1.0
    fx_f = -sgn_f * brake_force * share_f
    fx_r = drive - sgn_r * brake_force * (1.0 - share_f)
    # grip usage (telemetry only), per axle: longitudinal demand over the friction circle
    lon_f = abs(fx_f) / max(fmax_f, 1e-9)
    lon_r = abs(fx_r) / max(fmax_r, 1e-9)
    fx_f, fy_f, kf = _axle_force(fx_f, fy_f, kf, fmax_f, ufw, vfw)
    fx_r, fy_r, kr = _axle_force(fx_r, fy_r, kr, fmax_r, u, vr)

    # Resistances: aero + surface drag against the velocity, rolling against forward motion.
    kdrag = 0.5 * RHO_AIR * car_params[w, c, P_DRAG_CD] * DRAG_AREA_PER_CD + surf_drag
    roll = (roll_f * fz_f + roll_r * fz_r) * sgn_r

    # Body-frame forces and yaw moment.
    f_long = fx_f * cd - fy_f * sd + fx_r - kdrag * spd * u - roll
    f_lat = fx_f * sd + fy_f * cd + fy_r - kdrag * spd * v
    m_z = a * (fx_f * sd + fy_f * cd) - b * fy_r

    # Lateral velocity and yaw rate: linearly implicit Euler on the tyre Jacobian.
    kfa = kf * g_f * cd
    krb = kr * g_r
    j11 = -(kfa + krb) * inv_m
    x = -kfa * a + krb * b
    j12 = x * inv_m - u
    j21 = x * inv_iz
    j22 = -(kfa * a * a + krb * b * b) * inv_iz
    r1 = dt * (f_lat * inv_m - u * yaw)
    r2 = dt * (m_z * inv_iz)
    a11 = 1.0 - dt * j11
    a12 = -dt * j12
    a21 = -dt * j21
    a22 = 1.0 - dt * j22
    det = a11 * a22 - a12 * a21
    if det > 1e-3:
        inv_det = 1.0 / det
        dv = (r1 * a22 - a12 * r2) * inv_det
        dr = (a11 * r2 - a21 * r1) * inv_det
    else:  # never expected with these tyres; explicit fallback keeps the tick finite
        dv = r1
        dr = r2
    v_dyn = v + dv
    yaw_dyn = yaw + dr
    u_new = u + dt * (f_long * inv_m + v * yaw)
    # No reverse: brakes and resistances stop a slow car, never push it backwards. (At speed the
    # body may slide backwards for a moment in a spin; that is not reversing.)
    if u >= 0.0 and u_new < 0.0 and spd < V_KIN_HIGH:
        u_new = 0.0

    # Low-speed blend into the kinematic bicycle (rear axle without slip).
    wdyn = clamp((spd - V_KIN_LOW) / (V_KIN_HIGH - V_KIN_LOW), 0.0, 1.0)
    if wdyn < 1.0:
        u_kin = max(u_new, 0.0)
        yaw_kin = u_kin * (sd / cd) / WHEELBASE
        v_kin = yaw_kin * b
        # The blend's velocity correction is bounded by what the tyres could do in one tick, so a
        # slow backward slide (after a spin) stops at a tyre-like rate, not in one jump.
        dv_max = mu0 * max(grip_f, grip_r) * GRAVITY * dt
        u_new += clamp((1.0 - wdyn) * (u_kin - u_new), -dv_max, dv_max)
        v_dyn += clamp((1.0 - wdyn) * (v_kin - v_dyn), -dv_max, dv_max)
        yaw_dyn = wdyn * yaw_dyn + (1.0 - wdyn) * yaw_kin

    # Pose: heading first, then the world velocity in the new body frame, then position.
    dh = yaw_dyn * dt
    h_new = wrap_angle(h + dh)
    if abs(dh) <= SINCOS_TINY_MAX:
        # cos/sin of the new heading by angle addition from the old one's; the factor
        # 1.5 - n2/2 (a Newton step toward 1/|(c, s)|) keeps the pair on the unit circle to ~1 ulp.
        sdh, cdh = _sincos_tiny(dh)
        ch2 = ch * cdh - sh * sdh
        sh2 = sh * cdh + ch * sdh
        nrm = 1.5 - 0.5 * (ch2 * ch2 + sh2 * sh2)
        ch2 *= nrm
        sh2 *= nrm
    else:
        ch2 = math.cos(h_new)
        sh2 = math.sin(h_new)
    vx_new = u_new * ch2 - v_dyn * sh2
    vy_new = u_new * sh2 + v_dyn * ch2
    sp2_new = vx_new * vx_new + vy_new * vy_new
    if sp2_new > MAX_SPEED * MAX_SPEED:
        s = MAX_SPEED / math.sqrt(sp2_new)
        vx_new *= s
        vy_new *= s
        u_new *= s
        v_dyn *= s
    inv_dt = 1.0 / dt
    ax = (vx_new - vx) * inv_dt
    ay = (vy_new - vy) * inv_dt
    lat = -ax * sh2 + ay * ch2
    cars_f[w, c, F_HEADING] = h_new
    cars_f[w, c, F_X] += vx_new * dt
    cars_f[w, c, F_Y] += vy_new * dt
    cars_f[w, c, F_VX] = vx_new
    cars_f[w, c, F_VY] = vy_new
    cars_f[w, c, F_SPEED] = u_new
    cars_f[w, c, F_YAW_RATE] = yaw_dyn
    cars_f[w, c, F_LAT_ACC] = lat
    cars_f[w, c, F_LONG_ACC] = ax * ch2 + ay * sh2
    cars_f[w, c, F_SLIP_FRONT] = wdyn * alpha_f
    cars_f[w, c, F_SLIP_REAR] = wdyn * alpha_r
    # ... combined with the lateral slip over the slip of peak force: > 1 past the peak (sliding)
    sat_lat_f = wdyn * abs(alpha_f) / ALPHA_PEAK_FRONT
    sat_lat_r = wdyn * abs(alpha_r) / ALPHA_PEAK_REAR
    cars_f[w, c, F_GRIP_USAGE] = max(math.sqrt(lon_f * lon_f + sat_lat_f * sat_lat_f),
                                     math.sqrt(lon_r * lon_r + sat_lat_r * sat_lat_r))

    # Instability label from this tick's slips.
    label = INSTAB_NONE
    if spd > INSTAB_MIN_SPEED:
        # |body slip| = |atan2(v, |u|)| > SPIN_SLIP, without the atan2
        sat_f = abs(alpha_f) / ALPHA_PEAK_FRONT
        sat_r = abs(alpha_r) / ALPHA_PEAK_REAR
        if abs(alpha_r) > SPIN_SLIP or abs(v_dyn) > TAN_SPIN_SLIP * abs(u_new) or u_new < 0.0:
            label = INSTAB_SPIN_RISK
        elif sat_r > 1.0 and sat_r > sat_f:
            label = INSTAB_OVERSTEER
        elif sat_f > 1.0 and sat_f >= sat_r:
            label = INSTAB_UNDERSTEER
    cars_i[w, c, I_INSTABILITY] = label
    return lat, h_new, ch2, sh2


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
    h = cars_f[w, c, F_HEADING]
    integrate_car_pre(cars_f, cars_i, car_params, rules, w, c, steer, throttle, brake, dt,
                      tyre_factor(cars_f[w, c, F_TIRE_ENERGY]), math.cos(h), math.sin(h))


@kernel(error_model="numpy", inline="always")
def integrate_car_pre(cars_f, cars_i, car_params, rules, w, c, steer, throttle, brake, dt, tf, ch, sh):
    """``integrate_car`` with precomputed inputs the step shares between kernels: tf, the tyre
    factor of the current F_TIRE_ENERGY (``tyre_factor``), and ch, sh, the cos and sin of the
    current F_HEADING (the same values the caller would compute: results are identical).

    Returns (new heading rad, its cos, its sin), so the next users of the heading need no sin/cos.
    In simulator mode the returned cos/sin come from angle addition on (ch, sh) (within ~1e-16 of
    math.cos/sin of the new heading, not bit-equal): a caller that feeds them back on the next tick
    (step.py's ``pre`` cache) is deterministic, but not bit-identical to one that recomputes them.
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
        lat, h2, ch2, sh2 = _simulator(cars_f, cars_i, car_params, w, c, delta, throttle, brake, tf,
                                       cgrip, dt, ch, sh)
    else:
        lat, h2, ch2, sh2 = _arcade(cars_f, cars_i, car_params, w, c, delta, throttle, brake, tf,
                                    cgrip, dt)
    if rules[w, R_TIRE_DEGRADATION] > 0.5:
        wear = tyre_wear_rate(lat, brake, throttle, car_params[w, c, P_TIRE_CARE], compound)
        cars_f[w, c, F_TIRE_ENERGY] = clamp(energy - wear * dt, 1.0, 100.0)
    return h2, ch2, sh2


@kernel(error_model="numpy")
def hold_car(cars_f, w, c):
    """Freeze a held or terminal car: zero speed, velocity, yaw rate and accelerations; the applied
    controls read throttle 0, brake 1. cars_f: float64[W, C, NF]; w, c: int indices."""
    cars_f[w, c, F_SPEED] = 0.0
    cars_f[w, c, F_VX] = 0.0
    cars_f[w, c, F_VY] = 0.0
    cars_f[w, c, F_YAW_RATE] = 0.0
    cars_f[w, c, F_LAT_ACC] = 0.0
    cars_f[w, c, F_LONG_ACC] = 0.0
    cars_f[w, c, F_GRIP_USAGE] = 0.0
    cars_f[w, c, F_APPLIED_THROTTLE] = 0.0
    cars_f[w, c, F_APPLIED_BRAKE] = 1.0


# Car parameters from ratings live in ``params.py``; re-exported for callers of this module.
from .params import car_params_from_ratings, neutral_car_params  # noqa: E402,F401
