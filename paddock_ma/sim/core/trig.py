"""Small math kernels every stage shares, each rule once: ``wrap_angle`` (angles to (-pi, pi]),
``clamp``, ``lerp_at`` / ``lerp_angle_at`` (interpolation between samples of an array), and
deterministic polynomial sin/cos for small angles (plain arithmetic, no libm, no fastmath).

Used by the vehicle dynamics for the road-wheel angle and the per-tick heading change, where two libm
calls per car-tick would be a measurable share of the step.
"""

import math

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

# Taylor coefficients of sin (x^1..x^15) and cos (x^0..x^16): for |x| <= SINCOS_POLY_MAX the
# truncation error is below 1e-18, i.e. the result is correctly rounded up to an ulp or two.
_S3, _S5, _S7, _S9 = -1.0 / 6.0, 1.0 / 120.0, -1.0 / 5040.0, 1.0 / 362880.0
_S11, _S13, _S15 = -1.0 / 39916800.0, 1.0 / 6227020800.0, -1.0 / 1307674368000.0
_C2, _C4, _C6, _C8 = -0.5, 1.0 / 24.0, -1.0 / 720.0, 1.0 / 40320.0
_C10, _C12, _C14, _C16 = (-1.0 / 3628800.0, 1.0 / 479001600.0, -1.0 / 87178291200.0,
                          1.0 / 20922789888000.0)
SINCOS_POLY_MAX = 0.6        # rad; covers the road-wheel angle (<= MAX_STEER_ANGLE)
SINCOS_TINY_MAX = 0.06       # rad; yaw_rate * dt of a car not spinning (3.6 rad/s at 60 Hz)


@kernel(error_model="numpy")
def sincos_small(x):
    """(sin x, cos x) for |x| <= SINCOS_POLY_MAX by Taylor polynomials: plain arithmetic, so it is
    deterministic and cheaper than two libm calls; agrees with libm to an ulp or two."""
    # Estrin's scheme (independent sub-products) instead of Horner: a shorter dependency chain.
    x2 = x * x
    x4 = x2 * x2
    x8 = x4 * x4
    s = x + x * x2 * (((_S3 + x2 * _S5) + x4 * (_S7 + x2 * _S9))
                      + x8 * ((_S11 + x2 * _S13) + x4 * _S15))
    c = 1.0 + x2 * (((_C2 + x2 * _C4) + x4 * (_C6 + x2 * _C8))
                    + x8 * (((_C10 + x2 * _C12) + x4 * (_C14 + x2 * _C16))))
    return s, c


@kernel(error_model="numpy")
def sincos_tiny(x):
    """(sin x, cos x) for |x| <= SINCOS_TINY_MAX (sin to x^7, cos to x^8: truncation < 1e-17)."""
    x2 = x * x
    s = x + x * x2 * (_S3 + x2 * (_S5 + x2 * _S7))
    c = 1.0 + x2 * ((_C2 + x2 * _C4) + (x2 * x2) * (_C6 + x2 * _C8))
    return s, c
