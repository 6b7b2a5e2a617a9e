"""Property test: any action map either steps with in-range applied controls or is rejected with a
PaddockError that names a field, and a rejected map changes nothing."""

import math

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from paddock_ma import PaddockEnv, PaddockError
from paddock_ma.errors import ERROR_CODES

pytestmark = pytest.mark.fuzz

DRIVERS = ["car-00", "car-01"]
values = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 5), st.booleans(),
                   st.text(max_size=3), st.none(), st.lists(st.floats(), max_size=2))
action = st.dictionaries(st.sampled_from(["steering", "throttle", "brake", "pit_intent", "pit_compound", "steer"]),
                         values, max_size=6)
finite = st.floats(-5.0, 5.0, allow_nan=False)
valid_action = st.fixed_dictionaries({"steering": finite, "throttle": finite, "brake": finite})
action_maps = st.one_of(
    st.dictionaries(st.sampled_from(DRIVERS + ["car-02", "nobody"]), action, max_size=3),
    st.fixed_dictionaries({d: valid_action for d in DRIVERS}),     # well-formed, often out of range
)


@pytest.fixture(scope="module")
def env():
    e = PaddockEnv({"drivers": 3, "controlled_drivers": DRIVERS, "track": "oval", "frame_skip": 2,
                    "rules": {"standing_start": False}, "observation": {"output": "object"},
                    "result": {"state_output": "none"}})
    e.reset(seed=3)
    return e


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(actions=action_maps)
def test_any_action_map_steps_cleanly_or_is_rejected_without_change(env, actions):
    before = env.checksum()
    step = env.get_state("minimal")["snapshot"]["step"]
    try:
        result = env.step(actions)
    except PaddockError as exc:
        assert exc.code in ERROR_CODES and exc.field and exc.field.split(".")[0].startswith("actions")
        assert env.checksum() == before and env.get_state("minimal")["snapshot"]["step"] == step
        event("rejected")
        return
    event("stepped")
    for driver in DRIVERS:
        applied = result["observation"][driver]["object"]["self"]["applied_controls"]
        sent = actions[driver]
        assert applied["steering"] == pytest.approx(min(max(sent["steering"], -1.0), 1.0))
        assert -1.0 <= applied["steering"] <= 1.0 and all(
            0.0 <= applied[k] <= 1.0 and math.isfinite(applied[k]) for k in ("throttle", "brake"))
    if any(r["terminated"] or r["truncated"] for r in result["info"]["drivers"].values()):
        env.reset(seed=3)
