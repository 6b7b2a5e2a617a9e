"""PaddockJS 2.0.0's environment tests that drive the environment through worker messages, ported.

Source: Inventure71/PaddockJS, branch v6, commit 28fc6c4, ``src/__tests__/environment.test.js``. Its
tests that create an environment (``createPaddockEnvironment`` or the worker protocol over one) and then
only call what the worker protocol carries (``reset``, ``step``, ``resetDrivers``, ``getState``,
``getActionSpec``, ``getObservationSpec``, raw messages) are here: 29 tests, 167 assertions as they run
(loops counted per pass). Left out are the tests of internal helpers (``resolveActionMap``,
``buildRaySensors``, ``createRaceSimulation``, track-query statistics, rollout recorders, evaluation and
controller loops), the tests whose configs hold functions (``reward``, ``externalRenderer``: not JSON),
and the two wall-clock performance budgets. The two ``slowTest``s PaddockJS skips by default
(tyre degradation, the no-pit training profile) are in.

Each test keeps its PaddockJS name (as the function's docstring), its config (recorded verbatim from
PaddockJS's own modules: ``tools/paddockjs/record_environment_test_configs.mjs``) and every assertion,
in order, on the same messages. Assertions are recorded, not raised (``matchers.Expectations``), so the
run counts how many hold; a test passes when all of its assertions hold. An assertion that cannot hold
over JSON is named with its reason (``cannot_hold``).
"""

from __future__ import annotations

import json

import pytest

from .harness import sim_units_to_meters
from .matchers import (
    Any, ArrayContaining, CloseTo, ObjectContaining, StringContaining, attempt, find, is_finite, prop,
)

D = "budget"          # CONTROLLED_DRIVER_ID: DEMO_PROJECT_DRIVERS[0]
TRAFFIC = "noir"      # ENVIRONMENT_TEST_DRIVERS[1]
NUMBER, ARRAY, OBJECT, STRING, BOOLEAN = Any("Number"), Any("Array"), Any("Object"), Any("String"), Any("Boolean")


def ids(n):
    return [f"agent-{i}" for i in range(n)]


def obs_self(result, driver=D):
    return result["observation"][driver]["object"]["self"]


def car_of(result, driver):
    return find(result["state"]["snapshot"]["cars"], id=driver)


def test_tire_degradation_disabled(port):
    """can disable tire degradation through race rules (slowTest)"""
    x = port.expect(9)
    env = port.env("tire-degradation-disabled")
    result = env.reset()
    x(lambda: obs_self(result)["tireEnergy"]).to_be(100)
    for _ in range(8):
        result = env.step({D: {"steering": 0.2, "throttle": 1, "brake": 0}})
        x(lambda: obs_self(result)["tireEnergy"]).to_be(100)
    x.done()


def test_no_pit_training_profile(port):
    """steps a no-pit generated training profile through the public environment (slowTest)"""
    x = port.expect(5)
    env = port.env("no-pit-training-profile")
    result = env.reset()
    x(lambda: result["state"]["snapshot"]["track"]["pitLane"]).to_be_null()
    x(lambda: sim_units_to_meters(result["state"]["snapshot"]["track"]["length"])).to_be_greater_than_or_equal(900)
    x(lambda: len(result["observation"][D]["object"]["rays"])).to_be_greater_than(0)
    result = env.step({D: {"steering": 0, "throttle": 0.8, "brake": 0}})
    x(lambda: result["state"]["snapshot"]["track"]["pitLane"]).to_be_null()
    x(lambda: result["metrics"][D]).to_be_truthy()
    x.done()


def test_zero_steering_recenters(port):
    """zero steering action recenters the physical steering wheel target"""
    x = port.expect(3)
    env = port.env("zero-steering-recenters")
    result = env.reset()
    for _ in range(6):
        result = env.step({D: {"steering": 1, "throttle": 0.5, "brake": 0}})
    turned = attempt(lambda: obs_self(result)["steeringAngleRadians"])
    x(lambda: turned).to_be_greater_than(0)
    for _ in range(8):
        result = env.step({D: {"steering": 0, "throttle": 0.5, "brake": 0}})
    centered = attempt(lambda: obs_self(result)["steeringAngleRadians"])
    x(lambda: abs(centered)).to_be_less_than(lambda: abs(turned))
    x(lambda: abs(centered)).to_be_less_than(0.02)
    x.done()


def test_barrier_near_pit_exit(port):
    """controlled environment cars still crash on main-track barrier near pit-exit geometry"""
    x = port.expect(3)
    baseline = port.env("barrier-near-pit-exit")
    track = baseline.get_state()["snapshot"]["track"]
    exit_ = track["pitLane"]["exit"]
    pit_exit_distance_m = sim_units_to_meters(
        exit_["trackDistance"] if exit_.get("trackDistance") is not None else exit_["distanceFromStart"])
    barrier_inner_m = sim_units_to_meters(
        track["width"] / 2 + (track.get("kerbWidth") or 0) + track["gravelWidth"] + track["runoffWidth"]
        - (track.get("barrierWidth") or 0) / 2)
    baseline.close()

    config = port.config("barrier-near-pit-exit")
    config["physicsMode"] = "simulator"
    config["scenario"] = {
        "participants": "controlled-only",
        "placements": {D: {"distanceMeters": pit_exit_distance_m, "offsetMeters": -(barrier_inner_m + 1),
                           "speedKph": 0, "headingErrorRadians": 0}},
    }
    env = port.env(config)
    result = env.step({D: {"steering": 0, "throttle": 0, "brake": 0}})
    car = attempt(lambda: car_of(result, D))
    x(lambda: prop(car, "destroyed")).to_be(True)
    x(lambda: prop(car, "destroyReason")).to_be("barrier")
    x(lambda: result["info"]["drivers"][D]["endReason"]).to_be("destroyed")
    x.done()


def test_batch_multi_car_no_collision_finite_senses(port):
    """batch-training multi-car steps keep no-collision feedback and finite senses per driver"""
    x = port.expect(39)
    agents = ids(4)
    env = port.env("batch-multi-car")
    reset = env.reset()
    for index in range(len(agents)):
        x(lambda: reset["state"]["snapshot"]["cars"][index]["interaction"]).to_match_object({
            "profile": "batch-training", "collidable": False, "detectableByRays": False, "detectableAsNearby": False,
        })
    env.reset_drivers({
        agents[0]: {"distanceMeters": 300, "offsetMeters": 0.0, "speedKph": 70, "headingErrorRadians": 0.0},
        agents[1]: {"distanceMeters": 300, "offsetMeters": 0.2, "speedKph": 70, "headingErrorRadians": 0.0},
        agents[2]: {"distanceMeters": 300, "offsetMeters": -0.2, "speedKph": 70, "headingErrorRadians": 0.0},
        agents[3]: {"distanceMeters": 300, "offsetMeters": 0.4, "speedKph": 70, "headingErrorRadians": 0.0},
    })
    result = env.step({
        agents[0]: {"steering": 0.1, "throttle": 1.0, "brake": 0.0},
        agents[1]: {"steering": -0.1, "throttle": 0.6, "brake": 0.0},
        agents[2]: {"steering": 0.2, "throttle": 0.0, "brake": 1.0},
        agents[3]: {"steering": 0.0, "throttle": 0.3, "brake": 0.3},
    })
    x(lambda: list(result["observation"])).to_equal(agents)
    x(lambda: list(result["metrics"])).to_equal(agents)
    x(lambda: any(event["type"] == "collision" for event in result["events"])).to_be(False)
    for agent in agents:
        observation = attempt(lambda: result["observation"][agent])
        metrics = attempt(lambda: result["metrics"][agent])
        x(lambda: observation["vector"]).to_have_length(lambda: len(observation["schema"]))
        x(lambda: all(is_finite(v) for v in observation["vector"])).to_be(True)
        x(lambda: isinstance(observation["object"]["rays"], list)).to_be(True)
        x(lambda: len(observation["object"]["rays"])).to_be_greater_than_or_equal(16)
        x(lambda: all(is_finite(r["track"]["distanceMeters"]) for r in observation["object"]["rays"])).to_be(True)
        x(lambda: all(is_finite(r["kerb"]["distanceMeters"]) for r in observation["object"]["rays"])).to_be(True)
        x(lambda: all(is_finite(r["illegalSurface"]["distanceMeters"])
                      for r in observation["object"]["rays"])).to_be(True)
        x(lambda: metrics).to_equal(ObjectContaining({
            "progressDeltaMeters": NUMBER, "legalProgressDeltaMeters": NUMBER, "contactCount": 0,
        }))
    x.done()


def test_reset_and_step_shapes(port):
    """environment reset and step keep the training API state and observation shapes stable"""
    x = port.expect(3)
    env = port.env("reset-step-shapes")
    initial = env.reset()
    result = env.step({D: {"steering": 0.1, "throttle": 1, "brake": 0, "pitIntent": 0}})
    x(lambda: initial).to_match_object({
        "observation": {D: {
            "object": {"self": OBJECT, "race": OBJECT, "track": OBJECT, "rays": ARRAY, "nearbyCars": ARRAY},
            "vector": ARRAY,
            "schema": ARRAY,
        }},
        "reward": None,
        "terminated": False,
        "truncated": False,
        "info": OBJECT,
        "state": {"snapshot": ObjectContaining({"time": NUMBER, "raceControl": OBJECT, "cars": ARRAY})},
    })
    x(lambda: result).to_match_object({
        "observation": {D: {
            "object": {
                "self": ObjectContaining({"speedKph": NUMBER, "pitIntent": 0, "pitStopStatus": STRING}),
                "race": ObjectContaining({"raceMode": STRING, "pitLaneOpen": BOOLEAN}),
            },
            "vector": ARRAY,
            "schema": ARRAY,
        }},
        "reward": None,
        "terminated": BOOLEAN,
        "truncated": BOOLEAN,
        "info": OBJECT,
        "state": {"snapshot": ObjectContaining({"events": ARRAY, "cars": ARRAY})},
    })
    x(lambda: result["observation"][D]["vector"]).to_have_length(lambda: len(result["observation"][D]["schema"]))
    x.done()


def test_physical_driver_opt_in(port):
    """supports opt-in physical driver observations without privileged lookahead by default"""
    x = port.expect(13)
    env = port.env("physical-driver-opt-in")
    spec = env.get_observation_spec()
    result = env.reset()
    observation = result["observation"][D]
    names = attempt(lambda: [entry["name"] for entry in observation["schema"]])
    x(lambda: spec["version"]).to_be(4)
    x(lambda: spec["object"]["track"]["lookaheadMeters"]).to_equal([])
    x(lambda: observation["object"]["profile"]).to_be("physical-driver")
    x(lambda: observation["object"]["track"]["lookahead"]).to_equal([])
    x(lambda: observation["object"]["self"]["yawRateRadiansPerSecond"]).to_equal(NUMBER)
    x(lambda: observation["object"]["trackRelation"]).to_equal(ObjectContaining({
        "leftBoundaryMeters": NUMBER, "rightBoundaryMeters": NUMBER, "legalWidthMeters": NUMBER,
    }))
    x(lambda: observation["object"]["contactPatches"]).to_have_length(4)
    x(lambda: [ray["lengthMeters"] for ray in observation["object"]["rays"]]).to_equal([220, 80])
    x(lambda: names).to_equal(ArrayContaining([
        "self.yawRateRadiansPerSecond", "trackRelation.leftBoundaryMeters", "contactPatches[0].surfaceCode",
        "rays[1].kerb.hit", "rays[1].illegalSurface.hit", "nearbyCars[0].closingRateMetersPerSecond",
    ]))
    x(lambda: spec["object"]["rays"]["channels"]).to_equal(["roadEdge", "kerb", "illegalSurface", "car"])
    x(lambda: observation["object"]["rays"][0]).not_.to_have_property("barrier")
    x(lambda: "\n".join(name for name in names if name)).not_.to_contain(".barrier.")
    x(lambda: observation["vector"]).to_have_length(lambda: len(observation["schema"]))
    x.done()


def test_compact_vector_only(port):
    """supports compact vector-only observations while specs keep the full schema"""
    x = port.expect(6)
    env = port.env("compact-vector-only")
    spec = env.get_observation_spec()
    result = env.reset()
    observation = result["observation"][D]
    x(lambda: len(spec["vector"]["schema"])).to_be_greater_than(0)
    x(lambda: observation["vector"]).to_equal(ARRAY)
    x(lambda: observation["events"]).to_equal(ARRAY)
    x(lambda: observation).not_.to_have_property("object")
    x(lambda: observation).not_.to_have_property("schema")
    x(lambda: observation["vector"]).to_have_length(lambda: len(spec["vector"]["schema"]))
    x.done()


def test_typed_vector_lean_state(port):
    """supports typed vector observations and lean state output for training loops"""
    x = port.expect(4)
    env = port.env("typed-vector-lean-state")
    result = env.reset()
    x(lambda: result["state"]).to_be_null()
    x.cannot_hold("expect(result.observation[driverId].vector).toBeInstanceOf(Float32Array)",
                  "JSON has no Float32Array: a worker sends a list of numbers (PaddockJS's JSON.stringify an "
                  "index-keyed object); the port checks the float32 values arrive as a list instead")
    x(lambda: result["observation"][D]).not_.to_have_property("object")
    x(lambda: result["observation"][D]).not_.to_have_property("schema")
    x.done()


def test_reset_drivers_selected(port):
    """resetDrivers resets selected drivers without recreating the whole environment"""
    x = port.expect(5)
    first, second, _ = ids(3)
    env = port.env("reset-drivers-selected")
    env.reset()
    after_step = env.step({agent: {"steering": 0, "throttle": 0.4, "brake": 0} for agent in ids(3)})
    before_second = attempt(lambda: car_of(after_step, second)["distanceMeters"])
    reset = env.reset_drivers({first: {"distanceMeters": 1200, "offsetMeters": 3, "speedKph": 80,
                                       "headingErrorRadians": 0.2}})
    reset_first = attempt(lambda: car_of(reset, first))
    reset_second = attempt(lambda: car_of(reset, second))
    x(lambda: reset["info"]["drivers"][first]).to_match_object({
        "episodeStep": 0, "episodeId": 1, "truncated": False, "terminated": False, "endReason": None,
    })
    x(lambda: reset["info"]["drivers"][second]["episodeId"]).to_be(0)
    x(lambda: reset_first["distanceMeters"]).to_be_close_to(1200, 1)
    x(lambda: reset_first["speedKph"]).to_be_close_to(80, 0)
    x(lambda: reset_second["distanceMeters"]).to_be_close_to(lambda: before_second, 6)
    x.done()


def test_reset_drivers_clears_truncation(port):
    """resetDrivers clears selected driver max-step truncation in batched episodes"""
    x = port.expect(8)
    first, second = ids(2)
    env = port.env("reset-drivers-clears-truncation")
    env.reset()
    truncated = env.step({agent: {"steering": 0, "throttle": 0.4, "brake": 0} for agent in ids(2)})
    reset = env.reset_drivers({first: {"distanceMeters": 1200, "offsetMeters": 0, "speedKph": 80}})
    x(lambda: truncated["done"]).to_be(True)
    x(lambda: truncated["info"]["drivers"][first]).to_match_object({
        "truncated": True, "endReason": "max-steps", "episodeStep": 1, "episodeId": 0,
    })
    x(lambda: reset["done"]).to_be(False)
    x(lambda: reset["truncated"]).to_be(False)
    x(lambda: reset["info"]["endReason"]).to_be_null()
    x(lambda: reset["info"]["drivers"][first]).to_match_object({
        "truncated": False, "terminated": False, "endReason": None, "episodeStep": 0, "episodeId": 1,
    })
    x(lambda: reset["info"]["drivers"][second]).to_match_object({
        "truncated": True, "endReason": "max-steps", "episodeStep": 1, "episodeId": 0,
    })
    x(lambda: reset["info"]["step"]).to_be(lambda: truncated["info"]["step"])
    x.done()


def test_reset_drivers_lean(port):
    """resetDrivers can return only reset-driver observations with lean state"""
    x = port.expect(6)
    first, second, _ = ids(3)
    env = port.env("reset-drivers-lean")
    env.reset()
    reset = env.reset_drivers({first: {"distanceMeters": 1200, "offsetMeters": 0, "speedKph": 80}},
                              {"stateOutput": "none"})
    x(lambda: list(reset["observation"])).to_equal([first])
    x(lambda: list(reset["metrics"])).to_equal([first])
    x(lambda: reset["observation"]).not_.to_have_property(second)
    x(lambda: reset["info"]["drivers"][first]["episodeId"]).to_be(1)
    x(lambda: reset["info"]["drivers"][second]["episodeId"]).to_be(0)
    x(lambda: reset["state"]).to_be_null()
    x.done()


def test_reset_options_preserve_nested_groups(port):
    """environment reset options preserve nested option groups unless explicitly overridden"""
    x = port.expect(6)
    env = port.env("reset-options-preserve")
    initial = env.reset()
    reset = env.reset({"sensors": {"nearbyCars": {"enabled": False}},
                       "rules": {"modules": {"pitStops": {"enabled": False}}}})
    x(lambda: initial["observation"][D]["object"]["rays"]).to_have_length(0)
    x(lambda: reset["observation"][D]["object"]["rays"]).to_have_length(0)
    x(lambda: reset["observation"][D]["object"]["nearbyCars"]).to_have_length(0)
    x(lambda: reset["state"]["snapshot"]["rules"]["standingStart"]).to_be(False)
    x(lambda: reset["state"]["snapshot"]["rules"]["modules"]["tireDegradation"]["enabled"]).to_be(False)
    x(lambda: reset["state"]["snapshot"]["rules"]["modules"]["pitStops"]["enabled"]).to_be(False)
    x.done()


def test_reset_options_clear_placements(port):
    """environment reset options can explicitly clear scenario placements"""
    x = port.expect(2)
    env = port.env("reset-options-clear-placements")
    placed = env.reset()
    cleared = env.reset({"scenario": {"placements": {}}})
    placed_car = attempt(lambda: car_of(placed, D))
    cleared_car = attempt(lambda: car_of(cleared, D))
    x(lambda: placed_car["distanceMeters"]).to_be_close_to(1200, 1)
    x(lambda: cleared_car["distanceMeters"]).not_.to_be_close_to(1200, 1)
    x.done()


def test_per_driver_runtime_state_and_metrics(port):
    """reports per-driver runtime state and neutral metrics for batched training"""
    x = port.expect(3)
    agents = ids(2)
    env = port.env("per-driver-runtime-metrics")
    env.reset()
    result = env.step({agent: {"steering": 0, "throttle": 0.2, "brake": 0} for agent in agents})
    x(lambda: result["info"]["drivers"][agents[0]]).to_match_object({
        "episodeStep": 1, "episodeId": 0, "terminated": False, "truncated": False, "endReason": None,
    })
    x(lambda: result["metrics"][agents[0]]).to_equal(ObjectContaining({
        "progressDeltaMeters": NUMBER, "legalProgressDeltaMeters": NUMBER, "offTrack": False, "kerb": BOOLEAN,
        "fullyOutsideWhiteLine": False, "severeCut": False, "under30kph": BOOLEAN, "spinOrBackwards": BOOLEAN,
        "completedLap": False, "lapTimeSeconds": None, "contactCount": 0,
    }))
    x(lambda: result["metrics"][agents[1]]).to_equal(ObjectContaining({
        "offTrack": True, "severeCut": True, "under30kph": True, "spinOrBackwards": True,
    }))
    x.done()


def test_batch_full_observations_finite(port):
    """batch-training full observations keep object-backed vectors finite when race ranks are hidden"""
    x = port.expect(3)
    env = port.env("batch-full-finite")
    result = env.reset()
    observation = result["observation"][ids(2)[0]]
    x(lambda: observation["object"]["race"]["position"]).to_be_null()
    x(lambda: observation["vector"]).to_have_length(lambda: len(observation["schema"]))
    x(lambda: all(is_finite(v) for v in observation["vector"])).to_be(True)
    x.done()


def test_barrier_destruction_until_reset_drivers(port):
    """barrier destruction terminates controlled driver episodes until resetDrivers recreates them"""
    x = port.expect(5)
    env = port.env("barrier-destruction-reset-drivers")
    destroyed = env.step({D: {"steering": 0, "throttle": 0, "brake": 0}})
    x(lambda: destroyed["metrics"][D]["destroyed"]).to_be(True)
    x(lambda: destroyed["info"]["drivers"][D]).to_equal(ObjectContaining({
        "terminated": True, "truncated": False, "endReason": "destroyed",
    }))
    x(lambda: destroyed["done"]).to_be(True)
    reset = env.reset_drivers({D: {"distanceMeters": 720, "offsetMeters": 0, "speedKph": 80,
                                   "headingErrorRadians": 0}})
    x(lambda: reset["metrics"][D]["destroyed"]).to_be(False)
    x(lambda: reset["info"]["drivers"][D]).to_equal(ObjectContaining({
        "terminated": False, "truncated": False, "endReason": None, "episodeId": 1, "episodeStep": 0,
    }))
    x.done()


def test_lookahead_sanitized(port):
    """sanitizes invalid observation lookahead options before building specs and observations"""
    x = port.expect(2)
    env = port.env("lookahead-sanitize")
    spec = env.get_observation_spec()
    initial = env.reset()
    x(lambda: spec["object"]["track"]["lookaheadMeters"]).to_equal([20, 50, 100, 150])
    x(lambda: [s["distanceMeters"] for s in initial["observation"][D]["object"]["track"]["lookahead"]]).to_equal(
        [20, 50, 100, 150])
    x.done()


def test_scenario_placement_and_traffic(port):
    """applies absolute, relative traffic, and preset reset scenario placement through simulator state API"""
    x = port.expect(5)
    env = port.env("scenario-placement-traffic")
    initial = env.reset()
    self_ = attempt(lambda: obs_self(initial))
    traffic = attempt(lambda: car_of(initial, TRAFFIC))
    controlled = attempt(lambda: car_of(initial, D))
    x(lambda: self_["speedKph"]).to_be_close_to(65, 0)
    x(lambda: self_["trackOffsetMeters"]).to_be_greater_than(14)
    x(lambda: self_["trackHeadingErrorRadians"]).to_be_close_to(0.4, 1)
    x(lambda: controlled["positionSource"]).to_be("integrated-vehicle")
    x(lambda: traffic["distanceMeters"] - controlled["distanceMeters"]).to_be_close_to(24, 0)
    x.done()


def test_indexed_queries_by_default(port):
    """environment simulations default to indexed queries with explicit opt-out support"""
    x = port.expect(2)
    options = port.config("indexed-queries-default")
    indexed_snapshot = attempt(lambda: port.env(options).reset()["state"]["snapshot"])
    legacy_snapshot = attempt(lambda: port.env({**options, "trackQueryIndex": False}).reset()["state"]["snapshot"])
    x.cannot_hold("expect(indexedSnapshot.track.queryIndex).toBeTruthy()",
                  "PaddockJS attaches its track query index as a non-enumerable property: JSON.stringify never "
                  "sends it, so no worker reply has it (the legacy snapshot's absence below holds either way)")
    x(lambda: prop(legacy_snapshot["track"], "queryIndex")).to_be_undefined()
    x.done()


def test_gym_style_step(port):
    """steps a controlled car manually and returns gym-style result"""
    x = port.expect(6)
    env = port.env("gym-style-step")
    initial = env.reset()
    result = env.step({D: {"steering": 0, "throttle": 1, "brake": 0}})
    x(lambda: result["info"]["step"]).to_be(1)
    x(lambda: result["info"]["seed"]).to_be(71)
    x(lambda: result["info"]["trackSeed"]).to_be(2026)
    x(lambda: result["state"]["snapshot"]["time"]).to_be_greater_than(lambda: initial["state"]["snapshot"]["time"])
    x(lambda: result["reward"]).to_be_null()
    x(lambda: result["done"]).to_be(lambda: result["terminated"] or result["truncated"])
    x.done()


def test_pit_request_by_action(port):
    """controlled drivers start with no automatic pit request and can request a pit by action"""
    x = port.expect(7)
    env = port.env("pit-request-by-action")
    initial = env.reset()
    x(lambda: obs_self(initial)["pitIntent"]).to_be(0)
    x(lambda: obs_self(initial)).to_match_object({
        "inPitLane": False, "pitLanePart": None, "pitBoxId": None, "pitStopStatus": "pending", "pitStopPhase": None,
        "pitStopServiceRemainingSeconds": 0, "pitStopPenaltyServiceRemainingSeconds": 0, "pitStopsCompleted": 0,
    })
    x(lambda: car_of(initial, D)["pitStop"]["intent"]).to_be(0)
    result = env.step({D: {"steering": 0, "throttle": 1, "brake": 0, "pitIntent": 2, "pitCompound": "H"}})
    x(lambda: obs_self(result)["pitIntent"]).to_be(2)
    x(lambda: obs_self(result)["pitTargetCompound"]).to_be("H")
    x(lambda: result["observation"][D]["object"]["race"]).to_match_object({"pitLaneOpen": True, "redFlag": False})
    x(lambda: car_of(result, D)["pitStop"]).to_match_object({"intent": 2, "targetTire": "H"})
    x.done()


def test_unavailable_pit_intent_reported(port):
    """reports unavailable pit intent actions through the environment action policy"""
    x = port.expect(1)
    env = port.env("unavailable-pit-intent")
    env.reset()
    result = env.step({D: {"steering": 0, "throttle": 1, "brake": 0, "pitIntent": 2}})
    x(lambda: result["info"]["actionErrors"]).to_equal([f"Pit intent could not be applied for controlled driver: {D}"])
    x.done()


def test_no_op_pit_intent_accepted(port):
    """accepts no-op pit intent actions when pit stops are unavailable"""
    x = port.expect(2)
    env = port.env("no-op-pit-intent")
    env.reset()
    result = env.step({D: {"steering": 0, "throttle": 1, "brake": 0, "pitIntent": 0}})
    x(lambda: result["info"]["actionErrors"]).to_equal([])
    x(lambda: obs_self(result)["pitIntent"]).to_be(0)
    x.done()


def test_applied_controls_exposed(port):
    """physical-driver observations expose applied controls from the active driver policy"""
    x = port.expect(2)
    env = port.env("applied-controls")
    env.reset()
    ai_result = env.step({})
    x(lambda: obs_self(ai_result)["appliedControls"]).to_equal(ObjectContaining({
        "steering": NUMBER, "steeringRadians": NUMBER, "throttle": NUMBER, "brake": NUMBER,
    }))
    manual_result = env.step({D: {"steering": 0.25, "throttle": 0.7, "brake": 0}})
    x(lambda: obs_self(manual_result)["appliedControls"]).to_equal(ObjectContaining({
        "steering": CloseTo(0.25, 5), "throttle": CloseTo(0.7, 5), "brake": 0,
    }))
    x.done()


def test_report_mode_releases_stale_controls(port):
    """report-mode missing or invalid actions release stale manual controls to the built-in driver

    The test's ``steering: Number.NaN`` is sent as JSON sends it, ``null`` (JSON has no NaN). PaddockJS's
    own worker reads ``null`` as 0 and reports nothing, so there the invalid-steering assertion cannot
    hold over JSON; paddock_ma refuses ``null`` as it refuses NaN."""
    x = port.expect(4)
    env = port.env("report-mode-release")
    env.reset()
    manual_result = env.step({D: {"steering": 1, "throttle": 0, "brake": 1}})
    manual_controls = attempt(lambda: obs_self(manual_result)["appliedControls"])
    missing_result = env.step({})
    x(lambda: missing_result["info"]["actionErrors"]).to_equal([f"Missing action for controlled driver: {D}"])
    x(lambda: obs_self(missing_result)["appliedControls"]).not_.to_equal(lambda: manual_controls)
    next_manual_result = env.step({D: {"steering": -1, "throttle": 0, "brake": 1}})
    next_manual_controls = attempt(lambda: obs_self(next_manual_result)["appliedControls"])
    invalid_result = env.step({D: {"steering": None, "throttle": 1, "brake": 0}})   # Number.NaN, as JSON sends it
    x(lambda: invalid_result["info"]["actionErrors"]).to_equal([f"Invalid steering action for controlled driver: {D}"])
    x(lambda: obs_self(invalid_result)["appliedControls"]).not_.to_equal(lambda: next_manual_controls)
    x.done()


def test_action_and_observation_specs(port):
    """exposes action and observation specs without choosing an ML framework"""
    x = port.expect(2)
    env = port.env("action-observation-specs")
    x(lambda: env.get_action_spec()).to_equal({
        "version": 1,
        "controlledDrivers": [D],
        "action": {
            "type": "continuous",
            "perDriver": {
                "steering": {"min": -1, "max": 1, "unit": "normalized"},
                "throttle": {"min": 0, "max": 1, "unit": "normalized"},
                "brake": {"min": 0, "max": 1, "unit": "normalized"},
                "pitIntent": {"values": [0, 1, 2], "unit": "request", "optional": True},
                "pitCompound": {"values": ["S", "M", "H"], "unit": "compound", "optional": True},
            },
        },
    })
    x(lambda: env.get_observation_spec()).to_match_object({
        "version": 2,
        "controlledDrivers": [D],
        "object": {
            "self": ArrayContaining([
                {"name": "speedKph", "unit": "kph"},
                {"name": "trackOffsetMeters", "unit": "m"},
                {"name": "trackHeadingErrorRadians", "unit": "rad"},
                {"name": "onTrack", "unit": "boolean"},
                {"name": "inPitLane", "unit": "boolean"},
                {"name": "pitLanePart", "unit": "nullable:label"},
                {"name": "pitBoxId", "unit": "nullable:id"},
                {"name": "pitIntent", "unit": "0:none|1:if-free|2:committed"},
                {"name": "pitTargetCompound", "unit": "nullable:compound"},
                {"name": "pitStopStatus", "unit": "nullable:label"},
                {"name": "pitStopPhase", "unit": "nullable:label"},
                {"name": "pitStopServiceRemainingSeconds", "unit": "nullable:seconds"},
                {"name": "pitStopPenaltyServiceRemainingSeconds", "unit": "nullable:seconds"},
                {"name": "pitStopsCompleted", "unit": "count"},
            ]),
            "race": ArrayContaining([
                {"name": "pitLaneOpen", "unit": "boolean"},
                {"name": "redFlag", "unit": "boolean"},
            ]),
            "rays": {
                "enabled": True,
                "anglesDegrees": [-90, 0, 90],
                "lengthMeters": 80,
                "precision": "driver",
                "track": {
                    "distanceMeters": {"unit": "m", "noHitValue": 80},
                    "hit": {"unit": "boolean"},
                    "kind": {"values": ["exit", "entry", None]},
                },
                "car": {
                    "distanceMeters": {"unit": "m", "noHitValue": 80},
                    "hit": {"unit": "boolean"},
                    "driverId": {"nullable": True},
                    "targetId": {"nullable": True},
                    "targetType": {"values": ["car", "replayGhost", None]},
                    "relativeSpeedKph": {"unit": "kph"},
                },
            },
            "nearbyCars": {"enabled": True, "maxCars": 4, "radiusMeters": 120},
            "track": {"lookaheadMeters": ARRAY},
        },
        "vector": {
            "schema": ArrayContaining([
                {"name": "self.speedKph", "unit": "kph", "scale": "fixed:400"},
                {"name": "race.redFlag", "scale": "boolean"},
                {"name": "rays[0].track.distanceRatio", "scale": "0..1"},
                {"name": "nearbyCars[0].present", "scale": "boolean"},
            ]),
        },
    })
    x.done()


def test_worker_protocol_wrapper(port):
    """exposes a JSON-serializable worker protocol wrapper for external bridges"""
    x = port.expect(7)
    env = port.env("worker-protocol-wrapper")
    reset = env.handle({"id": "a", "type": "reset"})
    step = env.handle({"id": "b", "type": "step", "actions": {D: {"steering": 0, "throttle": 1, "brake": 0}}})
    reset_drivers = env.handle({
        "id": "driver-reset", "type": "resetDrivers",
        "placements": {D: {"distanceMeters": 1000, "offsetMeters": 0, "speedKph": 60}},
        "resultOptions": {"stateOutput": "none"},
    })
    spec = env.handle({"id": "c", "type": "getObservationSpec"})
    unknown = env.handle({"id": "d", "type": "train"})
    x(lambda: reset).to_match_object({"id": "a", "ok": True, "type": "reset:result"})
    x(lambda: step).to_match_object({"id": "b", "ok": True, "type": "step:result"})
    x(lambda: reset_drivers).to_match_object({"id": "driver-reset", "ok": True, "type": "resetDrivers:result"})
    x(lambda: reset_drivers["result"]["state"]).to_be_null()
    x(lambda: spec["result"]).to_match_object({"version": 2})
    x(lambda: unknown).to_match_object({
        "id": "d", "ok": False, "type": "error",
        "error": StringContaining("Unsupported PaddockJS environment worker message type"),
    })
    x(lambda: json.dumps(step, allow_nan=False) and True).to_be(True)   # JSON.stringify(step) does not throw
    x.done()


def test_worker_get_state_options(port):
    """worker protocol getState honors requested state output options"""
    x = port.expect(4)
    env = port.env("worker-get-state-options")
    env.handle({"id": "reset", "type": "reset"})
    minimal = env.handle({"id": "state-minimal", "type": "getState", "stateOptions": {"output": "minimal"}})
    none = env.handle({"id": "state-none", "type": "getState", "resultOptions": {"stateOutput": "none"}})
    x(lambda: minimal).to_match_object({"id": "state-minimal", "ok": True, "type": "getState:result"})
    x(lambda: minimal["result"]["snapshot"]).to_be_truthy()
    x(lambda: none).to_match_object({"id": "state-none", "ok": True, "type": "getState:result"})
    x(lambda: none["result"]).to_be_null()
    x.done()

