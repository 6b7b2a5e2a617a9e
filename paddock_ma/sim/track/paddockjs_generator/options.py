"""``trackGeneration`` options: PaddockJS's profiles and its resolution of a user's options.

``resolve_generation_options(options)`` -> the resolved dict in sim units (length, startStraight,
shape, validation, attempts, pitLane), raising ``TrackGenerationError`` with PaddockJS's message."""

from typing import Optional

from .jsmath import U
from ....value_rules import is_finite_number

# trackGeneration profiles (trackGenerationOptions.js), in PaddockJS's option names (metres)
PROFILES = {
    "race": {},
    "training-short": {
        "length": {"minMeters": 900, "maxMeters": 1800},
        "startStraight": {"gridMeters": 0, "exitMeters": 80, "blendMeters": 80, "lockExtraMeters": 0},
        "pitLane": {"enabled": False},
        "shape": {"scale": 0.2, "cornerDensity": 1.3, "variation": 0.22},
        "validation": {"minClearanceMultiplier": 1, "minNonAdjacentArcMeters": 160, "maxLocalTurnRadians": 1.85},
        "attempts": {"primary": 80, "fallback": 200},
    },
    "training-medium": {
        "length": {"minMeters": 1600, "maxMeters": 3000},
        "startStraight": {"gridMeters": 80, "exitMeters": 140, "blendMeters": 120, "lockExtraMeters": 0},
        "pitLane": {"enabled": False},
        "shape": {"scale": 0.38, "cornerDensity": 1.18, "variation": 0.24},
        "validation": {"minClearanceMultiplier": 1.15, "minNonAdjacentArcMeters": 260, "maxLocalTurnRadians": 1.7},
        "attempts": {"primary": 80, "fallback": 200},
    },
    "training-technical": {
        "length": {"minMeters": 800, "maxMeters": 1700},
        "startStraight": {"gridMeters": 0, "exitMeters": 60, "blendMeters": 70, "lockExtraMeters": 0},
        "pitLane": {"enabled": False},
        "shape": {"scale": 0.18, "cornerDensity": 1.55, "variation": 0.2},
        "validation": {"minClearanceMultiplier": 0.9, "minNonAdjacentArcMeters": 140, "maxLocalTurnRadians": 2.05},
        "attempts": {"primary": 100, "fallback": 240},
    },
}

RACE_DEFAULTS = {
    "length": {"min": 3600 * U, "max": 9000 * U},
    "startStraight": {"grid": 496 * U, "exit": 500 * U, "blend": 320 * U, "lockExtra": 43 * U},
    "shape": {"scale": 1.0, "cornerDensity": 1.0, "variation": 0.28},
    "validation": {"minClearanceMultiplier": 1.55, "minShapeVariation": 0.28,
                   "minNonAdjacentArcDistance": 700 * U, "maxLocalTurnRadians": 1.42,
                   "maxSampleHeadingDeltaRadians": 0.08},
    # PaddockJS's defaults: primary = GENERATED_FALLBACK_ATTEMPTS (8), fallback = GENERATED_TRACK_ATTEMPTS (24)
    "attempts": {"primary": 8, "fallback": 24},
}

class TrackGenerationError(ValueError):
    """A ``trackGeneration`` option PaddockJS rejects; the message is PaddockJS's."""

def _deep_merge(base: dict, override: dict) -> dict:
    result = dict(base)
    for key, value in (override or {}).items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = _deep_merge(result[key], value)
        else:
            result[key] = value          # JSON null included (JavaScript skips only undefined)
    return result


def _first_set(*values):
    """JavaScript's ``a ?? b``."""
    for value in values:
        if value is not None:
            return value
    return None


def _expand_legacy(options: dict) -> dict:
    nxt = dict(options)
    if options.get("minLengthMeters") is not None or options.get("maxLengthMeters") is not None:
        length = dict(options.get("length") or {})
        if options.get("minLengthMeters") is not None:
            length["minMeters"] = options["minLengthMeters"]
        if options.get("maxLengthMeters") is not None:
            length["maxMeters"] = options["maxLengthMeters"]
        nxt["length"] = length
    if options.get("startStraightMeters") is not None:
        nxt["startStraight"] = dict(options.get("startStraight") or {},
                                    gridMeters=options["startStraightMeters"],
                                    exitMeters=options["startStraightMeters"])
    if options.get("includePitLane") is not None:
        nxt["pitLane"] = dict(options.get("pitLane") or {}, enabled=bool(options["includePitLane"]))
    return nxt


def _number(value, fallback, label, *, positive, integer=False, metres=False):
    if value is None:
        return fallback
    ok = is_finite_number(value)
    if integer:
        ok = ok and float(value).is_integer() and value > 0
        if not ok:
            raise TrackGenerationError(f"Procedural track {label} must be a positive integer.")
        return int(value)
    ok = ok and (value > 0 if positive else value >= 0)
    if not ok:
        kind = "a positive number" if positive else "a non-negative number"
        raise TrackGenerationError(f"Procedural track {label} must be {kind}.")
    return float(value) * U if metres else float(value)


def resolve_generation_options(options: Optional[dict] = None) -> dict:
    """PaddockJS's resolveProceduralTrackOptions: a ``trackGeneration`` object (profile name plus
    overrides in metres, camelCase) -> the resolved options in sim units. Raises TrackGenerationError
    with PaddockJS's message for an unknown profile or a bad number."""
    options = dict(options or {})
    profile_name = options.get("profile", "race") if options.get("profile") is not None else "race"
    if not isinstance(profile_name, str) or profile_name not in PROFILES:
        raise TrackGenerationError(f"Unsupported procedural track profile: {profile_name}")
    merged = _deep_merge(_deep_merge({"profile": profile_name}, _expand_legacy(PROFILES[profile_name])),
                         _expand_legacy(options))
    g = lambda section: merged.get(section) if isinstance(merged.get(section), dict) else {}
    d = RACE_DEFAULTS
    resolved = {
        "profile": profile_name,
        "length": {
            "min": _number(g("length").get("minMeters"), d["length"]["min"], "length.minMeters", positive=True, metres=True),
            "max": _number(g("length").get("maxMeters"), d["length"]["max"], "length.maxMeters", positive=True, metres=True),
        },
        "startStraight": {
            key: _number(g("startStraight").get(f"{key}Meters"), d["startStraight"][key],
                         f"startStraight.{key}Meters", positive=False, metres=True)
            for key in ("grid", "exit", "blend", "lockExtra")
        },
        "pitLane": {"enabled": g("pitLane").get("enabled") is not False},
        "shape": {
            "scale": _number(g("shape").get("scale"), d["shape"]["scale"], "shape.scale", positive=True),
            "cornerDensity": _number(g("shape").get("cornerDensity"), d["shape"]["cornerDensity"],
                                     "shape.cornerDensity", positive=True),
            "variation": _number(g("shape").get("variation"), d["shape"]["variation"], "shape.variation",
                                 positive=False),
        },
        "validation": {
            "minClearanceMultiplier": _number(g("validation").get("minClearanceMultiplier"),
                                              d["validation"]["minClearanceMultiplier"],
                                              "validation.minClearanceMultiplier", positive=False),
            "minShapeVariation": _number(_first_set(g("validation").get("minShapeVariation"),
                                                    g("shape").get("variation")),
                                         d["validation"]["minShapeVariation"], "validation.minShapeVariation",
                                         positive=False),
            "minNonAdjacentArcDistance": _number(g("validation").get("minNonAdjacentArcMeters"),
                                                 d["validation"]["minNonAdjacentArcDistance"],
                                                 "validation.minNonAdjacentArcMeters", positive=False, metres=True),
            "maxLocalTurnRadians": _number(g("validation").get("maxLocalTurnRadians"),
                                           d["validation"]["maxLocalTurnRadians"],
                                           "validation.maxLocalTurnRadians", positive=True),
            "maxSampleHeadingDeltaRadians": _number(g("validation").get("maxSampleHeadingDeltaRadians"),
                                                    d["validation"]["maxSampleHeadingDeltaRadians"],
                                                    "validation.maxSampleHeadingDeltaRadians", positive=True),
        },
        "attempts": {
            "primary": _number(g("attempts").get("primary"), d["attempts"]["primary"], "attempts.primary",
                               positive=True, integer=True),
            "fallback": _number(g("attempts").get("fallback"), d["attempts"]["fallback"], "attempts.fallback",
                                positive=True, integer=True),
        },
    }
    if resolved["length"]["min"] > resolved["length"]["max"]:
        raise TrackGenerationError(
            "Procedural track length.minMeters must be less than or equal to length.maxMeters.")
    return resolved
