"""Car-car contact: broad phase, oriented-box SAT, separation, impulse and contact events.

Every car is a 4.65 x 1.24 m rectangle centred on its (x, y) and aligned with its heading
(PaddockJS collision body). Contacts are resolved after every car has been integrated in a tick,
in up to three passes over the pairs ``i < j`` (a fixed order, so worlds are deterministic).

A pair takes part only when both cars are active, not destroyed and both carry
``FLAG_COLLIDES``: interaction profiles (batch training, phantoms) switch contact off per car.
A car driven along the pit route (``PIT_ENTERING .. PIT_EXITING``) is never moved by a contact;
its partner takes the whole correction. Pairs where both cars are pit-route driven are skipped.

The detection and response are PaddockJS 2.0.0's (``contactResolution.js``, ``collisionGeometry.js``):
the bodies' SAT overlap at the end of the tick, else the first of 15 poses interpolated between the
tick's start (F_PREV_*) and end that overlaps (a swept test, so fast cars do not tunnel); each car is
moved along the axis by min(depth / 2 + 0.65 u, 4.5 u) (the whole depth when its partner is pit-route
driven), turned by -/+ axis_y * clamp(0.0025 depth/u, 0.008, 0.035) rad (the world axis' y component,
as PaddockJS does), and its tick-start pose is shifted alike. The velocity response acts on the
scalar speeds along the headings: a closing pair loses clamp(-closing * (0.34 + restitution), 0, 16 u/s)
on the cars moving into the contact, then both speeds are multiplied by 0.997 (0.985 against a
pit-route car). In simulator mode PaddockJS changes only that scalar speed (which the next tick's
acceleration limits read), not the world velocity; so do we.

Differences from PaddockJS, on purpose:
* the broad phase is the centre distance against the body diagonal plus two ticks of top-speed
  motion, over all pairs in slot order (PaddockJS takes pairs within 12.5 m of progress, in progress
  order): the same pairs touch; only the order in which three or more cars in one pile-up are
  resolved can differ;
* contact events and cooldowns (which pair counts) follow the event rules below, not PaddockJS's
  per-car cooldown (``docs/paddockjs-compatibility.md``).
"""

import numpy as np

from ..core.jit import kernel
from ..core.layout import (
    CAR_LENGTH, CAR_WIDTH, F_CONTACT_COOLDOWN, F_HEADING, F_PREV_HEADING, F_PREV_X, F_PREV_Y, F_SPEED, F_VX,
    F_VY, F_X, F_Y, FLAG_COLLIDES, I_ACTIVE, I_CNT_CONTACTS, I_CONTACT_SLOTS_HI, I_CONTACT_SLOTS_LO,
    I_DESTROYED, I_LAST_CONTACT_WITH, I_PIT_STATUS, MAX_SPEED, PHYSICS_SIMULATOR, PIT_ENTERING, PIT_EXITING,
    R_PHYSICS_MODE, R_RESTITUTION,
)
from ..vehicle.limits import normalize_angle

HALF_L = 0.5 * CAR_LENGTH
HALF_W = 0.5 * CAR_WIDTH
# Two bodies can only overlap when their centres are closer than the sum of circumradii; during a
# tick each centre moves at most MAX_SPEED * dt.
BODY_DIAGONAL = (CAR_LENGTH * CAR_LENGTH + CAR_WIDTH * CAR_WIDTH) ** 0.5
N_PASSES = 3
SWEEP_STEPS = 16               # the swept test tries poses at k / 16 of the tick, k = 1..15
AABB_PAD = 0.001 / 12.0        # m, broad-phase padding of the swept boxes (0.001 u)
SEP_EXTRA = 0.65 / 12.0        # m, pushed beyond the overlap so the pair is clear (0.65 u)
SEP_CAP = 4.5 / 12.0           # m, largest correction per car per pass (4.5 u)
IMPULSE_BASE = 0.34            # closing-speed share lost on contact, plus the restitution
IMPULSE_CAP = 16.0 / 12.0      # m/s, largest speed change of the impulse (16 u/s)
CONTACT_DAMP = 0.997           # speed factor of both cars per contact
COOLDOWN = 1.0                 # s, contact events suppressed for this long after a contact
TOUCHED = -1.0                 # cooldown sentinel during one call: free at tick start, touched now
NUDGE_PER_M = 0.0025 * 12.0    # rad per m of depth (0.0025 per u)
NUDGE_MIN = 0.008              # rad
NUDGE_MAX = 0.035              # rad
PIT_FIXED_DAMP = 0.985         # speed factor of a car that hits a pit-route car


@kernel
def tick_cooldowns(cars_f, cars_i, w, n_cars, dt):
    """Count contact cooldowns down by one tick.

    cars_f float64[W, C, NF], cars_i int32[W, C, NI]; w world, n_cars cars in the world, dt s.
    Cooldowns stop at 0 (an event needs both cooldowns <= 0).
    """
    for c in range(n_cars):
        cd = cars_f[w, c, F_CONTACT_COOLDOWN]
        if cd > 0.0:
            cd -= dt
            if cd < 0.0:
                cd = 0.0
            cars_f[w, c, F_CONTACT_COOLDOWN] = cd


@kernel(inline="always")
def _mark_partner(cars_i, w, c, other):
    """Set slot ``other``'s bit in car ``c``'s contact partners of this step (I_CONTACT_SLOTS_LO for
    slots 0..31, I_CONTACT_SLOTS_HI for 32..63; bit 31 is the int32's sign bit)."""
    field = I_CONTACT_SLOTS_LO if other < 32 else I_CONTACT_SLOTS_HI
    bit = other % 32
    cars_i[w, c, field] |= np.int32(-2147483648) if bit == 31 else np.int32(1 << bit)


@kernel
def _takes_part(cars_i, car_flags, w, c):
    return (cars_i[w, c, I_ACTIVE] == 1 and cars_i[w, c, I_DESTROYED] == 0
            and (car_flags[w, c] & FLAG_COLLIDES) != 0)


@kernel
def _pit_fixed(cars_i, w, c):
    st = cars_i[w, c, I_PIT_STATUS]
    return st >= PIT_ENTERING and st <= PIT_EXITING


@kernel
def box_overlap(x1, y1, h1, x2, y2, h2):
    """SAT test of two car bodies. Returns (depth m, axis_x, axis_y); depth <= 0 means no overlap.

    The axis is a unit vector of the minimum-overlap direction, oriented from car 1 to car 2
    (for coincident centres it is car 1's first minimal axis, a deterministic choice).
    """
    c1 = np.cos(h1)
    s1 = np.sin(h1)
    c2 = np.cos(h2)
    s2 = np.sin(h2)
    dx = x2 - x1
    dy = y2 - y1
    best = 1e30
    bx = 0.0
    by = 0.0
    for k in range(4):
        # Candidate axes: forward and right of each car (right = (-sin, cos)).
        if k == 0:
            ux, uy = c1, s1
        elif k == 1:
            ux, uy = -s1, c1
        elif k == 2:
            ux, uy = c2, s2
        else:
            ux, uy = -s2, c2
        r1 = HALF_L * abs(c1 * ux + s1 * uy) + HALF_W * abs(-s1 * ux + c1 * uy)
        r2 = HALF_L * abs(c2 * ux + s2 * uy) + HALF_W * abs(-s2 * ux + c2 * uy)
        d = dx * ux + dy * uy
        ov = r1 + r2 - abs(d)
        if ov <= 0.0:
            return 0.0, 0.0, 0.0
        if ov < best:
            best = ov
            if d < 0.0:
                bx, by = -ux, -uy
            else:
                bx, by = ux, uy
    return best, bx, by


@kernel(inline="always")
def _body_aabb(x, y, h):
    """Axis-aligned box (min x, max x, min y, max y) of a car body at pose (x, y, h)."""
    c = abs(np.cos(h))
    s = abs(np.sin(h))
    ex = HALF_L * c + HALF_W * s
    ey = HALF_L * s + HALF_W * c
    return x - ex, x + ex, y - ey, y + ey


@kernel(inline="always")
def _swept_aabb(cars_f, w, c):
    """The body's box over the tick: the union of its boxes at F_PREV_* and at the current pose."""
    ax0, ax1, ay0, ay1 = _body_aabb(cars_f[w, c, F_PREV_X], cars_f[w, c, F_PREV_Y], cars_f[w, c, F_PREV_HEADING])
    bx0, bx1, by0, by1 = _body_aabb(cars_f[w, c, F_X], cars_f[w, c, F_Y], cars_f[w, c, F_HEADING])
    return min(ax0, bx0), max(ax1, bx1), min(ay0, by0), max(ay1, by1)


@kernel(inline="always")
def _pose_at(cars_f, w, c, amount):
    """Car c's pose at fraction ``amount`` of the tick, between F_PREV_* and the current pose."""
    px = cars_f[w, c, F_PREV_X]
    py = cars_f[w, c, F_PREV_Y]
    ph = cars_f[w, c, F_PREV_HEADING]
    dh = normalize_angle(cars_f[w, c, F_HEADING] - ph)
    return (px + (cars_f[w, c, F_X] - px) * amount, py + (cars_f[w, c, F_Y] - py) * amount,
            normalize_angle(ph + dh * amount))


@kernel
def detect_contact(cars_f, w, i, j):
    """Contact of the bodies of cars i and j this tick (PaddockJS ``detectVehicleCollision``): the SAT
    overlap at the current poses, else at the first of the poses interpolated over the tick that
    overlaps. Returns (depth m, axis_x, axis_y) as ``box_overlap``; depth <= 0: no contact."""
    depth, ax, ay = box_overlap(cars_f[w, i, F_X], cars_f[w, i, F_Y], cars_f[w, i, F_HEADING],
                                cars_f[w, j, F_X], cars_f[w, j, F_Y], cars_f[w, j, F_HEADING])
    if depth > 0.0:
        return depth, ax, ay
    ix0, ix1, iy0, iy1 = _swept_aabb(cars_f, w, i)
    jx0, jx1, jy0, jy1 = _swept_aabb(cars_f, w, j)
    if not (ix0 - AABB_PAD <= jx1 and ix1 + AABB_PAD >= jx0 and iy0 - AABB_PAD <= jy1
            and iy1 + AABB_PAD >= jy0):
        return 0.0, 0.0, 0.0
    for k in range(1, SWEEP_STEPS):
        amount = k / SWEEP_STEPS
        xi, yi, hi = _pose_at(cars_f, w, i, amount)
        xj, yj, hj = _pose_at(cars_f, w, j, amount)
        depth, ax, ay = box_overlap(xi, yi, hi, xj, yj, hj)
        if depth > 0.0:
            return depth, ax, ay
    return 0.0, 0.0, 0.0


@kernel(inline="always")
def _set_speed(cars_f, w, c, v, sim):
    """Store the scalar speed (clamped to [0, MAX_SPEED]); arcade cars move along their heading, so
    their world velocity follows; simulator cars keep their world velocity (PaddockJS)."""
    v = min(max(v, 0.0), MAX_SPEED)
    cars_f[w, c, F_SPEED] = v
    if not sim:
        h = cars_f[w, c, F_HEADING]
        cars_f[w, c, F_VX] = v * np.cos(h)
        cars_f[w, c, F_VY] = v * np.sin(h)


@kernel
def _respond(cars_f, cars_i, rules, w, i, j, depth, ax, ay, sim):
    """Separate, slow and nudge one touching pair (axis from i to j), as PaddockJS does."""
    fix_i = _pit_fixed(cars_i, w, i)
    fix_j = _pit_fixed(cars_i, w, j)
    one_fixed = fix_i or fix_j
    move = min((depth if one_fixed else 0.5 * depth) + SEP_EXTRA, SEP_CAP)
    nudge = min(max(NUDGE_PER_M * depth, NUDGE_MIN), NUDGE_MAX)
    if not fix_i:
        cars_f[w, i, F_X] -= ax * move
        cars_f[w, i, F_Y] -= ay * move
    if not fix_j:
        cars_f[w, j, F_X] += ax * move
        cars_f[w, j, F_Y] += ay * move
    vi = cars_f[w, i, F_SPEED]
    vj = cars_f[w, j, F_SPEED]
    if one_fixed:
        if not fix_i:
            _set_speed(cars_f, w, i, vi * PIT_FIXED_DAMP, sim)
        if not fix_j:
            _set_speed(cars_f, w, j, vj * PIT_FIXED_DAMP, sim)
    else:
        hi = cars_f[w, i, F_HEADING]
        hj = cars_f[w, j, F_HEADING]
        ni = np.cos(hi) * ax + np.sin(hi) * ay
        nj = np.cos(hj) * ax + np.sin(hj) * ay
        closing = vj * nj - vi * ni
        if closing < 0.0:
            impulse = min(max(-closing * (IMPULSE_BASE + rules[w, R_RESTITUTION]), 0.0), IMPULSE_CAP)
            if ni > 0.0:
                vi = min(max(vi - impulse * ni, 0.0), MAX_SPEED)
            if nj < 0.0:
                vj = min(max(vj + impulse * nj, 0.0), MAX_SPEED)
        _set_speed(cars_f, w, i, vi * CONTACT_DAMP, sim)
        _set_speed(cars_f, w, j, vj * CONTACT_DAMP, sim)
    if not fix_i:
        cars_f[w, i, F_PREV_X] -= ax * move
        cars_f[w, i, F_PREV_Y] -= ay * move
        dh = -ay * nudge
        cars_f[w, i, F_HEADING] = normalize_angle(cars_f[w, i, F_HEADING] + dh)
        cars_f[w, i, F_PREV_HEADING] = normalize_angle(cars_f[w, i, F_PREV_HEADING] + dh)
        if not sim:
            _set_speed(cars_f, w, i, cars_f[w, i, F_SPEED], sim)
    if not fix_j:
        cars_f[w, j, F_PREV_X] += ax * move
        cars_f[w, j, F_PREV_Y] += ay * move
        dh = ay * nudge
        cars_f[w, j, F_HEADING] = normalize_angle(cars_f[w, j, F_HEADING] + dh)
        cars_f[w, j, F_PREV_HEADING] = normalize_angle(cars_f[w, j, F_PREV_HEADING] + dh)
        if not sim:
            _set_speed(cars_f, w, j, cars_f[w, j, F_SPEED], sim)


@kernel
def resolve_contacts(cars_f, cars_i, car_flags, rules, w, n_cars, dt):
    """Count cooldowns down, then resolve every car-car overlap of world ``w``.

    cars_f float64[W, C, NF], cars_i int32[W, C, NI], car_flags int32[W, C], rules float64[W, NR];
    w world index, n_cars car slots to consider (0..n_cars-1), dt s (tick length, for cooldowns).

    Per touching pair (``detect_contact``): the response of the module docstring, with restitution
    ``rules[w, R_RESTITUTION]``.
    Events and cooldowns come from the first pass only (later passes fix overlaps the separation
    itself created, as in PaddockJS): a contact event (I_CNT_CONTACTS += 1 on both cars, the other
    slot's bit in I_CONTACT_SLOTS_LO/HI, I_LAST_CONTACT_WITH = the other slot) is counted when both
    cars' cooldowns were <= 0 at the start of the tick, at most once per pair; every first-pass
    contact sets both cooldowns to 1 s, so a lasting contact counts once. Returns the number of
    contact events this tick.
    """
    tick_cooldowns(cars_f, cars_i, w, n_cars, dt)
    sim = rules[w, R_PHYSICS_MODE] == PHYSICS_SIMULATOR
    reach = BODY_DIAGONAL + 2.0 * MAX_SPEED * dt
    broad2 = reach * reach
    events = 0
    for _pass in range(N_PASSES):
        touched = 0
        for i in range(n_cars - 1):
            if not _takes_part(cars_i, car_flags, w, i):
                continue
            xi = cars_f[w, i, F_X]
            yi = cars_f[w, i, F_Y]
            for j in range(i + 1, n_cars):
                # Broad phase first (two loads), eligibility only for the rare near pairs.
                dx = cars_f[w, j, F_X] - xi
                if dx * dx >= broad2:
                    continue
                dy = cars_f[w, j, F_Y] - yi
                if dx * dx + dy * dy >= broad2:
                    continue
                if not _takes_part(cars_i, car_flags, w, j):
                    continue
                if _pit_fixed(cars_i, w, i) and _pit_fixed(cars_i, w, j):
                    continue
                depth, ax, ay = detect_contact(cars_f, w, i, j)
                if depth <= 0.0:
                    continue
                touched += 1
                if _pass == 0:
                    # Event only when both cars were free at the start of the tick. A free car
                    # touched this tick holds the sentinel TOUCHED (< 0, still "free"), so one
                    # car can count contacts with several others in the same tick.
                    cdi = cars_f[w, i, F_CONTACT_COOLDOWN]
                    cdj = cars_f[w, j, F_CONTACT_COOLDOWN]
                    if cdi <= 0.0 and cdj <= 0.0:
                        cars_i[w, i, I_CNT_CONTACTS] += 1
                        cars_i[w, j, I_CNT_CONTACTS] += 1
                        cars_i[w, i, I_LAST_CONTACT_WITH] = j
                        cars_i[w, j, I_LAST_CONTACT_WITH] = i
                        _mark_partner(cars_i, w, i, j)
                        _mark_partner(cars_i, w, j, i)
                        events += 1
                    cars_f[w, i, F_CONTACT_COOLDOWN] = TOUCHED if cdi <= 0.0 else COOLDOWN
                    cars_f[w, j, F_CONTACT_COOLDOWN] = TOUCHED if cdj <= 0.0 else COOLDOWN
                _respond(cars_f, cars_i, rules, w, i, j, depth, ax, ay, sim)
                xi = cars_f[w, i, F_X]
                yi = cars_f[w, i, F_Y]
        if touched == 0:
            break
    for c in range(n_cars):
        if cars_f[w, c, F_CONTACT_COOLDOWN] < 0.0:
            cars_f[w, c, F_CONTACT_COOLDOWN] = COOLDOWN
    return events
