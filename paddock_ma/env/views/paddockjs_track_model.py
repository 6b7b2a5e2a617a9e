"""PaddockJS 2.0.0's track model (a snapshot's ``track``) from our track, in PaddockJS's sim units.

PaddockJS's snapshot carries its whole track model (``buildTrackModel``): the widths, the centreline
samples, sectors, DRS zones, timing lines, and the pit lane's geometry (access roads, fast and working
lanes, garage boxes, service areas, teams). ``track_model(batch)`` builds the same keys from our
``TrackArrays`` (12 sim units per metre, PaddockJS's frame: x right, y down): the samples are our
centreline (on a ``trackSeed`` track, PaddockJS's own 3,600 samples), the pit lane our pit path (on a
``trackSeed`` track PaddockJS's access roads and fast lane) and our service boxes (PaddockJS's service
areas on a ``trackSeed`` track). Garage boxes are placed behind each service area as PaddockJS lays them
out, where the pit surfaces have them (``sim.track.pit_lane.pit_geometry``); the bounds are the pit
complex's. A track without a pit lane (a ``trackGeneration``
training profile) has ``pit_lane`` None, as PaddockJS's model has ``pitLane: null``. A ``trackSeed``
track adds PaddockJS's seed, control points and generation options (its ``trackGeneration`` resolved). The model is static: built once per track and config, shared.
"""

from __future__ import annotations

import json
import math

import numpy as np

from ...paddockjs.naming import python_name

SIM_UNITS_PER_METER = 12.0
BARRIER_WIDTH_METERS = 0.55        # PaddockJS's TRACK.barrierWidth
WORLD = {"width": 42600, "height": 25776}   # PaddockJS's WORLD (sim units): the canvas its tracks fit
SECTOR_COUNT = 3
TIMING_LINE_SPACING_METERS = 175.0  # PaddockJS spaces its timing lines ~175 m apart (a whole number a lap)
BOXES_PER_TEAM = 2
BOX_LENGTH, BOX_DEPTH = 9.0, 4.5                 # m, PaddockJS's garage box
SERVICE_LENGTH, SERVICE_DEPTH = 11.0, 5.0        # m, PaddockJS's service area
SERVICE_QUEUE_GAP = 12.0                         # m, queue point before a service area
TEAM_COLORS = ("#e10600", "#00a3ff", "#f1c65b", "#38bdf8", "#22c55e")

_CACHE: dict = {}          # (id(track), id(config)) -> (track, config, model); the last CACHE_SIZE
CACHE_SIZE = 16


def _u(value: float) -> float:
    return float(value) * SIM_UNITS_PER_METER


def _pt(x, y, **extra) -> dict:
    return {"x": _u(x), "y": _u(y), **extra}


def _samples(tr) -> list:
    u = SIM_UNITS_PER_METER
    # curvature per sim unit (PaddockJS's unit), signed as ours (positive: turning right)
    return [{"x": x * u, "y": y * u, "distance": s * u, "heading": h, "normal_x": nx, "normal_y": ny,
             "curvature": k / u}
            for x, y, s, h, nx, ny, k in zip(tr.cx.tolist(), tr.cy.tolist(), tr.cs.tolist(), tr.ch.tolist(),
                                             tr.cnx.tolist(), tr.cny.tolist(), tr.ccurv.tolist())]


def _point_on_centreline(tr, s: float) -> dict:
    i = int(np.clip(np.searchsorted(tr.cs, s % tr.length, side="right") - 1, 0, len(tr.cs) - 2))
    t = (s % tr.length - tr.cs[i]) / max(tr.cs[i + 1] - tr.cs[i], 1e-12)
    x = tr.cx[i] + t * (tr.cx[i + 1] - tr.cx[i])
    y = tr.cy[i] + t * (tr.cy[i + 1] - tr.cy[i])
    return {"x": _u(x), "y": _u(y), "heading": float(tr.ch[i]), "normal_x": float(tr.cnx[i]),
            "normal_y": float(tr.cny[i])}


def _sectors(tr) -> list:
    length = _u(tr.length)
    bounds = [_u(s) for s in tr.sector_s[:SECTOR_COUNT]] + [length] if len(tr.sector_s) >= SECTOR_COUNT else \
        [length * k / SECTOR_COUNT for k in range(SECTOR_COUNT + 1)]
    return [{"index": k + 1, "id": f"s{k + 1}", "label": f"S{k + 1}", "start": bounds[k], "end": bounds[k + 1],
             "start_ratio": bounds[k] / length, "end_ratio": bounds[k + 1] / length,
             "length": bounds[k + 1] - bounds[k]} for k in range(SECTOR_COUNT)]


def _timing_lines(tr) -> dict:
    count = max(1, int(round(tr.length / TIMING_LINE_SPACING_METERS)))
    spacing_m = float(tr.length) / count
    lines = []
    for k in range(count):
        p = _point_on_centreline(tr, k * spacing_m)
        lines.append({"index": k, "distance": _u(k * spacing_m), "distance_meters": k * spacing_m,
                      "x": p["x"], "y": p["y"], "heading": p["heading"]})
    return {"spacing": _u(spacing_m), "spacing_meters": spacing_m, "count": count, "lines": lines}


def _road_point(tr, k: int, with_heading: bool = False, with_distance: bool = False) -> dict:
    out = {"x": _u(tr.px[k]), "y": _u(tr.py[k])}
    if with_heading:
        out["heading"] = float(tr.ph[k])
    if with_distance:
        out["distance"] = _u(tr.ps[k])
    return out


def _access(tr, which: str, steps: int) -> dict:
    """PaddockJS's pit ``entry``/``exit``: the track point where the access road leaves (joins) the
    track, the road's centreline (``steps`` + 1 points) and its connector (track point + road)."""
    n = len(tr.px)
    road = list(range(0, steps + 1)) if which == "entry" else list(range(n - 1 - steps, n))
    s = float(tr.pit_entry_s if which == "entry" else tr.pit_exit_s)
    track_point = _point_on_centreline(tr, s)
    tp = {"x": track_point["x"], "y": track_point["y"], "heading": track_point["heading"], "distance": _u(s)}
    side = float(tr.pit_side) or 1.0
    edge_offset = _u(tr.half_width) * side
    edge = {"x": tp["x"] + track_point["normal_x"] * edge_offset, "y": tp["y"] + track_point["normal_y"] * edge_offset,
            "heading": tp["heading"]}
    connect_k = road[0] if which == "entry" else road[-1]
    lane_k = road[-1] if which == "entry" else road[0]
    centreline = [_road_point(tr, k) for k in road]
    if which == "entry":
        connector = [dict(tp)] + centreline
    else:
        connector = centreline + [{"x": tp["x"], "y": tp["y"]}]
    return {"track_distance": _u(s), "distance_from_start": _u(s if which == "exit" or s < tr.length / 2
                                                             else s - tr.length),
            "track_point": tp, "edge_point": edge,
            "track_connect_point": _road_point(tr, connect_k, with_heading=True),
            "lane_point": _road_point(tr, lane_k), "road_centerline": centreline, "connector": connector}


def _rect(cx, cy, fx, fy, nx, ny, length, depth) -> list:
    """The four corners (sim units) of a length x depth rectangle centred at (cx, cy) m, long side along
    (fx, fy)."""
    hl, hd = length / 2, depth / 2
    return [_pt(cx + a * hl * fx + b * hd * nx, cy + a * hl * fy + b * hd * ny)
            for a, b in ((-1, 1), (1, 1), (1, -1), (-1, -1))]


def _teams(batch) -> list:
    """PaddockJS's pit teams: one per service box, named after its first driver, with its crew."""
    cfg, tr = batch.config, batch.track
    params = batch.state.car_params[0] if batch.state is not None else None
    boxes = len(tr.box_x)
    owners: dict[int, list] = {b: [] for b in range(boxes)}
    for c, d in enumerate(batch.driver_ids):
        team = cfg.drivers[c].team if c < len(cfg.drivers) else None
        box = team if team is not None and 0 <= team < boxes else (c // BOXES_PER_TEAM) % max(boxes, 1)
        owners[box].append(c)
    teams = []
    for b in range(boxes):
        first = owners[b][0] if owners[b] else None
        name = (cfg.drivers[first].name or batch.driver_ids[first]) if first is not None else f"Team {b + 1}"
        color = (cfg.drivers[first].color if first is not None else None) or TEAM_COLORS[b % len(TEAM_COLORS)]
        crew = ({"speed": float(params[first, 10]), "consistency": float(params[first, 11]),
                 "reliability": float(params[first, 12])} if first is not None and params is not None
                else {"speed": 0.5, "consistency": 0.5, "reliability": 0.5})
        teams.append({"id": f"team-{b + 1}", "name": f"{name} Team", "color": color, "index": b,
                      "box_ids": [f"team-{b + 1}-box-{k + 1}" for k in range(BOXES_PER_TEAM)],
                      "service_area_id": f"team-{b + 1}-service", "pit_crew": crew})
    return teams


def _pit_lane(batch) -> dict | None:
    """PaddockJS's ``pitLane``; None on a track without a pit lane (PaddockJS's ``pitLane: null``)."""
    tr = batch.track
    if len(tr.px) < 2:
        return None
    steps = _access_steps(tr)
    n = len(tr.px)
    a, b = steps, n - 1 - steps                         # fast lane start / end on the pit path
    ax, ay, bx, by = float(tr.px[a]), float(tr.py[a]), float(tr.px[b]), float(tr.py[b])
    lane_len = math.hypot(bx - ax, by - ay)
    fx, fy = ((bx - ax) / lane_len, (by - ay) / lane_len) if lane_len > 0 else (1.0, 0.0)
    side = float(tr.pit_side) or 1.0
    # the service side: away from the track, i.e. along the pit side's normal of the lane
    nx, ny = -fy * side, fx * side
    width = float(tr.pit_width)
    working_offset = width / 2 + 1.5 + 4.0
    teams = _teams(batch)
    service_areas, boxes = [], []
    for t, team in enumerate(teams):
        sx, sy = float(tr.box_x[t]), float(tr.box_y[t])
        along = float(tr.box_path_s[t] - tr.ps[a])
        qx, qy = sx - fx * SERVICE_QUEUE_GAP, sy - fy * SERVICE_QUEUE_GAP
        service_areas.append({
            "id": team["service_area_id"], "index": t, "team_index": t, "distance_along_lane": _u(along),
            "queue_distance_along_lane": _u(along - SERVICE_QUEUE_GAP),
            "lane_target": _pt(sx, sy), "center": _pt(sx, sy), "queue_point": _pt(qx, qy),
            "length": _u(SERVICE_LENGTH), "depth": _u(SERVICE_DEPTH),
            "corners": _rect(sx, sy, fx, fy, nx, ny, SERVICE_LENGTH, SERVICE_DEPTH),
            "queue_corners": _rect(qx, qy, fx, fy, nx, ny, SERVICE_LENGTH * 0.72, SERVICE_DEPTH),
            "garage_box_ids": list(team["box_ids"]), "pit_crew": dict(team["pit_crew"]),
            "team_id": team["id"], "team_name": team["name"], "team_color": team["color"]})
        for k in range(BOXES_PER_TEAM):
            shift = (k - 0.5) * (BOX_LENGTH + 4.0)
            lx, ly = sx + fx * shift, sy + fy * shift
            # PaddockJS's garage: beyond the working lane (8 m wide, on the service area's centre line) and
            # a 1.5 m gap, as the pit surfaces lay it (``sim.track.pit_lane.pit_geometry``)
            cx, cy = lx + nx * (4.0 + 1.5 + BOX_DEPTH / 2), ly + ny * (4.0 + 1.5 + BOX_DEPTH / 2)
            boxes.append({
                "id": team["box_ids"][k], "index": len(boxes), "team_index": t, "team_box_index": k,
                "distance_along_lane": _u(along + shift), "lane_target": _pt(lx, ly), "center": _pt(cx, cy),
                "length": _u(BOX_LENGTH), "depth": _u(BOX_DEPTH),
                "corners": _rect(cx, cy, fx, fy, nx, ny, BOX_LENGTH, BOX_DEPTH),
                "team_id": team["id"], "team_name": team["name"], "team_color": team["color"]})
    wsx, wsy = ax + nx * working_offset, ay + ny * working_offset
    wex, wey = bx + nx * working_offset, by + ny * working_offset
    entry, exit_ = _access(tr, "entry", steps), _access(tr, "exit", steps)
    xs = [p["x"] for p in entry["road_centerline"] + exit_["road_centerline"]] + [c["x"] for s in boxes
                                                                                   for c in s["corners"]]
    ys = [p["y"] for p in entry["road_centerline"] + exit_["road_centerline"]] + [c["y"] for s in boxes
                                                                                   for c in s["corners"]]
    entry_d = float(tr.pit_entry_s) - float(tr.length) if tr.pit_entry_s > tr.length / 2 else float(tr.pit_entry_s)
    return {
        "enabled": True, "side": int(side), "width": _u(width), "offset": _u(_lane_offset(tr, a)),
        "layout": {"run_length": _u(lane_len), "length": _u(float(tr.pit_exit_s) - entry_d),
                   "entry_distance": _u(entry_d), "exit_distance": _u(float(tr.pit_exit_s)),
                   "entry_buffer": _u(float(tr.ps[a])), "exit_buffer": _u(float(tr.ps[-1] - tr.ps[b]))},
        "box_count": len(boxes), "team_count": len(teams), "boxes_per_team": BOXES_PER_TEAM,
        "entry": entry, "exit": exit_,
        "main_lane": {"start": _pt(ax, ay), "end": _pt(bx, by), "points": [_pt(ax, ay), _pt(bx, by)],
                      "length": _u(lane_len), "heading": math.atan2(by - ay, bx - ax)},
        "fast_lane": {"offset": 0.0, "width": _u(width)},
        "working_lane": {"start": _pt(wsx, wsy), "end": _pt(wex, wey), "points": [_pt(wsx, wsy), _pt(wex, wey)],
                         "offset": _u(working_offset), "width": _u(8.0)},
        "service_normal": {"x": nx, "y": ny, "length": math.hypot(nx, ny)},
        "boxes": boxes, "service_areas": service_areas,
        "bounds": ({"min_x": _u(tr.pit_geom[2]), "max_x": _u(tr.pit_geom[3]), "min_y": _u(tr.pit_geom[4]),
                    "max_y": _u(tr.pit_geom[5])} if len(tr.pit_geom) else
                   {"min_x": min(xs), "max_x": max(xs), "min_y": min(ys), "max_y": max(ys)}),
        "teams": teams,
    }


def _access_steps(tr) -> int:
    """Points of each access road on the pit path, less one (the pit path is entry road, lane, exit road)."""
    from ...sim.track.surface import PIT_CONN_STEPS
    return min(PIT_CONN_STEPS, (len(tr.px) - 1) // 2)


def _lane_offset(tr, a: int) -> float:
    """Distance (m) from the start straight's centreline to the fast lane's start."""
    p = _point_on_centreline(tr, 0.0)
    return math.hypot(_u(tr.px[a]) - p["x"], _u(tr.py[a]) - p["y"]) / SIM_UNITS_PER_METER


def _zone(z: dict, total: float) -> dict:
    """A DRS zone of the snapshot's track (sim units): PaddockJS's normalizeDrsZone of ``z``."""
    from ...sim.track.paddockjs_generator.centerline import normalize_drs_zone
    start, end = normalize_drs_zone(z, total)
    ratios = {"start_ratio": z["startRatio"], "end_ratio": z["endRatio"]} if "startRatio" in z else {}
    return {"id": z["id"], **ratios, "start": _u(start), "end": _u(end)}


def _generated_fields(cfg, tr) -> dict:
    """The keys PaddockJS's generated tracks add (seed, controls, generation options), and the DRS zones
    of a PaddockJS track object (``drs_zones`` only); {} otherwise."""
    if isinstance(cfg.track, dict):
        from ...sim.track.paddockjs_track import object_drs_zones
        return {"drs_zones": [_zone(z, _u(tr.length)) for z in object_drs_zones(cfg.track)]}
    name = cfg.track if isinstance(cfg.track, str) else ""
    if not name.startswith("paddockjs:"):
        return {}
    from ...sim.track.paddockjs_track import paddockjs_track_info
    info = paddockjs_track_info(int(name.split(":", 1)[1]), cfg.track_generation)
    total = _u(info.length)
    zones = [_zone(z, total) for z in info.drs_zones]
    return {"drs_zones": zones, "seed": int(info.seed), "curve_interpolation": "centripetal",
            "centerline_controls": [{"x": float(x), "y": float(y)} for x, y in np.asarray(info.controls).tolist()],
            # PaddockJS's cacheKey is the JSON of its options in metres; ours the JSON of the options as given
            "generation_options": _python_names({**info.options,
                                                 "cacheKey": json.dumps(info.options, separators=(",", ":"))})}


def _python_names(value):
    """PaddockJS's option object with Python key names (the wire gives them back)."""
    if isinstance(value, dict):
        return {python_name(k): _python_names(v) for k, v in value.items()}
    return value


def drs_zone_ids(batch) -> list:
    """The ids of the track's DRS zones (PaddockJS's ``drsZoneId``s), in the order of its ``drs_start``."""
    return [z["id"] for z in track_model(batch)["drs_zones"]]


def track_model(batch) -> dict:
    """``track`` of a PaddockJS snapshot for ``batch``'s track and config (sim units; see the module
    docstring). Shared between calls: copy before changing it."""
    key = (id(batch.track), id(batch.config))
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is batch.track and hit[1] is batch.config:
        return hit[2]
    tr, cfg = batch.track, batch.config
    generated = _generated_fields(cfg, tr)
    model = {"name": cfg.track_name, "width": _u(2 * tr.half_width), "kerb_width": _u(tr.kerb_edge - tr.half_width),
             "gravel_width": _u(tr.gravel_edge - tr.kerb_edge), "runoff_width": _u(tr.grass_edge - tr.gravel_edge),
             "barrier_width": _u(BARRIER_WIDTH_METERS), "sample_count": len(tr.cs) - 1,
             "drs_zones": generated.pop("drs_zones", []), **generated,
             "length": _u(tr.length), "samples": _samples(tr), "sectors": _sectors(tr),
             "pit_lane": _pit_lane(batch), "timing_lines": _timing_lines(tr)}
    while len(_CACHE) >= CACHE_SIZE:
        del _CACHE[next(iter(_CACHE))]
    _CACHE[key] = (batch.track, batch.config, model)
    return model
