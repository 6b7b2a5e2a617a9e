"""PaddockJS's nearest centreline sample to a point, as its code finds it (metres, on ``TrackArrays``'
centreline; see ``track.geometry`` for the frame and the sample layout).

PaddockJS asks "which centreline sample is nearest" with a hinted search over a window of samples around
the last answer (``NEAREST_WINDOW`` either side), and a car's wheel patches ask it for many points at once.
This module: the clamped projection on a segment (``clamped_projection``), the nearest sample of a
segment's ends (``nearest_sample``), the windowed search (``nearest_sample_in_window``, pruned by arc
length so it skips samples that provably cannot win) and, for the points of one car, one shared run of
window samples (``window_run_near``, ``nearest_sample_in_run``).
"""

import math

import numpy as np

from ..core.jit import kernel


@kernel(inline="always")
def clamped_projection(ax, ay, dx, dy, x, y):
    """PaddockJS's clamped projection parameter of (x, y) (m) on the segment from (ax, ay) along (dx, dy):
    the quotient clamped to [0, 1], 0 for a zero-length segment."""
    ls = dx * dx + dy * dy
    if ls > 0.0:
        return min(max(((x - ax) * dx + (y - ay) * dy) / ls, 0.0), 1.0)
    return 0.0


@kernel(inline="always")
def nearest_sample(cx, cy, seg, x, y):
    """PaddockJS's centre sample (``nearestTrackState``, legacy mode): the index of the centreline
    sample nearest (x, y) (m), searched among the samples around ``seg``, the nearest segment of
    (x, y) (the nearest sample is an end of it or of its neighbours)."""
    n_seg = cx.shape[0] - 1
    j = seg
    best = (x - cx[seg]) ** 2 + (y - cy[seg]) ** 2
    for dk in (-1, 1, 2):
        kk = (seg + dk + n_seg) % n_seg
        d2 = (x - cx[kk]) ** 2 + (y - cy[kk]) ** 2
        if d2 < best:
            best = d2
            j = kk
    return j


NEAREST_WINDOW = 240         # samples either side of the hint: PaddockJS's NEAREST_HINT_WINDOW_SAMPLES
_SKIP_MARGIN = 1e-6          # m: a skipped sample is farther than the best by at least this (rounding-proof)


@kernel(inline="always")
def _arc_between(cs, length, a, b):
    """Lap distance (m) from sample a forward to sample b (indices in [0, N)), wrapping once."""
    d = cs[b] - cs[a]
    return d + length if d < 0.0 else d


@kernel(inline="always")
def _skip_nearer_than(cs, length, kk, lo, p, span, n, gap):
    """The first window position from ``p`` on whose lap distance forward from sample ``kk`` is at
    least ``gap`` (m), or ``span``: a galloping search, the lap distances being monotone along the window
    (window position q is sample (lo + q) mod n)."""
    if p >= span or _arc_between(cs, length, kk, (lo + p) % n) >= gap:
        return p
    step = 1
    while p + step < span and _arc_between(cs, length, kk, (lo + p + step) % n) < gap:
        step *= 2
    a = p + step // 2         # arc < gap here
    b = min(p + step, span)   # arc >= gap here, or the window's end
    while b - a > 1:
        mid = (a + b) // 2
        if _arc_between(cs, length, kk, (lo + mid) % n) < gap:
            a = mid
        else:
            b = mid
    return b


@kernel(inline="always")
def nearest_sample_in_window(cx, cy, cs, length, j, x, y):
    """PaddockJS's ``nearestSampleInRange`` (``nearestTrackState``, legacy mode, with a hint): the index
    of the centreline sample nearest (x, y) (m) among the NEAREST_WINDOW samples either side of sample
    ``j``, the first of equals in window order (from ``j - NEAREST_WINDOW`` on). cx, cy, cs: float64[N+1]
    (the last sample closes the lap); length: lap (m).

    Exactly the answer of scanning all 481 samples, without measuring most of them: a sample k at arc
    length a from a measured sample m is at least d_m - a from (x, y) (a chord is never longer than its
    arc), so after measuring m the scan jumps past every sample whose arc from m is under d_m - best
    (found by a galloping search on the monotone lap distances). Far samples (the rest of the window
    typically lies tens of metres away) are thus passed over in a few comparisons; where the track
    comes back near the point (a hairpin) they are measured. A walk from ``j`` alone is not enough: far
    out on the inside of a tight corner the distances to the samples have local minima."""
    n = cx.shape[0] - 1
    lo = j - NEAREST_WINDOW
    span = 2 * NEAREST_WINDOW + 1
    jb = j % n
    best = (x - cx[jb]) ** 2 + (y - cy[jb]) ** 2       # seeds the bound; its window position is NEAREST_WINDOW
    pb = NEAREST_WINDOW
    prune = n >= span           # a window longer than the lap (a sample in it twice): measure every position
    p = 0
    while p < span:
        kk = (lo + p) % n
        d2 = (x - cx[kk]) ** 2 + (y - cy[kk]) ** 2
        if d2 < best or (d2 == best and p < pb):
            best = d2
            pb = p
            jb = kk
        gap = math.sqrt(d2) - math.sqrt(best) - _SKIP_MARGIN
        p += 1
        if prune and gap > 0.0:
            # positions from p whose arc from kk is under gap cannot be nearer than the best
            p = _skip_nearer_than(cs, length, kk, lo, p, span, n, gap)
    return jb


@kernel(inline="always")
def window_run_near(cx, cy, cs, length, j, x, y, reach):
    """For queries within ``reach`` (m) of (x, y), all in PaddockJS's window around sample ``j``
    (``nearest_sample_in_window``): the window positions (first, last) of the samples that may be
    nearest one of them, when those form one run of consecutive positions; (-1, -1) when they do not (a
    hairpin brings another part of the lap within reach) or the window is longer than the lap.

    A query q within ``reach`` of (x, y) has its nearest sample within d_j + reach (d_j: the distance
    of (x, y) to sample j), and a sample k is at least d_k - reach from q: samples with d_k > d_j +
    2 reach (plus a rounding margin) are never nearest, nor tied. Those within are found with the
    pruned scan's jumps, without measuring most of the window."""
    n = cx.shape[0] - 1
    span = 2 * NEAREST_WINDOW + 1
    if n < span:
        return -1, -1
    lo = j - NEAREST_WINDOW
    jb = j % n
    limit = math.sqrt((x - cx[jb]) ** 2 + (y - cy[jb]) ** 2) + 2.0 * reach + _SKIP_MARGIN
    first = -1
    last = -1
    count = 0
    p = 0
    while p < span:
        kk = (lo + p) % n
        d = math.sqrt((x - cx[kk]) ** 2 + (y - cy[kk]) ** 2)
        if d <= limit:
            if first < 0:
                first = p
            last = p
            count += 1
            p += 1
        else:
            p = _skip_nearer_than(cs, length, kk, lo, p + 1, span, n, d - limit - _SKIP_MARGIN)
    if count != last - first + 1:
        return -1, -1
    return first, last


@kernel(inline="always")
def nearest_sample_in_run(cx, cy, j, first, last, x, y):
    """``nearest_sample_in_window`` for a query that ``window_run_near``'s run (window positions
    first..last around sample ``j``) covers: the first of the nearest samples of the run."""
    n = cx.shape[0] - 1
    kk = (j - NEAREST_WINDOW + first) % n
    best = np.inf
    jb = kk
    for _ in range(last - first + 1):
        d2 = (x - cx[kk]) ** 2 + (y - cy[kk]) ** 2
        if d2 < best:
            best = d2
            jb = kk
        kk += 1
        if kk == n:
            kk = 0
    return jb
