"""The adapters' snapshot/restore: the engine and the lives bookkeeping come back together, bit-exactly
(snapshot, step N, restore, step N again: the same observations, rewards, flags, infos and agent ids),
into the same env or a fresh one; documents that do not fit are refused; calls before reset say so."""

import json

import numpy as np
import pytest

from paddock_ma.adapters.pettingzoo_env import parallel_env
from paddock_ma.adapters.rllib_env import PaddockMultiAgentEnv
from paddock_ma.errors import PaddockError

SENSES = {"rays": {"rays": [{"id": "c", "angle_degrees": 0.0, "length_meters": 80.0}]},
          "nearby_cars": {"max_cars": 1}}
# car-01 starts in the grass 37 m right of the centreline, heading at the barrier (41 m) at 150 km/h: the
# simulation destroys it in the first step, so its lives run out of step with the others' (when every
# live agent of the RLlib env ends in one step, the env episode ends)
AT_THE_BARRIER = {"distance_meters": 100.0, "offset_meters": 37.0, "speed_kph": 150.0,
                  "heading_error_radians": 1.5707963267948966}
CARS = {"drivers": 3, "controlled_drivers": ["car-00", "car-01", "car-02"], "sensors": SENSES,
        "episode": {"max_steps": 10}}
OUT_OF_STEP = dict(CARS, scenario={"placements": {"car-01": AT_THE_BARRIER}})


def _pettingzoo(cars=CARS):
    return parallel_env("paddock/oval-batch-v0", auto_reset=True, max_lives=6, reset_placement="random", **cars)


def _rllib(cars=CARS):
    return PaddockMultiAgentEnv({"env_id": "paddock/oval-batch-v0", "overrides": cars, "num_worlds": 2,
                                 "max_lives": 6, "max_world_steps": 40, "seed": 5, "infos": "full"})


def _rollout(env, steps, seed):
    """``steps`` steps of seeded random actions; the env resets when its episode is over (the RLlib env
    from its own seed stream, which its snapshot holds; the PettingZoo env with a given seed)."""
    rng = np.random.default_rng(seed)
    trace = []
    for _ in range(steps):
        if not env.agents:
            obs, infos = env.reset() if isinstance(env, PaddockMultiAgentEnv) else env.reset(seed=99)
            trace.append(("reset", sorted(obs), [obs[a].tobytes() for a in sorted(obs)], infos,
                          getattr(env.engine, "seed", None)))
            continue
        acts = {a: rng.uniform([-1, 0, 0], [1, 1, 0.2]).astype(np.float32) for a in env.agents}
        obs, rew, term, trunc, infos = env.step(acts)
        trace.append((sorted(obs), [obs[a].tobytes() for a in sorted(obs)], rew, term, trunc, infos,
                      list(env.agents)))
    return trace


@pytest.mark.parametrize("make", [_pettingzoo, _rllib], ids=["pettingzoo", "rllib"])
def test_snapshot_step_restore_step_is_identical(make):
    env = make(OUT_OF_STEP)
    env.reset(seed=11)
    first_step = _rollout(env, 1, seed=1)[0]
    assert first_step[3][env.lives.ids[0][1][0]]   # car-01's first life crashed
    _rollout(env, 13, seed=1)                      # past the first lives
    doc = env.snapshot()
    agents = list(env.agents)
    assert any(not a.endswith("@0") for a in agents)
    doc = json.loads(json.dumps(doc))              # JSON-safe, and exact through JSON
    first = _rollout(env, 60, seed=2)              # through more lives and, for RLlib, a world-cap reset
    assert any(t[0] == "reset" for t in first)
    obs, _ = env.restore(doc)
    assert env.agents == agents and sorted(obs) == sorted(agents)
    assert _rollout(env, 60, seed=2) == first
    fresh = make(OUT_OF_STEP)                      # a fresh env of the same options, never reset
    fresh.restore(doc)
    assert fresh.agents == agents
    assert _rollout(fresh, 60, seed=2) == first


def test_restore_brings_the_lives_back_with_the_world():
    """The issue's case: restoring the world alone left the agents in a later life than the simulation."""
    env = _pettingzoo()
    env.reset(seed=3)
    doc = env.snapshot()
    _rollout(env, 12, seed=1)
    assert all(a.endswith("@1") for a in env.agents)
    obs, infos = env.restore(doc)
    assert env.agents == ["car-00@0", "car-01@0", "car-02@0"] == sorted(obs)
    assert all(infos[a]["life"] == 0 for a in env.agents)


def test_snapshots_that_do_not_fit_are_refused_and_change_nothing():
    pz, rl = _pettingzoo(), _rllib()
    with pytest.raises(PaddockError) as exc:
        pz.snapshot()
    assert exc.value.code == "not_reset"
    pz.reset(seed=1)
    rl.reset()
    before = rl.snapshot()
    for doc in (pz.snapshot(), {"lives": pz.snapshot(), "seed_root": 1, "episodes": 0}, {"engine": 1}):
        with pytest.raises(PaddockError) as exc:
            rl.restore(doc)
        assert exc.value.code == "snapshot_rejected"
    assert rl.snapshot() == before
    with pytest.raises(PaddockError) as exc:
        pz.restore(before["lives"])                # an RLlib env's lives: another id format and shape
    assert exc.value.code == "snapshot_rejected"


def test_stepping_before_reset_says_so():
    for env, agent in ((_pettingzoo(), "car-00@0"), (_rllib(), "w0/car-00@0")):
        with pytest.raises(PaddockError) as exc:
            env.step({agent: np.zeros(3, np.float32)})
        assert exc.value.code == "not_reset" and "reset()" in exc.value.message


def test_unknown_ids_are_named_in_each_adapters_id_form():
    pz, rl = _pettingzoo(), _rllib()
    pz.reset(seed=1)
    rl.reset()
    with pytest.raises(PaddockError) as exc:
        pz.step({"car-07@0": np.zeros(3, np.float32)})
    assert exc.value.code == "unknown_driver" and "'{driver}@{life}'" in exc.value.message
    with pytest.raises(PaddockError) as exc:
        rl.step({"car-00@0": np.zeros(3, np.float32)})
    assert exc.value.code == "unknown_driver" and "'w{world}/{driver}@{life}'" in exc.value.message
