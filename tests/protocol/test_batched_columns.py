"""The batched reply's per-world columns are each world's own: a car ends in one world only, and every
per-world column of the batched reply (``terminated``, ``truncated``, ``endReason``, ``done``, metrics,
episode steps, vectors) equals that world's own one-world reply, step after step.

A batched reply whose ``terminated`` column were rotated by one world would put world 1's ending on
world 0 or 2 here, where that world's own reply says otherwise."""

from __future__ import annotations

import json

import numpy as np

from paddock_ma.catalog import env_config
from paddock_ma.env.episodes import DESTROY_REASON_NAMES
from paddock_ma.protocol.messages import Dispatcher

ENV_ID = "paddock/oval-batch-v0"
WORLDS = 3
ENDING_WORLD = 1
# car-00 of world 1 only: placed near the outer edge, heading out at speed, so it reaches the barrier
RUN_OFF = {"distanceMeters": 300.0, "offsetMeters": 36.0, "speedKph": 150.0, "headingErrorRadians": 0.7}


def send(d: Dispatcher, message) -> dict:
    reply = json.loads(d.handle_line(json.dumps(message).encode()))
    assert reply["ok"], reply
    return reply["result"]


def metric_row(metrics: dict, names: list) -> list:
    """A one-world reply's metrics of one driver as the batched column holds them (numbers)."""
    row = []
    for n in names:
        v = metrics[n]
        if n == "destroyReason":
            v = DESTROY_REASON_NAMES.index(v)
        row.append(float(v) if v is not None else None)
    return row


def compare(batched: dict, singles: list, drivers: list) -> None:
    for i, one in enumerate(singles):
        info = one["info"]
        assert batched["terminated"][i] == [info["drivers"][d]["terminated"] for d in drivers], i
        assert batched["truncated"][i] == [info["drivers"][d]["truncated"] for d in drivers], i
        assert batched["endReason"][i] == [info["drivers"][d]["endReason"] for d in drivers], i
        assert batched["done"][i] == one["done"], i
        assert batched["episodeStep"][i] == [info["drivers"][d]["episodeStep"] for d in drivers], i
        assert batched["metrics"]["values"][i] == [metric_row(one["metrics"][d], batched["metrics"]["names"])
                                                   for d in drivers], i
        assert batched["observation"]["vectors"][i] == [one["observation"][d]["vector"] for d in drivers], i
        assert batched["step"][i] == info["step"], i


def test_a_car_ending_in_one_world_ends_in_that_worlds_columns_only():
    batched, single = (Dispatcher(env_config(ENV_ID), num_worlds=WORLDS) for _ in range(2))
    for d in (batched, single):
        send(d, {"type": "reset", "envs": "all", "options": {"seed": 11}})
    drivers = list(batched.engine.controlled)
    placements = [{drivers[0]: RUN_OFF}]
    send(batched, {"type": "resetDrivers", "envs": [ENDING_WORLD], "placements": placements})
    send(single, {"type": "resetDrivers", "env": ENDING_WORLD, "placements": placements[0]})
    rng = np.random.default_rng(3)
    ended_at = None
    for t in range(120):
        acts = rng.uniform([-0.2, 0.4, 0.0], [0.2, 0.9, 0.1], (WORLDS, len(drivers), 3)).round(3)
        acts[ENDING_WORLD, 0] = [0.0, 1.0, 0.0]            # straight on into the barrier
        reply = send(batched, {"type": "step", "envs": "all", "actions": acts.tolist()})
        singles = [send(single, {"type": "step", "env": w, "actions": {
            d: {"steering": a[0], "throttle": a[1], "brake": a[2]} for d, a in zip(drivers, acts[w].tolist())}})
            for w in range(WORLDS)]
        compare(reply, singles, drivers)
        if reply["terminated"][ENDING_WORLD][0] and ended_at is None:
            ended_at = t
            # the worlds differ in this column now: world 1's car ended, the others' did not
            assert [reply["terminated"][w][0] for w in range(WORLDS)] == [False, True, False]
            assert reply["endReason"][ENDING_WORLD][0] is not None
            assert reply["endReason"][0][0] is None and reply["endReason"][2][0] is None
        if ended_at is not None and t >= ended_at + 3:
            break
    assert ended_at is not None, "the run-off car never ended"
    assert (batched.engine.checksums() == single.engine.checksums()).all()
