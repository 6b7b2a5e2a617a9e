"""A race tick for rule tests: cars move kinematically along the centreline (no physics), then the
real classification, rules and ranks run in the step's order."""

import math

import numpy as np

from paddock_ma.sim.core import layout as L
from paddock_ma.sim.race.pit_service import pit_route_active, pit_route_tick
from paddock_ma.sim.race.control import car_is_held, race_control_tick, update_ranks
from paddock_ma.sim.race.rules import update_car_rules
from paddock_ma.sim.core.layout import DT
from paddock_ma.sim.vehicle.wheels import classify_car
from paddock_ma.sim.track.geometry import point_at


def kinematic_tick(tr, s):
    """One tick in the step's order; non-pit cars are moved kinematically along the centreline at
    F_SPEED (negative = backwards) keeping their lateral offset, then classified by surfaces."""
    cf, ci, wf, wi, cp, fl, ru = (s[k] for k in ("cf", "ci", "wf", "wi", "cp", "fl", "ru"))
    n = cf.shape[1]
    race_control_tick(cf, ci, wf, wi, ru, 0, n, DT)
    for c in range(n):
        if pit_route_active(ci, 0, c):
            pit_route_tick(tr, cf, ci, cp, fl, wf, wi, ru, 0, c, n, DT)
        elif car_is_held(ci, wi, 0, c):
            cf[0, c, [L.F_SPEED, L.F_VX, L.F_VY]] = 0.0
        else:
            p = cf[0, c, L.F_PROGRESS] + cf[0, c, L.F_SPEED] * DT
            off = cf[0, c, L.F_OFFSET]
            x, y, h, _ = point_at(tr, p)
            cf[0, c, L.F_X] = x - off * math.sin(h)
            cf[0, c, L.F_Y] = y + off * math.cos(h)
            cf[0, c, L.F_HEADING] = h + (math.pi if cf[0, c, L.F_SPEED] < 0 else 0.0)
    old = cf[0, :, L.F_PROGRESS].copy()
    for c in range(n):
        classify_car(tr, cf, ci, 0, c)
    for c in range(n):
        update_car_rules(tr, cf, ci, cp, fl, wf, wi, ru, 0, c, old[c], DT)
    update_ranks(cf, ci, fl, wi, 0, n, np.empty(n, np.int64))
