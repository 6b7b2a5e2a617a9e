"""Car-car contact: broad phase, oriented-box SAT, separation, impulse and contact events.

Every car is a 4.65 x 1.24 m rectangle centred on its (x, y) and aligned with its heading
(PaddockJS collision body). Contacts are resolved after every car has been integrated in a tick,
in up to three passes over the pairs ``i < j`` (a fixed order, so worlds are deterministic).

A pair takes part only when both cars are active, not destroyed and both carry
``FLAG_COLLIDES``: interaction profiles (batch training, phantoms) switch contact off per car.
A car driven along the pit route (``PIT_ENTERING .. PIT_EXITING``) is never moved by a contact;
its partner takes the whole correction. Pairs where both cars are pit-route driven are skipped.

Differences from PaddockJS, on purpose:
* the broad phase is the centre distance against the body diagonal over all pairs (20 cars are 190
  pairs, cheaper than sorting by progress) rather than progress windows;
* the velocity response is an equal-mass impulse along the contact normal with restitution, applied
  to the world velocity; PaddockJS nudges the scalar speeds along heading. Arcade cars keep only the
  forward component of the result (they cannot slide), simulator cars keep the whole vector;
* there is no swept (time-of-impact) test: at 60 Hz two cars close at most ~3 m per tick against a
  4.65 m body, so nose-to-nose contacts are still caught; a pure side impact faster than ~70 m/s
  could tunnel.
"""

import numpy as np

from ..core.jit import kernel
from ..core.layout import (
    CAR_LENGTH, CAR_WIDTH, F_CONTACT_COOLDOWN, F_HEADING, F_SPEED, F_VX, F_VY, F_X, F_Y, FLAG_COLLIDES,
    I_ACTIVE, I_CNT_CONTACTS, I_CONTACT_SLOTS_HI, I_CONTACT_SLOTS_LO, I_DESTROYED, I_LAST_CONTACT_WITH,
    I_PIT_STATUS, PHYSICS_SIMULATOR, PIT_ENTERING, PIT_EXITING, R_PHYSICS_MODE, R_RESTITUTION,
)

HALF_L = 0.5 * CAR_LENGTH
HALF_W = 0.5 * CAR_WIDTH
# Two bodies can only overlap when their centres are closer than the sum of circumradii.
BROAD_DIST2 = CAR_LENGTH * CAR_LENGTH + CAR_WIDTH * CAR_WIDTH
N_PASSES = 3
SEP_EXTRA = 0.65 / 12.0        # m, pushed beyond the overlap so the pair is clear (0.65 u)
SEP_CAP = 4.5 / 12.0           # m, largest correction per car per pass (4.5 u)
DV_CAP = 60.0                  # m/s, largest velocity change per car per pass (guards blow-ups)
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


@kernel
def _nudge(cars_f, w, c, ax, ay, amount):
    """Turn car c away from the contact: ax, ay point from car c toward the other car."""
    h = cars_f[w, c, F_HEADING]
    side = -np.sin(h) * ax + np.cos(h) * ay   # > 0: the other car is on the right
    h -= side * amount
    if h > np.pi:
        h -= 2.0 * np.pi
    elif h <= -np.pi:
        h += 2.0 * np.pi
    cars_f[w, c, F_HEADING] = h


@kernel
def _velocity(cars_f, w, c, sim):
    if sim:
        return cars_f[w, c, F_VX], cars_f[w, c, F_VY]
    h = cars_f[w, c, F_HEADING]
    v = cars_f[w, c, F_SPEED]
    return v * np.cos(h), v * np.sin(h)


@kernel
def _set_velocity(cars_f, w, c, vx, vy, sim):
    """Store a world velocity; F_SPEED = its body-forward part (arcade: >= 0, along the heading)."""
    h = cars_f[w, c, F_HEADING]
    ch = np.cos(h)
    sh = np.sin(h)
    fwd = vx * ch + vy * sh
    if sim:
        cars_f[w, c, F_VX] = vx
        cars_f[w, c, F_VY] = vy
        cars_f[w, c, F_SPEED] = fwd
    else:
        if fwd < 0.0:
            fwd = 0.0
        cars_f[w, c, F_SPEED] = fwd
        cars_f[w, c, F_VX] = fwd * ch
        cars_f[w, c, F_VY] = fwd * sh


@kernel
def _respond(cars_f, cars_i, rules, w, i, j, depth, ax, ay, sim):
    """Separate, exchange impulse and nudge one overlapping pair (axis from i to j)."""
    fix_i = _pit_fixed(cars_i, w, i)
    fix_j = _pit_fixed(cars_i, w, j)
    # Separation along the minimum-overlap axis.
    if fix_i:
        mi = 0.0
        mj = depth + SEP_EXTRA
    elif fix_j:
        mi = depth + SEP_EXTRA
        mj = 0.0
    else:
        mi = min(0.5 * depth + SEP_EXTRA, SEP_CAP)
        mj = mi
    cars_f[w, i, F_X] -= ax * mi
    cars_f[w, i, F_Y] -= ay * mi
    cars_f[w, j, F_X] += ax * mj
    cars_f[w, j, F_Y] += ay * mj

    # Yaw nudges first so the speeds below are measured on the final headings.
    amount = min(max(NUDGE_PER_M * depth, NUDGE_MIN), NUDGE_MAX)
    if not fix_i:
        _nudge(cars_f, w, i, ax, ay, amount)
    if not fix_j:
        _nudge(cars_f, w, j, -ax, -ay, amount)

    # Impulse along the normal when the pair is closing (equal masses).
    v1x, v1y = _velocity(cars_f, w, i, sim)
    v2x, v2y = _velocity(cars_f, w, j, sim)
    rel = (v2x - v1x) * ax + (v2y - v1y) * ay
    if rel < 0.0:
        e = rules[w, R_RESTITUTION]
        if fix_i or fix_j:
            # The pit car is immovable: the other car takes the full (1 + e) reversal.
            dv = min(-(1.0 + e) * rel, DV_CAP)
            if fix_i:
                v2x = (v2x + dv * ax) * PIT_FIXED_DAMP
                v2y = (v2y + dv * ay) * PIT_FIXED_DAMP
            else:
                v1x = (v1x - dv * ax) * PIT_FIXED_DAMP
                v1y = (v1y - dv * ay) * PIT_FIXED_DAMP
        else:
            dv = min(-0.5 * (1.0 + e) * rel, DV_CAP)
            v1x -= dv * ax
            v1y -= dv * ay
            v2x += dv * ax
            v2y += dv * ay
    if not fix_i:
        _set_velocity(cars_f, w, i, v1x, v1y, sim)
    if not fix_j:
        _set_velocity(cars_f, w, j, v2x, v2y, sim)


@kernel
def resolve_contacts(cars_f, cars_i, car_flags, rules, w, n_cars, dt):
    """Count cooldowns down, then resolve every car-car overlap of world ``w``.

    cars_f float64[W, C, NF], cars_i int32[W, C, NI], car_flags int32[W, C], rules float64[W, NR];
    w world index, n_cars car slots to consider (0..n_cars-1), dt s (tick length, for cooldowns).

    Per overlapping pair: positions separated along the minimum-overlap axis, closing velocity
    reversed with restitution ``rules[w, R_RESTITUTION]``, small yaw nudges away from each other.
    Events and cooldowns come from the first pass only (later passes fix overlaps the separation
    itself created, as in PaddockJS): a contact event (I_CNT_CONTACTS += 1 on both cars, the other
    slot's bit in I_CONTACT_SLOTS_LO/HI, I_LAST_CONTACT_WITH = the other slot) is counted when both
    cars' cooldowns were <= 0 at the start of the tick, at most once per pair; every first-pass
    contact sets both cooldowns to 1 s, so a lasting contact counts once. Returns the number of
    contact events this tick.
    """
    tick_cooldowns(cars_f, cars_i, w, n_cars, dt)
    sim = rules[w, R_PHYSICS_MODE] == PHYSICS_SIMULATOR
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
                if dx * dx >= BROAD_DIST2:
                    continue
                dy = cars_f[w, j, F_Y] - yi
                if dx * dx + dy * dy >= BROAD_DIST2:
                    continue
                if not _takes_part(cars_i, car_flags, w, j):
                    continue
                if _pit_fixed(cars_i, w, i) and _pit_fixed(cars_i, w, j):
                    continue
                depth, ax, ay = box_overlap(cars_f[w, i, F_X], cars_f[w, i, F_Y],
                                            cars_f[w, i, F_HEADING], cars_f[w, j, F_X],
                                            cars_f[w, j, F_Y], cars_f[w, j, F_HEADING])
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
