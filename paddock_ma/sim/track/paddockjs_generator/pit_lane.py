"""PaddockJS's pit lane: a straight lane beside the start straight, boxes, and Bezier access roads.

``pit_lane(samples, total)`` -> ``PitLane`` in metres (centreline, entry/exit connectors, boxes,
service areas), placed by PaddockJS's scoring of candidate sides and offsets."""

import math
from dataclasses import dataclass

import numpy as np

from .centerline import Samples
from .jsmath import (KERB_WIDTH, PIT_WORLD_PADDING, TRACK_WIDTH, U, WORLD_H, WORLD_W, clamp, js_hypot,
                     normalize_angle, wrap_distance)

PIT_LANE_WIDTH = 12 * U
PIT_LANE_EDGE_GAP = 16 * U
PIT_ACCESS_MIN_LENGTH = 70 * U
PIT_ACCESS_MAX_LENGTH = 150 * U
PIT_ACCESS_TANGENT_RATIO = 0.72
PIT_ACCESS_SAMPLE_STEPS = 24
PIT_ACCESS_TRACK_OVERLAP = PIT_LANE_WIDTH * 0.52
PIT_ACCESS_SEARCH_STEP = 8 * U
PIT_ENTRY_SEARCH_BEFORE = 230 * U
PIT_ENTRY_SEARCH_AFTER = 250 * U
PIT_EXIT_SEARCH_BEFORE = 60 * U
PIT_EXIT_SEARCH_AFTER = 560 * U
PIT_TEAM_COUNT = 10
PIT_BOXES_PER_TEAM = 2
PIT_BOX_COUNT = PIT_TEAM_COUNT * PIT_BOXES_PER_TEAM
PIT_BOX_LENGTH = 9 * U
PIT_BOX_DEPTH = 4.5 * U
PIT_BOX_PAIR_GAP = 4 * U
PIT_TEAM_GAP = 14 * U
PIT_BOX_TO_LANE_GAP = 1.5 * U
PIT_WORKING_LANE_GAP = 1.5 * U
PIT_WORKING_LANE_WIDTH = 8 * U
PIT_SERVICE_QUEUE_GAP = 12 * U
PIT_LANE_ENTRY_BUFFER = 44 * U
PIT_LANE_EXIT_BUFFER = 44 * U
PIT_LANE_FINISH_RATIO = 0.64
PIT_TRACK_CLEARANCE_MARGIN = 5 * U
PIT_LANE_OFFSET_SEARCH_STEP = 12 * U


def _point_at(s: Samples, total, along):
    """pointAt: (x, y, heading, normal_x, normal_y, distance) linearly between samples."""
    wrapped = wrap_distance(along, total)
    low = int(np.searchsorted(s.distance, wrapped, side="left"))
    low = min(low, len(s.x) - 1)
    prev = max(0, low - 1)
    span = max(1.0, float(s.distance[low] - s.distance[prev]))
    amount = clamp((wrapped - float(s.distance[prev])) / span, 0, 1)
    lerp = lambda arr: float(arr[prev]) + (float(arr[low]) - float(arr[prev])) * amount
    heading = float(s.heading[prev]) + normalize_angle(float(s.heading[low]) - float(s.heading[prev])) * amount
    return dict(x=lerp(s.x), y=lerp(s.y), heading=heading, normal_x=lerp(s.normal_x), normal_y=lerp(s.normal_y),
                distance=wrapped)


def _normalize(vx, vy):
    length = js_hypot(vx, vy) or 1.0
    return vx / length, vy / length, length


def _point_clearance(x, y):
    return min(x - PIT_WORLD_PADDING, WORLD_W - PIT_WORLD_PADDING - x, y - PIT_WORLD_PADDING,
               WORLD_H - PIT_WORLD_PADDING - y)


def _nearest_cross_track_error(s: Samples, x, y):
    """|signed offset| from the nearest sample (PaddockJS's track state before the query index exists)."""
    n = len(s.x) - 1
    dx = x - s.x[:n]
    dy = y - s.y[:n]
    i = int(np.argmin(dx * dx + dy * dy))
    return abs(float(dx[i]) * float(s.normal_x[i]) + float(dy[i]) * float(s.normal_y[i]))


def _box_run_length():
    return (PIT_BOX_COUNT * PIT_BOX_LENGTH + PIT_TEAM_COUNT * max(0, PIT_BOXES_PER_TEAM - 1) * PIT_BOX_PAIR_GAP
            + max(0, PIT_TEAM_COUNT - 1) * PIT_TEAM_GAP)


def _pit_layout():
    run = _box_run_length()
    length = run + PIT_LANE_ENTRY_BUFFER + PIT_LANE_EXIT_BUFFER
    return dict(runLength=run, length=length, entryDistance=-length * PIT_LANE_FINISH_RATIO,
                exitDistance=length * (1 - PIT_LANE_FINISH_RATIO))


def _project(start, forward, normal, along, lateral):
    return (start[0] + forward[0] * along + normal[0] * lateral, start[1] + forward[1] * along + normal[1] * lateral)


WORKING_LANE_OFFSET = PIT_LANE_WIDTH / 2 + PIT_WORKING_LANE_GAP + PIT_WORKING_LANE_WIDTH / 2
BOX_LATERAL = WORKING_LANE_OFFSET + PIT_WORKING_LANE_WIDTH / 2 + PIT_BOX_TO_LANE_GAP + PIT_BOX_DEPTH / 2


def _lane_endpoints(basis, side, offset, layout):
    finish, forward, normal = basis
    return (_project(finish, forward, normal, layout["entryDistance"], side * offset),
            _project(finish, forward, normal, layout["exitDistance"], side * offset))


def _score_placement(s, basis, side, offset, layout, width, kerb):
    start, end = _lane_endpoints(basis, side, offset, layout)
    finish, _forward_, normal = basis
    wcx, wcy = WORLD_W / 2, WORLD_H / 2
    mid = ((start[0] + end[0]) / 2, (start[1] + end[1]) / 2)
    outward = js_hypot(mid[0] - wcx, mid[1] - wcy) - js_hypot(finish[0] - wcx, finish[1] - wcy)
    lx, ly, llen = _normalize(end[0] - start[0], end[1] - start[1])
    snx, sny, _ = _normalize(normal[0] * side, normal[1] * side)
    min_clear = math.inf
    min_track = math.inf
    edge = width / 2 + kerb + PIT_TRACK_CLEARANCE_MARGIN
    for index in range(49):
        along = llen * (index / 48)
        px, py = start[0] + lx * along, start[1] + ly * along
        bx, by = px + snx * BOX_LATERAL, py + sny * BOX_LATERAL
        min_clear = min(min_clear, _point_clearance(px, py), _point_clearance(bx, by))
        min_track = min(min_track, _nearest_cross_track_error(s, px, py) - edge)
    return dict(side=side, offset=offset, world=min_clear, track=min_track, outward=outward,
                score=min_track * 5 + min_clear + outward * 3)


def _choose_placement(s, basis, base_offset, layout, width, kerb):
    candidates = []
    for step in range(10):
        offset = base_offset + step * PIT_LANE_OFFSET_SEARCH_STEP
        candidates.append(_score_placement(s, basis, -1, offset, layout, width, kerb))
        candidates.append(_score_placement(s, basis, 1, offset, layout, width, kerb))
    valid = [c for c in candidates if c["world"] > 0 and c["track"] > 0]
    if valid:
        return sorted(valid, key=lambda c: (-int(c["outward"] > 0), -c["track"], -c["world"], c["offset"]))[0]
    return sorted(candidates, key=lambda c: -c["score"])[0]


def _angle_between(ax, ay, bx, by):
    ax, ay, _ = _normalize(ax, ay)
    bx, by, _ = _normalize(bx, by)
    return math.acos(clamp(ax * bx + ay * by, -1, 1))


def _access_connection(s, total, lane_point, lane_forward, direction, start_d, end_d, fallback_d, width):
    def connection(along):
        tp = _point_at(s, total, along)
        signed = (lane_point[0] - tp["x"]) * tp["normal_x"] + (lane_point[1] - tp["y"]) * tp["normal_y"]
        lane_side = 1 if signed >= 0 else -1
        inset = lane_side * max(0.0, width / 2 - PIT_ACCESS_TRACK_OVERLAP)
        connect = (tp["x"] + tp["normal_x"] * inset, tp["y"] + tp["normal_y"] * inset)
        if direction == "entry":
            rx, ry, rlen = _normalize(lane_point[0] - connect[0], lane_point[1] - connect[1])
        else:
            rx, ry, rlen = _normalize(connect[0] - lane_point[0], connect[1] - lane_point[1])
        track_angle = _angle_between(rx, ry, math.cos(tp["heading"]), math.sin(tp["heading"]))
        lane_angle = _angle_between(rx, ry, lane_forward[0], lane_forward[1])
        facing = abs(signed) - width / 2
        score = track_angle * 1100 + lane_angle * 900 + rlen * 0.32 - max(0.0, facing) * 0.18
        return dict(distanceFromStart=along, trackDistance=wrap_distance(tp["distance"], total), trackPoint=tp,
                    trackConnectPoint=connect, pathLength=rlen, trackAngle=track_angle, laneAngle=lane_angle,
                    score=score)

    lo, hi = min(start_d, end_d), max(start_d, end_d)
    best = fallback = None
    along = lo
    while along <= hi:
        c = connection(along)
        fallback = c if fallback is None or c["score"] < fallback["score"] else fallback
        if not (c["trackAngle"] > 1.15 or c["laneAngle"] > 1.15):
            best = c if best is None or c["score"] < best["score"] else best
        along += PIT_ACCESS_SEARCH_STEP
    return best or fallback or connection(fallback_d)


def _bezier(p0, p1, p2, p3, steps=PIT_ACCESS_SAMPLE_STEPS):
    out = []
    for index in range(steps + 1):
        t = index / steps
        mt = 1 - t
        mt2 = mt * mt
        t2 = t * t
        out.append(tuple(mt2 * mt * p0[k] + 3 * mt2 * t * p1[k] + 3 * mt * t2 * p2[k] + t2 * t * p3[k] for k in (0, 1)))
    return out


def _access_road(start, end, start_forward, end_forward, tangent):
    return _bezier(start, (start[0] + start_forward[0] * tangent, start[1] + start_forward[1] * tangent),
                   (end[0] - end_forward[0] * tangent, end[1] - end_forward[1] * tangent), end)


@dataclass(frozen=True)
class PitLane:
    """PaddockJS's pit lane (createPitLaneModel), metres. side: -1 left / +1 right of the start
    straight (along PaddockJS's normal, our right normal); entry/exit roads are cubic Beziers of
    PIT_ACCESS_SAMPLE_STEPS + 1 points (their control polygons in ``*_controls``)."""
    side: int
    offset: float
    width: float
    entry_track_distance: float
    exit_track_distance: float
    lane_start: tuple
    lane_end: tuple
    entry_road: np.ndarray          # float64[25, 2], track connection -> lane start
    exit_road: np.ndarray           # float64[25, 2], lane end -> track connection
    entry_controls: np.ndarray      # float64[4, 2]
    exit_controls: np.ndarray       # float64[4, 2]
    service_normal: tuple
    working_lane_offset: float
    boxes: np.ndarray               # float64[20, 2] garage box centres
    box_lane_distance: np.ndarray   # float64[20] m along the lane from its start
    service_areas: np.ndarray       # float64[10, 2] service area centres (one per team)
    service_lane_distance: np.ndarray  # float64[10] m along the lane from its start
    # the lap distances (m, unwrapped: the entry's and the lane start's negative) PaddockJS maps its pit
    # roads onto (``mapPitDistance``): the entry connection's, the lane start's and end's (its layout's
    # entry and exit distances), the exit connection's
    entry_from_start: float = 0.0
    layout_entry: float = 0.0
    layout_exit: float = 0.0
    exit_from_start: float = 0.0


def pit_lane(s: Samples, total: float, width: float = TRACK_WIDTH, kerb: float = KERB_WIDTH) -> PitLane:
    """PaddockJS's createPitLaneModel on samples (sim units) of a lap of ``total`` sim units, for a
    track ``width`` and ``kerb`` wide (sim units); the result in metres."""
    layout = _pit_layout()
    finish = _point_at(s, total, 0)
    basis = ((finish["x"], finish["y"]), (math.cos(finish["heading"]), math.sin(finish["heading"])),
             (finish["normal_x"], finish["normal_y"]))
    base_offset = width / 2 + kerb + PIT_LANE_EDGE_GAP + PIT_LANE_WIDTH / 2
    placement = _choose_placement(s, basis, base_offset, layout, width, kerb)
    side, offset = placement["side"], placement["offset"]
    lane_start, lane_end = _lane_endpoints(basis, side, offset, layout)
    lx, ly, llen = _normalize(lane_end[0] - lane_start[0], lane_end[1] - lane_start[1])
    access = clamp(max(0.0, offset - width / 2) * 0.9, PIT_ACCESS_MIN_LENGTH, PIT_ACCESS_MAX_LENGTH)
    normal = basis[2]
    snx, sny, _ = _normalize(normal[0] * side, normal[1] * side)
    entry = _access_connection(s, total, lane_start, (lx, ly), "entry",
                               layout["entryDistance"] - PIT_ENTRY_SEARCH_BEFORE,
                               layout["entryDistance"] + PIT_ENTRY_SEARCH_AFTER, layout["entryDistance"] - access, width)
    exit_ = _access_connection(s, total, lane_end, (lx, ly), "exit",
                               layout["exitDistance"] - PIT_EXIT_SEARCH_BEFORE,
                               layout["exitDistance"] + PIT_EXIT_SEARCH_AFTER, layout["exitDistance"] + access, width)
    entry_tangent = clamp(entry["pathLength"] * PIT_ACCESS_TANGENT_RATIO, PIT_LANE_WIDTH, PIT_ACCESS_MAX_LENGTH)
    exit_tangent = clamp(exit_["pathLength"] * PIT_ACCESS_TANGENT_RATIO, PIT_LANE_WIDTH, PIT_ACCESS_MAX_LENGTH)
    eh = entry["trackPoint"]["heading"]
    xh = exit_["trackPoint"]["heading"]
    entry_fwd, exit_fwd = (math.cos(eh), math.sin(eh)), (math.cos(xh), math.sin(xh))
    ec = entry["trackConnectPoint"]
    xc = exit_["trackConnectPoint"]
    entry_controls = [ec, (ec[0] + entry_fwd[0] * entry_tangent, ec[1] + entry_fwd[1] * entry_tangent),
                      (lane_start[0] - lx * entry_tangent, lane_start[1] - ly * entry_tangent), lane_start]
    exit_controls = [lane_end, (lane_end[0] + lx * exit_tangent, lane_end[1] + ly * exit_tangent),
                     (xc[0] - exit_fwd[0] * exit_tangent, xc[1] - exit_fwd[1] * exit_tangent), xc]
    entry_road = _access_road(ec, lane_start, entry_fwd, (lx, ly), entry_tangent)
    exit_road = _access_road(lane_end, xc, (lx, ly), exit_fwd, exit_tangent)

    run = _box_run_length()
    cursor = max(PIT_SERVICE_QUEUE_GAP + PIT_BOX_LENGTH / 2, (llen - run) / 2)
    boxes, box_d, services, service_d = [], [], [], []
    for index in range(PIT_BOX_COUNT):
        along = cursor + PIT_BOX_LENGTH / 2
        target = (lane_start[0] + lx * along, lane_start[1] + ly * along)
        boxes.append((target[0] + snx * BOX_LATERAL, target[1] + sny * BOX_LATERAL))
        box_d.append(along)
        team, team_box = divmod(index, PIT_BOXES_PER_TEAM)
        if team_box == PIT_BOXES_PER_TEAM - 1:
            service = (box_d[index - (PIT_BOXES_PER_TEAM - 1)] + along) / 2
            services.append(_project(lane_start, (lx, ly), (snx, sny), service, WORKING_LANE_OFFSET))
            service_d.append(service)
        cursor += PIT_BOX_LENGTH
        if team_box == 0:
            cursor += PIT_BOX_PAIR_GAP
        elif team < PIT_TEAM_COUNT - 1:
            cursor += PIT_TEAM_GAP
    m = lambda pts: np.asarray(pts, np.float64) / U
    return PitLane(
        side=int(side), offset=offset / U, width=PIT_LANE_WIDTH / U,
        entry_track_distance=entry["trackDistance"] / U, exit_track_distance=exit_["trackDistance"] / U,
        lane_start=(lane_start[0] / U, lane_start[1] / U), lane_end=(lane_end[0] / U, lane_end[1] / U),
        entry_road=m(entry_road), exit_road=m(exit_road), entry_controls=m(entry_controls),
        exit_controls=m(exit_controls), service_normal=(snx, sny), working_lane_offset=WORKING_LANE_OFFSET / U,
        boxes=m(boxes), box_lane_distance=np.asarray(box_d) / U, service_areas=m(services),
        service_lane_distance=np.asarray(service_d) / U,
        entry_from_start=entry["distanceFromStart"] / U, layout_entry=layout["entryDistance"] / U,
        layout_exit=layout["exitDistance"] / U, exit_from_start=exit_["distanceFromStart"] / U)
