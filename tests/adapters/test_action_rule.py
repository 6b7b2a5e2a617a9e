"""One action rule through every API: out-of-range values are clamped and the applied controls reported,
non-finite or missing values are rejected naming the driver or agent, and nothing is stepped then."""

import numpy as np
import pytest

from paddock_ma.adapters.pettingzoo_env import parallel_env
from paddock_ma.adapters.rllib_env import PaddockMultiAgentEnv
from paddock_ma.catalog import env_config
from paddock_ma.env.batch_env import BatchEnv
from paddock_ma.env.environment import PaddockEnv
from paddock_ma.errors import PaddockError

SENSES = {"rays": {"rays": [{"id": "c", "angle_degrees": 0.0, "length_meters": 80.0}]}, "nearby_cars": {"max_cars": 1}}
CONFIG = env_config("paddock/oval-batch-v0", drivers=2, controlled_drivers=["car-00", "car-01"], sensors=SENSES,
                    observation={"output": "full"})
SEED = 21
OUT_OF_RANGE = [[3.0, 1.7, -0.5], [-9.0, -2.0, 4.0]]
CLAMPED = [[1.0, 1.0, 0.0], [-1.0, 0.0, 1.0]]


def _paddock():
    env = PaddockEnv(CONFIG)
    env.reset(seed=SEED)
    out = env.step({d: dict(zip(("steering", "throttle", "brake"), a)) for d, a in zip(("car-00", "car-01"),
                                                                                    OUT_OF_RANGE)})
    applied = [[out["observation"][d]["object"]["self"]["applied_controls"][f] for f in ("steering", "throttle", "brake")]
               for d in ("car-00", "car-01")]
    return env.checksum(), applied


def _batch(actions):
    env = BatchEnv(CONFIG, 1)
    env.reset(seed=SEED)
    env.step(np.array([actions], np.float64))
    return int(env.checksums()[0]), env.applied_controls()[0].tolist()


def _applied(infos, agent_ids):
    """[[steering, throttle, brake]] the adapter reports as applied, per agent."""
    return [[infos[a]["applied_controls"][f] for f in ("steering", "throttle", "brake")] for a in agent_ids]


def _pettingzoo():
    env = parallel_env(CONFIG)
    env.reset(seed=SEED)
    ids = [f"car-0{k}@0" for k in range(len(OUT_OF_RANGE))]
    _, _, _, _, infos = env.step({a: np.array(act, np.float32) for a, act in zip(ids, OUT_OF_RANGE)})
    return int(env.state()[0]), _applied(infos, ids)


def _rllib():
    env = PaddockMultiAgentEnv({"config": CONFIG, "auto_reset": False, "infos": "full"})
    env.reset(seed=SEED)
    ids = [f"w0/car-0{k}@0" for k in range(len(OUT_OF_RANGE))]
    _, _, _, _, infos = env.step({a: np.array(act, np.float32) for a, act in zip(ids, OUT_OF_RANGE)})
    return int(env.checksums()[0]), _applied(infos, ids)


def test_out_of_range_actions_are_clamped_alike_through_every_api():
    clamped_checksum, clamped_applied = _batch(CLAMPED)
    runs = {"PaddockEnv": _paddock(), "BatchEnv": _batch(OUT_OF_RANGE), "PettingZoo": _pettingzoo(),
            "RLlib": _rllib()}
    for name, (checksum, applied) in runs.items():
        assert checksum == clamped_checksum, name        # the same world as the in-range actions
        np.testing.assert_allclose(applied, clamped_applied, rtol=0, atol=1e-6, err_msg=name)
    # the applied controls are the clamped actions (one tick of steering rate limit aside)
    assert clamped_applied[0][1] == 1.0 and clamped_applied[1][2] == 1.0


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), None])
def test_non_finite_or_missing_values_are_rejected_by_every_api(bad):
    env = PaddockEnv(CONFIG)
    env.reset(seed=SEED)
    before = env.checksum()
    action = {"steering": 0.0, "throttle": 1.0, "brake": bad}
    with pytest.raises(PaddockError) as exc:
        env.step({"car-00": {"steering": 0.0, "throttle": 0.0, "brake": 0.0}, "car-01": action})
    assert exc.value.code == "invalid_action" and "car-01" in exc.value.field and env.checksum() == before

    pz = parallel_env(CONFIG)
    pz.reset(seed=SEED)
    before = int(pz.state()[0])
    with pytest.raises(PaddockError) as exc:
        pz.step({"car-00@0": np.zeros(3), "car-01@0": np.array([0.0, 1.0, np.nan if bad is None else bad])})
    assert exc.value.code == "invalid_action" and exc.value.field == "actions.car-01@0"
    assert int(pz.state()[0]) == before
    with pytest.raises(PaddockError) as exc:       # a missing agent
        pz.step({"car-00@0": np.zeros(3)})
    assert exc.value.field == "actions.car-01@0" and "missing" in exc.value.message

    rl = PaddockMultiAgentEnv({"config": CONFIG, "auto_reset": False})
    rl.reset(seed=SEED)
    before = int(rl.checksums()[0])
    with pytest.raises(PaddockError) as exc:
        rl.step({"w0/car-00@0": np.array([np.inf, 0, 0]), "w0/car-01@0": np.zeros(3)})
    assert exc.value.code == "invalid_action" and exc.value.field == "actions.w0/car-00@0"
    assert int(rl.checksums()[0]) == before
