"""Rules both physics modes share (PaddockJS 2.0.0 ``vehiclePhysics.js``): the speed-dependent
acceleration and braking limits, the yaw rate that wheels on a draggier surface pull toward their
side, and PaddockJS's angle normalisation (kept with its rounding, so headings follow PaddockJS's)."""

import math

import numpy as np

from ..core.jit import kernel
from ..core.layout import MAX_SPEED
from ..core.trig import clamp

WHEEL_DRAG_YAW_GAIN = 0.08
MAX_WHEEL_DRAG_YAW_RATE = 0.22   # rad/s
TWO_PI = 2.0 * math.pi


@kernel(error_model="numpy", inline="always")
def speed_ratio(speed):
    """(r, log r): speed (m/s) / MAX_SPEED clamped to [0, 1], and its natural log (-inf at rest), the
    base of the models' speed powers r^k = exp(k log r) (``core.trig.power``; one log for all of them)."""
    r = clamp(speed / MAX_SPEED, 0.0, 1.0)
    return r, math.log(r)


@kernel(error_model="numpy", inline="always")
def _drive_limit(log_r, surface_grip):
    return surface_grip * (17.0 * (1.0 - math.exp(2.1 * log_r)) + 1.2)


@kernel(error_model="numpy", inline="always")
def acceleration_limit(speed, surface_grip):
    """Largest drive acceleration (m/s^2) at speed (m/s) on a surface of grip surface_grip:
    surface_grip (17 (1 - r^2.1) + 1.2), r the speed ratio."""
    return _drive_limit(speed_ratio(speed)[1], surface_grip)


@kernel(error_model="numpy", inline="always")
def capped_drive(a, r, log_r, surface_grip):
    """min(a, acceleration_limit): a drive acceleration a (m/s^2) capped by the limit at speed ratio r
    (log_r its log, ``speed_ratio``), without its power when a is below a cheap lower bound of the
    limit (r^2.1 <= r^2 on [0, 1]; the margin covers the rounding of both), so the result is always
    the same."""
    if a <= surface_grip * (17.0 * (1.0 - r * r) + 1.2) * (1.0 - 1e-12):
        return a
    return min(a, _drive_limit(log_r, surface_grip))


@kernel(error_model="numpy", inline="always")
def braking_limit(speed, surface_grip):
    """Largest braking deceleration (m/s^2) at speed (m/s) on a surface of grip surface_grip."""
    r = clamp(speed / MAX_SPEED, 0.0, 1.0)
    return surface_grip * (20.0 + r * 14.0)


@kernel(error_model="numpy", inline="always")
def _resistance(drag, rolling, grip, s):
    return drag[s] * 0.14 + rolling[s] * 2.4 + (1.0 - grip[s]) * 0.65


@kernel(error_model="numpy", inline="always")
def wheel_drag_yaw_rate(drag, rolling, grip, fl, fr, rl, rr, speed):
    """Yaw rate (rad/s, + = right) toward the side whose wheels (surface rows fl, fr, rl, rr of the
    mode's table: drag, rolling, grip arrays) resist more, growing with speed (m/s), at most 0.22."""
    left = (_resistance(drag, rolling, grip, fl) + _resistance(drag, rolling, grip, rl)) / 2.0
    right = (_resistance(drag, rolling, grip, fr) + _resistance(drag, rolling, grip, rr)) / 2.0
    r = clamp(speed / MAX_SPEED, 0.0, 1.0)
    return clamp((right - left) * r * WHEEL_DRAG_YAW_GAIN, -MAX_WHEEL_DRAG_YAW_RATE, MAX_WHEEL_DRAG_YAW_RATE)


@kernel(error_model="numpy", inline="always")
def normalize_angle(a):
    """PaddockJS's normalizeAngle: ((a + pi) mod 2 pi) - pi with JavaScript's remainder (sign of the
    dividend), then one 2 pi added below -pi. Result in [-pi, pi]. (fmod returns a dividend smaller
    than the divisor unchanged, exactly: the library call is needed only beyond one turn.)"""
    x = a + math.pi
    value = (x if -TWO_PI < x < TWO_PI else np.fmod(x, TWO_PI)) - math.pi
    if value < -math.pi:
        value += TWO_PI
    return value
