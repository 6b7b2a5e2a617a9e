"""Latency of ``POST /policy/decide-batch`` for N drivers, client and server on this machine.

    paddock-ma bench policy-server --drivers 20 --requests 2000

Starts ``paddock-ma policy-server`` as its own process (one core of its own, as in use) on a free port with
an actor of the examples' shape (hidden 64, 64, 64) over the oval's observation vectors (real ones,
recorded from the engine), then times requests over one kept-alive connection: p50, p99 and max of the
round trip in ms (JSON encoding, HTTP, parsing, the batched forward pass, the reply).
"""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _actor_doc(obs_dim: int, rng) -> dict:
    from ..paddockjs.checkpoint import FORMAT
    sizes = [obs_dim, 64, 64, 64, 2]
    return {"format": FORMAT, "obsDim": obs_dim, "layers": [
        {"weight": (rng.normal(size=(o, i)) / np.sqrt(i)).tolist(), "bias": np.zeros(o).tolist()}
        for i, o in zip(sizes[:-1], sizes[1:])]}


def _observations(drivers: int) -> dict:
    from ..adapters.vector_env import CarVectorEnv
    env = CarVectorEnv("paddock/oval-batch-v0", (drivers + 7) // 8)
    obs, _ = env.reset(seed=0)
    for _ in range(20):
        obs, *_ = env.step(np.tile([0.0, 0.6, 0.0], (env.num_envs, 1)))
    env.close()
    return {f"car-{i:02d}": {"vector": [float(x) for x in obs[i]],
                             "object": {"self": {"id": f"car-{i:02d}", "speedKph": float(obs[i, 0] * 400),
                                                 "trackOffsetMeters": float(obs[i, 11])}}} for i in range(drivers)}


def run(drivers: int = 20, requests: int = 2000, warmup: int = 100) -> dict:
    observations = _observations(drivers)
    d = len(next(iter(observations.values()))["vector"]) + 4
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "actor.json"
        path.write_text(json.dumps(_actor_doc(d, np.random.default_rng(0))))
        port = _free_port()
        proc = subprocess.Popen([sys.executable, "-m", "paddock_ma.cli", "policy-server", "--checkpoint", str(path),
                                 "--port", str(port)], stdout=subprocess.DEVNULL)
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            for _ in range(300):
                try:
                    conn.request("POST", "/policy/reset", json.dumps({"driverIds": list(observations)}),
                                 {"Content-Type": "application/json"})
                    conn.getresponse().read()
                    break
                except OSError:
                    conn.close()
                    time.sleep(0.1)
            body = json.dumps({"driverIds": list(observations), "observations": observations})
            times = []
            for i in range(warmup + requests):
                t0 = time.perf_counter()
                conn.request("POST", "/policy/decide-batch", body, {"Content-Type": "application/json"})
                reply = conn.getresponse().read()
                dt = time.perf_counter() - t0
                if i >= warmup:
                    times.append(dt * 1000)
            assert json.loads(reply)["ok"]
        finally:
            proc.terminate()
            proc.wait(10)
    t = np.array(times)
    return {"drivers": drivers, "requests": requests, "obs_dim": d, "request_bytes": len(body),
            "p50_ms": round(float(np.percentile(t, 50)), 3), "p99_ms": round(float(np.percentile(t, 99)), 3),
            "max_ms": round(float(t.max()), 3)}
