"""``paddock-ma bench protocol``: what JSON and a process boundary cost against in-process steps.

Workloads (the environment benchmark's cars: ``bench.env.env_bench_config``, 20 controlled cars a world, driven by a
lane-keeping controller over their vectors, ``_policy``; cars whose episode ends get ``resetDrivers``):

* one world, PaddockJS-shaped messages (``{driver: {steering, throttle, brake}}`` per step);
* a batched step of W worlds (``envs: "all"``), vector output and no state, with actions and vectors as
  JSON numbers (the default) or as ``f32-base64``.

Each is timed in process (``BatchEnv.step`` on arrays; ``Dispatcher.handle_line`` on JSON bytes) and
through a ``paddock-ma serve`` subprocess, one request in flight at a time, the client decoding every
reply (``json.loads``, and base64 to numpy for the compact encoding) as a real trainer must; and the
batched compact step once more with the trainer written in Node.js (``bench_node``), the client a
non-Python trainer would have.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ..protocol.client import decode_f32
from ..protocol.codec import pack_f32
from .env import env_bench_config
from .report import table
from .timing import time_for


@functools.cache
def _policy_inputs() -> tuple[int, int, int]:
    """The vector entries the benchmark's policy reads (speed, track offset, heading error: base block
    entries, looked up in the vector's one table). Looked up on first use: the table's module imports
    numba, which the command line must not load before it sets numba's thread count."""
    from ..sim.sensing.vectors import BASE_FIELDS

    names = [name for name, _, _ in BASE_FIELDS]
    return tuple(names.index(f"self.{n}") for n in (
        "speedMetersPerSecond", "trackOffsetMeters", "trackHeadingErrorRadians"))


def _policy(obs: np.ndarray) -> np.ndarray:
    """actions float32[W, K, 3] of a lane-keeping controller over observation vectors [W, K, D]: steer
    against the track offset and heading error, hold about 140 km/h. It drives laps (episodes end now
    and then, when a car runs wide), as a trained policy would; every path below runs the same one."""
    speed_at, offset_at, heading_at = _policy_inputs()
    offset = obs[..., offset_at]
    heading = obs[..., heading_at] * np.pi
    speed = obs[..., speed_at] * 120.0
    acts = np.zeros(obs.shape[:2] + (3,), np.float32)
    acts[..., 0] = np.clip(-0.1 * offset - heading, -1.0, 1.0)
    acts[..., 1] = np.where(speed < 40.0, 0.8, 0.0)
    acts[..., 2] = np.where(speed > 48.0, 0.3, 0.0)
    return acts


def _line(msg: dict) -> bytes:
    return json.dumps(msg, separators=(",", ":")).encode() + b"\n"


class _Trainer:
    """What a trainer on the other side of the protocol does each step: build the request, send it,
    decode the reply, and start a new episode (``resetDrivers`` at a random distance) for every car whose
    episode ended. After the reset every car is moved to a random distance of its world's lap, so the
    worlds do not drive the same stretch in lockstep."""

    def __init__(self, call, worlds: int, cars: int, encoding: str, lap_meters: float, seed: int = 0):
        self.call, self.worlds, self.cars, self.encoding = call, worlds, cars, encoding
        self.batched = not (worlds == 1 and encoding == "dict")
        self.rng = np.random.default_rng(seed)
        self.lap = lap_meters
        self.ids = [f"car-{i:02d}" for i in range(cars)]
        self.running = np.ones((worlds, cars), bool)
        self.obs = np.zeros((worlds, cars, 1), np.float32)
        self._send({"type": "reset", "envs": "all", "options": {"seed": 1}} if self.batched
                   else {"type": "reset", "options": {"seed": 1}})
        self._reset_drivers(np.ones((worlds, cars), bool))

    def _vectors(self, packed_or_lists) -> np.ndarray:
        return decode_f32(packed_or_lists)          # the shipped client's decoder, either encoding

    def _send(self, msg: dict) -> dict:
        doc = json.loads(self.call(_line(msg)))
        if not doc["ok"]:
            raise RuntimeError(f"worker refused a benchmark request: {doc['error']}")
        return doc["result"]

    def _reset_drivers(self, mask: np.ndarray) -> None:
        dist = self.rng.uniform(0.0, self.lap, mask.shape)
        worlds = np.nonzero(mask.any(axis=1))[0].tolist()
        placements = [{d: {"distanceMeters": float(dist[w, k])} for k, d in enumerate(self.ids) if mask[w, k]}
                      for w in worlds]
        if self.batched:
            msg = {"type": "resetDrivers", "envs": worlds, "placements": placements,
                   "resultOptions": {"observationScope": "reset"}}
            if self.encoding != "json":
                msg["encoding"] = self.encoding
            result = self._send(msg)
            if self.obs.shape[2] == 1:
                self.obs = np.zeros((self.worlds, self.cars, len(self._vectors(result["observation"]["vectors"])[0])),
                                    np.float32)
            rows = np.zeros((self.worlds, self.cars), bool)
            rows[worlds] = np.asarray(result["resetMask"], bool)
            self.obs[rows] = self._vectors(result["observation"]["vectors"])
        else:
            result = self._send({"type": "resetDrivers", "placements": placements[0],
                                 "resultOptions": {"observationScope": "reset", "stateOutput": "none"}})
            for d, o in result["observation"].items():
                vector = np.asarray(o["vector"], np.float32)
                if self.obs.shape[2] == 1:
                    self.obs = np.zeros((1, self.cars, len(vector)), np.float32)
                self.obs[0, self.ids.index(d)] = vector
        self.running |= mask

    def step(self) -> None:
        acts = _policy(self.obs)
        if not self.batched:
            result = self._send({"type": "step", "actions": {
                d: {"steering": a[0], "throttle": a[1], "brake": a[2]}
                for d, a, live in zip(self.ids, acts[0].tolist(), self.running[0]) if live}})
            for d, o in result["observation"].items():
                self.obs[0, self.ids.index(d)] = o["vector"]
            ended = np.array([[info["terminated"] or info["truncated"] for info in result["info"]["drivers"].values()]])
        elif self.encoding == "f32-base64":
            result = self._send({"type": "step", "envs": "all", "encoding": self.encoding, "actions": {
                **pack_f32(acts)}})
            self.obs = self._vectors(result["observation"]["vectors"]).copy()
            ended = np.array(result["terminated"]) | np.array(result["truncated"])
        else:
            result = self._send({"type": "step", "envs": "all", "actions": acts.astype(np.float64).tolist()})
            self.obs = self._vectors(result["observation"]["vectors"])
            ended = np.array(result["terminated"]) | np.array(result["truncated"])
        self.running &= ~ended
        if ended.any():
            self._reset_drivers(ended)


def _timed_trainer(call, worlds, cars, encoding, seconds, lap) -> dict:
    trainer = _Trainer(call, worlds, cars, encoding, lap)
    for _ in range(20):      # warm up, and leave the start
        trainer.step()
    latencies = []

    def one():
        t = time.perf_counter()
        trainer.step()
        latencies.append(time.perf_counter() - t)

    timing = time_for(one, seconds)
    calls, elapsed = timing.calls, timing.seconds
    return {"worlds": worlds, "car_steps_per_s": int(calls * worlds * cars / elapsed),
            "ms_per_step": round(1e3 * elapsed / calls, 3),
            "round_trip_ms_median": round(1e3 * float(np.median(latencies)), 3)}


def _lap_meters() -> float:
    from ..sim.track.load import load_track
    return float(load_track(env_bench_config()["track"]).length)


def bench_in_process(worlds: int, cars: int, seconds: float) -> dict:
    """Car-steps/s of the same trainer on ``BatchEnv`` arrays (no JSON): ``step``, then ``reset_drivers``
    of the cars whose episode ended, at random distances."""
    from ..env.batch_env import BatchEnv

    env = BatchEnv(env_bench_config(cars), worlds, copy_obs=False)
    lap = _lap_meters()
    rng = np.random.default_rng(0)

    def reset_drivers(mask):
        env.reset_drivers(mask, {"distance_meters": rng.uniform(0.0, lap, mask.shape).ravel(),
                                 "speed_kph": np.full(mask.size, np.nan)})

    env.reset(seed=1)
    reset_drivers(np.ones((worlds, cars), bool))
    obs = env.latest_obs.copy()

    def one():
        nonlocal obs
        result = env.step(_policy(obs))
        obs = result.obs.copy()
        ended = result.terminated | result.truncated
        if ended.any():
            reset_drivers(ended)
            obs[ended] = env.latest_obs[ended]

    timing = time_for(one, seconds, warmup=20)
    calls, elapsed = timing.calls, timing.seconds
    return {"path": "in-process arrays (BatchEnv.step)", "worlds": worlds,
            "car_steps_per_s": int(calls * worlds * cars / elapsed), "ms_per_step": round(1e3 * elapsed / calls, 3)}


def bench_dispatcher(worlds: int, cars: int, encoding: str, seconds: float) -> dict:
    """Car-steps/s of ``Dispatcher.handle_line`` in process (JSON both ways, no transport)."""
    from ..protocol.messages import Dispatcher

    d = Dispatcher(env_bench_config(cars), num_worlds=worlds)
    row = _timed_trainer(d.handle_line, worlds, cars, encoding, seconds, _lap_meters())
    return {"path": f"in-process JSON ({encoding})", **row}


def bench_ndjson(worlds: int, cars: int, encoding: str, seconds: float) -> dict:
    """Car-steps/s and round-trip ms of a ``paddock-ma serve`` subprocess driven through the shipped
    Python client (``WorkerClient.request_line``), one request in flight."""
    from ..protocol.client import WorkerClient

    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(env_bench_config(cars), f)
        path = f.name
    env = dict(os.environ, OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    try:
        with WorkerClient(config=path, worlds=worlds, max_line_bytes=64 << 20, env=env) as worker:
            row = _timed_trainer(worker.request_line, worlds, cars, encoding, seconds, _lap_meters())
    finally:
        os.unlink(path)
    return {"path": f"NDJSON worker ({encoding})", **row}


NODE_BENCH = Path(__file__).resolve().parents[2] / "workers" / "clients" / "node" / "bench.js"


def bench_node(worlds: int, cars: int, seconds: float) -> dict:
    """The same trainer written in Node.js (``workers/clients/node/bench.js``, f32-base64) against a
    ``paddock-ma serve`` worker: the JSON path as a non-Python trainer sees it."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(env_bench_config(cars), f)
        path = f.name
    env = dict(os.environ, OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    try:
        proc = subprocess.run(["node", str(NODE_BENCH), "--worlds", str(worlds), "--cars", str(cars), "--seconds",
                               str(seconds), "--lap", str(_lap_meters()), "--", sys.executable, "-m", "paddock_ma.cli",
                               "serve", "--config", path, "--worlds", str(worlds), "--max-line-bytes", str(64 << 20)],
                              capture_output=True, text=True, env=env, timeout=600)
    finally:
        os.unlink(path)
    if proc.returncode != 0:
        raise RuntimeError(f"node bench.js failed: {proc.stderr[-2000:]}")
    row = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"path": "NDJSON worker, Node.js client (f32-base64)", "worlds": worlds,
            "car_steps_per_s": row["car_steps_per_s"], "ms_per_step": row["ms_per_step"],
            "round_trip_ms_median": row["round_trip_ms_median"]}


def run(seconds: float = 3.0, worlds: int = 64, cars: int = 20) -> dict:
    """Every path: one world (PaddockJS-shaped messages) and ``worlds`` worlds (batched, JSON numbers and
    f32-base64), ``cars`` controlled cars a world, ``seconds`` each; returns the report (one row per path,
    each with its speed as a ratio to the in-process arrays of the same world count)."""
    rows = [bench_in_process(1, cars, seconds), bench_dispatcher(1, cars, "dict", seconds),
            bench_ndjson(1, cars, "dict", seconds), bench_in_process(worlds, cars, seconds)]
    for encoding in ("json", "f32-base64"):
        rows += [bench_dispatcher(worlds, cars, encoding, seconds), bench_ndjson(worlds, cars, encoding, seconds)]
    rows.append(bench_node(worlds, cars, seconds))
    base = {r["worlds"]: r["car_steps_per_s"] for r in rows if r["path"].startswith("in-process arrays")}
    for r in rows:
        r["ratio_to_in_process"] = round(r["car_steps_per_s"] / base[r["worlds"]], 3)
    return {"cars_per_world": cars, "rows": rows}


def format_report(report: dict) -> str:
    """The rows as a Markdown table."""
    lines = [f"Worker protocol, {report['cars_per_world']} controlled cars a world (the environment workload), "
             "one request in flight, replies decoded by the client.", ""]
    return "\n".join(lines + table(
        ("path", "worlds", "car-steps/s", "ms/step", "round trip ms (median)", "vs in-process arrays"),
        [(r["path"], r["worlds"], f"{r['car_steps_per_s']:,}", r["ms_per_step"], r.get("round_trip_ms_median", ""),
          f"{r['ratio_to_in_process']:.2f}") for r in report["rows"]], left=1))
