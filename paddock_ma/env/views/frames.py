"""The one adapter from an engine's state to what the viewer and PaddockJS's preview stream draw.

``preview_frame(engine, w)`` is PaddockJS's packet ``{"type": "preview:snapshot", "snapshot",
"observation", "meta"}`` of world ``w`` of a ``BatchEnv``: the snapshot is the world's state (today
``env.views.state_view.minimal_state`` in wire names, plus each car's controlled flag, episode end reason
and metrics) with what PaddockJS's renderer reads of a snapshot (``paddockjs_render_fields``): car
positions in its simulation units (``UNITS_PER_METER`` a metre, ``meta.unitsPerMeter`` says so), its race
control, safety car, events and penalties; the observation is the controlled drivers' observation objects
(rays and radar in real units). Each car also carries what PaddockJS's timing tower and telemetry
panel read (``env.views.timing_view``: throttle, brake, tyre, gaps, race status, lap telemetry), and the
cars are listed in race order as PaddockJS lists them. PaddockJS's Policy Runner draws such a packet on
the track it builds itself (the same track for a ``trackSeed`` config: a packet carries no track). ``track_picture(engine)``
is the static track for our viewer: the surface raster (kerbs, runoff, pit lane) and the centreline. When the state view becomes PaddockJS's snapshot shape, only this module changes.
"""

from __future__ import annotations

import base64

import numpy as np

from ..episodes import END_REASON_NAMES, metrics_dicts
from ..json_safe import NAMES_ONLY, wire_converter
from .observation_object import object_view
from .state_view import minimal_state
from .timing_view import race_order, timing_fields
from .world_copy import WorldCopy, copy_world

PACKET_TYPE = "preview:snapshot"
UNITS_PER_METER = 12.0          # PaddockJS's simulation units per metre: its snapshots' and renderer's positions
names_to_wire = wire_converter(NAMES_ONLY)      # a frame's parts: every key a name, wire-spelt
SURFACE_NAMES = ("track", "kerb", "gravel", "grass", "barrier", "pit-entry", "pit-lane", "pit-exit", "pit-box")


def observed_drivers(engine, observe) -> list[str]:
    """The controlled drivers whose observation objects a frame carries: ``observe`` True (all), False
    (none), None (the first: its rays and radar for the viewer at a fraction of the cost of all) or a list."""
    if observe is True:
        return list(engine.controlled)
    if observe is None:
        return list(engine.controlled[:1])
    if not observe:
        return []
    unknown = [d for d in observe if d not in engine.controlled]
    if unknown:
        raise ValueError(f"observe: {unknown} are not controlled drivers; expected some of {list(engine.controlled)}")
    return list(observe)


def preview_frame(engine, w: int = 0, observe=None, meta: dict | None = None) -> dict:
    """PaddockJS's preview packet of world ``w`` of a reset ``BatchEnv`` (see the module docstring);
    ``observe``: whose observation objects it carries (``observed_drivers``). An observation object costs
    about as much to build as the whole snapshot, hence the default of one."""
    return copy_frame(copy_world(engine, w, extra=frame_extra(engine, observe, meta)))


def frame_extra(engine, observe=None, meta: dict | None = None) -> dict:
    """What a ``WorldCopy`` carries for ``copy_frame``: the observed drivers (checked here) and the meta."""
    return {"observe": observed_drivers(engine, observe), "meta": meta or {}}


def copy_frame(copy: WorldCopy) -> dict:
    """The packet of a ``WorldCopy`` made with ``extra=frame_extra(...)``: what ``preview_frame`` builds,
    on whatever thread or process holds the copy (a live preview's publisher)."""
    snap = minimal_state(copy, 0)["snapshot"]
    for car, timing in zip(snap["cars"], timing_fields(copy, 0)):      # both in slot order
        car.update(timing)
    controlled = {d: k for k, d in enumerate(copy.controlled)}
    running = copy.running_mask()[0]
    metrics = metrics_dicts(copy.latest_metrics[0])          # one call for every controlled car
    ep_end = copy.episodes().end_reason[0] if not running.all() else None
    for car in snap["cars"]:
        k = controlled.get(car["id"])
        car["controlled"] = k is not None
        if k is not None:
            car["episode_running"] = bool(running[k])
            car["end_reason"] = None if ep_end is None or running[k] else END_REASON_NAMES[int(ep_end[k])]
            car["metrics"] = metrics[k]
    observation = {d: {"object": names_to_wire(object_view(copy, 0, controlled[d]))}     # keys: driver ids
                   for d in copy.extra.get("observe", ())}
    paddockjs_render_fields(snap, copy)
    snap["cars"] = race_order(snap["cars"])                  # the timing tower lists them in this order
    head = {"world": copy.world, "worlds": copy.statics.num_worlds, "seed": copy.seed,
            "track": copy.config.track, "controlledDrivers": list(copy.controlled),
            "step": snap["step"], "unitsPerMeter": UNITS_PER_METER}     # the Policy Runner shows meta.step
    return {"type": PACKET_TYPE, "snapshot": names_to_wire(snap), "observation": observation,
            "meta": {**head, **copy.extra.get("meta", {})}}


def paddockjs_render_fields(snap: dict, engine) -> None:
    """Give a minimal-state snapshot (snake_case, in place) what PaddockJS's external renderer reads: car
    ``x``/``y`` in its simulation units, ``race_control`` (mode, finished), ``safety_car``, ``events``,
    ``penalties``, ``total_laps`` and ``replay_ghosts`` (none here); and removes ``track``."""
    for car in snap["cars"]:
        car["x"] *= UNITS_PER_METER
        car["y"] *= UNITS_PER_METER
    snap["race_control"] = {"mode": snap["race_mode"], "finished": snap["race_finished"],
                            "red_flag": snap["red_flag"]}
    snap["safety_car"] = {"deployed": snap["race_mode"] == "safety-car"}
    snap["events"], snap["penalties"], snap["replay_ghosts"] = [], [], []
    snap["total_laps"] = int(engine.config.total_laps)
    # The renderer rebuilds its track from a snapshot that has one, reading its full centreline
    # (`track.samples`): the state view's short track summary would break it, so a packet has no track
    # and the page draws the track it built itself for the same config.
    snap.pop("track", None)


def in_metres(packet: dict) -> dict:
    """A packet's car positions in metres (``meta.unitsPerMeter`` undone; a packet without it is in
    metres already): the viewer's and a test's reading of a frame."""
    units = (packet.get("meta") or {}).get("unitsPerMeter") or 1.0
    cars = [{**car, "x": car["x"] / units, "y": car["y"] / units} for car in packet["snapshot"]["cars"]]
    return {**packet, "snapshot": {**packet["snapshot"], "cars": cars},
            "meta": {**(packet.get("meta") or {}), "unitsPerMeter": 1.0}}


def track_picture(engine) -> dict:
    """The static track of an engine for a viewer: the surface raster ``surfaces`` (base64 int8[height,
    width], codes indexing ``surfaceNames``; cell (0, 0)'s corner at (``x0``, ``y0``) m, ``cell`` m a
    cell, rows along +y) and the centreline ``centreline`` ([x, y] m, every few metres)."""
    tr = engine.track
    grid = np.ascontiguousarray(tr.grid_surf, np.int8)
    step = max(1, len(tr.cx) // 800)
    return {"name": engine.config.track, "lengthMeters": float(tr.length), "x0": float(tr.grid_x0),
            "y0": float(tr.grid_y0), "cell": float(tr.grid_cell), "width": int(grid.shape[1]),
            "height": int(grid.shape[0]), "surfaceNames": list(SURFACE_NAMES),
            "surfaces": base64.b64encode(grid.tobytes()).decode("ascii"),
            "centreline": np.round(np.column_stack([tr.cx[::step], tr.cy[::step]]), 2).tolist()}
