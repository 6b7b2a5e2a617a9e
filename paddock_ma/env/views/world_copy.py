"""One world of a ``BatchEnv`` copied out, for readers on another thread or in another process.

``copy_world(engine, w)`` copies world ``w``'s rows of the state, sensor and metric arrays (a few kB, tens
of microseconds; no Python loop over cars) and keeps the engine's static parts (``EngineStatics``: the
config, driver ids, controlled slots, senses and the track's cross-section scalars) by reference. The copy
answers what the state and observation views read of an engine, as world 0 of a one-world engine:
``minimal_state(copy, 0)``, ``object_view(copy, 0, k)``, ``copy.running_mask()`` and ``copy.episodes()``
give what the engine gave at the moment of the copy, whatever it has stepped since.

Why: a live preview must cost the stepping thread next to nothing. The run's thread copies; a publisher
(a server thread, or a server process that receives ``copy.parts()`` pickled beside the statics it was
sent once) builds the frame from the copy.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass

import numpy as np

from ...sim.track.surface import has_pit_lane
from ..episodes import EpisodeArrays, running_slots

# What the views read of a track: its length and cross-section (m), pit-lane distances (m) and whether it
# has a pit lane at all (PaddockJS's training tracks have none).
TrackSummary = namedtuple("TrackSummary", ["length", "half_width", "kerb_edge", "gravel_edge", "grass_edge",
                                           "pit_entry_s", "pit_exit_s", "has_pit_lane"])


def summarize_track(tr) -> TrackSummary:
    """``tr`` (TrackArrays, or already a TrackSummary) as the views' TrackSummary."""
    if isinstance(tr, TrackSummary):
        return tr
    return TrackSummary(*(getattr(tr, name) for name in TrackSummary._fields[:-1]), bool(has_pit_lane(tr)))

_STATE_ROWS = ("cars_f", "cars_i", "world_f", "world_i", "car_flags", "rules")
_SENSOR_ROWS = ("ray_dist", "ray_hit", "ray_kind", "ray_car", "ray_rel_speed", "radar", "radar_slot", "look")


@dataclass(frozen=True)
class EngineStatics:
    """What does not change while an engine lives (a reset with other config options builds a new engine):
    picklable and small (the track's scalars, not its arrays)."""
    config: object                 # EnvConfig
    driver_ids: tuple
    controlled: tuple
    slots: np.ndarray              # int64[K]: the controlled drivers' car slots
    senses: dict                   # driver id -> DriverSenses
    track: TrackSummary
    num_worlds: int                # the engine's worlds (a copy is one of them)

    @classmethod
    def of(cls, engine) -> "EngineStatics":
        tr = engine.track
        return cls(engine.config, tuple(engine.driver_ids), tuple(engine.controlled), np.array(engine.slots),
                   dict(engine.senses), summarize_track(tr),
                   int(engine.num_worlds))


class _Rows:
    """Attribute access to a dict of [1, ...] arrays (the copy's ``state`` and ``sensors``)."""

    def __init__(self, arrays: dict):
        self.__dict__.update(arrays)


class WorldCopy:
    """World ``world`` of an engine as a one-world engine for the views (see the module docstring).
    ``extra``: the copier's own small data (e.g. a preview's observed drivers and meta), carried along."""

    num_worlds = 1

    def __init__(self, statics: EngineStatics, state: dict, sensors: dict, metrics: np.ndarray, world: int,
                 seed, extra: dict | None = None):
        self.statics = statics
        self._state, self._sensors = state, sensors
        self.state, self.sensors = _Rows(state), _Rows(sensors)
        self.latest_metrics = metrics
        self.world, self.seed, self.extra = world, seed, extra or {}
        self.config, self.driver_ids, self.controlled = statics.config, statics.driver_ids, statics.controlled
        self.slots, self.senses, self.track = statics.slots, statics.senses, statics.track

    def parts(self) -> dict:
        """The copied data without the statics: ``WorldCopy(statics, **parts)`` rebuilds the copy."""
        return {"state": self._state, "sensors": self._sensors, "metrics": self.latest_metrics,
                "world": self.world, "seed": self.seed, "extra": self.extra}

    def running_mask(self) -> np.ndarray:
        """bool[1, K]: the controlled drivers whose episode was running."""
        out = np.empty((1, len(self.controlled)), bool)
        running_slots(self.state.cars_i, self.slots, out)
        return out

    def episodes(self) -> EpisodeArrays:
        """The controlled drivers' episode arrays ([1, K])."""
        return EpisodeArrays.gather(self.state.cars_i, self.slots)


def copy_world(engine, w: int, statics: EngineStatics | None = None, extra: dict | None = None) -> WorldCopy:
    """World ``w`` of a reset ``engine`` (a BatchEnv) copied (see the module docstring); ``statics``:
    ``EngineStatics.of(engine)``, passed by a caller that copies often."""
    state, sensors = engine.state, engine.sensors
    rows = slice(w, w + 1)
    return WorldCopy(statics or EngineStatics.of(engine),
                     {name: getattr(state, name)[rows].copy() for name in _STATE_ROWS},
                     {name: getattr(sensors, name)[rows].copy() for name in _SENSOR_ROWS},
                     engine.latest_metrics[rows].copy(), int(w), engine.seed, extra)
