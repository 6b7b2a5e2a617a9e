"""What a ``BatchEnv`` answers about its worlds as they are now, without changing them.

``WorldReads`` is the read-only half of ``BatchEnv`` (its base class): which cars are running or in a pit
stop, the controls they applied, the built-in driver's actions, episode arrays, world steps, clocks and
seeds, car positions, the track's outline and the state checksums. Every read needs a reset engine
(PaddockError ``not_reset`` before the first reset); arrays are copies unless said otherwise.
"""

from __future__ import annotations

import numpy as np

from ..errors import NOT_RESET, PaddockError
from ..sim.core import layout as L
from .actions import member_of
from .episodes import EpisodeArrays, running_slots

_APPLIED = np.array([L.F_APPLIED_STEER, L.F_APPLIED_THROTTLE, L.F_APPLIED_BRAKE], np.int64)
# the pit statuses of an active stop: entering, queued, servicing, exiting
ACTIVE_PIT_STOP = (L.PIT_ENTERING, L.PIT_QUEUED, L.PIT_SERVICING, L.PIT_EXITING)


class WorldReads:
    """The read-only queries of a ``BatchEnv`` (module docstring); ``BatchEnv`` sets ``state``, ``track``,
    ``slots``, ``controlled`` and ``num_worlds``."""

    def _require_reset(self):
        if self.state is None:
            raise PaddockError(NOT_RESET, "the environment has not been reset: call reset() first")

    def running_mask(self) -> np.ndarray:
        """bool[W, K]: controlled drivers whose episode is running (neither terminated nor truncated)."""
        self._require_reset()
        out = np.empty((self.num_worlds, len(self.controlled)), bool)
        running_slots(self.state.cars_i, self.slots, out)
        return out

    def active_pit_stops(self, w: int) -> np.ndarray:
        """bool[K]: the controlled cars of world ``w`` that are in an active pit stop (entering, queued,
        servicing or exiting), whose pit intent an action cannot change."""
        self._require_reset()
        return member_of(self.state.cars_i[w, self.slots, L.I_PIT_STATUS], ACTIVE_PIT_STOP)

    def applied_controls(self) -> np.ndarray:
        """float32[W, K, 3]: steering, throttle and brake each controlled car applied in the latest
        tick (an out-of-range action is applied clamped; a built-in or released car's own controls)."""
        self._require_reset()
        return self.state.cars_f[:, self.slots][:, :, _APPLIED].astype(np.float32)

    def builtin_actions(self, out: np.ndarray | None = None) -> np.ndarray:
        """float32[W, K, 3]: the built-in driver's steering, throttle and brake for every controlled car in
        the worlds as they are now (what it would drive next step; pass them to ``step`` to let it drive).
        ``out``: an optional float32[W, K, 3] C-contiguous buffer to write them into (returned)."""
        from ..sim.driver.builtin import ai_actions

        self._require_reset()
        shape = (self.num_worlds, len(self.controlled), 3)
        if out is None:
            out = np.zeros(shape, np.float32)
        elif out.shape != shape or out.dtype != np.float32 or not out.flags.c_contiguous:
            raise PaddockError("invalid_request", f"out: expected a C-contiguous float32 array of shape {shape}, "
                               f"got {out.dtype} {out.shape}", "out")
        st = self.state
        ai_actions(self.track, st.cars_f, st.cars_i, st.car_params, st.car_flags, st.rules, self.slots, out)
        return out

    def episodes(self, worlds=None) -> EpisodeArrays:
        """The episode arrays ([n, K]: terminated, truncated, end reason, episode id and step, life) of the
        controlled cars of ``worlds`` (a list of world indices, None = every world) as they are now."""
        self._require_reset()
        ci = self.state.cars_i if worlds is None else self.state.cars_i[self._rows(worlds)]
        return EpisodeArrays.gather(ci, self.slots)

    def world_steps(self, worlds=None) -> np.ndarray:
        """int64[n]: env steps each world of ``worlds`` (world indices, None = every world) has taken
        since its reset."""
        self._require_reset()
        return self.state.world_i[self._rows(worlds), L.WI_ENV_STEP].copy()

    def elapsed_seconds(self, worlds=None) -> np.ndarray:
        """float64[n]: simulated seconds since the reset of each world of ``worlds`` (None = every world)."""
        self._require_reset()
        return self.state.world_f[self._rows(worlds), L.WF_TIME].copy()

    def world_seeds(self, worlds=None) -> np.ndarray:
        """int64[n]: the seed each world of ``worlds`` (None = every world) was last reset with."""
        self._require_reset()
        return self.state.world_i[self._rows(worlds), L.WI_SEED].copy()

    @staticmethod
    def _rows(worlds):
        return slice(None) if worlds is None else np.asarray(worlds, np.int64)

    def car_positions(self) -> np.ndarray:
        """float64[W, K, 2]: each controlled car's centre (x, y) in track metres."""
        self._require_reset()
        return self.state.cars_f[:, self.slots][:, :, [L.F_X, L.F_Y]].copy()

    def track_outline(self) -> dict:
        """The track's geometry for drawing: ``centre``, ``left`` and ``right`` (the edges of the racing
        surface, in the direction of travel), each float64[N, 2] in metres (x, y) at the track's N
        centreline samples."""
        tr = self.track
        centre = np.stack([tr.cx, tr.cy], axis=1).astype(np.float64)
        right_normal = np.stack([tr.cnx, tr.cny], axis=1).astype(np.float64)
        half = np.broadcast_to(np.asarray(tr.half_width, np.float64), np.shape(tr.cx))[:, None]
        return {"centre": centre, "left": centre - half * right_normal, "right": centre + half * right_normal}

    def checksums(self) -> np.ndarray:
        """uint64[W] state checksum of every world."""
        self._require_reset()
        return self.state.checksums()
