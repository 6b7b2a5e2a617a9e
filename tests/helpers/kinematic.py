"""A race tick for rule tests: cars move kinematically along the centreline (no physics), then the
real classification, rules and ranks run in the step's order; and the one-world pit state those tests
tick (``pit_world``, ``place_before_pit``)."""

import math

import numpy as np

from paddock_ma.sim.core import layout as L
from paddock_ma.sim.race.pit_service import pit_route_active, pit_route_tick
from paddock_ma.sim.race.control import car_is_held, init_world, race_control_tick, update_ranks
from paddock_ma.sim.race.placement import place_car
from paddock_ma.sim.race.rules import update_car_rules
from paddock_ma.sim.core.layout import DT
from paddock_ma.sim.core.rng import world_keys
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


PIT_TEST_FLAGS = (L.FLAG_COLLIDES | L.FLAG_RAY_VISIBLE | L.FLAG_RADAR_VISIBLE | L.FLAG_CLASSIFIED
                  | L.FLAG_PIT_OCCUPIES)


def pit_world(n=1, seed=1, **overrides):
    """One world, ``n`` active cars, PaddockJS pit defaults (spec 4.4) with pit stops on."""
    s = dict(
        cf=np.zeros((1, n, L.NF)), ci=np.zeros((1, n, L.NI), np.int32),
        wf=np.zeros((1, L.NWF)), wi=np.zeros((1, L.NWI), np.int64),
        cp=np.full((1, n, L.NP), 0.5), fl=np.full((1, n), PIT_TEST_FLAGS, np.int32), ru=np.zeros((1, L.NR)),
    )
    rules = dict(total_laps=5, standing_start=0, pit_stops=1, pit_speed_limit=80 * L.MPS_PER_KPH,
                 pit_stop_seconds=2.8, pit_max_concurrent=3, pit_min_gap=20, pit_issue_chance=0.12,
                 pit_issue_max_delay=4.0)
    rules.update(overrides)
    for k, v in rules.items():
        s["ru"][0, getattr(L, "R_" + k.upper())] = v
    s["ci"][0, :, L.I_ACTIVE] = 1
    s["wi"][0, L.WI_RNG_KEY] = world_keys(seed, 1)[0]
    init_world(s["wf"], s["wi"], s["ru"], 0)
    return s


def place_before_pit(tr, s, c, before_entry, offset=0.0, speed=60.0, box=0, intent=2):
    """Car ``c`` ``before_entry`` m before the pit entry on lap 2, on S tyres at 20 %, target H."""
    cf, ci = s["cf"], s["ci"]
    place_car(tr, cf, ci, 0, c, tr.length + tr.pit_entry_s - before_entry, offset, speed, 0.0)
    ci[0, c, L.I_COMPOUND] = L.COMPOUND_S
    ci[0, c, L.I_USED_COMPOUNDS] = 1 << L.COMPOUND_S
    ci[0, c, L.I_PIT_TARGET] = L.COMPOUND_H
    ci[0, c, L.I_PIT_BOX] = box
    ci[0, c, L.I_PIT_INTENT] = intent
    cf[0, c, L.F_TIRE_ENERGY] = 20.0
