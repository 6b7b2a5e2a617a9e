"""A policy car's whole pit stop on PaddockJS's route (paddock_ma.sim.race.pit_route): the traces
(``tests/sim/test_paddockjs_parity.py``, ``pit-entry``) cover the approach and the entry road; here the
stop runs on to the queue point, the service area, the exit road and back to the physics, on trackSeed
2601 with PaddockJS's pit lane."""

import math

from paddock_ma.env.config.root import EnvConfig
from paddock_ma.env.environment import PaddockEnv
from paddock_ma.sim.core import layout as L

CONFIG = {"drivers": [{"id": "car-00", "name": "car-00", "tire": "M"}], "seed": 7, "trackSeed": 2601,
          "controlledDrivers": ["car-00"], "physicsMode": "simulator", "frameSkip": 4, "totalLaps": 3,
          "rules": {"standingStart": False, "modules": {"pitStops": {"enabled": True}}},
          "scenario": {"participants": ["car-00"],
                       "placements": {"car-00": {"distanceMeters": 7200, "offsetMeters": 0, "speedKph": 150}}}}


def test_policy_car_stop_runs_paddockjs_route_to_the_end():
    env = PaddockEnv(EnvConfig.from_paddockjs(CONFIG))
    env.reset()
    st = env.engine.state
    w, c = env.w, 0
    tr = st.track
    seen = []
    for step in range(900):
        action = {"steering": 0.0, "throttle": 0.3, "brake": 0.0}
        if step == 0:
            action["pit_intent"] = 2
        env.step({"car-00": action})
        status = int(st.cars_i[w, c, L.I_PIT_STATUS])
        phase = int(st.cars_i[w, c, L.I_PIT_ROUTE])
        if not seen or seen[-1] != (status, phase):
            seen.append((status, phase))
        if status == L.PIT_SERVICING:
            # standing in the centre of the team's service area
            assert math.hypot(st.cars_f[w, c, L.F_X] - tr.box_x[0], st.cars_f[w, c, L.F_Y] - tr.box_y[0]) < 1e-9
            assert st.cars_f[w, c, L.F_SPEED] == 0.0
        if status == L.PIT_COMPLETED:
            break
    assert seen[:1] == [(L.PIT_PENDING, L.ROUTE_NONE)]
    # entry route, queue release into the service area, service, exit route, back to the physics
    assert (L.PIT_ENTERING, L.ROUTE_ENTRY) in seen
    assert (L.PIT_ENTERING, L.ROUTE_RELEASE) in seen
    assert (L.PIT_SERVICING, L.ROUTE_HELD) in seen
    assert (L.PIT_EXITING, L.ROUTE_EXIT) in seen
    assert seen[-1] == (L.PIT_COMPLETED, L.ROUTE_NONE)
    assert st.cars_i[w, c, L.I_PIT_STOPS] == 1 and st.cars_i[w, c, L.I_PIT_INTENT] == 0
    # the stop's target compound fitted (ours: the fitted one unless the action names another; PaddockJS
    # would fit its first other compound)
    assert st.cars_i[w, c, L.I_COMPOUND] == st.cars_i[w, c, L.I_PIT_TARGET]
    assert st.cars_i[w, c, L.I_CNT_PIT_EXIT] + st.cars_i[w, c, L.I_PIT_STOPS] >= 1
    assert st.cars_f[w, c, L.F_SPEED] >= 95.0 * L.MPS_PER_KPH - 1e-9
    # handed back on the exit road's end, near the track
    assert abs(st.cars_f[w, c, L.F_OFFSET]) < tr.grass_edge
    # PaddockJS's race distance: the stop's lap's exit
    exit_rd = st.cars_f[w, c, L.F_PIT_ENTRY_RD] + (tr.pit_exit_s - tr.pit_entry_s) % tr.length
    assert st.cars_f[w, c, L.F_PJS_RACE_DISTANCE] >= exit_rd - 1e-6
    env.close()
