"""The sensor layout of a BatchEnv: per-slot ray tables, radar and lookahead settings, and the buffers
the sensing kernel writes and the observation vectors, the object view and the renderer read.
Per slot: ray tables, channel masks and the radar radius ``radar_radius`` float64[C] m (each driver's
own ``nearby_cars.radius_meters``).

``SensorLayout(senses, slots, num_cars, num_worlds, track, parallel=False)`` resolves the controlled
drivers' senses (``observations.DriverSenses``) into the arrays ``sim.sensing.sensors.sense_worlds`` and
``sim.sensing.vectors.fill_vectors`` take; ``sense(state, world_mask, sense_mask, obs)`` runs both for the
masked cars and writes ``obs`` float32[W, K, D]; with ``parallel`` both are their ``_parallel``
kernels (worlds over numba threads, bit-identical results). Buffers (float32 unless
said, [W, C, ...] over car slots): ``ray_dist`` [W, C, R, 4] per channel, ``ray_hit`` int8,
``ray_kind`` int8, ``ray_car`` int32 (-1 none), ``ray_rel_speed``, ``radar`` [W, C, N, N_RADAR_FIELDS],
``radar_slot`` int32, ``look`` [W, C, Q, 2] (curvature, heading delta).
"""

from __future__ import annotations

import numpy as np

from ..sim.sensing.vectors import VectorLayout, fill_vectors, fill_vectors_parallel
from ..sim.sensing.geometry import sensor_geometry
from ..sim.sensing.sensors import (
    N_RADAR_FIELDS, SenseBuffers, SenseTable, ray_directions, sense_worlds, sense_worlds_parallel,
)

DEFAULT_RADAR_RADIUS = 150.0    # m, the radius of the slots no controlled driver senses from


class SensorLayout:
    """What the controlled cars sense and where it lands (module docstring)."""

    def __init__(self, senses: list, slots: np.ndarray, num_cars: int, num_worlds: int, track,
                 parallel: bool = False):
        c = num_cars
        self.track = track
        self.sense_kernel = sense_worlds_parallel if parallel else sense_worlds   # serial or prange
        self.fill_kernel = fill_vectors_parallel if parallel else fill_vectors
        self.geometry = sensor_geometry(track)              # per-track constants of the ray march
        self.slots = slots
        self._slots32 = slots.astype(np.int32)
        n_rays = max([len(s.ray_ids) for s in senses] + [1])
        self.ray_angle = np.zeros((c, n_rays), np.float64)  # rad, relative to the heading, per slot
        self.ray_length = np.ones((c, n_rays), np.float64)  # m
        self.ray_count = np.zeros(c, np.int32)
        self.channel_mask = np.zeros(c, np.int32)
        self.radar_k = max(s.radar_k for s in senses)
        # per slot: each driver's own radius (PaddockJS allows per-driver sensor shapes); other slots
        # never sense, they keep the default
        self.radar_radius = np.full(c, DEFAULT_RADAR_RADIUS, np.float64)
        self.radar_radius[slots] = [s.radar_radius for s in senses]
        self.lookahead = np.array(senses[0].lookahead, np.float64)
        self.debug_precision = int(any(s.precision == "debug" for s in senses))
        # per-slot precision: drivers with driver precision must never read debug-refined rays
        self.slot_debug = np.zeros(c, np.int8)
        self.slot_debug[slots] = [s.precision == "debug" for s in senses]
        self.mixed_precision = len({s.precision for s in senses}) > 1
        for s, slot in zip(senses, slots):
            n = len(s.ray_ids)
            self.ray_angle[slot, :n] = np.radians(s.ray_angles_deg)
            self.ray_length[slot, :n] = s.ray_lengths
            self.ray_count[slot] = n
            self.channel_mask[slot] = s.channel_mask
        self.ray_dir = ray_directions(self.ray_angle)
        # per controlled driver k: what its vector holds
        self.k_physical = np.array([s.physical for s in senses], np.int8)
        self.k_look = np.array([len(s.lookahead) for s in senses], np.int32)
        self.k_radar = np.array([s.radar_k for s in senses], np.int32)
        self.k_radius = np.array([s.radar_radius for s in senses], np.float64)
        w = num_worlds
        self.ray_dist = np.zeros((w, c, n_rays, 4), np.float32)
        self.ray_hit = np.zeros((w, c, n_rays, 4), np.int8)
        self.ray_kind = np.zeros((w, c, n_rays), np.int8)
        self.ray_car = np.full((w, c, n_rays), -1, np.int32)
        self.ray_rel_speed = np.zeros((w, c, n_rays), np.float32)
        self.radar = np.zeros((w, c, max(self.radar_k, 1), N_RADAR_FIELDS), np.float32)
        self.radar_slot = np.full((w, c, max(self.radar_k, 1)), -1, np.int32)
        self.look = np.zeros((w, c, max(len(self.lookahead), 1), 2), np.float32)

    def sense(self, state, world_mask: np.ndarray, sense_mask: np.ndarray, obs: np.ndarray) -> None:
        """Sense the cars of ``sense_mask`` (int8[W, C]) and write the vectors of the worlds of
        ``world_mask`` (int8[W]) into ``obs`` float32[W, K, D]."""
        sense_mask = np.asarray(sense_mask, np.int8)
        if self.mixed_precision:  # one pass per precision (the kernel takes one precision per call)
            passes = (((sense_mask * (1 - self.slot_debug)).astype(np.int8), 0),
                      ((sense_mask * self.slot_debug).astype(np.int8), 1))
        else:
            passes = ((sense_mask, self.debug_precision),)
        table = SenseTable(self.ray_dir, self.ray_length, self.ray_count, self.channel_mask, self.radar_radius,
                           self.lookahead)
        buffers = SenseBuffers(self.ray_dist, self.ray_hit, self.ray_kind, self.ray_car, self.ray_rel_speed,
                               self.radar, self.radar_slot, self.look)
        for mask, debug in passes:
            self.sense_kernel(self.track, self.geometry, state.cars_f, state.cars_i, state.car_flags, mask, table,
                              debug, self.radar_k, buffers)
        drivers = VectorLayout(self._slots32, self.k_physical, self.k_look, self.k_radar, self.k_radius)
        self.fill_kernel(self.track, state.cars_f, state.cars_i, state.rules, state.world_i, drivers, table, buffers,
                         np.asarray(world_mask, np.int8), obs)
