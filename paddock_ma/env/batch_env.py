"""BatchEnv: W worlds of one configuration, stepped as arrays in one numba call per stage.

Shapes (K = controlled drivers, D = observation size, M = len(METRIC_NAMES)):

* ``step(actions)``: actions float32[W, K, 3] (steering [-1, 1], throttle [0, 1], brake [0, 1]), optional
  ``pit_intent`` int[W, K] (-1 = unchanged, 0/1/2) and ``pit_compound`` int[W, K] (-1, or an index into
  the rules' compounds). Returns a ``BatchResult``.
* ``BatchResult``: ``obs`` float32[W, K, D]; ``reward`` float32[W, K] or None; ``terminated``,
  ``truncated`` bool[W, K]; ``end_reason``, ``episode_id``, ``episode_step``, ``life`` int32[W, K];
  ``metrics`` float32[W, K, M]; ``reset_mask`` bool[W, K] (cars auto-reset after this step, whose
  ``obs`` is already the new life's and whose last observation is in ``final_obs``).

Per step: actions are validated (nothing is stepped on a bad one), scattered into the per-slot action
buffer, then one ``step_worlds`` call runs ``frame_skip`` ticks of every world, one ``sense_worlds``
call computes rays/radar/lookahead of the controlled cars and one ``fill_vectors`` call writes the
observation vectors. Only the optional reward callback runs Python per driver.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..sim import layout as L
from ..sim.observe import fill_vectors
from ..sim.params import car_params_from_ratings
from ..sim.race import (
    place_cars, random_track_placements, rank_worlds, reclassify_cars, rules_vector,
)
from ..sim.rng import world_keys
from ..sim.rules import init_world
from ..sim.sensors import N_RADAR_FIELDS, ray_directions, sense_worlds, sensor_geometry
from ..sim.state import WorldState
from ..sim.step import step_worlds, step_worlds_parallel
from ..sim.track import TrackFormatError, load_track
from .actions import (
    ARRAY_BAD_INTENT, ARRAY_NONFINITE, ARRAY_OK, ARRAY_PIT_DISABLED, VEHICLE_FIELDS, apply_action_arrays,
    check_action_arrays,
)
from .config import EnvConfig
from .episodes import METRIC_NAMES, EpisodeArrays, compute_metrics, end_finished_races, running_slots
from .errors import INVALID_ACTION, NOT_RESET, ConfigError, PaddockError
from .interactions import flags_for_slots
from .observations import observation_spec, resolve_senses, vector_schema
from .rewards import engine_reward
from .scenarios import PLACEMENT_POLICIES, RANDOM_MOVING_MAX_KPH, preset_placements, scenario_placements

COMPOUND_INDEX = {"S": L.COMPOUND_S, "M": L.COMPOUND_M, "H": L.COMPOUND_H}
# interaction flags through which a car enters other cars' observations (rays, radar, race order)
_SEEN_BY_OTHERS = L.FLAG_RAY_VISIBLE | L.FLAG_RADAR_VISIBLE | L.FLAG_CLASSIFIED
# "not given" for the optional per-step arrays of the action kernels
_NONE_INT64 = np.zeros((0, 0), np.int64)
_NONE_INT8 = np.zeros((0, 0), np.int8)
_APPLIED = np.array([L.F_APPLIED_STEER, L.F_APPLIED_THROTTLE, L.F_APPLIED_BRAKE], np.int64)


@dataclass
class BatchResult:
    """Arrays of one batched reset or step (see the module docstring for shapes)."""
    obs: np.ndarray
    reward: np.ndarray | None
    terminated: np.ndarray
    truncated: np.ndarray
    end_reason: np.ndarray
    episode_id: np.ndarray
    episode_step: np.ndarray
    life: np.ndarray
    metrics: np.ndarray
    reset_mask: np.ndarray
    final_obs: np.ndarray | None
    world_step: np.ndarray

    @property
    def done(self) -> np.ndarray:
        return self.terminated | self.truncated


def rules_from_config(config: EnvConfig) -> np.ndarray:
    """float64[NR] rules vector of a config (the sim's rule names and SI units)."""
    r, m = config.rules, config.rules.modules
    pit = m.pit_stops
    return rules_vector(
        physics_mode=L.PHYSICS_SIMULATOR if config.physics_mode == "simulator" else L.PHYSICS_ARCADE,
        total_laps=config.total_laps, standing_start=float(r.standing_start),
        tire_degradation=float(m.tire_degradation.enabled), pit_stops=float(pit.enabled),
        pit_speed_limit=pit.pit_lane_speed_limit_kph * L.MPS_PER_KPH, pit_stop_seconds=pit.default_stop_seconds,
        pit_variability=float(pit.variability.enabled), pit_perfect=float(pit.variability.perfect),
        pit_max_concurrent=pit.max_concurrent_pit_lane_cars, stalled_dnf=float(m.stalled_dnf.enabled),
        stall_seconds=m.stalled_dnf.seconds, restitution=r.collision_restitution,
        light_count=r.start_light_count, light_interval=r.start_light_interval,
        lights_out_hold=r.start_lights_out_hold, tire_request_pct=pit.tire_pit_request_threshold_percent,
        tire_commit_pct=pit.tire_pit_commit_threshold_percent, pit_issue_chance=pit.variability.issue_chance,
        pit_issue_max_delay=pit.variability.issue_max_delay_seconds, pit_min_gap=pit.minimum_pit_lane_gap_meters,
    )


class BatchEnv:
    """W independent worlds of one ``EnvConfig``; the engine under PaddockEnv, the adapters and shards.

    auto_reset: reset a controlled car through ``reset_drivers`` as soon as its episode ends, with the
    ``reset_placement`` policy: ``grid`` (its grid slot), ``random`` (a random legal track position
    from the world's RNG, at rest), ``random-moving`` (the same at a speed uniform in [0, 250) km/h
    from that RNG) or ``scenario`` (the scenario's placement of that driver).
    reward_fn: the reward of ``BatchResult.reward``: a vectorised ``fn(metrics float32[W, K, M]) ->
    [W, K]``, a ``rewards.VectorReward`` or an example reward's name; or set ``config.reward`` to a
    VectorReward (not both). A config's per-driver ``reward(context)`` is PaddockEnv's alone and
    rejected here (``rewards`` module docstring).
    """

    def __init__(self, config: EnvConfig | dict | None = None, num_worlds: int = 1, *, auto_reset: bool = False,
                 reset_placement: str = "grid", parallel: bool = False, reward_fn=None, copy_obs: bool = True):
        self.config = config if isinstance(config, EnvConfig) else EnvConfig.from_dict(config)
        if not isinstance(num_worlds, int) or num_worlds < 1:
            raise ConfigError("num_worlds", f"got {num_worlds!r}; expected an integer >= 1")
        if reset_placement not in PLACEMENT_POLICIES:
            raise ConfigError("reset_placement", f"got {reset_placement!r}; expected one of {PLACEMENT_POLICIES}")
        try:
            self.track = load_track(self.config.track)
        except (TrackFormatError, FileNotFoundError, KeyError, ValueError) as exc:
            raise ConfigError("track", f"got {self.config.track!r}: {exc}") from None
        self._sensor_geo = sensor_geometry(self.track)     # per-track constants of the ray march
        cfg = self.config
        self.num_worlds = num_worlds
        self.auto_reset = auto_reset
        self.reset_placement = reset_placement
        self.reward = engine_reward(self.config.reward, reward_fn)     # VectorReward or None
        self.reward_fn = reward_fn
        self.copy_obs = copy_obs
        self._kernel = step_worlds_parallel if parallel else step_worlds
        self.driver_ids = cfg.participant_ids()                     # slot order
        self.controlled = tuple(cfg.controlled_drivers)            # K order
        self.slots = np.array([self.driver_ids.index(d) for d in self.controlled], np.int64)
        self.controlled_index = {d: k for k, d in enumerate(self.controlled)}
        self.compounds = tuple(cfg.rules.modules.tire_strategy.compounds)
        self.senses = {d: resolve_senses(cfg, d) for d in self.controlled}
        self.schemas = {d: vector_schema(s) for d, s in self.senses.items()}
        self.obs_sizes = np.array([len(self.schemas[d]) for d in self.controlled], np.int64)
        self.obs_size = int(self.obs_sizes.max())
        self._setup_sensor_layout()
        w, c, k = num_worlds, len(self.driver_ids), len(self.controlled)
        self._flags = flags_for_slots(cfg, self.driver_ids)
        self._params = np.stack([car_params_from_ratings(self._driver(d).ratings) for d in self.driver_ids])
        self._rules = rules_from_config(cfg)
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

    # -- configuration helpers -------------------------------------------------------------------
    def _driver(self, driver_id):
        return next(d for d in self.config.drivers if d.id == driver_id)

    def _setup_sensor_layout(self):
        c, k = len(self.driver_ids), len(self.controlled)
        senses = [self.senses[d] for d in self.controlled]
        n_rays = max([len(s.ray_ids) for s in senses] + [1])
        self.ray_angle = np.zeros((c, n_rays), np.float64)
        self.ray_length = np.ones((c, n_rays), np.float64)
        self.ray_count = np.zeros(c, np.int32)
        self.channel_mask = np.zeros(c, np.int32)
        radii = {s.radar_radius for s in senses if s.radar_k > 0}
        if len(radii) > 1:
            raise ConfigError("sensors_by_driver", "every driver's nearby_cars.radius_meters must be the same "
                              f"(got {sorted(radii)}); per-driver radar radii are not supported")
        self.radar_k = max(s.radar_k for s in senses)
        self.radar_radius = radii.pop() if radii else 150.0
        self.lookahead = np.array(senses[0].lookahead, np.float64)
        self.debug_precision = int(any(s.precision == "debug" for s in senses))
        # per-slot precision: drivers with driver precision must never read debug-refined rays
        self.slot_debug = np.zeros(c, np.int8)
        self.slot_debug[self.slots] = [s.precision == "debug" for s in senses]
        self.mixed_precision = len({s.precision for s in senses}) > 1
        for s, slot in zip(senses, self.slots):
            n = len(s.ray_ids)
            self.ray_angle[slot, :n] = np.radians(s.ray_angles_deg)
            self.ray_length[slot, :n] = s.ray_lengths
            self.ray_count[slot] = n
            self.channel_mask[slot] = s.channel_mask
        self._ray_dir = ray_directions(self.ray_angle)
        self.k_physical = np.array([s.physical for s in senses], np.int8)
        self.k_look = np.array([len(s.lookahead) for s in senses], np.int32)
        self.k_radar = np.array([s.radar_k for s in senses], np.int32)
        self.k_rich = np.array([s.rich_radar for s in senses], np.int8)
        self.k_radius = np.array([s.radar_radius for s in senses], np.float64)
        w = self.num_worlds
        self.ray_dist = np.zeros((w, c, n_rays, 4), np.float32)
        self.ray_hit = np.zeros((w, c, n_rays, 4), np.int8)
        self.ray_kind = np.zeros((w, c, n_rays), np.int8)
        self.ray_car = np.full((w, c, n_rays), -1, np.int32)
        self.ray_rel_speed = np.zeros((w, c, n_rays), np.float32)
        self.radar = np.zeros((w, c, max(self.radar_k, 1), N_RADAR_FIELDS), np.float32)
        self.radar_slot = np.full((w, c, max(self.radar_k, 1)), -1, np.int32)
        self.look = np.zeros((w, c, max(len(self.lookahead), 1), 2), np.float32)

    def get_observation_spec(self) -> dict:
        return observation_spec(self.config, self.senses)

    # -- reset ---------------------------------------------------------------------------------
    def reset(self, seed: int | None = None, worlds=None) -> BatchResult:
        """Rebuild every world (or the worlds of ``worlds``, bool[W]) from the config.

        ``seed`` (or config.seed, or fresh entropy) seeds them: world w's generator is the w-th of
        ``SeedSequence(seed).spawn(W)``, so resetting world w alone with seed s gives the same world as
        a reset of every world with seed s. Worlds outside ``worlds`` are left exactly as they are (a
        selection needs a reset env: the first reset rebuilds every world).
        """
        cfg = self.config
        if seed is None:
            seed = cfg.seed if cfg.seed is not None else int(np.random.SeedSequence().entropy % (2**63))
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**63:
            raise ConfigError("seed", f"got {seed!r}; expected an integer in [0, 2**63)")
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
        compute_metrics(self.state.cars_f, self.state.cars_i, self.slots, self._metrics)
        return self._result(reward=None, reset_mask=np.zeros((w, len(self.controlled)), bool), final_obs=None)

    def _fresh_state(self, seed: int) -> WorldState:
        """A new WorldState of every world at its start, seeded from ``seed``."""
        cfg = self.config
        w, c = self.num_worlds, len(self.driver_ids)
        state = WorldState.allocate(w, c, self.track)
        state.rules[:] = self._rules
        state.car_params[:] = self._params
        state.car_flags[:] = self._flags
        state.world_i[:, L.WI_RNG_KEY] = world_keys(seed, w)
        state.world_i[:, L.WI_SEED] = seed
        for wi in range(w):
            init_world(state.world_f, state.world_i, state.rules, wi)
        ci = state.cars_i
        ci[:, :, L.I_ACTIVE] = 1
        for slot, driver_id in enumerate(self.driver_ids):
            d = self._driver(driver_id)
            compound = COMPOUND_INDEX[d.tire] if d.tire else (L.COMPOUND_M, L.COMPOUND_H, L.COMPOUND_S)[slot % 3]
            ci[:, slot, L.I_COMPOUND] = compound
            ci[:, slot, L.I_PIT_TARGET] = compound
            ci[:, slot, L.I_USED_COMPOUNDS] = 1 << compound
            ci[:, slot, L.I_PIT_BOX] = (d.team if d.team is not None else slot // 2) % len(self.track.box_x)
        ci[:, :, L.I_MANUAL] = (self._flags & L.FLAG_CONTROLLED) != 0
        state.cars_f[:, :, L.F_TIRE_ENERGY] = 100.0
        self._scenario = scenario_placements(cfg, self.track, self.driver_ids)
        placements = [self._scenario[d] for d in self.driver_ids]
        self._place(state, np.repeat(np.arange(w), c), np.tile(np.arange(c), w), placements * w)
        if cfg.rules.standing_start:
            grid_placed = [i for i, d in enumerate(self.driver_ids) if d not in cfg.scenario.placements
                           and not (cfg.scenario.preset and d in preset_placements(
                               cfg.scenario.preset, self.track, cfg, self.driver_ids))
                           and d not in {t.driver_id for t in cfg.scenario.traffic}]
            ci[:, grid_placed, L.I_GRID_LOCKED] = 1
        # race order of the start, so the reset observation has positions
        rank_worlds(state.cars_f, state.cars_i, state.car_flags, state.world_i, np.arange(w, dtype=np.int64))
        return state

    def scenario_placement(self, driver_id: str) -> tuple:
        """The scenario's placement of ``driver_id``: (distance m, offset m, speed m/s or None, heading rad)."""
        self._require_reset()
        return self._scenario[driver_id]

    def _place(self, state, worlds, slots, placements):
        """Place cars (worlds[n], slots[n]) at placements[n] = (distance, offset, speed or None, heading)."""
        worlds = np.asarray(worlds, np.int64)
        slots = np.asarray(slots, np.int64)
        dist = np.array([p[0] for p in placements], np.float64)
        off = np.array([p[1] for p in placements], np.float64)
        speed = np.array([state.cars_f[wi, si, L.F_SPEED] if p[2] is None else p[2]
                          for p, wi, si in zip(placements, worlds, slots)], np.float64)
        head = np.array([p[3] for p in placements], np.float64)
        place_cars(self.track, state.cars_f, state.cars_i, state.world_f, worlds, slots, dist, off, speed, head)
        reclassify_cars(self.track, state.cars_f, state.cars_i, state.car_flags, worlds, slots)
        rank_worlds(state.cars_f, state.cars_i, state.car_flags, state.world_i, np.unique(worlds))

    # -- step ----------------------------------------------------------------------------------
    def _require_reset(self):
        if self.state is None:
            raise PaddockError(NOT_RESET, "the environment has not been reset: call reset() first")

    def running_mask(self) -> np.ndarray:
        """bool[W, K]: controlled drivers whose episode is running (neither terminated nor truncated)."""
        self._require_reset()
        out = np.empty((self.num_worlds, len(self.controlled)), bool)
        running_slots(self.state.cars_i, self.slots, out)
        return out

    def step(self, actions, pit_intent=None, pit_compound=None, release=None, worlds=None) -> BatchResult:
        """One env step of every world (or of the worlds in ``worlds``). Raises PaddockError (nothing
        stepped) on invalid input.

        release: optional bool[W, K]; True hands that car to the built-in driver for this step
        (PaddockEnv's report policy). worlds: optional bool[W]; only these worlds step (the others are
        left exactly as they are and their rows of ``actions`` are ignored); None = every world.
        """
        self._require_reset()
        state = self.state
        world_mask = self._world_mask(worlds)
        acts = self._action_array(actions)
        intents = self._pit_array(pit_intent, "pit_intent")
        compounds = self._pit_array(pit_compound, "pit_compound")
        code, w, k, field = check_action_arrays(state.cars_i, self.slots, acts, intents, compounds,
                                                len(self.compounds),
                                                int(self.config.rules.modules.pit_stops.enabled is not False),
                                                world_mask)
        if code != ARRAY_OK:
            self._raise_action_error(code, w, k, field, acts, intents, compounds)
        # Everything is valid: from here on the step happens.
        running = self.running_mask() & (world_mask != 0)[:, None]
        release = _NONE_INT8 if release is None else np.ascontiguousarray(release, np.int8)
        if release.shape not in ((0, 0), running.shape):
            raise PaddockError(INVALID_ACTION, f"release: expected shape {running.shape}, got {release.shape}",
                               "release")
        apply_action_arrays(state.cars_i, self.slots, acts, intents, compounds, self._compound_codes, release,
                            world_mask, self._actions, self._apply)
        self._kernel(self.track, state.cars_f, state.cars_i, state.world_f, state.world_i, state.car_params,
                     state.car_flags, state.rules, self._actions, self._apply, self.config.frame_skip,
                     self.config.episode.max_steps, world_mask)
        if self.config.episode.end_on_race_finish:
            end_finished_races(state.cars_i, state.world_i, self.slots, running)
        if worlds is None:
            self._sense_and_observe(self._all_worlds, self._controlled_sense)
        else:
            self._sense_and_observe(world_mask, self._controlled_sense * world_mask[:, None])
        compute_metrics(state.cars_f, state.cars_i, self.slots, self._metrics)
        result = self._result(reward=None, reset_mask=np.zeros_like(running), final_obs=None)
        result.reward = self._reward(result)
        if self.auto_reset:
            done = result.done & running
            if done.any():
                final = result.obs.copy()
                self.reset_drivers(done, self.reset_placement)
                result.obs = self._obs.copy() if self.copy_obs else self._obs
                result.final_obs = final
                result.reset_mask = done
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

    def _action_array(self, actions) -> np.ndarray:
        """actions as a float32 or float64 [W, K, 3] array (the check kernel's dtypes), or PaddockError."""
        arr = np.asarray(actions)
        expected = (self.num_worlds, len(self.controlled), 3)
        if arr.shape != expected:
            raise PaddockError(INVALID_ACTION, f"actions: shape {arr.shape}, expected {expected} "
                               "(worlds, car slots, [steering, throttle, brake])", "actions")
        if arr.dtype == np.float32 or arr.dtype == np.float64:
            return arr
        if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.number):
            raise PaddockError(INVALID_ACTION, f"actions: dtype {arr.dtype}, expected a float array", "actions")
        return arr.astype(np.float64)

    def _pit_array(self, values, name) -> np.ndarray:
        """pit_intent / pit_compound as int64[W, K], or the (0, 0) array meaning "not given"."""
        if values is None:
            return _NONE_INT64
        arr = np.asarray(values)
        shape = (self.num_worlds, len(self.controlled))
        if arr.shape != shape or not np.issubdtype(arr.dtype, np.integer):
            raise PaddockError(INVALID_ACTION, f"{name}: expected an integer array of shape {shape}, got "
                               f"{arr.dtype} {arr.shape}", name)
        return arr.astype(np.int64, copy=False)

    def _raise_action_error(self, code, w, k, field, acts, intents, compounds):
        """The PaddockError of the first invalid entry ``check_action_arrays`` found. A non-finite
        action's error carries ``where = (w, k)`` so that a caller can name its own id for the car."""
        driver = self.controlled[k]
        if code == ARRAY_NONFINITE:
            name = VEHICLE_FIELDS[field]
            exc = PaddockError(INVALID_ACTION, f"actions[{w}].{driver}.{name}: got {acts[w, k]!r}; expected "
                               "finite numbers", f"actions[{w}].{driver}.{name}")
            exc.where = (int(w), int(k))
            raise exc
        if code == ARRAY_PIT_DISABLED:
            raise PaddockError(INVALID_ACTION, f"pit_intent[{w}].{driver}: {int(intents[w, k])} could not be "
                               "applied: pit stops are disabled (rules.modules.pit_stops.enabled)",
                               f"pit_intent[{w}].{driver}")
        name, arr, allowed = (("pit_intent", intents, (-1, 0, 1, 2)) if code == ARRAY_BAD_INTENT else
                              ("pit_compound", compounds, tuple(range(-1, len(self.compounds)))))
        raise PaddockError(INVALID_ACTION, f"{name}[{w}].{driver}: got {int(arr[w, k])}; expected one of "
                           f"{list(allowed)} (-1 = unchanged)", f"{name}[{w}].{driver}")

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
        self._require_reset()
        mask = np.asarray(mask, bool)
        if mask.shape != (self.num_worlds, len(self.controlled)):
            raise PaddockError("invalid_request", f"mask: expected shape {(self.num_worlds, len(self.controlled))}, "
                               f"got {mask.shape}", "mask")
        worlds, ks = np.nonzero(mask)
        if worlds.size == 0:
            return self._result(None, mask, None)
        slots = self.slots[ks]
        placements = self._placements_for(placement, worlds, ks, slots)
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
        self._place(state, worlds, slots, placements)
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
        compute_metrics(state.cars_f, state.cars_i, self.slots, self._metrics)
        return self._result(None, mask, None)

    def _placements_for(self, placement, worlds, ks, slots):
        n = worlds.size
        if isinstance(placement, str):
            if placement == "grid":
                standing = self.config.rules.standing_start
                from .scenarios import grid_placements
                grid = grid_placements(self.driver_ids, standing)
                return [grid[self.driver_ids[s]] for s in slots]
            if placement == "scenario":
                return [self._scenario[self.driver_ids[s]] for s in slots]
            if placement in ("random", "random-moving"):
                dist, off, speed = np.empty(n), np.empty(n), np.empty(n)
                vmax = RANDOM_MOVING_MAX_KPH * L.MPS_PER_KPH if placement == "random-moving" else 0.0
                random_track_placements(self.track, self.state.world_i, worlds.astype(np.int64), 1.5, vmax,
                                        dist, off, speed)
                return [(d, o, v, 0.0) for d, o, v in zip(dist, off, speed)]
            raise PaddockError("invalid_request", f"placement: got {placement!r}; expected one of "
                               f"{PLACEMENT_POLICIES} or arrays", "placement")
        if isinstance(placement, dict):
            arrays = {}
            for key in ("distance_meters", "offset_meters", "speed_kph", "heading_error_radians"):
                a = np.asarray(placement.get(key, np.zeros(self.num_worlds * len(self.controlled))), np.float64)
                arrays[key] = a.reshape(self.num_worlds, len(self.controlled))[worlds, ks]
            speed = arrays["speed_kph"]
            return [(max(0.0, d), o, None if s != s else s * L.MPS_PER_KPH, h) for d, o, s, h in
                    zip(arrays["distance_meters"], arrays["offset_meters"], speed, arrays["heading_error_radians"])]
        if isinstance(placement, list) and len(placement) == n:
            return placement
        raise PaddockError("invalid_request", "placement: expected a policy name, a dict of arrays, or a list "
                           "of placement tuples", "placement")

    # -- observation and results ---------------------------------------------------------------
    def _sense_and_observe(self, world_mask, sense_mask):
        state = self.state
        sense_mask = np.asarray(sense_mask, np.int8)
        if self.mixed_precision:  # one pass per precision (the kernel takes one precision per call)
            passes = (((sense_mask * (1 - self.slot_debug)).astype(np.int8), 0),
                      ((sense_mask * self.slot_debug).astype(np.int8), 1))
        else:
            passes = ((sense_mask, self.debug_precision),)
        for mask, debug in passes:
            sense_worlds(self.track, self._sensor_geo, state.cars_f, state.cars_i, state.car_flags, mask,
                         self._ray_dir, self.ray_length, self.ray_count, self.channel_mask, debug, self.radar_k,
                         self.radar_radius, self.lookahead, self.ray_dist, self.ray_hit, self.ray_kind,
                         self.ray_car, self.ray_rel_speed, self.radar, self.radar_slot, self.look)
        fill_vectors(self.track, state.cars_f, state.cars_i, state.car_flags, state.world_i,
                     self.slots.astype(np.int32), self.k_physical, self.k_look, self.k_radar, self.k_rich,
                     self.k_radius, self.ray_count, self.channel_mask, self.ray_length, self.ray_dist, self.ray_hit,
                     self.ray_kind, self.ray_rel_speed, self.radar, self.radar_slot, self.look,
                     np.asarray(world_mask, np.int8), self._obs)

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

    def applied_controls(self) -> np.ndarray:
        """float32[W, K, 3]: steering, throttle and brake each controlled car applied in the latest
        tick (an out-of-range action is applied clamped; a built-in or released car's own controls)."""
        self._require_reset()
        return self.state.cars_f[:, self.slots][:, :, _APPLIED].astype(np.float32)

    @property
    def latest_metrics(self) -> np.ndarray:
        """float32[W, K, M]: the metrics (columns METRIC_NAMES) of the latest call (the engine's buffer)."""
        return self._metrics

    # -- state ---------------------------------------------------------------------------------
    def checksums(self) -> np.ndarray:
        """uint64[W] state checksum of every world."""
        self._require_reset()
        return self.state.checksums()

    def snapshot(self) -> dict:
        self._require_reset()
        return self.state.snapshot()

    def restore(self, doc: dict) -> None:
        """Restore a snapshot of this env's shape and track, into a reset env or a fresh one (which
        then needs no reset); raises PaddockError(snapshot_rejected) and changes nothing on a bad one."""
        from ..sim.state import SnapshotError
        try:
            if self.state is not None:
                self.state.restore(doc)
            else:
                state = WorldState.from_snapshot(doc, self.track)
                if (state.num_worlds, state.num_cars) != (self.num_worlds, len(self.driver_ids)):
                    raise SnapshotError(f"snapshot.shape: {state.num_worlds} worlds x {state.num_cars} cars cannot "
                                        f"restore into {self.num_worlds} worlds x {len(self.driver_ids)} cars")
                self.state = state
                self.seed = int(state.world_i[0, L.WI_SEED])
                self._scenario = scenario_placements(self.config, self.track, self.driver_ids)
        except SnapshotError as exc:
            raise PaddockError("snapshot_rejected", str(exc), "snapshot") from None
        self._sense_and_observe(self._all_worlds, self._controlled_sense)
        compute_metrics(self.state.cars_f, self.state.cars_i, self.slots, self._metrics)

    def close(self) -> None:
        self.state = None
