"""CarVectorEnv: every controlled car one gymnasium sub-environment, per-car autoreset inside shared worlds."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import paddock_ma
from paddock_ma.adapters.vector_base import DEFAULT_AUTORESET_MODE
from paddock_ma.adapters.vector_env import CarVectorEnv
from paddock_ma.errors import ConfigError, PaddockError
from paddock_ma.sim.core import layout as L

ENV = "paddock/oval-batch-v0"


def crash_actions(n):
    """Full throttle, a slight right turn: on the oval, cars run into the outer wall within a few dozen steps."""
    a = np.zeros((n, 3), np.float32)
    a[:, 0], a[:, 1] = 0.15, 1.0
    return a


def run_until_an_end(env, acts, limit=400):
    for _ in range(limit):
        out = env.step(acts)
        if (out[2] | out[3]).any():
            return out
    pytest.fail("no episode ended")


def test_spaces_shapes_and_gymnasium_registration():
    env = gymnasium.make_vec(ENV, num_envs=2 * len(paddock_ma.catalog.env_config(ENV).controlled_drivers))
    assert isinstance(env, CarVectorEnv) and env.num_worlds == 2
    k = env.cars_per_world
    obs, infos = env.reset(seed=3)
    assert obs.shape == (2 * k, env.single_observation_space.shape[0]) and obs.dtype == np.float32
    assert env.observation_space.contains(obs) and env.action_space.shape == (2 * k, 3)
    obs, rew, term, trunc, infos = env.step(env.action_space.sample())
    assert rew.shape == term.shape == trunc.shape == (2 * k,) and rew.dtype == np.float32
    assert set(infos) == {"episode_id", "life", "end_reason"} and infos["life"].shape == (2 * k,)
    # the default both car vector envs share: same_step, the only mode the Ray fleet's shards can run
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP == DEFAULT_AUTORESET_MODE
    with pytest.raises(ConfigError, match="multiple of"):
        gymnasium.make_vec(ENV, num_envs=k + 1)
    env.close()


def test_same_seed_same_episodes_and_other_seed_other_ones():
    def run(seed):
        env = CarVectorEnv(ENV, 2)
        obs, _ = env.reset(seed=seed)
        out = [obs]
        rng = np.random.default_rng(0)        # the same actions for every run: only the env's seed differs
        for _ in range(30):
            obs, rew, term, trunc, _ = env.step(rng.uniform([-1, 0, 0], [1, 1, 1], (env.num_envs, 3)))
            out += [obs, rew, term, trunc]
        return out

    a, b, c = run(5), run(5), run(6)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))


def test_next_step_autoreset_resets_only_the_ended_cars_on_the_following_step():
    env = CarVectorEnv(ENV, 2, autoreset_mode="next_step")
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    env.reset(seed=1)
    acts = crash_actions(env.num_envs)
    obs, rew, term, trunc, infos = run_until_an_end(env, acts)
    ended = term | trunc
    assert not ended.all()
    episode, final_obs = infos["episode_id"].copy(), obs.copy()
    world_steps = env.engine.state.world_i[:, L.WI_ENV_STEP].copy()
    obs, rew, term, trunc, infos = env.step(acts)
    assert (rew[ended] == 0.0).all() and not (term[ended] | trunc[ended]).any()
    assert (infos["episode_id"][ended] == episode[ended] + 1).all()
    assert (infos["episode_id"][~ended] == episode[~ended]).all()
    assert not any(np.array_equal(obs[i], final_obs[i]) for i in np.nonzero(ended)[0])
    # the worlds were stepped, not reset: the other cars drove on
    assert (env.engine.state.world_i[:, L.WI_ENV_STEP] == world_steps + 1).all()
    assert not np.array_equal(obs[~ended], final_obs[~ended])


def test_same_step_autoreset_gives_the_final_observation_in_infos():
    a = CarVectorEnv(ENV, 1, autoreset_mode="same_step")
    b = CarVectorEnv(ENV, 1, autoreset_mode="next_step")
    a.reset(seed=2)
    b.reset(seed=2)
    acts = crash_actions(a.num_envs)
    for _ in range(400):
        oa, ra, ta, ua, ia = a.step(acts)
        ob, rb, tb, ub, ib = b.step(acts)
        assert np.array_equal(ta, tb) and np.array_equal(ua, ub) and np.array_equal(ra, rb)
        done = ta | ua
        if done.any():
            break
    else:
        pytest.fail("no car ended")
    assert "final_obs" not in ib
    assert ia["_final_obs"].tolist() == done.tolist()
    for i in np.nonzero(done)[0]:
        # the twin without same-step reset shows the final observation as the step's observation
        assert np.array_equal(ia["final_obs"][i], ob[i])
        assert not np.array_equal(oa[i], ob[i])
        assert ia["episode_id"][i] == ib["episode_id"][i] + 1


def test_out_of_range_actions_are_clamped_and_non_finite_ones_refused_without_stepping():
    env = CarVectorEnv(ENV, 1)
    env.reset(seed=4)
    twin = CarVectorEnv(ENV, 1)
    twin.reset(seed=4)
    big = np.tile(np.array([[5.0, 3.0, -2.0]], np.float32), (env.num_envs, 1))
    clamped = np.clip(big, [-1, 0, 0], [1, 1, 1])
    assert np.array_equal(env.step(big)[0], twin.step(clamped)[0])
    before = env.engine.checksums().copy()
    bad = clamped.copy()
    bad[1, 2] = np.nan
    with pytest.raises(PaddockError) as info:
        env.step(bad)
    assert info.value.code == "invalid_action" and "brake" in info.value.message
    assert (env.engine.checksums() == before).all()


def test_render_and_bad_options():
    env = CarVectorEnv(ENV, 1, render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.ndim == 3 and frame.shape[2] == 3 and frame.dtype == np.uint8
    with pytest.raises(ConfigError, match="autoreset_mode"):
        CarVectorEnv(ENV, 1, autoreset_mode="disabled")
    with pytest.raises(ConfigError, match="reward"):
        CarVectorEnv(ENV, 1, reward="fastest")
    with pytest.raises(ConfigError, match="start_placement"):
        CarVectorEnv(ENV, 1, start_placement="anywhere")


def test_gymnasiums_episode_statistics_wrapper_reads_the_ended_car():
    from gymnasium.wrappers.vector import RecordEpisodeStatistics

    env = RecordEpisodeStatistics(CarVectorEnv(ENV, 1, autoreset_mode="next_step"))
    env.reset(seed=3)
    obs, rew, term, trunc, infos = run_until_an_end(env, crash_actions(env.num_envs))
    ended = term | trunc
    assert infos["_episode"].tolist() == ended.tolist()
    assert (infos["episode"]["l"][ended] > 0).all() and (infos["episode"]["r"][ended] != 0).all()


def test_the_reward_is_the_engines_given_here_or_in_the_config():
    from paddock_ma.env.episodes import M_LEGAL_PROGRESS
    from paddock_ma.env.rewards import VectorReward

    def double_progress(metrics):
        return 2.0 * metrics[..., M_LEGAL_PROGRESS]

    given = CarVectorEnv(ENV, 1, reward=double_progress)
    configured = CarVectorEnv(paddock_ma.catalog.env_config(ENV).merged({"reward": VectorReward(double_progress)}), 1)
    default = CarVectorEnv(ENV, 1)
    acts = crash_actions(given.num_envs)
    for env in (given, configured, default):
        env.reset(seed=9)
    for _ in range(5):
        rg, rc, rd = (env.step(acts)[1] for env in (given, configured, default))
        assert np.array_equal(rg, rc) and np.allclose(rg, 2.0 * rd)


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_episode_totals_count_the_ended_episodes_as_the_returned_steps_show_them(mode):
    """episode_totals() equals what a trainer adds up from the returned steps: ended episodes, crashed
    ones (end reason at the barrier), their steps and their legal progress (the default reward)."""
    env = CarVectorEnv(ENV, 2, autoreset_mode=mode, start_placement="random-moving", reset_placement="random-moving",
                       episode={"max_steps": 40})
    n = env.num_envs
    obs, infos = env.reset(seed=5)
    rng = np.random.default_rng(5)
    meters, steps = np.zeros(n), np.zeros(n, np.int64)
    expected = {"episodes_ended": 0, "episodes_crashed": 0, "legal_meters": 0.0, "steps": 0}
    reset_step = np.zeros(n, bool)          # next_step: a car's step after its end is its reset
    for _ in range(150):
        acts = crash_actions(n)
        acts[:, 0] = rng.uniform(-0.3, 0.5, n)
        obs, rew, term, trunc, infos = env.step(acts)
        valid = ~reset_step
        meters += np.where(valid, rew, 0.0)
        steps += valid
        ended = term | trunc
        expected["episodes_ended"] += int(ended.sum())
        # same_step's infos are the new episode's: there, every termination on the oval is a barrier crash
        crashed = term & (infos["end_reason"] == L.END_DESTROYED) if mode == "next_step" else term
        expected["episodes_crashed"] += int(crashed.sum())
        expected["legal_meters"] += float(meters[ended].sum())
        expected["steps"] += int(steps[ended].sum())
        meters[ended], steps[ended] = 0.0, 0
        reset_step = ended if mode == "next_step" else np.zeros(n, bool)
    got = env.episode_totals()
    assert got["episodes_crashed"] > 0 and got["episodes_ended"] > got["episodes_crashed"]   # truncations too
    assert {k: got[k] for k in ("episodes_ended", "episodes_crashed", "steps")} == \
        {k: expected[k] for k in ("episodes_ended", "episodes_crashed", "steps")}
    assert got["legal_meters"] == pytest.approx(expected["legal_meters"], rel=1e-5)
