"""BatchEnv: W worlds of one configuration, stepped as arrays in one numba call per stage.

Shapes (K = controlled drivers, D = observation size):

* ``step(actions)``: actions float32[W, K, 3] (steering [-1, 1], throttle [0, 1], brake [0, 1]), optional
  ``pit_intent`` int[W, K] (-1 = unchanged, 0/1/2) and ``pit_compound`` int[W, K] (-1, or an index into
  the rules' compounds). Returns a ``BatchResult`` (``batch_result.py``: obs [W, K, D], reward, flags,
  episode arrays, metrics, the auto-reset cars).
* The read-only queries of the worlds as they are now (running cars, episodes, clocks, seeds, positions,
  checksums) are ``world_reads.WorldReads``, the base class.

Per step: actions are validated (nothing is stepped on a bad one), scattered into the per-slot action
buffer, then one ``step_worlds`` call runs ``frame_skip`` ticks of every world, one ``sense_worlds``
call computes rays/radar/lookahead of the controlled cars and one ``fill_vectors`` call writes the
observation vectors. Only the optional reward callback runs Python per driver.
"""

from __future__ import annotations

import numpy as np

from ..errors import INVALID_ACTION, ConfigError, PaddockError
from ..sim.core import layout as L
from ..sim.core.state import WorldState
from ..sim.step import step_worlds, step_worlds_parallel
from ..sim.track.load import TrackFormatError, load_track, paddockjs_track_document
from ..value_rules import check_integer, check_placement
from .actions import (
    ARRAY_OK, action_array, apply_action_arrays, check_action_arrays, pit_array, raise_array_error,
)
from .batch_result import BatchResult
from .config.root import EnvConfig
from .episodes import METRIC_NAMES, EpisodeArrays, compute_metrics
from .observations import observation_spec, resolve_senses, vector_schema
from .reset.interactions import flags_for_slots
from .reset.placements import place, policy_placements
from .reset.scenarios import scenario_placements
from .reset.start import COMPOUND_INDEX, car_params, rules_from_config, start_state
from .rewards import engine_reward
from .seeding import check_seed, fresh_seed
from .sensor_layout import SensorLayout
from .world_reads import WorldReads

# interaction flags through which a car enters other cars' observations (rays, radar, race order)
_SEEN_BY_OTHERS = L.FLAG_RAY_VISIBLE | L.FLAG_RADAR_VISIBLE | L.FLAG_CLASSIFIED
# "not given" for the optional per-step arrays of the action kernels
_NONE_INT8 = np.zeros((0, 0), np.int8)


class BatchEnv(WorldReads):
    """W independent worlds of one ``EnvConfig``; the engine under PaddockEnv, the adapters and shards.

    auto_reset: reset a controlled car through ``reset_drivers`` as soon as its episode ends, with the
    ``reset_placement`` policy: ``grid`` (its grid slot), ``random`` (a random legal track position
    from the world's RNG, at rest), ``random-moving`` (the same at a speed uniform in [0, 250) km/h
    from that RNG) or ``scenario`` (the scenario's placement of that driver).
    reward_fn: the reward of ``BatchResult.reward``: a vectorised ``fn(metrics float32[W, K, M]) ->
    [W, K]``, a ``rewards.VectorReward`` or an example reward's name; or set ``config.reward`` to a
    VectorReward (not both). A config's per-driver ``reward(context)`` is PaddockEnv's alone and
    rejected here (``rewards`` module docstring).
    parallel: step the worlds, sense their cars and write their vectors on numba threads
    (``sim.step.step_worlds_parallel``, ``sim.sensing.sensors.sense_worlds_parallel``,
    ``sim.sensing.vectors.fill_vectors_parallel``: ``prange`` over worlds), as many as ``numba.set_num_threads``
    allows (NUMBA_NUM_THREADS caps it; the CLI and Ray shards pin it to 1); bit-identical to the
    serial kernels for any thread count.
    world_offset: the global index of this engine's first world, when it holds a slice of a larger set
    of worlds (a Ray shard): world ``w`` draws from the generator of global world ``world_offset + w``
    (``SeedSequence(seed).spawn(n)[world_offset + w]``), so a world's trajectory does not depend on
    which engine holds it. 0 for an engine of its own.
    """

    def __init__(self, config: EnvConfig | dict | None = None, num_worlds: int = 1, *, auto_reset: bool = False,
                 reset_placement: str = "grid", parallel: bool = False, reward_fn=None, copy_obs: bool = True,
                 world_offset: int = 0):
        self.config = config if isinstance(config, EnvConfig) else EnvConfig.from_dict(config)
        num_worlds = check_integer(num_worlds, "num_worlds", low=1)
        self.world_offset = check_integer(world_offset, "world_offset", low=0)
        check_placement(reset_placement, "reset_placement")
        try:
            track = self.config.track
            self.track = (paddockjs_track_document(track) if isinstance(track, dict)
                          else load_track(track, self.config.track_generation))
        except (TrackFormatError, FileNotFoundError, KeyError, ValueError) as exc:
            shown = self.config.track_name if isinstance(self.config.track, dict) else self.config.track
            raise ConfigError("track", f"got {shown!r}: {exc}") from None
        cfg = self.config
        self.num_worlds = num_worlds
        self.auto_reset = auto_reset
        self.reset_placement = reset_placement
        self.reward = engine_reward(self.config.reward, reward_fn)     # VectorReward or None
        self.reward_fn = reward_fn
        self.copy_obs = copy_obs
        self.step_kernel = step_worlds_parallel if parallel else step_worlds   # sim.step's, serial or prange
        self.driver_ids = cfg.participant_ids()                     # slot order
        self.controlled = tuple(cfg.controlled_drivers)            # K order
        self.slots = np.array([self.driver_ids.index(d) for d in self.controlled], np.int64)
        self.controlled_index = {d: k for k, d in enumerate(self.controlled)}
        self.compounds = tuple(cfg.rules.modules.tire_strategy.compounds)
        self.senses = {d: resolve_senses(cfg, d) for d in self.controlled}
        self.schemas = {d: vector_schema(s) for d, s in self.senses.items()}
        self.obs_sizes = np.array([len(self.schemas[d]) for d in self.controlled], np.int64)
        self.obs_size = int(self.obs_sizes.max())
        w, c, k = num_worlds, len(self.driver_ids), len(self.controlled)
        self.sensors = SensorLayout([self.senses[d] for d in self.controlled], self.slots, c, w, self.track,
                                    parallel=parallel)
        self._flags = flags_for_slots(cfg, self.driver_ids)
        self._params = car_params(cfg, self.track, self.driver_ids)
        self._rules = rules_from_config(cfg, self.track)
        self.pit_stops_enabled = bool(self._rules[L.R_PIT_STOPS] > 0.5)   # off without a pit lane
        self._actions = np.zeros((w, c, 3), np.float32)
        self._apply = np.zeros((w, c), np.int8)
        self._sense_mask = np.zeros((w, c), np.int8)
        self._obs = np.zeros((w, k, self.obs_size), np.float32)
        self._metrics = np.zeros((w, k, len(METRIC_NAMES)), np.float32)
        self._all_worlds = np.ones(w, np.int8)
        self._controlled_sense = np.zeros((w, c), np.int8)     # the controlled cars of every world
        self._controlled_sense[:, self.slots] = 1
        # compound code of each index into the rules' compounds (pit_compound arrays index these)
        self._compound_codes = np.array([COMPOUND_INDEX[x] for x in self.compounds] + [0], np.int32)
        self.state: WorldState | None = None
        self.seed: int | None = None
        self._scenario = None
        self.observers: tuple = ()       # called after reset, step and reset_drivers (add_observer)

    @property
    def engine(self) -> "BatchEnv":
        """This BatchEnv: every front end (PaddockEnv, the adapters, the vector envs, the protocol's
        Dispatcher) names the BatchEnv it drives ``engine``, and a BatchEnv is its own, so whoever needs the
        engine of any of them (a live preview, a test) reads ``.engine``."""
        return self

    # -- observers -----------------------------------------------------------------------------------
    def add_observer(self, observer) -> None:
        """Call ``observer(call, engine)`` after every ``reset``, ``step`` and ``reset_drivers`` of this
        engine, once per batched call (``call``: that method's name; a step that auto-resets cars is one
        "step"). For watchers (a live preview, a recorder): an observer reads the engine and must not
        change it. With none attached a call costs one empty-tuple test."""
        self.observers = self.observers + (observer,)

    def remove_observer(self, observer) -> None:
        """Stop calling ``observer`` (no error if it was not attached)."""
        self.observers = tuple(o for o in self.observers if o is not observer)

    def _notify(self, call: str) -> None:
        for observer in self.observers:
            observer(call, self)

    # -- configuration helpers -------------------------------------------------------------------
    def get_observation_spec(self) -> dict:
        return observation_spec(self.config, self.senses)

    # -- reset ---------------------------------------------------------------------------------
    def reset(self, seed: int | None = None, worlds=None) -> BatchResult:
        """Rebuild every world (or the worlds of ``worlds``, bool[W]) from the config.

        ``seed`` (or config.seed, or fresh entropy) seeds them: world w's generator is the
        ``world_offset + w``-th of ``SeedSequence(seed).spawn(n)``, so resetting world w alone with seed s
        gives the same world as a reset of every world with seed s. Worlds outside ``worlds`` are left exactly as they are (a
        selection needs a reset env: the first reset rebuilds every world).
        """
        cfg = self.config
        if seed is None:
            seed = cfg.seed if cfg.seed is not None else fresh_seed()
        seed = check_seed(seed)
        if worlds is not None:
            self._require_reset()
            world_mask = self._world_mask(worlds)
        fresh = self._fresh_state(int(seed))
        self.seed = int(seed)
        w = self.num_worlds
        if worlds is None:
            self.state = fresh
            self._actions[:] = 0
            self._sense_and_observe(self._all_worlds, ((self._flags & L.FLAG_CONTROLLED) != 0)[None, :]
                                    .repeat(w, 0).astype(np.int8))
        else:
            picked = world_mask != 0
            for name, array in self.state.arrays().items():
                array[picked] = getattr(fresh, name)[picked]
            self._actions[picked] = 0
            self._sense_and_observe(world_mask, ((self._flags & L.FLAG_CONTROLLED) != 0)[None, :]
                                    .repeat(w, 0).astype(np.int8) * world_mask[:, None])
        self._compute_metrics()
        result = self._result(reward=None, reset_mask=np.zeros((w, len(self.controlled)), bool), final_obs=None)
        if self.observers:
            self._notify("reset")
        return result

    def _fresh_state(self, seed: int) -> WorldState:
        """A new WorldState of every world at its start, seeded from ``seed``."""
        state, self._scenario = start_state(self.config, self.track, self.driver_ids, self.num_worlds, seed,
                                            rules=self._rules, car_params=self._params, car_flags=self._flags,
                                            first_world=self.world_offset)
        return state

    def scenario_placement(self, driver_id: str) -> tuple:
        """The scenario's placement of ``driver_id``: (distance m, offset m, speed m/s or None, heading rad)."""
        self._require_reset()
        return self._scenario[driver_id]

    # -- step ----------------------------------------------------------------------------------
    def step(self, actions, pit_intent=None, pit_compound=None, release=None, worlds=None, *,
             auto_reset=None) -> BatchResult:
        """One env step of every world (or of the worlds in ``worlds``). Raises PaddockError (nothing
        stepped) on invalid input.

        release: optional bool[W, K]; True hands that car to the built-in driver for this step
        (PaddockEnv's report policy). worlds: optional bool[W]; only these worlds step (the others are
        left exactly as they are and their rows of ``actions`` are ignored); None = every world.
        auto_reset: None (the engine's ``auto_reset``), True/False, or bool[W, K]: the cars that are
        reset (``reset_placement``) if their episode has ended after this step (True: those whose
        episode ended in it; a mask: the caller's choice, e.g. the adapters' live cars with lives left). The
        auto-reset cars' new observations are in ``obs``, their last ones in ``final_obs``, and their
        new episodes in ``reset_result`` (the ``reset_drivers`` result).
        """
        self._require_reset()
        state = self.state
        world_mask = self._world_mask(worlds)
        shape = (self.num_worlds, len(self.controlled))
        acts = action_array(actions, shape + (3,))
        intents = pit_array(pit_intent, "pit_intent", shape)
        compounds = pit_array(pit_compound, "pit_compound", shape)
        code, w, k, field = check_action_arrays(state.cars_i, self.slots, acts, intents, compounds,
                                                len(self.compounds),
                                                int(self.pit_stops_enabled),
                                                world_mask)
        if code != ARRAY_OK:
            raise_array_error(code, w, k, field, self.controlled, acts, intents, compounds, len(self.compounds))
        # Everything is valid: from here on the step happens.
        running = self.running_mask() & (world_mask != 0)[:, None]
        release = _NONE_INT8 if release is None else np.ascontiguousarray(release, np.int8)
        if release.shape not in ((0, 0), running.shape):
            raise PaddockError(INVALID_ACTION, f"release: expected shape {running.shape}, got {release.shape}",
                               "release")
        apply_action_arrays(state.cars_i, self.slots, acts, intents, compounds, self._compound_codes, release,
                            world_mask, self._actions, self._apply)
        self.step_kernel(self.track, state.cars_f, state.cars_i, state.world_f, state.world_i, state.car_params,
                         state.car_flags, state.rules, self._actions, self._apply, self.config.frame_skip,
                         self.config.episode.max_steps, int(self.config.episode.end_on_race_finish), world_mask)
        if worlds is None:
            self._sense_and_observe(self._all_worlds, self._controlled_sense)
        else:
            self._sense_and_observe(world_mask, self._controlled_sense * world_mask[:, None])
        self._compute_metrics()
        result = self._result(reward=None, reset_mask=np.zeros_like(running), final_obs=None)
        result.reward = self._reward(result)
        allowed = self.auto_reset if auto_reset is None else auto_reset
        if allowed is not False:
            if allowed is True:
                done = result.done & running
            else:       # the caller's cars (e.g. Lives' live cars with lives left), in the stepped worlds
                done = result.done & np.asarray(allowed, bool) & (world_mask != 0)[:, None]
            if done.any():
                final = result.obs.copy()
                after = self._reset_drivers(done, self.reset_placement)
                result.obs = after.obs
                result.final_obs = final
                result.reset_mask = done
                result.reset_result = after
        if self.observers:
            self._notify("step")
        return result

    def _world_mask(self, worlds) -> np.ndarray:
        """int8[W] of an optional bool[W] world selection (None = every world)."""
        if worlds is None:
            return self._all_worlds
        mask = np.asarray(worlds)
        if mask.shape != (self.num_worlds,) or mask.dtype != np.bool_:
            raise PaddockError("invalid_request", f"worlds: expected a bool array of shape ({self.num_worlds},), "
                               f"got {mask.dtype} {mask.shape}", "worlds")
        return mask.astype(np.int8)

    def _reward(self, result: BatchResult):
        return None if self.reward is None else self.reward(result.metrics)

    # -- reset_drivers -------------------------------------------------------------------------
    def reset_drivers(self, mask, placement="grid") -> BatchResult:
        """Start a new episode for the controlled cars in ``mask`` (bool[W, K]) inside running worlds.

        placement: ``grid`` / ``random`` / ``random-moving`` / ``scenario``, or a dict of float arrays [W, K]
        (``distance_meters``, ``offset_meters``, ``speed_kph`` (NaN = keep), ``heading_error_radians``).
        New episode id and life, episode step 0, controls and pit intent cleared, tyres fresh; the world
        clock and every other car are untouched. The cars are reclassified at once: a placement touching
        the barrier returns a terminal driver. The result's arrays cover every driver; ``reset_mask``
        marks the reset ones.
        """
        result = self._reset_drivers(mask, placement)
        if self.observers:
            self._notify("reset_drivers")
        return result

    def _reset_drivers(self, mask, placement) -> BatchResult:
        self._require_reset()
        mask = np.asarray(mask, bool)
        if mask.shape != (self.num_worlds, len(self.controlled)):
            raise PaddockError("invalid_request", f"mask: expected shape {(self.num_worlds, len(self.controlled))}, "
                               f"got {mask.shape}", "mask")
        worlds, ks = np.nonzero(mask)
        if worlds.size == 0:
            return self._result(None, mask, None)
        slots = self.slots[ks]
        placements = policy_placements(placement, track=self.track, state=self.state, driver_ids=self.driver_ids,
                                       scenario=self._scenario, standing_start=self.config.rules.standing_start,
                                       shape=mask.shape, worlds=worlds, ks=ks, slots=slots)
        state = self.state
        ci, cf = state.cars_i, state.cars_f
        ci[worlds, slots, L.I_EPISODE_ID] += 1
        ci[worlds, slots, L.I_LIFE] += 1
        for field in (L.I_EPISODE_STEP, L.I_TERMINATED, L.I_TRUNCATED, L.I_END_REASON):
            ci[worlds, slots, field] = 0
        ci[worlds, slots, L.I_MANUAL] = 1
        for field in (L.F_STEER_CMD, L.F_THROTTLE_CMD, L.F_BRAKE_CMD, L.F_APPLIED_STEER, L.F_APPLIED_THROTTLE,
                      L.F_APPLIED_BRAKE):
            cf[worlds, slots, field] = 0.0
        cf[worlds, slots, L.F_TIRE_ENERGY] = 100.0
        self._actions[worlds, slots] = 0.0
        place(self.track, state, worlds, slots, placements)
        # The placed cars sense again. So does every other controlled car of a world where a placed car
        # can appear in another car's observation (ray- or radar-visible, or classified: it moved, and
        # the others' rays, radar and race order must see it where it is now); where all placed cars
        # are hidden and unclassified (batch-training), the others' observations cannot change.
        world_mask = np.zeros(self.num_worlds, np.int8)
        world_mask[worlds] = 1
        sense = np.zeros_like(self._sense_mask)
        sense[worlds, slots] = 1
        seen = (state.car_flags[worlds, slots] & _SEEN_BY_OTHERS) != 0
        if seen.any():
            sense[np.ix_(np.unique(worlds[seen]), self.slots)] = 1
        self._sense_and_observe(world_mask, sense)
        self._compute_metrics()
        return self._result(None, mask, None)

    # -- observation and results ---------------------------------------------------------------
    def _compute_metrics(self):
        """The metric rows of every controlled car after the latest call; the white line is this
        track's (``fully_outside_white_line``)."""
        compute_metrics(self.state.cars_f, self.state.cars_i, self.slots, self._metrics, self.track.half_width)

    def _sense_and_observe(self, world_mask, sense_mask):
        self.sensors.sense(self.state, world_mask, sense_mask, self._obs)

    def current_result(self) -> BatchResult:
        """The arrays of the worlds as they are now (after a restore, say): no reward, nothing reset."""
        self._require_reset()
        return self._result(None, np.zeros((self.num_worlds, len(self.controlled)), bool), None)

    def _result(self, reward, reset_mask, final_obs) -> BatchResult:
        ep = EpisodeArrays.gather(self.state.cars_i, self.slots)
        return BatchResult(obs=self._obs.copy() if self.copy_obs else self._obs, reward=reward,
                           terminated=ep.terminated, truncated=ep.truncated, end_reason=ep.end_reason,
                           episode_id=ep.episode_id, episode_step=ep.episode_step, life=ep.life,
                           metrics=self._metrics.copy(), reset_mask=reset_mask, final_obs=final_obs,
                           world_step=self.state.world_i[:, L.WI_ENV_STEP].copy())

    @property
    def latest_obs(self) -> np.ndarray:
        """float32[W, K, D]: the observation vectors of the latest reset, step or reset_drivers (the
        engine's buffer, overwritten by the next call; driver k's vector is ``[:obs_sizes[k]]``)."""
        return self._obs

    @property
    def latest_metrics(self) -> np.ndarray:
        """float32[W, K, M]: the metrics (columns METRIC_NAMES) of the latest call (the engine's buffer)."""
        return self._metrics

    # -- state ---------------------------------------------------------------------------------
    def snapshot(self, key: bytes | None = None) -> dict:
        """The worlds' state as a JSON-safe, checksummed document (``WorldState.snapshot``); with ``key``
        (bytes) it carries an HMAC-SHA-256 a ``restore(doc, key=...)`` requires (for untrusted transports:
        the checksums detect accidents, not forgeries)."""
        self._require_reset()
        return self.state.snapshot(key)

    def restore(self, doc: dict, key: bytes | None = None) -> None:
        """Restore a snapshot of this env's shape and track, into a reset env or a fresh one (which
        then needs no reset); raises PaddockError(snapshot_rejected) naming the field and changes nothing
        on a bad one (wrong format, track or shape, a checksum, a field out of its range, or with ``key``
        a missing or wrong HMAC)."""
        from ..sim.core.state import SnapshotError
        try:
            if self.state is not None:
                self.state.restore(doc, key)
            else:
                state = WorldState.from_snapshot(doc, self.track, key)
                if (state.num_worlds, state.num_cars) != (self.num_worlds, len(self.driver_ids)):
                    raise SnapshotError(f"snapshot.shape: {state.num_worlds} worlds x {state.num_cars} cars cannot "
                                        f"restore into {self.num_worlds} worlds x {len(self.driver_ids)} cars")
                self.state = state
                self.seed = int(state.world_i[0, L.WI_SEED])
                self._scenario = scenario_placements(self.config, self.track, self.driver_ids)
        except SnapshotError as exc:
            raise PaddockError("snapshot_rejected", str(exc), "snapshot") from None
        self._sense_and_observe(self._all_worlds, self._controlled_sense)
        self._compute_metrics()

    def close(self) -> None:
        self.state = None
