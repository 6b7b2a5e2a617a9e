"""Tyre compounds, tyre energy and wear.

PaddockJS 2.0.0 carries compounds S/M/H as labels only: they change neither grip nor wear. paddock_ma
deliberately gives them an effect (a softer tyre grips more and wears faster), so that compound choice
and pit strategy matter. Neutral is the medium: with M fitted the numbers are PaddockJS's exactly.
The wear rate of each physics mode is its dynamics' (``vehicle.dynamics``, ``vehicle.simulator``).

Tyre energy ``E`` is a percentage in [1, 100] (``F_TIRE_ENERGY``); 100 = fresh.
"""

import numpy as np

from ..core.jit import kernel
from ..core.layout import COMPOUND_H, COMPOUND_M, COMPOUND_S
from ..core.trig import power

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
    f = 0.45 + 0.55 * power(e / 100.0, 0.72)
    return min(max(f, 0.45), 1.0)
