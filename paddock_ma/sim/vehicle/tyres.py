"""Tyre compounds, tyre energy and wear.

PaddockJS 1.0.0 carries compounds S/M/H as labels only: they change neither grip nor wear. paddock_ma
deliberately gives them an effect (a softer tyre grips more and wears faster), so that compound choice
and pit strategy matter. Neutral is the medium: with M fitted the numbers are the 1.0.0 ones.

Tyre energy ``E`` is a percentage in [1, 100] (``F_TIRE_ENERGY``); 100 = fresh.
"""

import math

import numpy as np

from ..core.jit import kernel
from ..core.layout import COMPOUND_H, COMPOUND_M, COMPOUND_S, GRAVITY

N_COMPOUNDS = 3

# Peak-grip multiplier per compound (indexed by COMPOUND_*). +-4 % is the order of the soft-to-hard
# spread of real slick ranges (about 0.5-1 s a lap on a 90 s lap); our own choice, not a PaddockJS value.
COMPOUND_GRIP = np.zeros(N_COMPOUNDS, dtype=np.float64)
COMPOUND_GRIP[COMPOUND_S] = 1.04
COMPOUND_GRIP[COMPOUND_M] = 1.00
COMPOUND_GRIP[COMPOUND_H] = 0.96

# Wear-rate multiplier per compound (indexed by COMPOUND_*); our own choice (a soft lasts about 2/3 of
# a medium stint, a hard about 1.4x).
COMPOUND_WEAR = np.zeros(N_COMPOUNDS, dtype=np.float64)
COMPOUND_WEAR[COMPOUND_S] = 1.45
COMPOUND_WEAR[COMPOUND_M] = 1.00
COMPOUND_WEAR[COMPOUND_H] = 0.70


@kernel
def compound_index(code):
    """Compound code (int) clamped to a valid table index (unknown codes read as the medium)."""
    if code < 0 or code >= N_COMPOUNDS:
        return COMPOUND_M
    return code


@kernel
def tyre_factor(energy):
    """Grip factor of worn tyres, 0.45..1 (spec §3.4 step 2).

    energy: float64, tyre energy in percent (1..100). Returns float64.
    """
    e = min(max(energy, 0.0), 100.0)
    f = 0.45 + 0.55 * math.pow(e / 100.0, 0.72)
    return min(max(f, 0.45), 1.0)


@kernel
def tyre_wear_rate(lat_acc, brake, throttle, tire_care, compound):
    """Tyre energy lost per second, percent/s (spec §3.4 step 7, times the compound's wear factor).

    lat_acc: m/s^2 (lateral acceleration of the tick), brake/throttle: [0, 1] applied inputs,
    tire_care: car parameter (wear divisor, clamped 0.45..1.8), compound: COMPOUND_* code.
    """
    care = min(max(tire_care, 0.45), 1.8)
    base = 0.035 + 0.11 * abs(lat_acc) / GRAVITY + 0.07 * brake + 0.025 * throttle
    return base / care * COMPOUND_WEAR[compound_index(compound)]


# --------------------------------------------------------------------------------------------
# Tyre force curve (simulator mode)
# --------------------------------------------------------------------------------------------
PAC_C = 1.45                 # Pacejka shape: sliding force = sin(C pi/2) = 0.76 of the peak
# |B alpha| at the curve's peak, tan(pi / 2C): beyond it the Pacejka slope is negative (clamped to 0)
PAC_BA_PEAK = math.tan(math.pi / (2.0 * PAC_C))
V_SLIP_FLOOR = 3.0           # m/s, rolling-speed floor of the slip-angle definition: smooth slips when
                             # the car slides sideways or crawls (no atan2 step at zero rolling speed)


@kernel(error_model="numpy")
def pacejka(alpha, b, c):
    """Normalised lateral force -sin(C atan(B alpha)) and its slope magnitude d|F|/d alpha (>= 0).

    The slope's cos(C atan(B alpha)) comes from the sine (one sqrt instead of a cos): it is >= 0
    up to the peak (|B alpha| <= PAC_BA_PEAK) and the slope is clamped to 0 beyond it.
    """
    ba = b * alpha
    s = math.sin(c * math.atan(ba))
    k = 0.0
    if abs(ba) < PAC_BA_PEAK:
        k = c * b * math.sqrt(max((1.0 - s) * (1.0 + s), 0.0)) / (1.0 + ba * ba)
    return -s, k


@kernel(error_model="numpy")
def axle_force(fx, fy, k, fmax, up, vp):
    """Combine an axle's longitudinal demand fx and pure lateral force fy (N, wheel frame) on its
    friction circle of radius fmax; k is the lateral slope |dFy/d alpha| (N/rad), scaled alike.

    The longitudinal demand is not clipped first, so wheelspin (drive beyond the circle) takes the
    lateral force with it. A brake demand beyond the circle locks the tyre: the force then turns
    toward the direction opposite to the contact-patch velocity (up, vp) (m/s, wheel frame), as a
    sliding tyre's does, so a locked car goes straight on instead of being steered by its brakes.
    Returns (fx, fy, k).
    """
    demand = abs(fx)
    braking = fx * up < 0.0
    n2 = fx * fx + fy * fy
    if n2 > fmax * fmax:
        s = fmax / math.sqrt(n2)
        fx *= s
        fy *= s
        k *= s
    if braking and demand > fmax:
        # Sliding force against the patch velocity; its lateral part is proportional to the
        # lateral velocity below V_SLIP_FLOOR (no sign step), and the whole stays within fmax.
        sp = max(math.sqrt(up * up + vp * vp), 0.1)
        lam = min(demand / fmax - 1.0, 1.0)
        fx = (1.0 - lam) * fx - lam * fmax * up / sp
        fy = (1.0 - lam) * fy - lam * fmax * vp / max(sp, V_SLIP_FLOOR)
        # slope in alpha units: dFy/dvp = fmax/sp and d alpha/dvp ~ 1/max(|up|, floor)
        k = (1.0 - lam) * k + lam * fmax * max(abs(up), V_SLIP_FLOOR) / max(sp, V_SLIP_FLOOR)
    return fx, fy, k
