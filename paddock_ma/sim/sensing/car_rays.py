"""The rays' car channel (PaddockJS 2.0.1, spec section 6.6): the nearest other car body a ray hits, a
4.65 x 1.24 m box (``sensing.march``'s HALF_L, HALF_W) at the car's pose, the distance max(0, tmin) along
the ray; only ray-visible active cars within reach of the sensing car's longest ray are tried."""

import math

from ..core.jit import kernel
from ..core.layout import F_HEADING, F_SPEED, F_X, F_Y, FLAG_RAY_VISIBLE, I_ACTIVE
from .geometry import FAR
from .march import BODY_RADIUS, HALF_L, HALF_W, RAY_CAR


@kernel
def _slab(ox, oy, dx, dy, length, tx, ty, tc, ts):
    """Ray (origin m, unit direction) against a car body centred at (tx, ty) with heading cos/sin
    (tc, ts): entry distance max(0, tmin) m, or -1 on a miss."""
    rx = ox - tx
    ry = oy - ty
    # origin and direction in the target's frame (u forward, v right)
    ou = rx * tc + ry * ts
    ov = -rx * ts + ry * tc
    du = dx * tc + dy * ts
    dv = -dx * ts + dy * tc
    tmin = -FAR
    tmax = FAR
    if abs(du) < 1e-12:
        if abs(ou) > HALF_L:
            return -1.0
    else:
        t1 = (-HALF_L - ou) / du
        t2 = (HALF_L - ou) / du
        tmin = max(tmin, min(t1, t2))
        tmax = min(tmax, max(t1, t2))
    if abs(dv) < 1e-12:
        if abs(ov) > HALF_W:
            return -1.0
    else:
        t1 = (-HALF_W - ov) / dv
        t2 = (HALF_W - ov) / dv
        tmin = max(tmin, min(t1, t2))
        tmax = min(tmax, max(t1, t2))
    if tmax < tmin or tmax < 0.0 or tmin > length:
        return -1.0
    return max(0.0, tmin)


@kernel(inline="always")
def ray_targets(cars_f, cars_i, car_flags, w, c, longest, cand):
    """The cars car (w, c)'s rays may hit: the other active ray-visible cars (FLAG_RAY_VISIBLE) whose centre
    lies within its longest ray ``longest`` m + BODY_RADIUS, written to cand int64[C] in slot order;
    returns how many."""
    ox = cars_f[w, c, F_X]
    oy = cars_f[w, c, F_Y]
    reach = longest + BODY_RADIUS
    n_cand = 0
    for j in range(cars_f.shape[1]):
        if j == c or cars_i[w, j, I_ACTIVE] == 0 or (car_flags[w, j] & FLAG_RAY_VISIBLE) == 0:
            continue
        ddx = cars_f[w, j, F_X] - ox
        ddy = cars_f[w, j, F_Y] - oy
        if ddx * ddx + ddy * ddy <= reach * reach:
            cand[n_cand] = j
            n_cand += 1
    return n_cand


@kernel(inline="always")
def car_channel(cars_f, w, c, r, dx, dy, length, cand, n_cand, out):
    """The car channel of ray ``r`` of car (w, c) along the unit (dx, dy), ``length`` m, against the
    ``n_cand`` cars of ``cand`` (``ray_targets``): on a hit writes the nearest's distance and hit into
    ``out.ray_dist`` / ``out.ray_hit`` (RAY_CAR), its slot into ``out.ray_car`` and its speed minus the
    car's into ``out.ray_rel_speed`` (``sensing.sensors.SenseBuffers``); a miss leaves them."""
    ox = cars_f[w, c, F_X]
    oy = cars_f[w, c, F_Y]
    best = FAR
    best_j = -1
    for q in range(n_cand):
        j = cand[q]
        tx = cars_f[w, j, F_X]
        ty = cars_f[w, j, F_Y]
        rx = tx - ox
        ry = ty - oy
        along = rx * dx + ry * dy
        if along < -BODY_RADIUS or along > length + BODY_RADIUS:
            continue
        perp = rx * dy - ry * dx
        if abs(perp) > BODY_RADIUS:
            continue
        th = cars_f[w, j, F_HEADING]
        d = _slab(ox, oy, dx, dy, length, tx, ty, math.cos(th), math.sin(th))
        if d >= 0.0 and d < best:
            best = d
            best_j = j
    if best_j >= 0:
        out.ray_dist[w, c, r, RAY_CAR] = best
        out.ray_hit[w, c, r, RAY_CAR] = 1
        out.ray_car[w, c, r] = best_j
        out.ray_rel_speed[w, c, r] = cars_f[w, best_j, F_SPEED] - cars_f[w, c, F_SPEED]
