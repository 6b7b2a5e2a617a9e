"""Every ending arrives the same way: the sim's end-of-step bookkeeping decides it (destroyed, stalled,
max steps, race finish) and the adapters report it from the step record, with the engine's auto-reset
starting the next life."""

import numpy as np

from paddock_ma.adapters.pettingzoo_env import parallel_env
from paddock_ma.env.batch_env import BatchEnv

LAP = 2448.5547135243096
SENSES = {"rays": {"rays": [{"id": "c", "angle_degrees": 0.0, "length_meters": 80.0}]}, "nearby_cars": {"max_cars": 1}}
FINISH = {"drivers": 2, "controlled_drivers": ["car-00", "car-01"], "sensors": SENSES, "total_laps": 1,
          "frame_skip": 4, "rules": {"standing_start": False}, "participant_interactions": {"default_profile": "normal"},
          "scenario": {"placements": {"car-00": {"distance_meters": LAP - 15, "speed_kph": 100},
                                      "car-01": {"distance_meters": LAP - 30, "offset_meters": 3, "speed_kph": 100}}}}


def test_race_finish_ends_through_the_step_like_any_ending():
    env = BatchEnv(FINISH | {"track": "oval"}, 2)
    env.reset(seed=1)
    for _ in range(40):
        r = env.step(np.tile(np.array([0.0, 1.0, 0.0], np.float32), (2, 2, 1)))
        if r.done.all():
            break
    assert r.terminated.all() and not r.truncated.any()
    assert (r.end_reason == r.end_reason[0, 0]).all() and not env.running_mask().any()
    names = {int(c) for c in r.end_reason.ravel()}
    from paddock_ma.env.episodes import END_REASON_NAMES
    assert {END_REASON_NAMES[c] for c in names} == {"race-finish"}


def test_race_finish_reaches_pettingzoo_as_a_termination_with_its_reason():
    env = parallel_env("paddock/oval-batch-v0", **FINISH)
    env.reset(seed=1)
    ended = {}
    for _ in range(40):
        _, _, terms, truncs, infos = env.step({a: np.array([0.0, 1.0, 0.0], np.float32) for a in env.agents})
        for a, t in terms.items():
            if t:
                ended[a] = (truncs[a], infos[a]["life_summary"]["end_reason"])
        if not env.agents:
            break
    assert ended == {"car-00@0": (False, "race-finish"), "car-01@0": (False, "race-finish")}


def test_auto_reset_lives_come_from_the_engine_with_final_observations():
    # lives of 3 steps: at step 3 both cars end (max-steps) and their next lives start in the same call
    cfg = {"drivers": 2, "controlled_drivers": ["car-00", "car-01"], "sensors": SENSES, "episode": {"max_steps": 3}}
    env = parallel_env("paddock/oval-batch-v0", auto_reset=True, max_lives=2, reset_placement="random", **cfg)
    twin = BatchEnv(env.config, 1)                       # no auto-reset: the observations lives end with
    env.reset(seed=4)
    twin.reset(seed=4)
    act = np.array([0.0, 0.5, 0.0], np.float32)
    for _ in range(3):
        obs, _, terms, truncs, infos = env.step({a: act for a in env.agents})
        ref = twin.step(np.tile(act, (1, 2, 1)))
    assert truncs == {"car-00@0": True, "car-01@0": True, "car-00@1": False, "car-01@1": False}
    for k in range(2):
        np.testing.assert_array_equal(obs[f"car-0{k}@0"], ref.obs[0, k])   # the ended life's last observation
        assert infos[f"car-0{k}@1"]["newborn"] and infos[f"car-0{k}@1"]["life"] == 1
        assert infos[f"car-0{k}@1"]["episode"]["episode_step"] == 0
        assert not np.array_equal(obs[f"car-0{k}@1"], ref.obs[0, k])
