"""Shared helpers of the sensing tests: worlds of cars placed by hand, one call of ``sense_worlds`` with
one ray layout for every slot, and poses on and around a track."""

import math

import numpy as np

from paddock_ma.sim.core import layout as L
from paddock_ma.sim.sensing import geometry as G
from paddock_ma.sim.sensing import march as M
from paddock_ma.sim.sensing import sensors as S
from paddock_ma.sim.track.geometry import point_at
from paddock_ma.sim.track.surface import pit_point_at

ALL_FLAGS = (L.FLAG_COLLIDES | L.FLAG_RAY_VISIBLE | L.FLAG_RADAR_VISIBLE | L.FLAG_CLASSIFIED
             | L.FLAG_PIT_OCCUPIES)


def make_world(W, C):
    cars_f = np.zeros((W, C, L.NF))
    cars_i = np.zeros((W, C, L.NI), dtype=np.int32)
    cars_i[:, :, L.I_ACTIVE] = 1
    cars_i[:, :, L.I_LAP] = 1
    flags = np.full((W, C), ALL_FLAGS, dtype=np.int32)
    return cars_f, cars_i, flags


def place(cars_f, w, c, x, y, h, v=0.0, progress=0.0):
    cars_f[w, c, L.F_X] = x
    cars_f[w, c, L.F_Y] = y
    cars_f[w, c, L.F_HEADING] = h
    cars_f[w, c, L.F_SPEED] = v
    cars_f[w, c, L.F_VX] = v * math.cos(h)
    cars_f[w, c, L.F_VY] = v * math.sin(h)
    cars_f[w, c, L.F_PROGRESS] = progress


def sense(tr, cars_f, cars_i, flags, angles_deg, lengths, *, mask=None, channels=M.CH_ALL, debug=0,
          radar_k=6, radius=150.0, look=(20.0, 50.0, 100.0, 150.0), ray_count=None, fill=None):
    """Run sense_worlds with one ray layout for every slot; returns the output arrays by name."""
    W, C = cars_f.shape[:2]
    ang = np.atleast_2d(np.radians(np.asarray(angles_deg, dtype=np.float64)))
    ang = np.broadcast_to(ang, (C, ang.shape[-1])).copy()
    R = ang.shape[1]
    ln = np.broadcast_to(np.asarray(lengths, dtype=np.float64), (C, R)).copy()
    if mask is None:
        mask = np.ones((W, C), np.int8)
    count = np.full(C, R, np.int32) if ray_count is None else np.asarray(ray_count, np.int32)
    ch = np.full(C, channels, np.int32)
    look_d = np.asarray(look, dtype=np.float64)
    K, Q = radar_k, look_d.shape[0]
    v = 0 if fill is None else fill
    out = dict(
        ray_dist=np.full((W, C, R, 4), v, np.float32), ray_hit=np.full((W, C, R, 4), v, np.int8),
        ray_kind=np.full((W, C, R), v, np.int8), ray_car=np.full((W, C, R), v, np.int32),
        ray_rel_speed=np.full((W, C, R), v, np.float32),
        radar=np.full((W, C, K, S.N_RADAR_FIELDS), v, np.float32), radar_slot=np.full((W, C, K), v, np.int32),
        look=np.full((W, C, Q, 2), v, np.float32))
    table = S.SenseTable(S.ray_directions(ang), ln, count, ch,
                         np.broadcast_to(np.asarray(radius, np.float64), (C,)).copy(), look_d)
    S.sense_worlds(tr, G.sensor_geometry(tr), cars_f, cars_i, flags, mask, table, debug, radar_k,
                   S.SenseBuffers(*out.values()))
    return out


def pose_at(tr, s, offset, dh):
    x, y, h, _ = point_at(tr, s)
    return x - math.sin(h) * offset, y + math.cos(h) * offset, h + dh


def random_poses(tr, rng, n):
    """Mixed origins: on track, on the kerb, in gravel, in grass, in the pit lane; headings near the
    track's and arbitrary."""
    hw, ke, ge, gr = tr.half_width, tr.kerb_edge, tr.gravel_edge, tr.grass_edge
    poses = []
    for i in range(n):
        kind = i % 10
        s = rng.uniform(0.0, tr.length)
        side = rng.choice([-1.0, 1.0])
        if kind < 5:
            off = rng.uniform(-hw, hw)
        elif kind < 7:
            off = side * rng.uniform(hw + 0.05, ke - 0.05)
        elif kind < 8:
            off = side * rng.uniform(ke + 0.05, ge - 0.05)
        elif kind < 9:
            off = side * rng.uniform(ge + 0.05, gr - 0.05)
        else:
            off = None
        dh = rng.normal(0.0, 0.15) if i % 3 else rng.uniform(-math.pi, math.pi)
        if off is None:   # pit path: connectors and fast lane
            px, py, ph = pit_point_at(tr, rng.uniform(0.0, tr.pit_length))
            poses.append((px, py, ph + dh))
        else:
            poses.append(pose_at(tr, s, off, dh))
    return poses
