"""Car parameters from 0..100 ratings (PaddockJS spec section 3.3): ``car_params[w, c, P_*]`` rows.

value = base + (rating - 50) / 50 * variance * direction; 50 is neutral. Pure Python (setup time only).
"""

import numpy as np

from . import layout as L

# rating name -> (P_* index, base, variance, direction)
_RATING_TABLE = {
    "power": (L.P_POWER, 43000.0, 3200.0, 1.0),
    "braking": (L.P_BRAKE, 59000.0, 4200.0, 1.0),
    "aero": (L.P_DOWNFORCE_CL, 6.1, 0.35, 1.0),
    "dragEfficiency": (L.P_DRAG_CD, 0.33, 0.035, -1.0),
    "mechanicalGrip": (L.P_TIRE_GRIP, 2.35, 0.18, 1.0),
    "weightControl": (L.P_MASS, 798.0, 10.0, -1.0),
    "tireCare": (L.P_TIRE_CARE, 1.0, 0.12, 1.0),
    "pace": (L.P_PACE, 1.0, 0.08, 1.0),
    "racecraft": (L.P_RACECRAFT, 0.78, 0.16, 1.0),
    "aggression": (L.P_AGGRESSION, 0.5, 0.34, 1.0),
}
# snake_case aliases for Python callers
_RATING_ALIASES = {"drag_efficiency": "dragEfficiency", "mechanical_grip": "mechanicalGrip",
                   "weight_control": "weightControl", "tire_care": "tireCare"}
# Every rating name a driver may give (the spec's camelCase names and their snake_case aliases).
RATING_NAMES = tuple(_RATING_TABLE) + tuple(_RATING_ALIASES)
# PaddockJS driver ratings that shape its built-in driver's personality; paddock_ma's built-in driver
# has no such parameters, so they are refused by name rather than silently ignored.
UNSUPPORTED_RATINGS = frozenset({"riskTolerance", "risk_tolerance", "patience", "consistency"})


def neutral_car_params():
    """float64[NP] of the spec's neutral car and driver (all ratings 50; pit crew 0.5)."""
    p = np.zeros(L.NP, dtype=np.float64)
    for idx, base, _var, _dir in _RATING_TABLE.values():
        p[idx] = base
    p[L.P_PIT_CREW_SPEED] = 0.5
    p[L.P_PIT_CREW_CONSISTENCY] = 0.5
    p[L.P_PIT_CREW_RELIABILITY] = 0.5
    return p


def car_params_from_ratings(ratings):
    """float64[NP] from a dict of 0..100 ratings (50 = neutral; missing ratings are neutral).

    value = base + (rating - 50) / 50 * variance * direction (spec §3.3). Keys are the spec's
    camelCase names (snake_case accepted). Unknown or unsupported keys (``UNSUPPORTED_RATINGS``) and
    ratings outside [0, 100] raise ValueError (``env.config.participants.DriverConfig`` checks them first, naming
    the driver).
    """
    p = neutral_car_params()
    for key, value in ratings.items():
        name = _RATING_ALIASES.get(key, key)
        if name not in _RATING_TABLE:
            raise ValueError(f"unknown rating {key!r}; known: {sorted(_RATING_TABLE)}")
        rating = float(value)
        if not (0.0 <= rating <= 100.0):
            raise ValueError(f"rating {key!r} must be in [0, 100], got {value!r}")
        idx, base, var, direction = _RATING_TABLE[name]
        p[idx] = base + (rating - 50.0) / 50.0 * var * direction
    return p
