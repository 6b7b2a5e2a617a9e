"""The surface tables (spec §2.3; PaddockJS 2.0.0's SURFACE_MODEL and SIMULATOR_SURFACE_MODEL), one
row per SURF_* code: how each surface grips, drags, resists rolling and ranks as the "worst wheel"
surface.

``SURFACE_GRIP`` is a friction multiplier; ``SURFACE_DRAG`` is N/(m/s)^2 (the spec's drag force is
coeff * v_ms^2 in newtons once its 12 u/m scalings cancel); ``SURFACE_ROLLING`` is a
rolling-resistance coefficient (force = coeff * normal load); ``SURFACE_PRIORITY`` orders the codes
from best (0, track) to worst (7, barrier): a contact patch and the arcade car take the worst surface
under them; ``SURFACE_LEGAL`` is 1 where a wheel may drive (track, kerb, the pit surfaces) and 0 on
gravel, grass and barrier (a car is on track while every wheel is legal). The vehicle dynamics
(``vehicle.dynamics``, ``vehicle.simulator``) and the wheel classification (``vehicle.wheels``) read these arrays;
simulator mode reads the ``SIM_SURFACE_*`` rows.
"""

import numpy as np

from ..core import layout as L
from ..core.jit import kernel

SURFACE_GRIP = np.zeros(L.N_SURFACES, dtype=np.float64)      # friction multiplier
SURFACE_DRAG = np.zeros(L.N_SURFACES, dtype=np.float64)      # N/(m/s)^2
SURFACE_ROLLING = np.zeros(L.N_SURFACES, dtype=np.float64)   # rolling coefficient (force / normal load)
SURFACE_PRIORITY = np.zeros(L.N_SURFACES, dtype=np.int64)    # "worst wheel" order, higher = worse
SURFACE_LEGAL = np.zeros(L.N_SURFACES, dtype=np.int8)        # 1 = a legal surface to drive on
for _code, _grip, _drag, _rr, _prio, _legal in (
    (L.SURF_TRACK, 1.00, 0.00, 0.000, 0, 1),
    (L.SURF_PIT_ENTRY, 0.96, 0.04, 0.012, 1, 1),
    (L.SURF_PIT_EXIT, 0.96, 0.04, 0.012, 1, 1),
    (L.SURF_PIT_LANE, 0.96, 0.04, 0.012, 2, 1),
    (L.SURF_PIT_BOX, 0.94, 0.08, 0.025, 3, 1),
    (L.SURF_KERB, 0.92, 0.12, 0.045, 4, 1),
    (L.SURF_GRASS, 0.34, 1.90, 0.360, 5, 0),
    (L.SURF_GRAVEL, 0.43, 4.00, 0.680, 6, 0),
    (L.SURF_BARRIER, 0.18, 9.00, 1.200, 7, 0),
):
    SURFACE_GRIP[_code] = _grip
    SURFACE_DRAG[_code] = _drag
    SURFACE_ROLLING[_code] = _rr
    SURFACE_PRIORITY[_code] = _prio
    SURFACE_LEGAL[_code] = _legal

# Simulator mode's own table (PaddockJS 2.0.0 SIMULATOR_SURFACE_MODEL): the car reads the mean of its
# four wheels' rows; ``scrub`` (m/s^2) adds to the steering scrub of a steered car.
SIM_SURFACE_GRIP = np.zeros(L.N_SURFACES, dtype=np.float64)
SIM_SURFACE_DRAG = np.zeros(L.N_SURFACES, dtype=np.float64)
SIM_SURFACE_ROLLING = np.zeros(L.N_SURFACES, dtype=np.float64)
SIM_SURFACE_SCRUB = np.zeros(L.N_SURFACES, dtype=np.float64)
for _code, _grip, _drag, _rr, _scrub in (
    (L.SURF_TRACK, 1.00, 0.00, 0.008, 0.0),
    (L.SURF_PIT_ENTRY, 0.92, 0.06, 0.018, 1.2),
    (L.SURF_PIT_EXIT, 0.92, 0.06, 0.018, 1.2),
    (L.SURF_PIT_LANE, 0.90, 0.08, 0.020, 1.4),
    (L.SURF_PIT_BOX, 0.82, 0.12, 0.035, 2.5),
    (L.SURF_KERB, 0.78, 0.42, 0.090, 8.5),
    (L.SURF_GRASS, 0.30, 3.40, 0.200, 15.0),
    (L.SURF_GRAVEL, 0.36, 5.40, 0.240, 18.0),
    (L.SURF_BARRIER, 0.08, 15.0, 2.400, 30.0),
):
    SIM_SURFACE_GRIP[_code] = _grip
    SIM_SURFACE_DRAG[_code] = _drag
    SIM_SURFACE_ROLLING[_code] = _rr
    SIM_SURFACE_SCRUB[_code] = _scrub
for _table in (SURFACE_GRIP, SURFACE_DRAG, SURFACE_ROLLING, SURFACE_PRIORITY, SURFACE_LEGAL, SIM_SURFACE_GRIP,
               SIM_SURFACE_DRAG, SIM_SURFACE_ROLLING, SIM_SURFACE_SCRUB):
    _table.flags.writeable = False


@kernel(error_model="numpy")
def table_index(code):
    """A SURF_* code clamped to a valid row of the table (unknown codes read as barrier, the worst)."""
    if code < 0 or code >= L.N_SURFACES:
        return L.SURF_BARRIER
    return code
