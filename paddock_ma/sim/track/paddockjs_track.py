"""PaddockJS's tracks as TrackArrays: ``trackSeed`` tracks, PaddockJS track objects and exported samples.

* ``paddockjs_track(seed, generation)``: the track PaddockJS 2.0.0 builds for ``trackSeed: seed`` (and
  ``trackGeneration``), cached; ``load_track("paddockjs:<seed>")`` names it.
* ``track_from_paddockjs_object(doc)``: a PaddockJS track object (``centerlineControls`` in sim units,
  ``curveInterpolation``, widths...), built as PaddockJS's buildTrackModel builds it.
* ``track_from_paddockjs_samples(points)``: an exported PaddockJS centreline (its 3,600 samples, m).

The centreline is PaddockJS's samples as they are (no resampling), so every query runs on PaddockJS's
polyline. PaddockJS's validation applies, not ours: a generated track passed PaddockJS's checks; an
exported one must pass PaddockJS's turn-sharpness and self-intersection checks; both must keep their
parts as far apart as the track queries need (``build.query_separation``, ~22-30 m; PaddockJS's
training profiles put parts ~20-80 m apart, so runoff areas may overlap: the nearest part decides). The pit lane is
PaddockJS's: the fast lane, its access roads (the pit path's connectors) and the ten teams' service
areas (our service boxes) where PaddockJS puts them. A track PaddockJS builds without one (the
``trackGeneration`` training profiles, a track object with ``pitLane.enabled: false``) has none here
either: empty pit arrays (``pit_lane.no_pit_fields``).
"""

import functools
import json
import math

import numpy as np

from .paddockjs_generator.centerline import (
    build_samples, drs_zones, normalize_drs_zone, samples_from_points, self_intersects, sharpness_problem,
)
from .paddockjs_generator.generator import PaddockJSTrack, generate_track
from .paddockjs_generator.jsmath import SAMPLE_COUNT, U, normalize_seed
from .paddockjs_generator.options import RACE_DEFAULTS
from .paddockjs_generator.pit_lane import PitLane
from .paddockjs_generator.pit_lane import pit_lane as place_pit_lane
from .pit_lane import no_pit_fields, pit_geometry
from .build import GRASS_WIDTH, GRAVEL_WIDTH, HALF_WIDTH, KERB_WIDTH, TrackGeometryError, build_from_samples
from .geometry import TrackArrays
from .index import read_only
from .surface import PIT_CONN_STEPS
from ..core.layout import MAX_DRS_ZONES
from ...value_rules import integer_problem, is_finite_number

PADDOCKJS_SAMPLES = SAMPLE_COUNT
LANE_POINT_STEP = 8.0      # m between fast-lane points of the pit path


def _bezier_headings(controls: np.ndarray, steps: int) -> np.ndarray:
    """Tangent headings (rad, float64[steps+1]) of the cubic Bezier with control points float64[4, 2]."""
    p0, p1, p2, p3 = controls
    t = np.linspace(0.0, 1.0, steps + 1)[:, None]
    der = 3 * ((1 - t) ** 2) * (p1 - p0) + 6 * (1 - t) * t * (p2 - p1) + 3 * t * t * (p3 - p2)
    return np.arctan2(der[:, 1], der[:, 0])


def pit_fields(pit: PitLane, length: float) -> dict:
    """The pit fields of TrackArrays (see ``pit_lane.build_pit``) for PaddockJS's pit lane: the path
    runs along the entry access road, the fast lane and the exit access road; the service boxes are
    PaddockJS's ten service areas; ``pit_geom`` is its whole complex (``pit_lane.pit_geometry``: the
    working lane, service and queue areas and its twenty garages where PaddockJS puts them)."""
    assert pit.entry_road.shape[0] == PIT_CONN_STEPS + 1 and pit.exit_road.shape[0] == PIT_CONN_STEPS + 1
    a = np.asarray(pit.lane_start)
    b = np.asarray(pit.lane_end)
    lane_heading = math.atan2(b[1] - a[1], b[0] - a[0])
    n_mid = max(1, int(round(float(np.hypot(*(b - a))) / LANE_POINT_STEP)))
    mids = a[None, :] + np.linspace(0.0, 1.0, n_mid + 1)[1:-1, None] * (b - a)[None, :]
    path = np.concatenate([pit.entry_road, mids, pit.exit_road], axis=0)
    heading = np.concatenate([_bezier_headings(pit.entry_controls, PIT_CONN_STEPS), np.full(len(mids), lane_heading),
                              _bezier_headings(pit.exit_controls, PIT_CONN_STEPS)])
    heading[PIT_CONN_STEPS] = heading[len(path) - 1 - PIT_CONN_STEPS] = lane_heading
    ps = np.concatenate([[0.0], np.cumsum(np.hypot(np.diff(path[:, 0]), np.diff(path[:, 1])))])
    lane_start = float(ps[PIT_CONN_STEPS])
    service_u = np.asarray(pit.service_lane_distance, np.float64)
    return dict(
        px=np.ascontiguousarray(path[:, 0]), py=np.ascontiguousarray(path[:, 1]), ps=ps, ph=heading,
        pit_length=float(ps[-1]), pit_width=float(pit.width),
        pit_entry_s=float(pit.entry_track_distance), pit_exit_s=float(pit.exit_track_distance),
        pit_lane_start=lane_start, pit_lane_end=float(ps[len(ps) - 1 - PIT_CONN_STEPS]),
        pit_side=float(pit.side),
        box_x=np.ascontiguousarray(pit.service_areas[:, 0]), box_y=np.ascontiguousarray(pit.service_areas[:, 1]),
        box_path_s=lane_start + service_u,
        pit_geom=pit_geometry(path[:, 0], path[:, 1], float(pit.side), float(pit.width), pit.service_areas[:, 0],
                              pit.service_areas[:, 1], service_u,
                              (pit.entry_from_start, pit.layout_entry, pit.layout_exit, pit.exit_from_start),
                              length, normal=pit.service_normal, garages=pit.boxes,
                              garage_lane_u=pit.box_lane_distance),
    )


def _arrays(x, y, distance, pit: PitLane | None, widths, drs=()) -> TrackArrays:
    """The TrackArrays on PaddockJS's samples (m) with its pit lane ``pit`` (None: no pit lane) and DRS
    zones ``drs`` (((start, end) m, ...), ``normalize_drs_zone``'s)."""
    if len(drs) > MAX_DRS_ZONES:
        raise TrackGeometryError(f"'drsZones': {len(drs)} zones, at most {MAX_DRS_ZONES} are simulated")
    try:
        tr = build_from_samples(x, y, distance, *widths, validate=True, min_radius=None, runoff_apart=False,
                                pit=pit_fields(pit, float(distance[-1])) if pit is not None
                                else no_pit_fields())
    except TrackGeometryError:
        raise
    except ValueError as exc:
        raise TrackGeometryError(str(exc)) from None
    if not drs:
        return tr
    return read_only(tr._replace(drs_start=np.array([a for a, _ in drs], np.float64),
                                 drs_end=np.array([b for _, b in drs], np.float64)))


# the DRS zones of the PaddockJS track objects built here, by the object's canonical JSON (the views' zone ids)
_OBJECT_ZONES: dict = {}


def _zone_list(doc: dict, field: str = "drsZones") -> list | None:
    """A track object's own ``drsZones`` checked (None when it gives none: PaddockJS derives them)."""
    zones = doc.get(field)
    if zones is None:
        return None
    if not isinstance(zones, list):
        raise TrackGeometryError(f"'{field}' must be a list of DRS zones, got {zones!r}")
    for k, z in enumerate(zones):
        ok = isinstance(z, dict) and ((is_finite_number(z.get("start")) and is_finite_number(z.get("end")))
                                      or (is_finite_number(z.get("startRatio"))
                                          and is_finite_number(z.get("endRatio"))))
        if not ok:
            raise TrackGeometryError(f"'{field}[{k}]' must give start and end (sim units) or startRatio and "
                                     f"endRatio, got {z!r}")
    return [dict(z, id=str(z.get("id", f"drs-{k + 1}"))) for k, z in enumerate(zones)]


def object_drs_zones(doc: dict) -> tuple:
    """The DRS zones (PaddockJS's zone dicts: id, startRatio/endRatio or start/end) of the track built from
    the PaddockJS track object or model ``doc`` (``sim.track.load.paddockjs_track_document``), in the
    order of the TrackArrays' ``drs_start``; () when it has none. Builds the track if it was not built."""
    own = _zone_list(doc)
    if own is not None:
        return tuple(own)
    if "centerlineControls" not in doc and "samples" not in doc:
        from .paddockjs_generator.controls import default_controls
        doc = dict(doc, centerlineControls=[{"x": x, "y": y} for x, y in default_controls()])
    key = json.dumps(doc, sort_keys=True)
    if key not in _OBJECT_ZONES and "centerlineControls" in doc:
        track_from_paddockjs_object(doc)
    return _OBJECT_ZONES.get(key, ())


def _remember_zones(doc: dict, zones) -> None:
    while len(_OBJECT_ZONES) >= 64:
        del _OBJECT_ZONES[next(iter(_OBJECT_ZONES))]
    _OBJECT_ZONES[json.dumps(doc, sort_keys=True)] = tuple(zones)


@functools.lru_cache(maxsize=32)
def _generated(seed: int, generation_json: str) -> tuple:
    track = generate_track(seed, json.loads(generation_json))
    widths = (HALF_WIDTH, KERB_WIDTH, GRAVEL_WIDTH, GRASS_WIDTH)
    return track, _arrays(track.x, track.y, track.distance, track.pit_lane, widths, track.drs_metres)


def paddockjs_track(seed, generation: dict | None = None) -> TrackArrays:
    """The TrackArrays of PaddockJS 2.0.0's track for ``trackSeed: seed`` (a number, or a string PaddockJS
    hashes) and ``trackGeneration: generation`` (PaddockJS's profile/override object; its training
    profiles have no pit lane). Cached."""
    return _generated(normalize_seed(seed), json.dumps(generation or {}, sort_keys=True))[1]


def paddockjs_track_info(seed, generation: dict | None = None) -> PaddockJSTrack:
    """PaddockJS's own description of that track (name, the seed that passed validation, samples in
    metres, DRS zones, pit lane)."""
    return _generated(normalize_seed(seed), json.dumps(generation or {}, sort_keys=True))[0]


def _widths_from_object(doc: dict) -> tuple:
    """(half width, kerb, gravel, grass) in metres from a PaddockJS track object's sim-unit widths."""
    def width(key, default_m):
        value = doc.get(key)
        if value is None:
            return default_m
        if not is_finite_number(value) or value < 0:
            raise TrackGeometryError(f"'{key}' must be a non-negative number of sim units (12 per metre), got {value!r}")
        return float(value) / U
    total = width("width", 2 * HALF_WIDTH)
    if total <= 0:
        raise TrackGeometryError(f"'width' must be positive, got {doc.get('width')!r}")
    return (total / 2, width("kerbWidth", KERB_WIDTH), width("gravelWidth", GRAVEL_WIDTH),
            width("runoffWidth", GRASS_WIDTH))


def track_from_paddockjs_object(doc: dict) -> TrackArrays:
    """A PaddockJS track object (what ``createProceduralTrack`` returns, or one written by hand):
    ``centerlineControls`` [{x, y}, ...] in sim units, optional ``curveInterpolation`` ('uniform',
    PaddockJS's default, or 'centripetal'), ``sampleCount`` (3600), ``generationOptions.startStraight``,
    ``width``/``kerbWidth``/``gravelWidth``/``runoffWidth`` (sim units). Built as buildTrackModel
    builds it; ``pitLane.enabled: false`` (or ``generationOptions.pitLane.enabled: false``) builds it
    without a pit lane, as PaddockJS does. Raises TrackGeometryError naming the field for a malformed
    object."""
    controls = doc.get("centerlineControls")
    if not isinstance(controls, list) or len(controls) < 4:
        raise TrackGeometryError("'centerlineControls' must be a list of at least 4 {x, y} points (sim units)")
    pts = []
    for i, p in enumerate(controls):
        ok = isinstance(p, dict) and all(is_finite_number(p.get(k)) for k in ("x", "y"))
        if not ok:
            raise TrackGeometryError(f"'centerlineControls[{i}]' must be an {{x, y}} point of finite numbers, got {p!r}")
        pts.append((float(p["x"]), float(p["y"])))
    interpolation = doc.get("curveInterpolation", "uniform")
    if interpolation not in ("uniform", "centripetal"):
        raise TrackGeometryError(f"'curveInterpolation' must be 'uniform' or 'centripetal', got {interpolation!r}")
    count = doc.get("sampleCount", PADDOCKJS_SAMPLES)
    problem = integer_problem(count, 64, 100001)
    if problem is not None:
        raise TrackGeometryError(f"'sampleCount': {problem}")
    options = doc.get("generationOptions") or {}
    straight = dict(RACE_DEFAULTS["startStraight"])
    given = options.get("startStraight") if isinstance(options, dict) else None
    if isinstance(given, dict):
        straight.update({k: float(v) for k, v in given.items() if k in straight and isinstance(v, (int, float))})
    samples, total = build_samples(pts, straight, centripetal=interpolation == "centripetal", sample_count=count)
    widths = _widths_from_object(doc)
    pit_enabled = not ((isinstance(doc.get("pitLane"), dict) and doc["pitLane"].get("enabled") is False)
                       or (isinstance(options, dict) and isinstance(options.get("pitLane"), dict)
                           and options["pitLane"].get("enabled") is False))
    pit = place_pit_lane(samples, total, widths[0] * 2 * U, widths[1] * U) if pit_enabled else None
    # buildTrackModel: the object's own zones, else the ones it derives from the samples
    zones = _zone_list(doc)
    if zones is None:
        zones = drs_zones(samples, total)
    _remember_zones(doc, zones)
    return _arrays(samples.x / U, samples.y / U, samples.distance / U, pit, widths,
                   tuple(normalize_drs_zone(z, total) for z in zones))


def track_from_paddockjs_samples(points, pit_lane: bool = True, drs=None) -> TrackArrays:
    """An exported PaddockJS centreline: its samples (float[3600 or 3601, 2], m; a repeated closing
    sample is dropped), used as they are. PaddockJS's generated-track checks apply (heading change
    between samples <= 0.08 rad, <= 1.42 rad over 30-36 samples, no self-intersection); the pit lane
    is placed by PaddockJS's rule, or there is none (``pit_lane`` False). ``drs``: a serialised model's
    ``drsZones`` (none when None: an exported centreline has no zones)."""
    pts = np.asarray(points, np.float64)
    if np.allclose(pts[0], pts[-1]):
        pts = pts[:-1]
    xs = (pts[:, 0] * U).tolist()
    ys = (pts[:, 1] * U).tolist()
    samples, total = samples_from_points(xs, ys)
    problem = sharpness_problem(samples, RACE_DEFAULTS["validation"])
    if problem is None and self_intersects(samples):
        problem = "the centreline crosses itself"
    if problem:
        raise TrackGeometryError(f"fails PaddockJS's track checks: {problem}")
    pit = place_pit_lane(samples, total) if pit_lane else None
    zones = _zone_list({"drsZones": drs}) or ()
    return _arrays(samples.x / U, samples.y / U, samples.distance / U, pit,
                   (HALF_WIDTH, KERB_WIDTH, GRAVEL_WIDTH, GRASS_WIDTH),
                   tuple(normalize_drs_zone(z, total) for z in zones))
