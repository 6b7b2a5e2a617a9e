"""The built-in driver's preview table of a track (``TrackArrays.ai_preview``), built once per track.

Per centreline sample it tabulates what the built-in driver (``driver.builtin``) needs of the centreline ahead, so that the
driver reads one row instead of sampling the centreline each tick.
"""

import numpy as np

from ..core.jit import allocating_kernel
from .geometry import point_at_arrays
from ..core.trig import wrap_angle

# Built-in driver preview (driver.builtin): interval boundaries ahead of a centreline point, m. Short
# near the car (tight corners must be seen exactly), longer far away where only braking distance
# matters. ``ai_preview`` float64[N+1, N_PREVIEW_COLS] tabulates, per centreline sample, the mean
# |curvature| (1/m) of each interval (columns 0..N_PREVIEW-2), the signed heading change (rad) over
# the intervals ending within PREVIEW_NEAR m (column PREVIEW_TURN) and their largest mean |curvature|
# (column PREVIEW_KMAX): car-independent, so the driver reads it instead of sampling the centreline.
PREVIEW_D = np.array([0.0, 8.0, 18.0, 30.0, 45.0, 65.0, 90.0, 120.0, 160.0, 210.0, 270.0])
N_PREVIEW = 11
PREVIEW_NEAR = 65.0
PREVIEW_TURN = N_PREVIEW - 1
PREVIEW_KMAX = N_PREVIEW
N_PREVIEW_COLS = N_PREVIEW + 1


@allocating_kernel
def build_ai_preview(cx, cy, cs, ch, ccurv, length, preview_d):
    """The ``ai_preview`` table (see PREVIEW_D) of a centreline: float64[N+1, N_PREVIEW_COLS]."""
    n1 = cx.shape[0]
    nk = preview_d.shape[0]
    out = np.zeros((n1, nk + 1), np.float64)
    for i in range(n1):
        s = cs[i]
        h_prev = point_at_arrays(cx, cy, cs, ch, ccurv, length, s + preview_d[0])[2]
        turn = 0.0
        kmax = 0.0
        for k in range(1, nk):
            d0 = preview_d[k - 1]
            d1 = preview_d[k]
            hk = point_at_arrays(cx, cy, cs, ch, ccurv, length, s + d1)[2]
            dh = wrap_angle(hk - h_prev)
            h_prev = hk
            kappa = abs(dh) / (d1 - d0)
            out[i, k - 1] = kappa
            if d1 <= PREVIEW_NEAR:
                turn += dh
                if kappa > kmax:
                    kmax = kappa
        out[i, nk - 1] = turn
        out[i, nk] = kmax
    return out
