"""The action contract: required finite fields, clamping, pit fields, driver checks, report policy."""

import math

import numpy as np
import pytest

from tests.helpers.env import act, make_env
from paddock_ma.errors import INVALID_ACTION, UNKNOWN_DRIVER, PaddockError
from paddock_ma.sim.core import layout as L


@pytest.fixture(scope="module")
def env():
    e = make_env()
    e.reset()
    return e


def _rejected(env, actions):
    """The PaddockError of a rejected step, after checking that nothing was stepped."""
    before = env.checksum()
    step_before = env.get_state("minimal")["snapshot"]["step"]
    with pytest.raises(PaddockError) as info:
        env.step(actions)
    assert env.checksum() == before
    assert env.get_state("minimal")["snapshot"]["step"] == step_before
    return info.value


@pytest.mark.parametrize("field", ["steering", "throttle", "brake"])
def test_missing_vehicle_field_is_an_error_and_nothing_steps(env, field):
    a = act()
    del a[field]
    e = _rejected(env, {"car-00": act(), "car-01": a})
    assert e.code == INVALID_ACTION and e.field == f"actions.car-01.{field}"
    assert e.message == (f"actions.car-01.{field}: missing; steering, throttle and brake are required for every "
                         "controlled driver")
    e = _rejected(env, {"car-00": act(), "car-01": dict(a, **{field: None})})
    assert e.field == f"actions.car-01.{field}"         # null, what JSON makes of NaN: not a number
    assert e.message.startswith(f"actions.car-01.{field}: got None; expected a finite number")


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -math.inf])
@pytest.mark.parametrize("field", ["steering", "throttle", "brake"])
def test_non_finite_vehicle_field_is_an_error(env, field, value):
    e = _rejected(env, {"car-00": act(**{field: value}), "car-01": act()})
    assert e.code == INVALID_ACTION and e.field == f"actions.car-00.{field}"
    assert e.message == f"actions.car-00.{field}: got {value!r}; expected a finite number"


@pytest.mark.parametrize("value", ["0.5", True, [0.5], None])
def test_non_number_vehicle_field_is_an_error(env, value):
    e = _rejected(env, {"car-00": act(), "car-01": act(throttle=value)})
    assert e.code == INVALID_ACTION and e.field == "actions.car-01.throttle"
    if value is not None:
        assert e.message == (f"actions.car-01.throttle: got {value!r}; expected a finite number "
                             "(range 0.0..1.0, clamped)")


def test_missing_driver_action_and_non_object(env):
    e = _rejected(env, {"car-00": act()})
    assert e.message == "actions.car-01: missing action for controlled driver 'car-01'"
    e = _rejected(env, {"car-00": act(), "car-01": 0.5})
    assert e.field == "actions.car-01" and "expected an object with steering, throttle and brake" in e.message
    e = _rejected(env, [act(), act()])
    assert e.field == "actions"
    e = _rejected(env, {"car-00": act(), "car-01": act(steer=0.1)})
    assert e.field == "actions.car-01.steer" and "did you mean 'steering'?" in e.message


def test_unknown_and_non_controlled_driver(env):
    e = _rejected(env, {"car-00": act(), "car-01": act(), "car-09": act()})
    assert e.code == UNKNOWN_DRIVER and e.field == "actions.car-09"
    assert e.message.startswith("actions.car-09: 'car-09' is not a driver of this environment")
    e = _rejected(env, {"car-00": act(), "car-01": act(), "car-02": act()})
    assert e.code == UNKNOWN_DRIVER
    assert e.message.startswith("actions.car-02: 'car-02' is not controlled")
    assert e.message.endswith("controlled drivers: car-00, car-01")


def test_out_of_range_is_clamped_and_reported(env):
    r = env.step({"car-00": act(3.0, 7.0, -2.0), "car-01": act(-1.5, -0.5, 4.0)})
    a0 = r["observation"]["car-00"]["object"]["self"]["applied_controls"]
    a1 = r["observation"]["car-01"]["object"]["self"]["applied_controls"]
    assert a0 == {"steering": 1.0, "steering_radians": L.MAX_STEER_ANGLE, "throttle": 1.0, "brake": 0.0}
    assert a1 == {"steering": -1.0, "steering_radians": -L.MAX_STEER_ANGLE, "throttle": 0.0, "brake": 1.0}
    r = env.step({"car-00": act(0.25, 0.75, 0.0), "car-01": act(-0.5, 0.0, 0.5)})
    a0 = r["observation"]["car-00"]["object"]["self"]["applied_controls"]
    assert a0 == pytest.approx({"steering": 0.25, "steering_radians": 0.25 * L.MAX_STEER_ANGLE, "throttle": 0.75,
                                "brake": 0.0}, abs=1e-6)
    assert r["info"]["action_errors"] == []


def test_pit_intent_and_compound():
    env = make_env(rules={"modules": {"pit_stops": {"enabled": True}, "tire_strategy": {"compounds": ["S", "M"]}}})
    env.reset()
    r = env.step({"car-00": act(pit_intent=1, pit_compound="S"), "car-01": act(pit_intent=0)})
    assert r["observation"]["car-00"]["object"]["self"]["pit_intent"] == 1
    assert r["observation"]["car-00"]["object"]["self"]["pit_target_compound"] == "S"
    assert r["observation"]["car-01"]["object"]["self"]["pit_intent"] == 0
    r = env.step({"car-00": act(), "car-01": act(pit_intent=2)})        # omitted intent keeps the last one
    assert r["observation"]["car-00"]["object"]["self"]["pit_intent"] == 1
    assert r["observation"]["car-01"]["object"]["self"]["pit_intent"] == 2
    e = _rejected(env, {"car-00": act(pit_compound="H"), "car-01": act()})
    assert e.code == INVALID_ACTION and e.field == "actions.car-00.pit_compound"
    assert e.message == ("actions.car-00.pit_compound: got 'H'; expected one of ['S', 'M'] "
                         "(rules.modules.tire_strategy.compounds)")
    for bad in (3, -1, 1.0, True, "1"):
        e = _rejected(env, {"car-00": act(pit_intent=bad), "car-01": act()})
        assert e.field == "actions.car-00.pit_intent"
        assert e.message == (f"actions.car-00.pit_intent: got {bad!r}; expected 0 (none), 1 (stop if free) "
                             "or 2 (committed)")


def test_pit_intent_with_pit_stops_disabled(env):
    r = env.step({"car-00": act(pit_intent=0), "car-01": act()})   # 0 is always a no-op
    assert r["observation"]["car-00"]["object"]["self"]["pit_intent"] == 0
    e = _rejected(env, {"car-00": act(pit_intent=1), "car-01": act()})
    assert e.message == ("actions.car-00.pit_intent: 1 could not be applied: pit stops are disabled "
                         "(rules.modules.pit_stops.enabled, or a track without a pit lane); send 0 or omit it")


def test_report_policy_releases_car_to_builtin_driver():
    controlled = make_env(action_policy="report")
    reference = make_env(controlled_drivers=["car-00"])      # car-01 always driven by the built-in driver
    controlled.reset()
    reference.reset()
    # first a valid braking action, so stale manual controls exist
    controlled.step({"car-00": act(0.0, 0.0, 1.0), "car-01": act(0.4, 0.0, 1.0)})
    r = controlled.step({"car-00": act(0.0, 0.6, 0.0), "car-01": act(throttle=float("nan"))})
    applied = r["observation"]["car-01"]["object"]["self"]["applied_controls"]
    assert applied["throttle"] > 0.0 and applied["brake"] == 0.0       # not the stale brake
    assert applied != {"steering": 0.4, "throttle": 0.0, "brake": 1.0}
    # PaddockJS's strings, and the structured form beside them
    assert r["info"]["action_errors"] == ["Invalid throttle action for controlled driver: car-01"]
    assert r["info"]["action_error_details"] == [{
        "code": INVALID_ACTION, "message": "actions.car-01.throttle: got nan; expected a finite number",
        "field": "actions.car-01.throttle", "driver_id": "car-01"}]
    # a missing action is reported the same way; the car keeps being driven by the built-in driver
    r = controlled.step({"car-00": act(0.0, 0.6, 0.0)})
    assert r["info"]["action_errors"] == ["Missing action for controlled driver: car-01"]
    assert r["info"]["action_error_details"][0]["message"] == \
        "actions.car-01: missing action for controlled driver 'car-01'"
    r = controlled.step({"car-00": act(0.0, 0.6, 0.0), "car-01": {"steering": 0.0, "throttle": 0.5}})
    assert r["info"]["action_errors"] == ["Missing brake action for controlled driver: car-01"]
    assert r["observation"]["car-01"]["object"]["self"]["applied_controls"]["throttle"] > 0.0
    # a valid action again takes the car back
    r = controlled.step({"car-00": act(), "car-01": act(0.1, 0.2, 0.0)})
    assert r["observation"]["car-01"]["object"]["self"]["applied_controls"] == \
        pytest.approx({"steering": 0.1, "steering_radians": 0.1 * L.MAX_STEER_ANGLE, "throttle": 0.2, "brake": 0.0},
                      abs=1e-6)
    assert r["info"]["action_errors"] == []
    # the released step is exactly what the built-in driver does from the same state: compare with a world
    # where car-01 is never controlled, from identical states.
    a = make_env(action_policy="report")
    a.reset()
    ra = a.step({"car-00": act(0.0, 0.6, 0.0), "car-01": act(brake=None)})
    rb = reference.step({"car-00": act(0.0, 0.6, 0.0)})
    got = ra["observation"]["car-01"]["object"]["self"]["applied_controls"]
    s01 = reference.engine.driver_ids.index("car-01")
    cf = reference.engine.state.cars_f[0, s01]
    want = {"steering": float(cf[L.F_APPLIED_STEER]), "steering_radians": float(cf[L.F_APPLIED_STEER]) * L.MAX_STEER_ANGLE,
            "throttle": float(cf[L.F_APPLIED_THROTTLE]), "brake": float(cf[L.F_APPLIED_BRAKE])}
    assert got == pytest.approx(want, abs=1e-9)
    assert rb["info"]["step"] == ra["info"]["step"] == 1


def test_strict_policy_is_default_and_raises_at_first_error(env):
    assert env.config.action_policy == "strict"
    e = _rejected(env, {"car-00": act(steering=float("nan")), "car-01": act(brake=None)})
    assert e.field == "actions.car-00.steering"


def test_action_for_an_ended_episode_is_accepted_and_ignored():
    # a PaddockJS trainer sends an action for every controlled driver, ended or not (issue 14)
    env = make_env(episode={"max_steps": 2})
    env.reset()
    env.step({"car-00": act(), "car-01": act()})
    r = env.step({"car-00": act(), "car-01": act()})
    assert r["info"]["drivers"]["car-00"]["truncated"] and r["done"]
    twin = make_env(episode={"max_steps": 2})
    twin.reset()
    for _ in range(2):
        twin.step({"car-00": act(), "car-01": act()})
    r = env.step({"car-00": act(steering=1.0, throttle=1.0), "car-01": act(brake=1.0)})   # given: ignored
    r_twin = twin.step({})                                                                # omitted
    assert env.checksum() == twin.checksum() and r["info"]["step"] == r_twin["info"]["step"] == 3
    assert r["info"]["drivers"]["car-00"]["episode_step"] == 2
    env.reset_drivers({"car-00": None})
    r = env.step({"car-00": act(), "car-01": act(throttle=float("nan"))})   # car-01 ended: not read
    assert r["info"]["drivers"]["car-00"]["episode_step"] == 1
    assert r["info"]["drivers"]["car-01"]["episode_step"] == 2
    e = _rejected(env, {"car-01": act()})                  # the running car-00 still needs its action
    assert e.code == INVALID_ACTION and e.field == "actions.car-00"


def test_action_spec():
    env = make_env(rules={"modules": {"tire_strategy": {"compounds": ["M", "H"]}}})
    spec = env.get_action_spec()
    assert spec["version"] == 1 and spec["controlled_drivers"] == ["car-00", "car-01"]
    per = spec["action"]["per_driver"]
    assert per["steering"] == {"min": -1.0, "max": 1.0, "unit": "normalized"}
    assert per["pit_intent"]["values"] == [0, 1, 2]
    assert per["pit_compound"]["values"] == ["M", "H"]


def test_steering_is_an_absolute_rate_limited_target():
    env = make_env(frame_skip=2)
    env.reset()
    # max angle 0.56 rad, rate 2.35 rad/s: one 2-tick step moves the wheel 2 * 2.35 / 60 = 0.0783 rad
    r = env.step({"car-00": act(0.5, 0.3, 0.0), "car-01": act()})
    assert r["observation"]["car-00"]["object"]["self"]["steering_angle_radians"] == pytest.approx(2 * 2.35 / 60)
    for _ in range(5):
        r = env.step({"car-00": act(0.5, 0.3, 0.0), "car-01": act()})
    assert r["observation"]["car-00"]["object"]["self"]["steering_angle_radians"] == pytest.approx(0.5 * 0.56)
    r = env.step({"car-00": act(0.5, 0.3, 0.0), "car-01": act()})     # absolute: holding 0.5 stays there
    assert r["observation"]["car-00"]["object"]["self"]["steering_angle_radians"] == pytest.approx(0.28)


def test_plain_action_maps_validate_as_maps_with_optional_fields_do():
    """validate_actions gives the same arrays for plain three-field actions (its array fast path) as for
    the same actions with the optional pit fields given as None (the per-field path), and words the
    same errors for every other map."""
    from paddock_ma.env.actions import validate_actions

    controlled = {"car-00": 0, "car-01": 1, "car-02": 2}
    running = np.array([True, False, True])
    kwargs = dict(controlled=controlled, running=running, num_slots=3, compounds=("S", "M"),
                  pit_stops_enabled=True, in_active_stop=lambda: np.zeros(3, bool), policy="strict")

    def with_none_pit_fields(actions):
        return {d: dict(a, pit_intent=None, pit_compound=None) if isinstance(a, dict) else a
                for d, a in actions.items()}

    for a0, a2 in [((0.5, 0.25, 0.0), (-3.0, 2.0, -1.0)), ((1, 0, 1), (np.float64(0.3), np.float32(0.7), 0.0))]:
        actions = {"car-00": dict(zip(("steering", "throttle", "brake"), a0)),
                   "car-02": dict(zip(("steering", "throttle", "brake"), a2))}
        fast, slow = validate_actions(actions, **kwargs), validate_actions(with_none_pit_fields(actions), **kwargs)
        for name in ("controls", "apply", "release", "pit_intent", "pit_compound"):
            assert np.array_equal(getattr(fast, name), getattr(slow, name)), name
        assert fast.controls.dtype == np.float32 and fast.errors == []
        assert fast.controls[2].tolist() == [-1.0, 1.0, 0.0] or a2[0] != -3.0      # clamped
    good = {"steering": 0.0, "throttle": 0.5, "brake": 0.0}
    # an ended driver's action (car-01) is accepted and ignored, on both paths
    alone = validate_actions({"car-00": good, "car-02": good}, **kwargs)
    for extra in (good, dict(good, pit_intent=None), {"steering": math.nan}):
        got = validate_actions({"car-00": good, "car-02": good, "car-01": extra}, **kwargs)
        for name in ("controls", "apply", "release", "pit_intent", "pit_compound"):
            assert np.array_equal(getattr(got, name), getattr(alone, name)), (name, extra)
    rejected = [
        {"car-00": good},                                                  # a running driver missing
        {"car-00": good, "car-02": good, "nobody": good},                  # not a driver
        {"car-00": good, "car-02": dict(good, brake=True)},                # bool is not a number
        {"car-00": good, "car-02": dict(good, brake="0")},
        {"car-00": good, "car-02": dict(good, brake=math.nan)},
        {"car-00": good, "car-02": [0.0, 0.5, 0.0]},
    ]
    for actions in rejected:
        errors = []
        for variant in (actions, with_none_pit_fields(actions)):
            with pytest.raises(PaddockError) as exc:
                validate_actions(variant, **kwargs)
            errors.append((exc.value.code, exc.value.field))
        assert errors[0] == errors[1], actions


def test_pit_compound_names_a_compound_of_the_rules_not_a_position():
    # the rules' compounds need not start at S: "H" is index 1 of ["M", "H"] and must fit hards
    env = make_env(rules={"modules": {"pit_stops": {"enabled": True}, "tire_strategy": {"compounds": ["M", "H"]}}})
    env.reset()
    r = env.step({"car-00": act(pit_compound="H"), "car-01": act(pit_compound="M")})
    assert r["observation"]["car-00"]["object"]["self"]["pit_target_compound"] == "H"
    assert r["observation"]["car-01"]["object"]["self"]["pit_target_compound"] == "M"
