"""Tracks without a pit lane: PaddockJS's ``trackGeneration`` training profiles.

Fixtures ``tests/fixtures/paddockjs-2.0.0/tracks/<profile>-seed-<N>.json`` were recorded from PaddockJS
2.0.0 itself (``TRACK_GENERATION='{"profile": "<profile>"}' node tools/paddockjs/record_tracks.mjs
<checkout> <dir> 4101 2601``): the centreline PaddockJS builds for ``trackSeed: N`` with that profile,
in metres rounded to 0.1 mm, and its pit lane (null: the training profiles have none).
"""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from paddock_ma.sim.core import layout as L
from paddock_ma.sim.race.pit_service import pit_route_tick, try_start_pit
from paddock_ma.sim.sensing.geometry import classify, sensor_geometry
from paddock_ma.sim.track.load import load_track
from paddock_ma.sim.track.paddockjs_track import paddockjs_track, paddockjs_track_info
from paddock_ma.sim.track.pit_lane import track_has_pit_lane
from paddock_ma.sim.track.point_surface import surface_at
from paddock_ma.sim.track.surface import pit_bbox, pit_surface
from tests.helpers.kinematic import kinematic_tick, pit_world, place_before_pit

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "paddockjs-2.0.0" / "tracks"
RECORDS = sorted(FIXTURES.glob("training-*-seed-*.json"))
ROUNDING = 1e-4          # m: the fixtures' coordinates are rounded to 0.1 mm
SHORT = {"profile": "training-short"}
PIT_CODES = (L.SURF_PIT_ENTRY, L.SURF_PIT_LANE, L.SURF_PIT_EXIT, L.SURF_PIT_BOX)


@pytest.fixture(scope="module")
def no_pit():
    return paddockjs_track(4101, SHORT)


@pytest.fixture(scope="module")
def with_pit():
    return paddockjs_track(4101)          # the same seed, the race profile: a pit lane


def test_fixtures_cover_the_three_training_profiles():
    assert {json.loads(p.read_text())["trackGeneration"]["profile"] for p in RECORDS} == {
        "training-short", "training-medium", "training-technical"}


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: p.stem)
def test_training_profile_centreline_equals_paddockjs(path):
    rec = json.loads(path.read_text())
    info = paddockjs_track_info(rec["trackSeed"], rec["trackGeneration"])
    assert (info.name, info.seed) == (rec["name"], rec["seed"])
    centre = np.array(rec["centerline"])
    assert centre.shape == (3601, 2)
    assert np.abs(np.column_stack([info.x, info.y]) - centre).max() <= ROUNDING
    assert info.length == pytest.approx(rec["length"], abs=ROUNDING)
    assert rec["pitLane"] is None and info.pit_lane is None
    track = paddockjs_track(rec["trackSeed"], rec["trackGeneration"])
    assert not track_has_pit_lane(track)
    assert np.abs(track.cx - centre[:, 0]).max() <= ROUNDING      # raced on PaddockJS's samples as they are


def test_a_no_pit_track_has_empty_pit_geometry(no_pit, with_pit):
    assert track_has_pit_lane(with_pit)
    for name in ("px", "py", "ps", "ph", "box_x", "box_y", "box_path_s"):
        assert getattr(no_pit, name).shape == (0,), name
    assert no_pit.pit_length == 0.0 and no_pit.pit_width == 0.0
    x0, y0, x1, y1 = pit_bbox(no_pit.pit_geom)
    assert not (x1 > x0 or y1 > y0)                     # empty: no kernel tests a pit surface


def test_the_raster_has_no_pit_surface(no_pit, with_pit):
    assert np.isin(with_pit.grid_surf, PIT_CODES).any()              # the race profile's pit is drawn
    assert not np.isin(no_pit.grid_surf, PIT_CODES).any()
    assert {L.SURF_TRACK, L.SURF_KERB, L.SURF_GRAVEL, L.SURF_GRASS, L.SURF_BARRIER} <= set(np.unique(no_pit.grid_surf))


def test_exact_surfaces_beside_the_start_straight_are_the_bands(no_pit):
    # where a pit lane would be: either side of the start straight, 10-60 m out, 300 m either way;
    # the exact query, the rays' classification (sensing) and the pit test all see the bands
    geo = sensor_geometry(no_pit)
    h = float(no_pit.ch[0])
    nx, ny = -math.sin(h), math.cos(h)
    for along in np.linspace(-300.0, 300.0, 25):
        for off in (-60.0, -45.0, -30.0, -12.0, 12.0, 30.0, 45.0, 60.0):
            x = no_pit.cx[0] + along * math.cos(h) + off * nx
            y = no_pit.cy[0] + along * math.sin(h) + off * ny
            assert pit_surface(no_pit, x, y) == -1
            code, _offset, _seg = surface_at(no_pit, x, y, -1)
            assert code not in PIT_CODES
            assert classify(no_pit, geo, x, y, -1)[0] == code


def _entries_after(track, ticks=600):
    """One car with pit stops on and a committed intent, 100 m before the (would-be) pit entry on lap
    2, driven kinematically: its pit entries and status afterwards."""
    s = pit_world(1)
    place_before_pit(track, s, 0, 100.0, box=0 if track_has_pit_lane(track) else -1)
    for _ in range(ticks):
        kinematic_tick(track, s)
    return int(s["ci"][0, 0, L.I_CNT_PIT_ENTRY]), int(s["ci"][0, 0, L.I_PIT_STATUS])


def test_a_car_cannot_enter_a_pit_without_a_pit_lane(no_pit, with_pit):
    entries, _status = _entries_after(with_pit)
    assert entries == 1                              # the same setup stops where there is a pit lane
    entries, status = _entries_after(no_pit)
    assert entries == 0 and status == L.PIT_PENDING
    s = pit_world(1)
    place_before_pit(no_pit, s, 0, 0.0, box=-1)
    assert not try_start_pit(no_pit, s["cf"], s["ci"], s["fl"], s["wi"], s["ru"], 0, 0, 1)


def test_a_route_found_active_without_a_pit_lane_is_cancelled(no_pit):
    s = pit_world(1)
    place_before_pit(no_pit, s, 0, 50.0, box=-1)
    s["ci"][0, 0, L.I_PIT_STATUS] = L.PIT_ENTERING
    s["ci"][0, 0, L.I_IN_PIT_LANE] = 1
    before = s["cf"][0, 0, [L.F_X, L.F_Y]].copy()
    pit_route_tick(no_pit, s["cf"], s["ci"], s["cp"], s["fl"], s["wf"], s["wi"], s["ru"], 0, 0, 1, L.DT)
    assert s["ci"][0, 0, L.I_PIT_STATUS] == L.PIT_PENDING and s["ci"][0, 0, L.I_IN_PIT_LANE] == 0
    np.testing.assert_array_equal(s["cf"][0, 0, [L.F_X, L.F_Y]], before)


def test_load_track_applies_track_generation_to_paddockjs_seeds_only():
    assert not track_has_pit_lane(load_track("paddockjs:4101", SHORT))
    assert track_has_pit_lane(load_track("paddockjs:4101"))
    assert track_has_pit_lane(load_track("oval", SHORT))          # a named track is raced as it is
