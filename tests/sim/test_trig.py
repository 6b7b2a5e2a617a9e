"""The elementary functions of the per-car-tick kernels (``core.trig``) against the C library's.

They replace glibc's ``atan2``, ``atan``, ``tan`` and ``pow`` in the vehicle model and the built-in
driver for speed; what they must give is the library's value to a few ulp over the whole domain their
callers use (signs, quadrants, zeros and both branches of every range reduction included).
"""

import math

import numpy as np
from numba import njit

from paddock_ma.sim.core.trig import (
    SINCOS_POLY_MAX, SINCOS_REDUCE_MAX, TAN_PI_12, atan2_poly, atan_poly, power, sincos, tan_small,
)


@njit
def _atan2_all(y, x, out):
    for i in range(y.size):
        out[i] = atan2_poly(y[i], x[i])


@njit
def _atan_all(z, out):
    for i in range(z.size):
        out[i] = atan_poly(z[i])


@njit
def _tan_all(x, out):
    for i in range(x.size):
        out[i] = tan_small(x[i])


@njit
def _sincos_all(h, sin_out, cos_out):
    for i in range(h.size):
        sin_out[i], cos_out[i] = sincos(h[i])


@njit
def _power_all(x, y, out):
    for i in range(x.size):
        out[i] = power(x[i], y)


def _ulps(got, want):
    """|got - want| in units of the last place of want (0 where both are equal, zeros included)."""
    return np.abs(got - want) / np.spacing(np.maximum(np.abs(want), np.finfo(float).tiny))


def _assert_like_libm(got, want, max_ulps):
    """got within max_ulps of libm's want everywhere, with its signs (of zeros too)."""
    assert _ulps(got, want).max() <= max_ulps
    assert np.array_equal(np.signbit(got), np.signbit(want))


def test_atan2_poly_is_libm_atan2_within_four_ulp_in_every_quadrant():
    rng = np.random.default_rng(3)
    n = 400_000
    angle = rng.uniform(-math.pi, math.pi, n)
    radius = 10.0 ** rng.uniform(-8, 4, n)
    x, y = radius * np.cos(angle), radius * np.sin(angle)
    # the axes, the diagonals, signed zeros and both ends of the reduction (tan(pi/12) and 1)
    edge = [0.0, -0.0, 1.0, -1.0, 1e-300, -1e-300, 3.0, TAN_PI_12, np.nextafter(TAN_PI_12, 1.0),
            np.nextafter(1.0, 0.0)]
    ex, ey = np.meshgrid(edge, edge)
    x = np.concatenate([x, ex.ravel(), ey.ravel()])
    y = np.concatenate([y, ey.ravel(), ex.ravel()])
    got = np.empty_like(x)
    _atan2_all(y, x, got)
    want = np.arctan2(y, x)
    _assert_like_libm(got, want, 4.0)     # signs: an angle of +-0 or +-pi from the sign of y
    assert (got == want).mean() > 0.5                 # mostly the correctly rounded value itself


def test_atan_poly_is_libm_atan_within_four_ulp():
    rng = np.random.default_rng(4)
    z = np.concatenate([np.tan(rng.uniform(-1.5707, 1.5707, 400_000)), 10.0 ** rng.uniform(-300, 300, 20_000),
                        [0.0, -0.0, 1.0, -1.0, TAN_PI_12, -TAN_PI_12, 1e308, -1e308]])
    got = np.empty_like(z)
    _atan_all(z, got)
    _assert_like_libm(got, np.arctan(z), 4.0)


def test_tan_small_is_libm_tan_within_three_ulp_over_the_steering_range():
    x = np.concatenate([np.linspace(-SINCOS_POLY_MAX, SINCOS_POLY_MAX, 200_001), [0.0, -0.0, 1e-300, 0.56]])
    got = np.empty_like(x)
    _tan_all(x, got)
    _assert_like_libm(got, np.tan(x), 3.0)


def test_sincos_is_libm_sin_and_cos_within_two_ulp_in_every_quadrant():
    rng = np.random.default_rng(6)
    quarter = np.arange(-8, 9) * (math.pi / 4.0)          # the ends of the reduction's intervals
    h = np.concatenate([rng.uniform(-math.pi, math.pi, 400_000), rng.uniform(-50.0, 50.0, 50_000),
                        rng.uniform(-SINCOS_REDUCE_MAX, SINCOS_REDUCE_MAX, 50_000), quarter,
                        np.nextafter(quarter, 10.0), np.nextafter(quarter, -10.0),
                        [math.pi, -math.pi, 1e-300, 2.5e5, -3e7]])
    got_sin, got_cos = np.empty_like(h), np.empty_like(h)
    _sincos_all(h, got_sin, got_cos)
    want_sin, want_cos = np.sin(h), np.cos(h)
    # near a zero of sin or cos an ulp of the result is tiny: there the bound is one of the argument's
    # reduction, 2e-16 absolute (h - k pi / 2 is exact to about 1e-32 per unit of k)
    for got, want in ((got_sin, want_sin), (got_cos, want_cos)):
        assert ((_ulps(got, want) <= 2.0) | (np.abs(got - want) <= 2e-16 * np.abs(want) + 1e-30)).all()
        assert (np.abs(got - want) <= 2.3e-16).all()
    assert (got_sin == want_sin).mean() > 0.5 and (got_cos == want_cos).mean() > 0.5


def test_power_is_libm_pow_within_its_log_bound():
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(0.0, 1.0, 100_000), 10.0 ** rng.uniform(-12, 0.5, 100_000),
                        [0.0, 1.0, 5e-324, 1.6]])
    for y in (0.72, 1.05, 1.15, 1.22, 1.55, 1.85, 2.1):
        got = np.empty_like(x)
        _power_all(x, y, got)
        want = x ** y
        # exp(y ln x) carries the rounding of y ln x (absolute, about |y ln x| eps) into its relative
        # error: up to 2 |y ln x| ulp, plus two for exp and log themselves
        bound = 2.0 + 2.0 * np.abs(y * np.log(np.where(x > 0.0, x, 1.0)))
        ok = (got == want) | (_ulps(got, want) <= bound)
        assert ok.all(), (y, x[~ok][:5], got[~ok][:5], want[~ok][:5])
    assert power(0.0, 1.55) == 0.0 and power(1.0, 2.1) == 1.0
    assert math.isnan(power(math.nan, 1.22))
