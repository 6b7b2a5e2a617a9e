"""Getting a track: the ways to obtain a ``TrackArrays`` (``track.geometry``), by name, file or seed.

* ``oval_track()``: a ~2.4 km stadium oval (built in code, identical to ``envs/tracks/oval.json``).
* ``load_track(name_or_path)``: a shipped track by name (``list_tracks()``), a JSON file path,
  ``"paddockjs:<seed>"`` (the track PaddockJS 2.0.0 generates for ``trackSeed: <seed>``, see
  ``paddockjs_track``) or ``"procedural:<seed>"`` (paddock_ma's own generator, another track).
* ``procedural_track(seed)``: paddock_ma's random, valid circuit, deterministic for its seed, cached.

The query kernels are imported from the modules that define them: ``track.geometry`` (``locate``,
``point_at``, ``edge_distances``, ``band_code``), ``track.point_surface`` (``surface_at``, ``surface_fast``,
``edge_distance_at``) and ``track.surface`` (``pit_point_at``, ``pit_surface``).

Track JSON format (``envs/tracks/*.json``), metres, frame x right / y down::

    {"name": "Oval",                      required, non-empty string
     "points": [[x, y], ...],             >= 8 control points of a closed spline, points[0] on the
                                          finish line, in the direction of travel
     "centerline": [[x, y], ...],         or instead: >= 16 points of a dense closed polyline
     "seed": 7,                           or instead: a procedural track of that seed
     "spacing": 2.0,                      optional, m between samples (0.5..5)
     "straight": [300, 300],              optional, m forced straight before/after the line
     "half_width": 7.5, "kerb_width": 1.5, "gravel_width": 12, "grass_width": 20,   optional, m
     "description": "..."}                optional

A ``centerline`` of exactly 3,600 points (3,601 with the first repeated) is an exported PaddockJS
centreline: its samples are used as they are and PaddockJS's track checks apply instead of the 20 m
corner-radius limit (``paddockjs_track.track_from_paddockjs_samples``). A PaddockJS track object (it has
``centerlineControls``, sim units) or a serialised PaddockJS track model (``samples`` of {x, y, ...} in
sim units) loads as PaddockJS builds it (``paddockjs_track``).
"""

import functools
import json
from pathlib import Path

import numpy as np

from .build import (
    GRASS_WIDTH, GRAVEL_WIDTH, HALF_WIDTH, KERB_WIDTH, TrackGeometryError, build_track, oval_points,
    procedural_centreline, finish_build,
)
from .geometry import TrackArrays
from .paddockjs_generator.jsmath import SAMPLE_COUNT as PADDOCKJS_SAMPLE_COUNT
from .paddockjs_generator.options import TrackGenerationError
from .paddockjs_generator.controls import default_controls
from .paddockjs_track import paddockjs_track, track_from_paddockjs_object, track_from_paddockjs_samples
from ...value_rules import check_integer, integer_problem, is_finite_number, number_problem

TRACKS_DIR = Path(__file__).resolve().parents[3] / "envs" / "tracks"

_KEYS = {"name", "points", "centerline", "seed", "spacing", "straight", "half_width", "kerb_width",
         "gravel_width", "grass_width", "description"}


class TrackFormatError(ValueError):
    """A track file that cannot be used; the message names the file, the field and the problem."""

    def __init__(self, file, field, problem):
        self.file = str(file)
        self.field = field
        self.problem = problem
        super().__init__(f"{file}: field '{field}': {problem}")


@functools.lru_cache(maxsize=4)
def oval_track() -> TrackArrays:
    """The stadium oval, ``envs/tracks/oval.json``: two 750 m straights joined by 150 m-radius
    semicircles (~2.45 km), driven clockwise on screen; built from ``oval_points()`` if the file is
    missing."""
    path = TRACKS_DIR / "oval.json"
    if path.is_file():
        return load_track(path)
    return build_track(oval_points(), straight=(250.0, 250.0))


@functools.lru_cache(maxsize=64)
def procedural_track(seed: int) -> TrackArrays:
    """A valid random circuit for an integer ``seed`` (deterministic; cached per seed)."""
    dense, _attempt = procedural_centreline(check_integer(seed, "procedural track seed", error=TypeError))
    return finish_build(dense, 2.0, HALF_WIDTH, KERB_WIDTH, GRAVEL_WIDTH, GRASS_WIDTH, True, 1.0)


def list_tracks() -> list:
    """Names of the shipped tracks (``envs/tracks/*.json`` stems), sorted."""
    return sorted(p.stem for p in TRACKS_DIR.glob("*.json"))


def load_track(name_or_path, generation: dict | None = None) -> TrackArrays:
    """A track by shipped name, JSON file path, ``"paddockjs:<seed>"`` or ``"procedural:<seed>"``.
    Cached per file content.

    generation: PaddockJS's ``trackGeneration`` object (a profile and overrides, camelCase, metres)
    for a ``"paddockjs:<seed>"`` track, as PaddockJS applies it to its generated track; other tracks
    ignore it (PaddockJS too: a given track is raced as it is).
    Raises TrackFormatError (a ValueError) for a missing or malformed file, or bad generation options.
    """
    spec = str(name_or_path)
    if spec.startswith("paddockjs:"):
        text = spec.split(":", 1)[1]
        try:
            seed = float(text) if any(c in text for c in ".eE") else int(text)
        except ValueError:
            raise TrackFormatError(spec, "seed", "a PaddockJS track needs a numeric seed, e.g. 'paddockjs:2026'") from None
        try:
            return paddockjs_track(seed, generation)
        except (TrackGeometryError, TrackGenerationError) as exc:
            raise TrackFormatError(spec, "seed", str(exc)) from None
    if spec.startswith("procedural:"):
        try:
            seed = int(spec.split(":", 1)[1])
        except ValueError:
            raise TrackFormatError(spec, "seed", "procedural track needs an integer seed") from None
        return procedural_track(seed)
    path = Path(spec)
    if not (spec.endswith(".json") or path.exists()):
        path = TRACKS_DIR / f"{spec}.json"
    if not path.is_file():
        raise TrackFormatError(path, "name", f"no such track file (shipped tracks: {', '.join(list_tracks())})")
    text = path.read_text(encoding="utf-8")
    return _load_text(str(path), text)


@functools.lru_cache(maxsize=16)
def _load_text(file: str, text: str) -> TrackArrays:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TrackFormatError(file, "<document>", f"invalid JSON: {exc}") from None
    return track_from_dict(doc, file)


def _number(file, field, value, lo, hi):
    problem = number_problem(value, lo, hi)
    if problem is not None:
        raise TrackFormatError(file, field, problem)
    return float(value)


def _xy_list(file, field, value, minimum):
    if not isinstance(value, list):
        raise TrackFormatError(file, field, f"must be a list of [x, y] pairs, got {type(value).__name__}")
    if len(value) < minimum:
        raise TrackFormatError(file, field, f"needs at least {minimum} [x, y] pairs, got {len(value)}")
    for i, p in enumerate(value):
        if not isinstance(p, list) or len(p) != 2:
            raise TrackFormatError(file, f"{field}[{i}]", f"must be an [x, y] pair, got {p!r}")
        for q in p:
            if not is_finite_number(q):
                raise TrackFormatError(file, f"{field}[{i}]", f"coordinates must be finite numbers, got {p!r}")
    arr = np.array(value, dtype=np.float64)
    if len(arr) > minimum and np.array_equal(arr[0], arr[-1]):
        arr = arr[:-1]                     # a closed list repeating its first point (PaddockJS's samples do)
    seg = np.hypot(*np.diff(np.vstack([arr, arr[:1]]), axis=0).T)
    if np.any(seg < 1e-6):
        raise TrackFormatError(file, field, f"point {int(np.argmin(seg))} repeats its successor")
    return arr


def track_from_dict(doc, file="<dict>") -> TrackArrays:
    """Build a track from a decoded track document (see the module docstring for the format)."""
    if not isinstance(doc, dict):
        raise TrackFormatError(file, "<document>", "must be a JSON object")
    if "centerlineControls" in doc or isinstance(doc.get("samples"), list):
        return _paddockjs_document(doc, file)
    unknown = sorted(set(doc) - _KEYS)
    if unknown:
        raise TrackFormatError(file, unknown[0], f"unknown field (allowed: {', '.join(sorted(_KEYS))})")
    name = doc.get("name")
    if not isinstance(name, str) or not name.strip():
        raise TrackFormatError(file, "name", "required non-empty string" if name is None else f"must be a non-empty string, got {name!r}")
    sources = [k for k in ("points", "centerline", "seed") if k in doc]
    if len(sources) != 1:
        raise TrackFormatError(file, "points", "exactly one of 'points', 'centerline' or 'seed' is required"
                               + (f", got {sources}" if sources else ""))
    if "seed" in doc:
        seed = doc["seed"]
        problem = integer_problem(seed)
        if problem is not None:
            raise TrackFormatError(file, "seed", problem)
        return procedural_track(seed)
    kw = {}
    if "spacing" in doc:
        kw["spacing"] = _number(file, "spacing", doc["spacing"], 0.5, 5.0)
    for key in ("half_width", "kerb_width", "gravel_width", "grass_width"):
        if key in doc:
            kw[key] = _number(file, key, doc[key], 0.5 if key == "half_width" else 0.0, 100.0)
    if "straight" in doc:
        st = doc["straight"]
        if not isinstance(st, list) or len(st) != 2:
            raise TrackFormatError(file, "straight", f"must be [before_m, after_m], got {st!r}")
        kw["straight"] = (_number(file, "straight[0]", st[0], 0.0, 2000.0), _number(file, "straight[1]", st[1], 0.0, 2000.0))
    field = "points" if "points" in doc else "centerline"
    pts = _xy_list(file, field, doc[field], 8 if field == "points" else 16)
    if field == "centerline" and len(pts) == PADDOCKJS_SAMPLE_COUNT:
        try:
            return track_from_paddockjs_samples(pts)
        except ValueError as exc:
            raise TrackFormatError(file, field, str(exc)) from None
    try:
        if field == "points":
            return build_track(pts, **kw)
        return build_track(centreline=pts, **kw)
    except TrackGeometryError as exc:
        raise TrackFormatError(file, field, str(exc)) from None


# Keys of a PaddockJS track object (trackConstants TRACK, createProceduralTrack's definition) and of its
# built model (buildTrackModel); the ones that shape the track (and its DRS zones) are read, the rest are
# PaddockJS's own bookkeeping (sectors, its query index...) and change nothing here.
_PADDOCKJS_TRACK_KEYS = {
    "name", "width", "kerbWidth", "gravelWidth", "runoffWidth", "barrierWidth", "sampleCount", "drsZones",
    "seed", "curveInterpolation", "centerlineControls", "generationOptions", "pitLane", "length", "samples",
    "sectors", "queryIndex", "timingLines",
}


def paddockjs_track_document(doc, file: str = "<track object>") -> TrackArrays:
    """A PaddockJS track object or serialised track model given as a JSON object (a config's ``track``),
    built as a file holding it is. An object with neither ``centerlineControls`` nor ``samples`` is
    PaddockJS's default circuit (its ``TRACK``: buildTrackModel falls back to its default controls) with
    the object's widths. Cached per content; TrackFormatError names the field of a malformed object."""
    if not isinstance(doc, dict):
        raise TrackFormatError(file, "<document>", "must be a JSON object (a PaddockJS track object)")
    return _paddockjs_document_cached(file, json.dumps(doc, sort_keys=True))


@functools.lru_cache(maxsize=8)
def _paddockjs_document_cached(file: str, text: str) -> TrackArrays:
    return _paddockjs_document(json.loads(text), file)


def _paddockjs_document(doc, file) -> TrackArrays:
    """A PaddockJS track object (``centerlineControls``, or none: its default circuit) or serialised
    model (``samples``, sim units)."""
    unknown = sorted(set(doc) - _PADDOCKJS_TRACK_KEYS)
    if unknown:
        raise TrackFormatError(file, unknown[0], "unknown field of a PaddockJS track object (known: "
                               + ", ".join(sorted(_PADDOCKJS_TRACK_KEYS)) + ")")
    try:
        if "centerlineControls" in doc:
            return track_from_paddockjs_object(doc)
        if "samples" not in doc:
            controls = [{"x": x, "y": y} for x, y in default_controls()]
            return track_from_paddockjs_object(dict(doc, centerlineControls=controls))
        samples = doc["samples"]
        pts = []
        for i, p in enumerate(samples):
            if not (isinstance(p, dict) and all(is_finite_number(p.get(k)) for k in ("x", "y"))):
                raise TrackFormatError(file, f"samples[{i}]", f"must be an {{x, y}} sample of finite numbers, got {p!r}")
            pts.append((p["x"] / 12.0, p["y"] / 12.0))
        if len(pts) < 16:
            raise TrackFormatError(file, "samples", f"needs at least 16 samples, got {len(pts)}")
        # a serialised model without a pit lane has ``pitLane: null`` (buildTrackModel's model)
        pit = doc.get("pitLane", {}) is not None and not (isinstance(doc.get("pitLane"), dict)
                                                          and doc["pitLane"].get("enabled") is False)
        return track_from_paddockjs_samples(pts, pit_lane=pit, drs=doc.get("drsZones"))
    except (TrackGeometryError, TrackGenerationError) as exc:
        raise TrackFormatError(file, "centerlineControls" if "centerlineControls" in doc else "samples",
                               str(exc)) from None
