"""``generate_track(seed, options)``: the track PaddockJS 2.0.0 builds for ``trackSeed`` (metres)."""

from dataclasses import dataclass
from typing import Optional

import numpy as np

from .centerline import build_samples, drs_zones, normalize_drs_zone, track_is_valid
from .controls import centerline_controls, fallback_centerline_controls, safe_fallback_centerline_controls
from .jsmath import MASK32, U, normalize_seed
from .options import resolve_generation_options
from .pit_lane import PitLane, pit_lane


@dataclass(frozen=True)
class PaddockJSTrack:
    """A track as PaddockJS 2.0.0 builds it, in metres (PaddockJS's frame: x right, y down).

    x, y, distance: float64[3601] centreline samples (the last repeats the first, distance = length);
    heading: float64[3601] rad; seed: the candidate seed that passed validation (PaddockJS's
    ``track.seed``, reported as ``info.trackSeed``); requested_seed: the normalised ``trackSeed``."""
    name: str
    requested_seed: int
    seed: int
    length: float
    x: np.ndarray
    y: np.ndarray
    distance: np.ndarray
    heading: np.ndarray
    controls: np.ndarray
    drs_zones: tuple
    drs_metres: tuple          # ((start, end), ...) m of drs_zones as PaddockJS normalises them (normalize_drs_zone)
    pit_lane: Optional[PitLane]
    options: dict


def _name(seed: int) -> str:
    digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    text = ""
    value = seed
    while True:
        value, r = divmod(value, 36)
        text = digits[r] + text
        if value == 0:
            break
    return "Generated GP " + text.rjust(6, "0")[-6:]

def _build(controls, options):
    return build_samples(controls, options["startStraight"])


def generate_track(seed=None, options: Optional[dict] = None) -> PaddockJSTrack:
    """The track PaddockJS 2.0.0 builds for ``trackSeed: seed`` and ``trackGeneration: options``
    (createProceduralTrack then buildTrackModel)."""
    requested = normalize_seed(seed)
    resolved = resolve_generation_options(options)
    shape = resolved["shape"]
    chosen = None
    for attempt in range(resolved["attempts"]["primary"]):
        candidate = (requested + attempt * 2654435761) & MASK32
        controls = centerline_controls(candidate, shape)
        samples, total = _build(controls, resolved)
        if track_is_valid(controls, samples, total, resolved):
            chosen = (_name(candidate), candidate, controls, samples, total)
            break
    if chosen is None:
        for attempt in range(resolved["attempts"]["fallback"]):
            candidate = (requested ^ (((attempt + 1) * 2246822519) & MASK32)) & MASK32
            controls = fallback_centerline_controls(candidate, shape)
            samples, total = _build(controls, resolved)
            if track_is_valid(controls, samples, total, resolved):
                chosen = (_name(requested), candidate, controls, samples, total)
                break
    if chosen is None:
        controls = safe_fallback_centerline_controls(requested, shape)
        samples, total = _build(controls, resolved)
        chosen = (_name(requested), requested, controls, samples, total)
    name, candidate, controls, samples, total = chosen
    pit = pit_lane(samples, total) if resolved["pitLane"]["enabled"] else None
    zones = tuple(drs_zones(samples, total))
    return PaddockJSTrack(
        name=name, requested_seed=requested, seed=candidate, length=total / U,
        x=samples.x / U, y=samples.y / U, distance=samples.distance / U, heading=samples.heading.copy(),
        controls=np.asarray(controls, np.float64) / U, drs_zones=zones,
        drs_metres=tuple(normalize_drs_zone(z, total) for z in zones), pit_lane=pit, options=resolved)
