"""PaddockJS 2.0.0's observation specs (tests/fixtures/paddockjs-2.0.0/*.observation-spec.json, issue 14,
"Vectors and specs"): for each golden configuration our spec has the same vector schema (names, units
present or absent, scales) in the same order, the same length and version, on the wire too; and after
the same kind of reset (rolling start, car-00 on grid slot 0 left of the centreline) our vector's
entries hold what PaddockJS's do, up to what another track and simulator change."""

import json
import math

import numpy as np
import pytest

from paddock_ma.env.config.root import EnvConfig
from paddock_ma.env.environment import PaddockEnv
from paddock_ma.protocol.messages import Dispatcher
from paddock_ma.protocol.wire_names import config_from_wire
from paddock_ma.sim.core import layout as L
from tests.helpers.golden import CONFIGS, FIXTURES, golden
from tests.helpers.sense_oracle import nearest_sample_index, sample_curvature


# entries whose values depend on the track, the placement speed or the simulator: compared with a
# tolerance (absolute, in the entry's vector units) instead of exactly
LOOSE = {
    "self.speedKph": 0.02, "self.speedMetersPerSecond": 0.02,        # 84 km/h here, 88 there
    "self.lapProgressRatio": 0.02,                                    # grid slot on another track
    "curvature": 0.01,                                                # another track's corners
    "distanceRatio": 1.0,                                             # ray distances: another track
    "nearbyCars": 1.0,                                                # other cars' grid positions
}


def spec_doc(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.observation-spec.json").read_text())


def env_for(name: str) -> PaddockEnv:
    return PaddockEnv(EnvConfig.from_paddockjs(golden(name)["config"]))


@pytest.mark.parametrize("name", CONFIGS)
def test_observation_spec_matches_paddockjs(name):
    doc = spec_doc(name)
    want = doc["observationSpec"]
    env = env_for(name)
    spec = env.get_observation_spec()
    assert spec["version"] == want["version"] == (4 if "physical" in name else 2)
    assert spec["vector"]["schema"] == want["vector"]["schema"]          # names, units, scales, order
    assert spec["vector"]["size"] == len(want["vector"]["schema"]) == doc["vectorLength"]
    assert spec["vector"]["dtype"] == "float32"
    r = env.reset(seed=7)
    for driver in env.controlled:
        vector = r["observation"][driver]["vector"]
        assert vector.dtype == np.float32 and vector.shape == (doc["vectorLength"],)
    # the object spec's ray layout is PaddockJS's: angles, per-ray lengths and default channels
    rays = spec["object"]["rays"]
    assert [(ray["angle_degrees"], ray["length_meters"]) for ray in rays["rays"]] == \
        [(ray["angleDegrees"], ray["lengthMeters"]) for ray in want["object"]["rays"]["rays"]]
    assert rays["channels"] == [{"roadEdge": "road_edge", "illegalSurface": "illegal_surface"}.get(c, c)
                                for c in want["object"]["rays"]["channels"]]


@pytest.mark.parametrize("name", CONFIGS)
def test_wire_spec_has_paddockjs_keys(name):
    want = spec_doc(name)["observationSpec"]
    d = Dispatcher(config_from_wire(golden(name)["config"]))
    reply = json.loads(d.handle_line(json.dumps({"type": "getObservationSpec"}).encode()))
    assert reply["ok"], reply
    spec = reply["result"]
    assert set(want) <= set(spec)             # ours adds profile, output, perDriver, vector size and dtype
    assert spec["version"] == want["version"]
    assert spec["vector"]["schema"] == want["vector"]["schema"]
    assert spec["controlledDrivers"] == want["controlledDrivers"]
    assert spec["object"] == want["object"]         # the object section, key for key


def tolerance(entry: str) -> float:
    for key, tol in LOOSE.items():
        if entry == key or entry.endswith("." + key) or entry.startswith(key):
            return tol
    return 1e-3


@pytest.mark.parametrize("name", CONFIGS)
def test_reset_vector_means_what_paddockjs_means(name):
    """Entry by entry against car-00's golden reset vector: controls, g, grip, slip, flags, race state,
    pit state, the track offset, boundaries and patch offsets (-4.15 m: the outer patch edge of a car
    centred 3.2 m left), ray hit flags and kinds, patch codes, legal width and radar slots exactly;
    speeds, progress and distances within what the other track and placement speed allow."""
    golden_vector = golden(name)["reset"]["driver"]["vector"]
    schema = spec_doc(name)["observationSpec"]["vector"]["schema"]
    env = env_for(name)
    ours = env.reset(seed=7)["observation"]["car-00"]["vector"]
    exact = 0
    for entry, mine, theirs in zip(schema, ours, golden_vector):
        tol = tolerance(entry["name"])
        exact += tol == 1e-3
        assert float(mine) == pytest.approx(theirs, abs=tol), entry["name"]
    assert exact > len(schema) // 3


def test_presets_are_paddockjs_layouts():
    """compact (and its old name default), driver-front-heavy and lidar-lite: angles and per-ray lengths;
    the ray distance ratio divides by the ray's own length."""
    specs = {}
    for layout in ("compact", "default", "driver-front-heavy", "lidar-lite"):
        env = PaddockEnv({"drivers": 2, "controlled_drivers": ["car-00"], "sensors": {"rays": {"layout": layout}}})
        specs[layout] = [(r["angle_degrees"], r["length_meters"]) for r in env.get_observation_spec()["object"]["rays"]["rays"]]
    assert specs["compact"] == specs["default"] == [(a, 120.0) for a in (-135, -60, -20, 0, 20, 60, 135, 180)]
    fh = specs["driver-front-heavy"]
    assert [a for a, _ in fh] == [-140, -100, -70, -50, -35, -20, -10, 0, 10, 20, 35, 50, 70, 100, 140, 180]
    assert all(n == (240 if abs(a) <= 70 else 90 if abs(a) <= 100 else 60) for a, n in fh)
    lidar = specs["lidar-lite"]
    assert [a for a, _ in lidar] == list(range(-120, 121, 10))
    assert all(n == (260 if abs(a) <= 70 else 100) for a, n in lidar)


def test_unrequested_channels_keep_their_miss_values_and_the_length():
    """Every ray has its 7 slots (11 under physical-driver) whatever channels are asked for; a channel not
    asked for reads ratio 1, hit 0, kinds 0, speed 0."""
    cfg = {"drivers": 4, "controlled_drivers": ["car-00"], "observation": {"profile": "physical-driver"}}
    full = PaddockEnv(cfg | {"sensors": {"rays": {"channels": ["road_edge", "kerb", "illegal_surface", "car"]}}})
    only_car = PaddockEnv(cfg | {"sensors": {"rays": {"channels": ["car"]}}})
    a = full.reset(seed=3)["observation"]["car-00"]
    b = only_car.reset(seed=3)["observation"]["car-00"]
    assert a["schema"] == b["schema"] and len(a["vector"]) == len(b["vector"]) == 210
    names = [e["name"] for e in b["schema"]]
    miss = {"distanceRatio": 1.0, "hit": 0.0, "kindExit": 0.0, "kindEntry": 0.0}
    hits = 0
    for i, name in enumerate(names):
        if name.startswith("rays[") and ".car." not in name:
            assert b["vector"][i] == miss[name.rsplit(".", 1)[1]], name
            hits += name.endswith(".track.hit") and a["vector"][i] == 1.0
        elif name.startswith("rays[") or not name.startswith("rays"):
            assert b["vector"][i] == a["vector"][i], name
    assert hits > 0                       # the road edge is seen when asked for


def test_track_curvature_is_paddockjs_per_sample_measure():
    """``track-curvature``: PaddockJS's per-sample measure (the angle between the chords i-1 -> i+1 and
    i -> i+2, / 28) of the car's nearest sample, here over the mean spacing of our samples scaled to
    PaddockJS's 3,600 a lap: (1/m measure) x (track length / 3600) / 28, unsigned; the lookahead's from
    the object's lookahead curvatures (that measure, 1/m) alike."""
    env = PaddockEnv({"drivers": 2, "controlled_drivers": ["car-00"], "track": "grand-prix",
                      "scenario": {"placements": {"car-00": {"distance_meters": 600, "offset_meters": 0.0}}}})
    o = env.reset(seed=1)["observation"]["car-00"]
    names = [e["name"] for e in o["schema"]]
    length = o["object"]["track"]["length_meters"]
    tr = env.engine.track
    f = env.engine.state.cars_f[env.w, env.engine.driver_ids.index("car-00")]
    k = sample_curvature(tr, nearest_sample_index(tr, f[L.F_X], f[L.F_Y]))
    assert k != 0.0
    got = float(o["vector"][names.index("track.curvature")])
    assert got == pytest.approx(k * length / 3600 / 28, rel=1e-5)
    for i, q in enumerate(o["object"]["track"]["lookahead"]):
        got = float(o["vector"][names.index(f"track.lookahead[{i}].curvature")])
        assert got == pytest.approx(abs(q["curvature"]) * length / 3600 / 28, rel=1e-5, abs=1e-9)
    assert not math.isnan(got)


def test_vector_type_float32_is_accepted():
    """``observation.vectorType``: PaddockJS's 'array' or 'float32'; both give float32 vectors here, the
    same bits; another value is a ConfigError."""
    from paddock_ma.errors import ConfigError

    base = {"drivers": [{"id": "car-00"}, {"id": "car-01"}], "controlledDrivers": ["car-00"]}
    plain = PaddockEnv(EnvConfig.from_paddockjs(base))
    f32 = PaddockEnv(EnvConfig.from_paddockjs(base | {"observation": {"vectorType": "float32"}}))
    a = plain.reset(seed=2)["observation"]["car-00"]["vector"]
    b = f32.reset(seed=2)["observation"]["car-00"]["vector"]
    assert b.dtype == np.float32 and a.tobytes() == b.tobytes()
    with pytest.raises(ConfigError, match="vector_type"):
        EnvConfig.from_paddockjs(base | {"observation": {"vectorType": "float64"}})


@pytest.mark.parametrize("name", CONFIGS)
def test_wire_action_spec_holds_paddockjs_action_spec(name):
    """The golden ``getActionSpec()`` is ours on the wire, key for key."""
    want = json.loads((FIXTURES / f"{name}.action-spec.json").read_text())["actionSpec"]
    d = Dispatcher(config_from_wire(golden(name)["config"]))
    reply = json.loads(d.handle_line(json.dumps({"type": "getActionSpec"}).encode()))
    assert reply["ok"], reply
    assert reply["result"] == want


def test_contact_patch_surface_codes_are_paddockjs_codes():
    """Our nine surfaces onto PaddockJS's six patch codes (track 0, kerb 1, any pit surface 2, grass 3,
    gravel 4, barrier 5) and its legal surfaces (track, kerb, pit), by surface name; and a car with its
    right wheels in the gravel reads code 4 / 5 and not legal there."""
    from paddock_ma.sim.core import layout as L
    from paddock_ma.sim.sensing.vectors import SURFACE_CODE
    from paddock_ma.sim.vehicle.surface_table import SURFACE_LEGAL

    want = {"track": 0, "kerb": 1, "grass": 3, "gravel": 4, "barrier": 5}
    for code, name in enumerate(L.SURFACE_NAMES):
        assert SURFACE_CODE[code] == (2 if name.startswith("pit-") else want[name]), name
        assert SURFACE_LEGAL[code] == (name in ("track", "kerb") or name.startswith("pit-")), name
    env = PaddockEnv({"drivers": 2, "controlled_drivers": ["car-00"], "track": "oval",
                      "observation": {"profile": "physical-driver"},
                      "scenario": {"placements": {"car-00": {"distance_meters": 300, "offset_meters": 10.5,
                                                             "speed_kph": 60}}}})
    o = env.reset(seed=1)["observation"]["car-00"]
    v = dict(zip([e["name"] for e in o["schema"]], o["vector"].tolist()))
    patches = o["object"]["contact_patches"]
    for n, p in enumerate(patches):
        assert v[f"contactPatches[{n}].surfaceCode"] == pytest.approx(p["surface_code"] / 5)
        assert v[f"contactPatches[{n}].onLegalSurface"] == float(p["on_legal_surface"])
        assert v[f"contactPatches[{n}].present"] == 1.0
    assert patches[1]["id"] == "front-right" and patches[1]["surface"] == "gravel" and v["contactPatches[1].surfaceCode"] == pytest.approx(0.8)
    assert v["contactPatches[1].onLegalSurface"] == 0.0 and v["self.onTrack"] == 0.0
