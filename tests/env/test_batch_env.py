"""BatchEnv: the arrays engine under PaddockEnv: same semantics, W worlds per call, auto-reset,
rejection of bad action arrays."""

import numpy as np
import pytest

from tests.helpers.env import act, config, make_env
from paddock_ma.env.batch_env import BatchEnv
from paddock_ma.env.episodes import METRIC_NAMES, M_PROGRESS
from paddock_ma.errors import INVALID_ACTION, ConfigError, PaddockError
from paddock_ma.env.reset.scenarios import grid_placements, scenario_placements
from paddock_ma.sim.core import layout as L

ACTIONS = [np.array([[0.1, 0.8, 0.0], [-0.2, 0.6, 0.0]], np.float32),
           np.array([[0.0, 1.0, 0.0], [0.3, 0.2, 0.4]], np.float32),
           np.array([[2.0, 1.5, -1.0], [-0.5, 0.0, 1.0]], np.float32)]


def test_same_semantics_as_dict_env():
    env = make_env()
    batch = BatchEnv(config(), 1)
    r = env.reset()
    b = batch.reset()
    assert b.obs.shape == (1, 2, 136) and b.obs.dtype == np.float32
    assert b.metrics.shape == (1, 2, len(METRIC_NAMES))
    for k, d in enumerate(env.controlled):
        assert b.obs[0, k].tobytes() == r["observation"][d]["vector"].tobytes()
    for a in ACTIONS:
        r = env.step({d: act(*map(float, a[k])) for k, d in enumerate(env.controlled)})
        b = batch.step(a[None])
        assert batch.checksums()[0] == env.checksum()
        for k, d in enumerate(env.controlled):
            assert b.obs[0, k].tobytes() == r["observation"][d]["vector"].tobytes()
            m = r["metrics"][d]
            assert b.metrics[0, k, M_PROGRESS] == pytest.approx(m["progress_delta_meters"])
            info = r["info"]["drivers"][d]
            assert (bool(b.terminated[0, k]), bool(b.truncated[0, k]), int(b.episode_id[0, k]),
                    int(b.episode_step[0, k])) == (info["terminated"], info["truncated"], info["episode_id"],
                                                   info["episode_step"])
        assert b.world_step.tolist() == [r["info"]["step"]]
    assert b.reward is None
    # the clamped controls are what was applied
    c0 = batch.slots[0]
    cf = batch.state.cars_f[0, c0]
    assert (cf[L.F_APPLIED_STEER], cf[L.F_APPLIED_THROTTLE], cf[L.F_APPLIED_BRAKE]) == (1.0, 1.0, 0.0)


def test_w_worlds_in_one_call():
    single = BatchEnv(config(), 1)
    many = BatchEnv(config(), 3)
    single.reset()
    b = many.reset()
    assert b.obs.shape == (3, 2, 136) and b.terminated.shape == (3, 2)
    for n, a in enumerate(ACTIONS):
        acts = np.stack([a, a * 0.5, np.zeros_like(a)])
        b = many.step(acts)
        s = single.step(a[None])
        assert b.world_step.tolist() == [n + 1] * 3
        # world 0 of the batch is the same world as the single-world env (same seed, same world key)
        assert b.obs[0].tobytes() == s.obs[0].tobytes()
    assert not np.array_equal(b.obs[0], b.obs[2])          # different actions -> different worlds
    assert many.checksums()[0] == single.checksums()[0]
    t = many.state.world_f[:, L.WF_TIME]
    assert t.tolist() == pytest.approx([3 / 60] * 3)


@pytest.mark.parametrize("policy", ["grid", "random", "random-moving", "scenario"])
def test_auto_reset_placement_policies(policy):
    cfg = config(episode={"max_steps": 3}, scenario={"placements": {"car-01": {"distance_meters": 700.0,
                                                                              "offset_meters": 2.0,
                                                                              "speed_kph": 60.0}}})
    batch = BatchEnv(cfg, 2, auto_reset=True, reset_placement=policy)
    batch.reset()
    a = np.tile(ACTIONS[0][None], (2, 1, 1))
    for _ in range(2):
        b = batch.step(a)
        assert not b.reset_mask.any() and b.final_obs is None
    b = batch.step(a)
    assert b.reset_mask.all()
    assert b.final_obs is not None and not np.array_equal(b.final_obs, b.obs)
    # same-step auto-reset: the flags and episode arrays report the episode that ended, obs is the new one
    assert b.truncated.all() and (b.end_reason == L.END_MAX_STEPS).all()
    assert (b.episode_id == 0).all() and (b.episode_step == 3).all()
    ci = batch.state.cars_i[:, batch.slots]
    assert (ci[..., L.I_EPISODE_ID] == 1).all() and (ci[..., L.I_EPISODE_STEP] == 0).all()
    assert (ci[..., L.I_TRUNCATED] == 0).all()                   # the new episode is running
    assert b.metrics.shape == (2, 2, len(METRIC_NAMES))
    cf = batch.state.cars_f
    for w in range(2):
        for k, d in enumerate(batch.controlled):
            c = batch.slots[k]
            dist, off = cf[w, c, L.F_RACE_DISTANCE], cf[w, c, L.F_OFFSET]
            if policy == "grid":
                want = grid_placements(batch.driver_ids, False)[d]
                assert (dist, off) == pytest.approx(want[:2]) and cf[w, c, L.F_SPEED] == pytest.approx(want[2])
            elif policy == "scenario":
                want = scenario_placements(batch.config, batch.track, batch.driver_ids)[d]
                assert (dist, off) == pytest.approx(want[:2], abs=1e-3)   # curve: chord vs projection ~3e-5 m
            else:
                assert 0.0 <= dist < batch.track.length and abs(off) <= 7.5 - 1.5
                assert batch.state.cars_i[w, c, L.I_ON_TRACK] == 1
                speed = cf[w, c, L.F_SPEED]
                if policy == "random":
                    assert speed == 0.0
                else:             # random-moving: a speed drawn in [0, 250) km/h
                    assert 0.0 <= speed < 250.0 * L.MPS_PER_KPH
    if policy.startswith("random"):       # each world draws from its own generator
        c = batch.slots[0]
        assert cf[0, c, L.F_RACE_DISTANCE] != cf[1, c, L.F_RACE_DISTANCE]
    if policy == "random-moving":
        assert len({float(cf[w, batch.slots[k], L.F_SPEED]) for w in range(2) for k in range(2)}) == 4
    b = batch.step(a)
    assert (b.episode_step == 1).all() and (b.episode_id == 1).all() and not b.done.any()


def test_bad_action_arrays_rejected_nothing_stepped():
    batch = BatchEnv(config(), 3)
    batch.reset()
    before = batch.checksums().copy()
    a = np.zeros((3, 2, 3), np.float32)
    a[1, 1, 2] = np.nan
    with pytest.raises(PaddockError) as info:
        batch.step(a)
    assert info.value.code == INVALID_ACTION and info.value.field == "actions[1].car-01.brake"
    assert info.value.message.startswith("actions[1].car-01.brake: got ")
    a[1, 1, 2] = 0.0
    a[2, 0, 0] = np.inf
    with pytest.raises(PaddockError) as info:
        batch.step(a)
    assert info.value.field == "actions[2].car-00.steering"
    with pytest.raises(PaddockError) as info:
        batch.step(np.zeros((3, 3, 3), np.float32))
    assert info.value.message == "actions: shape (3, 3, 3), expected (3, 2, 3) (worlds, car slots, [steering, throttle, brake])"
    with pytest.raises(PaddockError) as info:
        batch.step(np.zeros((3, 2, 3), np.float32), pit_intent=np.array([[0, 0], [0, 5], [0, 0]]))
    assert info.value.field == "pit_intent[1].car-01"
    with pytest.raises(PaddockError) as info:
        batch.step(np.zeros((3, 2, 3), np.float32), pit_intent=np.array([[0, 0], [0, 1], [0, 0]]))
    assert "pit stops are disabled" in info.value.message
    assert (batch.checksums() == before).all()
    assert (batch.state.world_i[:, L.WI_ENV_STEP] == 0).all()
    b = batch.step(np.zeros((3, 2, 3), np.float32))
    assert b.world_step.tolist() == [1, 1, 1]


def test_ended_driver_values_are_ignored_and_reward_fn():
    calls = []

    def reward_fn(metrics):
        calls.append(metrics.copy())
        return metrics[..., M_PROGRESS] * 10.0

    batch = BatchEnv(config(episode={"max_steps": 1}), 2, reward_fn=reward_fn)
    b = batch.reset()
    assert b.reward is None and calls == []
    b = batch.step(np.zeros((2, 2, 3), np.float32))
    assert b.reward.shape == (2, 2) and b.reward.dtype == np.float32
    assert b.reward == pytest.approx(b.metrics[..., M_PROGRESS] * 10.0)
    assert b.truncated.all() and (b.end_reason == L.END_MAX_STEPS).all()
    # every driver ended: NaN in their slots is ignored, nothing of theirs moves
    b = batch.step(np.full((2, 2, 3), np.nan, np.float32))
    assert (b.episode_step == 1).all()
    mask = np.array([[True, False], [False, False]])
    r = batch.reset_drivers(mask, "grid")
    assert r.reset_mask.tolist() == mask.tolist()
    assert r.episode_id.tolist() == [[1, 0], [0, 0]] and r.truncated.tolist() == [[False, True], [True, True]]


def test_reset_drivers_with_placement_arrays():
    batch = BatchEnv(config(), 2)
    batch.reset()
    batch.step(np.tile(ACTIONS[0][None], (2, 1, 1)))
    speed_before = batch.state.cars_f[1, batch.slots[1], L.F_SPEED]
    others = batch.state.cars_f[0, batch.slots[1]].tobytes()
    mask = np.array([[True, False], [False, True]])
    r = batch.reset_drivers(mask, {"distance_meters": np.array([[500.0, 0.0], [0.0, 900.0]]),
                                   "offset_meters": np.array([[1.0, 0.0], [0.0, -2.0]]),
                                   "speed_kph": np.array([[72.0, 0.0], [0.0, np.nan]]),
                                   "heading_error_radians": np.array([[0.1, 0.0], [0.0, 0.0]])})
    cf = batch.state.cars_f
    c0, c1 = batch.slots
    assert cf[0, c0, L.F_RACE_DISTANCE] == pytest.approx(500.0) and cf[0, c0, L.F_OFFSET] == pytest.approx(1.0, abs=1e-3)
    assert cf[0, c0, L.F_SPEED] == pytest.approx(20.0)                  # 72 km/h
    assert cf[0, c0, L.F_HEADING_ERROR] == pytest.approx(0.1, abs=1e-3)   # in a curve: sampled heading ~6e-5
    assert cf[1, c1, L.F_RACE_DISTANCE] == pytest.approx(900.0)
    assert cf[1, c1, L.F_SPEED] == pytest.approx(speed_before)          # NaN speed keeps the current one
    assert cf[0, c1].tobytes() == others                               # unmasked car untouched
    assert r.episode_id.tolist() == [[1, 0], [0, 1]] and r.episode_step.tolist() == [[0, 1], [1, 0]]
    with pytest.raises(PaddockError) as info:
        batch.reset_drivers(np.ones((3, 2), bool))
    assert info.value.field == "mask"
    # out-of-range placements, as arrays or tuples: invalid_request naming the key, value and range
    before = batch.state.cars_f.copy()
    for key, value in (("speed_kph", 1e308), ("speed_kph", -1.0), ("offset_meters", 150.0),
                       ("heading_error_radians", -3.5), ("distance_meters", 2e6)):
        arrays = {"distance_meters": np.full((2, 2), 300.0), key: np.full((2, 2), value)}
        with pytest.raises(PaddockError) as info:
            batch.reset_drivers(mask, arrays)
        assert info.value.code == "invalid_request" and info.value.field == f"placement.{key}"
        assert repr(value) in info.value.message and "expected a number in [" in info.value.message
    with pytest.raises(PaddockError) as info:
        batch.reset_drivers(mask, [(300.0, 0.0, 1e308, 0.0), (300.0, 0.0, None, 0.0)])
    assert info.value.code == "invalid_request" and "index 2" in info.value.message
    assert np.array_equal(batch.state.cars_f, before, equal_nan=True)


@pytest.mark.parametrize("profile", ["normal", "batch-training"])
def test_reset_drivers_observations_equal_a_full_sense(profile):
    # reset_drivers senses the placed cars again, and the other cars of their worlds only when a
    # placed car can appear in their observations (normal: visible and classified; batch-training:
    # never). Either way every observation equals a fresh sense of every car.
    batch = BatchEnv(config(participant_interactions={"default_profile": profile}), 2)
    batch.reset()
    batch.step(np.tile(ACTIONS[0][None], (2, 1, 1)))
    c1 = batch.slots[1]
    near = float(batch.state.cars_f[0, c1, L.F_RACE_DISTANCE]) + 12.0       # just ahead of car-01
    before = batch.latest_obs.copy()
    mask = np.array([[True, False], [False, False]])
    r = batch.reset_drivers(mask, {"distance_meters": np.array([[near, 0.0], [0.0, 0.0]]),
                                   "offset_meters": np.zeros((2, 2)), "speed_kph": np.zeros((2, 2)),
                                   "heading_error_radians": np.zeros((2, 2))})
    got = r.obs.copy()
    fresh = BatchEnv(batch.config, 2)               # a restore senses every controlled car afresh
    fresh.restore(batch.snapshot())
    assert got.tobytes() == fresh.latest_obs.tobytes()
    # car-01 of world 0 sees the placed car 12 m ahead only when it is visible
    assert (got[0, 1].tobytes() == before[0, 1].tobytes()) == (profile == "batch-training")
    assert got[1].tobytes() == before[1].tobytes()


def test_object_view_and_vector_agree_in_every_world():
    from paddock_ma.env.views.observation_object import object_view
    from tests.helpers.vector_oracle import expected_vector
    batch = BatchEnv(config(observation={"profile": "physical-driver"}), 3)
    batch.reset()
    acts = np.stack([ACTIONS[0], ACTIONS[1], np.zeros((2, 3), np.float32)])
    for _ in range(3):
        b = batch.step(acts)
    spec = batch.get_observation_spec()
    names = [e["name"] for e in spec["vector"]["schema"]]
    for w in range(3):
        for k in range(2):
            obj = object_view(batch, w, k)
            want = expected_vector(obj, spec["object"], batch.track.length)
            got = dict(zip(names, b.obs[w, k].tolist()))
            assert set(got) == set(want)
            for name in names:
                assert got[name] == pytest.approx(np.float32(want[name]), rel=2e-6, abs=2e-6), (w, k, name)
            assert obj["self"]["speed_kph"] == pytest.approx(batch.state.cars_f[w, batch.slots[k], L.F_SPEED] * 3.6)
    assert object_view(batch, 0, 0)["self"]["applied_controls"]["steering"] == pytest.approx(0.1, abs=1e-6)
    assert object_view(batch, 1, 0)["self"]["applied_controls"]["throttle"] == pytest.approx(1.0)


def test_builtin_driver_as_a_policy_drives_laps():
    """``BatchEnv.builtin_actions``: the built-in driver's controls as the controlled cars' actions keep
    them on the track at racing speed (the bench's lap-driving workload)."""
    from paddock_ma import make

    env = make("paddock/oval-batch-v0", num_worlds=2)
    env.reset(seed=3)
    actions = np.zeros((2, len(env.controlled), 3), np.float32)
    progress = np.zeros((2, len(env.controlled)))
    for _ in range(300):                        # 20 s of racing
        assert env.builtin_actions(actions) is actions          # written into the caller's buffer
        result = env.step(actions)
        progress += result.metrics[..., M_PROGRESS]
    assert not result.done.any() and not env.state.cars_i[:, env.slots, L.I_DESTROYED].any()
    assert (progress > 1100.0).all()             # > 55 m/s on average round the oval (measured ~65)
    fresh = env.builtin_actions()                # a new array when none is given
    assert fresh is not actions and fresh.shape == actions.shape and fresh.dtype == np.float32
    with pytest.raises(PaddockError, match="out: expected a C-contiguous float32"):
        env.builtin_actions(np.zeros((2, len(env.controlled), 3)))


def test_a_world_offset_makes_an_engine_hold_a_slice_of_a_larger_batch():
    """World w of an engine with ``world_offset`` o is world o + w of an engine of every world: the same
    generator, so the same random placements and the same trajectory (what a Ray shard relies on)."""
    wide, narrow = BatchEnv(config(), 4, reset_placement="random"), BatchEnv(config(), 2, reset_placement="random",
                                                                          world_offset=2)
    for env in (wide, narrow):
        env.reset(seed=7)
        env.reset_drivers(np.ones((env.num_worlds, 2), bool), "random")     # draws from each world's generator
    assert np.array_equal(wide.checksums()[2:], narrow.checksums())
    assert wide.checksums()[0] != narrow.checksums()[0]
    for n, a in enumerate(ACTIONS):
        wide.step(np.stack([a] * 4))
        narrow.step(np.stack([a] * 2))
        assert np.array_equal(wide.checksums()[2:], narrow.checksums()), n
    assert wide.world_seeds().tolist() == [7] * 4 and narrow.world_steps().tolist() == [len(ACTIONS)] * 2
    for bad in (-1, True, 1.5):
        with pytest.raises(ConfigError, match="world_offset: got"):
            BatchEnv(config(), 1, world_offset=bad)


def test_pit_arrays_and_release_reach_the_state_of_running_cars_only():
    batch = BatchEnv(config(rules={"standing_start": False, "modules": {"pit_stops": {"enabled": True}}}), 2)
    batch.reset()
    s0, s1 = batch.slots
    ci = batch.state.cars_i
    ci[1, s1, L.I_TRUNCATED] = 1                   # world 1, car-01: its episode has ended
    a = np.zeros((2, 2, 3), np.float32)
    a[..., 1] = 5.0                                # clamped to 1
    a[1, 1] = np.nan                               # ignored: the episode ended
    intents = np.array([[2, -1], [1, 2]])
    compounds = np.array([[batch.compounds.index("S"), -1], [-1, 0]])
    release = np.array([[False, True], [False, True]])
    batch.step(a, pit_intent=intents, pit_compound=compounds, release=release)
    assert ci[0, s0, L.I_PIT_INTENT] == 2 and ci[1, s0, L.I_PIT_INTENT] == 1
    assert ci[1, s1, L.I_PIT_INTENT] == 0          # not applied to the ended car
    assert ci[0, s0, L.I_PIT_TARGET] == L.COMPOUND_S
    applied = batch.applied_controls()
    assert applied[0, 0, 1] == 1.0 and np.isfinite(applied).all()   # clamped; the ended car's NaN ignored
    # a released running car is driven by the built-in driver this step; the ended one stays manual
    assert ci[0, s1, L.I_MANUAL] == 0 and ci[1, s1, L.I_MANUAL] == 1 and ci[0, s0, L.I_MANUAL] == 1
    with pytest.raises(PaddockError) as info:
        batch.step(a, pit_compound=np.array([[0, len(batch.compounds)], [0, 0]]))
    assert info.value.field == "pit_compound[0].car-01"
    assert info.value.message.endswith(f"expected one of {list(range(-1, len(batch.compounds)))} (-1 = unchanged)")
    batch.step(a)                                  # no release: every running car is manual again
    assert ci[0, s1, L.I_MANUAL] == 1
