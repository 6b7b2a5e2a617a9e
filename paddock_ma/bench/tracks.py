"""``paddock-ma bench core``'s track rows: procedural track building and ``locate`` with a hint.

Apart from ``core.py`` because it defines a kernel at import (numba), while the command line reads
``core``'s signature before it sets numba's thread count.
"""

from __future__ import annotations

import time

import numpy as np

from ..sim.core.jit import kernel
from ..sim.track.geometry import locate


def bench_tracks(seeds: int = 10) -> dict:
    """Procedural track generation (centreline, validation, pit lane, query index and rasters) in
    seconds per track over ``seeds`` seeds, after a warm-up build; and ``locate`` with a good hint
    (a car moving 1.4 m per query along the grand-prix), ns per call."""
    from ..sim.track.load import load_track, procedural_track

    build = procedural_track.__wrapped__      # bypass the per-seed cache
    build(100)
    times = []
    for seed in range(seeds):
        t0 = time.perf_counter()
        build(seed * 7919 + 1)
        times.append(time.perf_counter() - t0)
    tr = load_track("grand-prix")
    s = np.arange(0.0, 1.4 * 200_000, 1.4) % tr.length
    xs = np.interp(s, tr.cs, tr.cx)
    ys = np.interp(s, tr.cs, tr.cy)
    _locate_many(tr, xs[:10], ys[:10])
    t0 = time.perf_counter()
    _locate_many(tr, xs, ys)
    per = (time.perf_counter() - t0) / xs.shape[0] * 1e9
    return {"procedural_median_s": round(float(np.median(times)), 3), "procedural_max_s": round(max(times), 3),
            "locate_hint_ns": round(per, 1)}


@kernel
def _locate_many(tr, xs, ys):
    """``locate`` every point in turn with the previous answer as the hint; returns a checksum."""
    hint = 0
    acc = 0.0
    for i in range(xs.shape[0]):
        seg, s, off, h, k = locate(tr, xs[i], ys[i], hint)
        hint = seg
        acc += s
    return acc
