"""Where a car's track rays start (``sensing.road_edge``): what their queries read of the track
(``ray_track``, once per sensing call) and the car's own state as PaddockJS's rays take it
(``ray_origin``, once per car): the hint of its queries, its ``track_state``, whether its rays read the
pit surfaces, and which of PaddockJS's paths they may take (``road_edge.origin_paths``)."""

from ..core.jit import kernel
from ..core.layout import FLAG_MAIN_TRACK_RAYS, I_IN_PIT_LANE, I_SEG_HINT
from ..track.nearest_sample import nearest_sample
from ..track.surface import pit_override
from ..vehicle.wheels import pit_override_allowed
from .geometry import G_EDGE_AT, G_PX0, G_PX1, G_PY0, G_PY1, nearest_segment, pit_view
from .march import CH_ILLEGAL, CH_KERB, CH_ROAD_EDGE
from .road_edge import origin_paths
from .track_state import HINT_MARGIN, RayOrigin, RayTrack, hint_range, track_state


@kernel(inline="always")
def ray_track(tr, geo):
    """The ``track_state.RayTrack`` of the TrackArrays ``tr`` and its ``sensor_geometry`` ``geo``. Built
    inside a kernel: ``pit_view`` returns views of the track's arrays (module ``core.jit``)."""
    return RayTrack(tr.cx, tr.cy, tr.cs, tr.cnx, tr.cny, tr.grid_seg, pit_view(tr), geo, int(geo[G_EDGE_AT]),
                    (tr.grass_edge + HINT_MARGIN) ** 2)


@kernel(inline="always")
def ray_origin(tr, rt, cars_i, car_flags, ox, oy, w, c, channels):
    """The ``track_state.RayOrigin`` of car (w, c)'s rays from its centre (ox, oy) m, for the track channels
    of ``channels`` (CH_* bits; 0: an origin that wants none, measures nothing).

    The car's progress is its nearest sample's lap distance (from its nearest segment, descending from
    its I_SEG_HINT: a safe start, a wrong local minimum lies beyond the trust radius and falls back to
    the raster); its candidate segments are ``hint_range``'s and its state ``track_state``'s. Its rays
    read the pit surfaces (PaddockJS's ``includePitLane``) when it is in the pit lane (every wheel on a
    pit surface), or when its pit override (``pitOverrideAllowedForCar``) puts its centre state (from
    its nearest sample) or its ray origin's state in the pit lane. A batch-training car's rays
    (FLAG_MAIN_TRACK_RAYS) query in sample mode."""
    want_edge = (channels & CH_ROAD_EDGE) != 0
    want_kerb = (channels & CH_KERB) != 0
    want_illegal = (channels & CH_ILLEGAL) != 0
    main_only = (car_flags[w, c] & FLAG_MAIN_TRACK_RAYS) != 0    # batch-training: sample mode
    i0 = 0
    count = 0
    progress = 0.0
    oseg = -1
    ooff = 0.0
    include_pit = False
    pit_allowed = False
    use_lines = False
    use_straight = False
    if want_edge or want_kerb or want_illegal:
        cx = rt.cx
        cy = rt.cy
        geo = rt.geo
        hint = cars_i[w, c, I_SEG_HINT]
        if hint < 0 or hint >= cx.shape[0] - 1:
            hint = -1
        _, seg0 = nearest_segment(cx, cy, rt.gseg, geo, ox, oy, hint)
        j0 = nearest_sample(cx, cy, seg0 if seg0 >= 0 else cars_i[w, c, I_SEG_HINT], ox, oy)
        progress = rt.cs[j0]
        i0, count = hint_range(rt.cs, tr.length, progress)
        oseg, oalong, ooff = track_state(cx, cy, rt.cs, rt.cnx, rt.cny, rt.gseg, geo, i0, count, progress,
                                         rt.max_hint2, main_only, ox, oy)
        has_pit = tr.px.shape[0] > 0
        include_pit = cars_i[w, c, I_IN_PIT_LANE] != 0
        pit_allowed = has_pit and pit_override_allowed(cars_i, w, c)
        if (not include_pit and pit_allowed and geo[G_PX0] <= ox <= geo[G_PX1]
                and geo[G_PY0] <= oy <= geo[G_PY1]):
            c_off = (ox - cx[j0]) * rt.cnx[j0] + (oy - cy[j0]) * rt.cny[j0]
            # overridden at either offset: at the larger one
            include_pit = pit_override(rt.pv, ox, oy, max(abs(c_off), abs(ooff)), tr.kerb_edge) >= 0
        use_lines, use_straight = origin_paths(cx, cy, tr.ch, oseg, ooff, oalong, tr.half_width, tr.grass_edge,
                                               has_pit, tr.pit_entry_s, tr.pit_exit_s, tr.length, include_pit,
                                               main_only)
    return RayOrigin(i0, count, progress, main_only, oseg, ooff, use_lines, use_straight, include_pit, pit_allowed,
                     want_edge, want_kerb, want_illegal, ox, oy)
