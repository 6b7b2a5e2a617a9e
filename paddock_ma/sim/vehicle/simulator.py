"""Simulator-mode vehicle dynamics (``PHYSICS_SIMULATOR``): our design, since PaddockJS 2.0.1
documents the mode, not its equations. ``vehicle.dynamics.integrate_car_pre`` calls ``simulator_tick``.

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
A spinning car may slide backwards at speed; it is stopped, at a tyre-like rate, once slow.

Aero conversion: the spec's Cd 0.33 and Cl 6.1 are game-scale numbers, not coefficients on one
reference area (1.0.0 uses drag = 0.12 Cd v^2 N and downforce = Cl v^2 N, i.e. about 31 N and
4.7 kN at 100 km/h, a lift-to-drag ratio of ~150). We map them to areas typical of published F1
figures: CdA = Cd * 3.6 m^2 = 1.19 m^2 (F1: ~1.0-1.5 m^2) and ClA = Cl * 0.7 m^2 = 4.27 m^2
(F1: ~3.5-5 m^2; L/D ~3.6), with F = 0.5 rho CxA v^2, rho = 1.225 kg/m^3.

Performance: ``simulator_tick`` and its stages are ``inline="always"`` (one body in the step's
per-car loop, no call boundaries, no reference counting of the array arguments); the stages are
separate functions for reading only, their arithmetic and its order are the model's. The new
heading's cos/sin come by angle addition from the old one's (no libm call), the road-wheel angle's
sin/cos by Taylor polynomial (``trig.py``), and the Pacejka slope's cosine from the sine; results
agree with the libm forms to ~1e-15.
"""

import math

from ..core.jit import kernel
from ..core.layout import (
    F_GRIP_USAGE, F_HEADING, F_LAT_ACC, F_LONG_ACC, F_SLIP_FRONT, F_SLIP_REAR, F_SPEED, F_VX, F_VY, F_X, F_Y,
    F_YAW_RATE, GRAVITY, I_INSTABILITY, I_WHEEL_SURFACE_FL, I_WHEEL_SURFACE_FR, I_WHEEL_SURFACE_RL,
    I_WHEEL_SURFACE_RR, INSTAB_NONE, INSTAB_OVERSTEER, INSTAB_SPIN_RISK, INSTAB_UNDERSTEER, MAX_SPEED,
    P_BRAKE, P_DOWNFORCE_CL, P_DRAG_CD, P_MASS, P_POWER, P_TIRE_GRIP, WHEELBASE,
)
from .surface_table import SURFACE_DRAG, SURFACE_GRIP, SURFACE_ROLLING, table_index
from ..core.trig import SINCOS_TINY_MAX, sincos_small, sincos_tiny, clamp, wrap_angle
from .tyres import PAC_C, V_SLIP_FLOOR, axle_force, pacejka

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


@kernel(error_model="numpy", inline="always")
def _axle_grip(cars_f, cars_i, car_params, w, c, mass, u, tf, cgrip):
    """Per-axle normal loads and friction of car (w, c) at body-forward speed u (m/s): static share
    + downforce - longitudinal transfer (previous tick's acceleration), surface grip of the axle's
    wheels, load sensitivity. Returns (fz_f, fz_r N, fmax_f, fmax_r N, mu0, grip_f, grip_r,
    roll_f, roll_r rolling coefficients, surf_drag N/(m/s)^2)."""
    fl = table_index(cars_i[w, c, I_WHEEL_SURFACE_FL])
    fr = table_index(cars_i[w, c, I_WHEEL_SURFACE_FR])
    rl = table_index(cars_i[w, c, I_WHEEL_SURFACE_RL])
    rr = table_index(cars_i[w, c, I_WHEEL_SURFACE_RR])
    grip_f = 0.5 * (SURFACE_GRIP[fl] + SURFACE_GRIP[fr])
    grip_r = 0.5 * (SURFACE_GRIP[rl] + SURFACE_GRIP[rr])
    k_roll = 0.5 * SURFACE_ROLLING_SIM_SCALE
    roll_f = TYRE_ROLLING + k_roll * (SURFACE_ROLLING[fl] + SURFACE_ROLLING[fr])
    roll_r = TYRE_ROLLING + k_roll * (SURFACE_ROLLING[rl] + SURFACE_ROLLING[rr])
    surf_drag = 0.25 * (SURFACE_DRAG[fl] + SURFACE_DRAG[fr] + SURFACE_DRAG[rl] + SURFACE_DRAG[rr])
    weight = mass * GRAVITY
    downforce = 0.5 * RHO_AIR * car_params[w, c, P_DOWNFORCE_CL] * LIFT_AREA_PER_CL * u * u
    transfer = mass * clamp(cars_f[w, c, F_LONG_ACC], -60.0, 60.0) * CG_HEIGHT / WHEELBASE
    fz_f = max(weight * CG_TO_REAR / WHEELBASE + AERO_FRONT * downforce - transfer, 0.05 * weight)
    fz_r = max(weight * CG_TO_FRONT / WHEELBASE + (1.0 - AERO_FRONT) * downforce + transfer, 0.05 * weight)
    inv_fz0 = (1.0 / mass) * (2.0 / GRAVITY)  # 1 / (static axle load)
    mu0 = car_params[w, c, P_TIRE_GRIP] * cgrip * tf
    mu_f = mu0 * grip_f * clamp(1.0 - LOAD_SENSITIVITY * (fz_f * inv_fz0 - 1.0), 0.5, 1.2)
    mu_r = mu0 * grip_r * clamp(1.0 - LOAD_SENSITIVITY * (fz_r * inv_fz0 - 1.0), 0.5, 1.2)
    return fz_f, fz_r, mu_f * fz_f, mu_r * fz_r, mu0, grip_f, grip_r, roll_f, roll_r, surf_drag


@kernel(error_model="numpy", inline="always")
def _slips(u, v, yaw, sd, cd):
    """Slip angles in each wheel's frame (exact for any direction of travel) from the body velocities
    u, v (m/s), yaw rate (rad/s) and the road-wheel angle's sin/cos. Returns (ufw, vfw front wheel
    velocities m/s, vr rear lateral m/s, alpha_f, alpha_r rad, g_f, g_r: d(alpha)/d(lateral velocity
    at the axle) s/m, for the implicit step)."""
    vf = v + CG_TO_FRONT * yaw
    ufw = u * cd + vf * sd
    vfw = -u * sd + vf * cd
    vr = v - CG_TO_REAR * yaw
    roll_spd_f = max(abs(ufw), V_SLIP_FLOOR)
    roll_spd_r = max(abs(u), V_SLIP_FLOOR)
    alpha_f = math.atan(vfw / roll_spd_f)  # = atan2(vfw, roll_spd_f): the rolling speed is > 0
    alpha_r = math.atan(vr / roll_spd_r)
    g_f = roll_spd_f * cd / (roll_spd_f * roll_spd_f + vfw * vfw)
    g_r = roll_spd_r / (roll_spd_r * roll_spd_r + vr * vr)
    return ufw, vfw, vr, alpha_f, alpha_r, g_f, g_r


@kernel(error_model="numpy", inline="always")
def _implicit_lateral(kfa, krb, u, yaw, f_lat, m_z, inv_m, inv_iz, dt):
    """Lateral velocity and yaw-rate increments (dv m/s, dr rad/s) of one linearly implicit Euler
    step on the tyre Jacobian. kfa, krb: front / rear cornering stiffness times d(alpha)/d(v) (N s/m);
    f_lat N and m_z N m: this tick's lateral force and yaw moment."""
    a = CG_TO_FRONT
    b = CG_TO_REAR
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
        return (r1 * a22 - a12 * r2) * inv_det, (a11 * r2 - a21 * r1) * inv_det
    return r1, r2  # never expected with these tyres; explicit fallback keeps the tick finite


@kernel(error_model="numpy", inline="always")
def _kinematic_blend(spd, u_new, v_dyn, yaw_dyn, sd, cd, mu0, grip_f, grip_r, dt):
    """Below V_KIN_HIGH the motion blends into the kinematic bicycle (rear axle without slip).
    spd: speed before the tick (m/s); sd, cd: sin/cos of the road-wheel angle. Returns
    (u_new m/s, v_dyn m/s, yaw_dyn rad/s, wdyn the dynamic weight in [0, 1])."""
    wdyn = clamp((spd - V_KIN_LOW) / (V_KIN_HIGH - V_KIN_LOW), 0.0, 1.0)
    if wdyn < 1.0:
        u_kin = max(u_new, 0.0)
        yaw_kin = u_kin * (sd / cd) / WHEELBASE
        v_kin = yaw_kin * CG_TO_REAR
        # The blend's velocity correction is bounded by what the tyres could do in one tick, so a
        # slow backward slide (after a spin) stops at a tyre-like rate, not in one jump.
        dv_max = mu0 * max(grip_f, grip_r) * GRAVITY * dt
        u_new += clamp((1.0 - wdyn) * (u_kin - u_new), -dv_max, dv_max)
        v_dyn += clamp((1.0 - wdyn) * (v_kin - v_dyn), -dv_max, dv_max)
        yaw_dyn = wdyn * yaw_dyn + (1.0 - wdyn) * yaw_kin
    return u_new, v_dyn, yaw_dyn, wdyn


@kernel(error_model="numpy", inline="always")
def _turn(h, ch, sh, dh):
    """Heading h (rad, cos ch, sin sh) turned by dh (rad): (new heading, its cos, its sin). For a
    small turn the cos/sin come by angle addition; the factor 1.5 - n2/2 (a Newton step toward
    1/|(c, s)|) keeps the pair on the unit circle to ~1 ulp."""
    h_new = wrap_angle(h + dh)
    if abs(dh) <= SINCOS_TINY_MAX:
        sdh, cdh = sincos_tiny(dh)
        ch2 = ch * cdh - sh * sdh
        sh2 = sh * cdh + ch * sdh
        nrm = 1.5 - 0.5 * (ch2 * ch2 + sh2 * sh2)
        return h_new, ch2 * nrm, sh2 * nrm
    return h_new, math.cos(h_new), math.sin(h_new)


@kernel(error_model="numpy", inline="always")
def _write_pose(cars_f, w, c, ch, sh, vx, vy, u_new, v_dyn, yaw_dyn, dt):
    """Pose of car (w, c) after the tick: heading first (cos ch, sin sh before it), then the world
    velocity in the new body frame (capped at MAX_SPEED), then position and accelerations from the
    old world velocity (vx, vy m/s). Returns (lateral acceleration m/s^2, new heading rad, its cos,
    its sin, u_new and v_dyn after the cap m/s)."""
    h_new, ch2, sh2 = _turn(cars_f[w, c, F_HEADING], ch, sh, yaw_dyn * dt)
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
    return lat, h_new, ch2, sh2, u_new, v_dyn


@kernel(error_model="numpy", inline="always")
def _instability(spd, alpha_f, alpha_r, v_dyn, u_new):
    """INSTAB_* label from this tick's slip angles (rad) and body velocities (m/s)."""
    if not spd > INSTAB_MIN_SPEED:
        return INSTAB_NONE
    # |body slip| = |atan2(v, |u|)| > SPIN_SLIP, without the atan2
    sat_f = abs(alpha_f) / ALPHA_PEAK_FRONT
    sat_r = abs(alpha_r) / ALPHA_PEAK_REAR
    if abs(alpha_r) > SPIN_SLIP or abs(v_dyn) > TAN_SPIN_SLIP * abs(u_new) or u_new < 0.0:
        return INSTAB_SPIN_RISK
    if sat_r > 1.0 and sat_r > sat_f:
        return INSTAB_OVERSTEER
    if sat_f > 1.0 and sat_f >= sat_r:
        return INSTAB_UNDERSTEER
    return INSTAB_NONE


@kernel(error_model="numpy", inline="always")
def simulator_tick(cars_f, cars_i, car_params, w, c, delta, throttle, brake, tf, cgrip, dt, ch, sh):
    """One tick of the dynamic bicycle model (module docstring) for car (w, c): delta the road-wheel
    angle (rad), throttle and brake in [0, 1], tf the tyre factor, cgrip the compound grip, dt (s),
    ch, sh the cos and sin of the current heading. Writes pose, velocities, yaw rate, accelerations,
    slips and the instability label. Returns (lateral acceleration m/s^2, new heading rad, its cos,
    its sin)."""
    mass = car_params[w, c, P_MASS]
    inv_m = 1.0 / mass
    inv_iz = inv_m * INV_IZ_PER_INV_M
    a = CG_TO_FRONT
    b = CG_TO_REAR
    vx = cars_f[w, c, F_VX]
    vy = cars_f[w, c, F_VY]
    yaw = cars_f[w, c, F_YAW_RATE]
    u = vx * ch + vy * sh            # body forward velocity
    v = -vx * sh + vy * ch           # body lateral velocity (+ right)
    spd = math.sqrt(u * u + v * v)
    sd, cd = sincos_small(delta)  # |delta| <= MAX_STEER_ANGLE = 0.56 rad
    fz_f, fz_r, fmax_f, fmax_r, mu0, grip_f, grip_r, roll_f, roll_r, surf_drag = _axle_grip(
        cars_f, cars_i, car_params, w, c, mass, u, tf, cgrip)

    ufw, vfw, vr, alpha_f, alpha_r, g_f, g_r = _slips(u, v, yaw, sd, cd)
    nf, kf = pacejka(alpha_f, PAC_B_FRONT, PAC_C)
    nr, kr = pacejka(alpha_r, PAC_B_REAR, PAC_C)
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
    fx_f, fy_f, kf = axle_force(fx_f, fy_f, kf, fmax_f, ufw, vfw)
    fx_r, fy_r, kr = axle_force(fx_r, fy_r, kr, fmax_r, u, vr)

    # Resistances: aero + surface drag against the velocity, rolling against forward motion.
    kdrag = 0.5 * RHO_AIR * car_params[w, c, P_DRAG_CD] * DRAG_AREA_PER_CD + surf_drag
    roll = (roll_f * fz_f + roll_r * fz_r) * sgn_r

    # Body-frame forces and yaw moment; lateral velocity and yaw rate implicitly, forward explicitly.
    f_long = fx_f * cd - fy_f * sd + fx_r - kdrag * spd * u - roll
    f_lat = fx_f * sd + fy_f * cd + fy_r - kdrag * spd * v
    m_z = a * (fx_f * sd + fy_f * cd) - b * fy_r
    dv, dr = _implicit_lateral(kf * g_f * cd, kr * g_r, u, yaw, f_lat, m_z, inv_m, inv_iz, dt)
    u_new = u + dt * (f_long * inv_m + v * yaw)
    # No reverse: brakes and resistances stop a slow car, never push it backwards. (At speed the
    # body may slide backwards for a moment in a spin; that is not reversing.)
    if u >= 0.0 and u_new < 0.0 and spd < V_KIN_HIGH:
        u_new = 0.0
    u_new, v_dyn, yaw_dyn, wdyn = _kinematic_blend(spd, u_new, v + dv, yaw + dr, sd, cd, mu0, grip_f,
                                                   grip_r, dt)

    lat, h_new, ch2, sh2, u_new, v_dyn = _write_pose(cars_f, w, c, ch, sh, vx, vy, u_new, v_dyn,
                                                     yaw_dyn, dt)
    cars_f[w, c, F_SLIP_FRONT] = wdyn * alpha_f
    cars_f[w, c, F_SLIP_REAR] = wdyn * alpha_r
    # ... combined with the lateral slip over the slip of peak force: > 1 past the peak (sliding)
    sat_lat_f = wdyn * abs(alpha_f) / ALPHA_PEAK_FRONT
    sat_lat_r = wdyn * abs(alpha_r) / ALPHA_PEAK_REAR
    cars_f[w, c, F_GRIP_USAGE] = max(math.sqrt(lon_f * lon_f + sat_lat_f * sat_lat_f),
                                     math.sqrt(lon_r * lon_r + sat_lat_r * sat_lat_r))
    cars_i[w, c, I_INSTABILITY] = _instability(spd, alpha_f, alpha_r, v_dyn, u_new)
    return lat, h_new, ch2, sh2
