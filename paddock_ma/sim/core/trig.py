"""Small math kernels every stage shares, each rule once: ``wrap_angle`` (angles to (-pi, pi]),
``clamp``, ``lerp_at`` / ``lerp_angle_at`` (interpolation between samples of an array), and the
elementary functions of the per-car-tick kernels (vehicle model, built-in driver) in plain
arithmetic: ``sincos`` of a heading, ``tan_small`` of a steering angle and ``sincos_small`` (Taylor
polynomials), ``atan_poly`` / ``atan2_poly`` (a range reduction and a Taylor polynomial) and ``power``
(``exp(y log x)``, whose log several powers of one base share).

Why not the C library's. glibc's ``pow``, ``atan2``, ``atan``, ``tan`` and ``sincos`` compute in
extra precision to round correctly and cost 8-18 ns a call; a car-tick of simulator mode made about a
dozen such calls (a fifth of the core's time). These kernels agree with them within a few ulp
(``tests/sim/test_trig.py`` measures it), are pure functions of their arguments (so every
determinism property holds: the same inputs give the same bits, in any batch, thread or snapshot),
use no fastmath and inline into their callers. PaddockJS's own V8 ``Math`` functions are not glibc's
either: the last bits were never shared.
"""

import math
from decimal import Decimal

from .jit import kernel


@kernel(error_model="numpy")
def clamp(x, lo, hi):
    """x limited to [lo, hi] (the simulation's one clamp: controls, ratios of the vectors)."""
    return lo if x < lo else (hi if x > hi else x)


@kernel(inline="always")
def wrap_angle(a):
    """An angle (float64 rad) wrapped to (-pi, pi]: the one wrapping rule of the simulation (headings,
    heading errors, ray bearings). In range it returns ``a`` unchanged after two comparisons."""
    if a > math.pi or a <= -math.pi:
        a -= 2.0 * math.pi * math.floor((a + math.pi) / (2.0 * math.pi))  # now in [-pi, pi)
        if a <= -math.pi:
            a = math.pi
    return a


@kernel(inline="always")
def lerp_at(a, i, t):
    """``a[i] + t * (a[i + 1] - a[i])``: array ``a`` (float64[N]) interpolated linearly at fraction
    ``t`` in [0, 1] between samples ``i`` and ``i + 1`` (positions, lap distances, curvatures of the
    centreline and the pit path)."""
    return a[i] + t * (a[i + 1] - a[i])


@kernel(inline="always")
def lerp_angle_at(h, i, t):
    """Headings ``h`` (float64[N] rad) interpolated at fraction ``t`` between samples ``i`` and
    ``i + 1`` the shorter way round, wrapped to (-pi, pi]."""
    return wrap_angle(h[i] + t * wrap_angle(h[i + 1] - h[i]))


# Taylor coefficients of sin (x^1..x^17) and cos (x^0..x^16): for |x| <= SINCOS_POLY_MAX the first
# terms left out are below 1e-19 and 3e-18, i.e. the result is correctly rounded up to an ulp or two.
_S3, _S5, _S7, _S9 = -1.0 / 6.0, 1.0 / 120.0, -1.0 / 5040.0, 1.0 / 362880.0
_S11, _S13, _S15, _S17 = (-1.0 / 39916800.0, 1.0 / 6227020800.0, -1.0 / 1307674368000.0,
                          1.0 / 355687428096000.0)
_C2, _C4, _C6, _C8 = -0.5, 1.0 / 24.0, -1.0 / 720.0, 1.0 / 40320.0
_C10, _C12, _C14, _C16 = (-1.0 / 3628800.0, 1.0 / 479001600.0, -1.0 / 87178291200.0,
                          1.0 / 20922789888000.0)
SINCOS_POLY_MAX = math.pi / 4.0 + 1e-9    # rad: a reduced angle (``sincos``), a road-wheel angle


@kernel(error_model="numpy", inline="always")
def sincos_small(x):
    """(sin x, cos x) for |x| <= SINCOS_POLY_MAX by Taylor polynomials; agrees with libm to an ulp
    or two (sin(-0.0) reads +0.0)."""
    # Estrin's scheme (independent sub-products) instead of Horner: a shorter dependency chain.
    x2 = x * x
    x4 = x2 * x2
    x8 = x4 * x4
    s = x + x * x2 * (((_S3 + x2 * _S5) + x4 * (_S7 + x2 * _S9))
                      + x8 * ((_S11 + x2 * _S13) + x4 * (_S15 + x2 * _S17)))
    c = 1.0 + x2 * (((_C2 + x2 * _C4) + x4 * (_C6 + x2 * _C8))
                    + x8 * (((_C10 + x2 * _C12) + x4 * (_C14 + x2 * _C16))))
    return s, c


def _split(x: Decimal, bits: int) -> float:
    """x rounded toward zero to ``bits`` significant bits."""
    m, e = math.frexp(float(x))
    return math.ldexp(math.floor(math.ldexp(m, bits)), e - bits)


# pi / 2 as PIO2_1 + PIO2_2 + PIO2_3 (Cody and Waite): the first two of 33 bits, so k PIO2_1 and
# k PIO2_2 are exact for |k| < 2^20 and the reduction h - k pi / 2 loses nothing to cancellation
_PIO2 = Decimal("1.57079632679489661923132169163975144209858469968755291048747229615390820314310449931401741267")
PIO2_1 = _split(_PIO2, 33)
PIO2_2 = _split(_PIO2 - Decimal(PIO2_1), 33)
PIO2_3 = float(_PIO2 - Decimal(PIO2_1) - Decimal(PIO2_2))
TWO_OVER_PI = float(1 / _PIO2)
SINCOS_REDUCE_MAX = 1e5       # rad: beyond, the C library's sin and cos (never for a wrapped heading)


@kernel(error_model="numpy", inline="always")
def sincos(h):
    """(sin h, cos h) of an angle h (rad; a heading): h - k pi / 2 in [-pi/4, pi/4] by ``sincos_small``,
    the quadrant k mod 4 by selection. Within 2 ulp of libm (sin(-0.0) reads +0.0)."""
    if abs(h) > SINCOS_REDUCE_MAX:
        return math.sin(h), math.cos(h)
    k = math.floor(h * TWO_OVER_PI + 0.5)
    s, c = sincos_small(((h - k * PIO2_1) - k * PIO2_2) - k * PIO2_3)
    q = int(k) & 3
    a = c if (q & 1) != 0 else s
    b = s if (q & 1) != 0 else c
    return (-a if (q & 2) != 0 else a), (-b if ((q + 1) & 2) != 0 else b)


@kernel(error_model="numpy", inline="always")
def tan_small(x):
    """tan x for |x| <= SINCOS_POLY_MAX (a road-wheel angle), as sin / cos of ``sincos_small``, with
    the sign of x (so tan(-0.0) is -0.0, as libm's)."""
    s, c = sincos_small(x)
    return math.copysign(s / c, x)


SQRT3 = math.sqrt(3.0)
TAN_PI_12 = 2.0 - SQRT3       # tan(pi / 12): the reduced argument of atan is at most this
# atan t = t + t u Q(u), u = t^2, Q(u) = sum_k (-1)^(k+1) u^k / (2k + 3) for k = 0..11 (Taylor to t^25):
# for |t| <= tan(pi / 12) the first term left out, t^27 / 27, is below 5e-17 of t.
(_Q0, _Q1, _Q2, _Q3, _Q4, _Q5, _Q6, _Q7, _Q8, _Q9, _Q10, _Q11) = (
    -1.0 / 3.0, 1.0 / 5.0, -1.0 / 7.0, 1.0 / 9.0, -1.0 / 11.0, 1.0 / 13.0, -1.0 / 15.0, 1.0 / 17.0,
    -1.0 / 19.0, 1.0 / 21.0, -1.0 / 23.0, 1.0 / 25.0)


@kernel(error_model="numpy", inline="always")
def _atan_reduced(t):
    """atan t for |t| <= TAN_PI_12 (Estrin's scheme: a short dependency chain)."""
    u = t * t
    u2 = u * u
    u4 = u2 * u2
    u8 = u4 * u4
    q = (((_Q0 + u * _Q1) + u2 * (_Q2 + u * _Q3)) + u4 * ((_Q4 + u * _Q5) + u2 * (_Q6 + u * _Q7))
         + u8 * ((_Q8 + u * _Q9) + u2 * (_Q10 + u * _Q11)))
    return t + t * u * q


@kernel(error_model="numpy", inline="always")
def _atan_unit(a):
    """atan a for a in [0, 1]: above tan(pi / 12) by atan a = pi / 6 + atan((a sqrt3 - 1) / (a + sqrt3))."""
    if a <= TAN_PI_12:
        return _atan_reduced(a)
    return math.pi / 6.0 + _atan_reduced((a * SQRT3 - 1.0) / (a + SQRT3))


@kernel(error_model="numpy", inline="always")
def atan_poly(z):
    """atan z (rad, in [-pi/2, pi/2]) for any float z; above 1 by atan z = pi / 2 - atan(1 / z)."""
    a = abs(z)
    r = _atan_unit(a) if a <= 1.0 else math.pi / 2.0 - _atan_unit(1.0 / a)
    return math.copysign(r, z)


@kernel(error_model="numpy", inline="always")
def atan2_poly(y, x):
    """atan2(y, x) (rad, in [-pi, pi]) for finite y, x: the angle of the vector (x, y), with libm's
    signs of zero (y = +-0 gives +-0 or +-pi). Both zero: the C library's answer."""
    ax = abs(x)
    ay = abs(y)
    if ay <= ax:
        if ax == 0.0:
            return math.atan2(y, x)
        r = _atan_unit(ay / ax)
    else:
        r = math.pi / 2.0 - _atan_unit(ax / ay)
    if x < 0.0:
        r = math.pi - r
    return math.copysign(r, y)


@kernel(error_model="numpy", inline="always")
def power(x, y):
    """x^y for x >= 0 and y > 0 as exp(y log x) (0 at x = 0; NaN in, NaN out): relative error about
    |y ln x| ulp. Powers of one base can share its log: ``math.exp(y * log_x)``."""
    return math.exp(y * math.log(x))
