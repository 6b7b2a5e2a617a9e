"""What publishing a live preview costs a run: agent-steps/s of a vector env with and without it.

    paddock-ma bench preview --worlds 16 --steps 2000 --fps 10 --pairs 8

Runs paddock/oval-batch-v0 (``--worlds`` worlds x 8 cars, full throttle) for ``--steps`` steps a round,
in ``--pairs`` interleaved pairs of rounds on the same env: one without a preview, one with the preview
tap attached (the order alternates from pair to pair, so a drift of the machine's load falls on both
sides). The preview server runs in a child process (``PreviewProcess``; ``--thread`` for a server thread
of this process) and one WebSocket client in another process reads every frame, as a browser would.
Reports every round's agent-steps/s and each pair's slowdown in percent with their median and spread
(min, max), in wall time and in CPU time of the run's thread (``time.thread_time``: what the run's own
thread paid, which waiting for a loaded machine's cores does not blur) and of this process (its other
threads too: the frame sender), the share of the previewed rounds' CPU time the run's own thread spent
copying and handing in frames (``PreviewTap.seconds``) and the frames the client received.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import time

import numpy as np


def _round(env, actions, steps: int) -> tuple:
    """(agent-steps per wall second, per CPU second of this thread, per CPU second of this process)."""
    t0, c0, p0 = time.perf_counter(), time.thread_time(), time.process_time()
    for _ in range(steps):
        env.step(actions)
    n = steps * env.num_envs
    return n / (time.perf_counter() - t0), n / (time.thread_time() - c0), n / (time.process_time() - p0)


def _slowdowns(off: list, on: list) -> list:
    return [100 * (1 - b / a) for a, b in zip(off, on)]


def _summary(slowdown: list) -> dict:
    return {"pairs_percent": [round(x, 2) for x in slowdown], "median_percent": round(float(np.median(slowdown)), 2),
            "min_max_percent": [round(min(slowdown), 2), round(max(slowdown), 2)]}


def _client(url: str, stop, results) -> None:
    """A WebSocket reader in its own process: counts the frames and bytes it receives until ``stop``."""
    import aiohttp

    sizes = []

    async def read():
        async with aiohttp.ClientSession() as session:
            async with session.ws_connect(url) as ws:
                results.put("connected")
                while not stop.is_set():
                    try:
                        msg = await ws.receive(timeout=0.2)
                    except asyncio.TimeoutError:
                        continue
                    if msg.type != aiohttp.WSMsgType.TEXT:
                        break
                    sizes.append(len(msg.data))
                    if len(sizes) == 2:
                        results.put("first frame")
    asyncio.run(read())
    results.put((len(sizes) - 1, int(np.mean(sizes[1:])) if len(sizes) > 1 else 0))   # the first is a status


def run(worlds: int = 16, steps: int = 2000, fps: float = 10.0, pairs: int = 8, process: bool = True) -> dict:
    from ..adapters.vector_env import CarVectorEnv
    from ..serve.preview import PreviewProcess, PreviewServer, attach_preview
    server = (PreviewProcess if process else PreviewServer)(port=0).start()
    ctx = multiprocessing.get_context("spawn")
    stop, results = ctx.Event(), ctx.Queue()
    reader = ctx.Process(target=_client, args=(f"ws://{server.host}:{server.port}/preview", stop, results),
                         daemon=True)
    reader.start()
    results.get(timeout=120)
    env = CarVectorEnv("paddock/oval-batch-v0", worlds, autoreset_mode="next_step")
    actions = np.tile([0.0, 1.0, 0.0], (env.num_envs, 1)).astype(np.float32)
    env.reset(seed=0)
    tap = attach_preview(env.engine, server, world=0, fps=fps)
    _round(env, actions, 200)                                  # warm: kernels, caches, the first frames
    tap.detach()
    off, on, previewed_seconds, tap.seconds = [], [], 0.0, 0.0
    for pair in range(pairs):
        for previewed in ((False, True) if pair % 2 == 0 else (True, False)):
            if previewed:
                env.engine.add_observer(tap)
                rates = _round(env, actions, steps)
                tap.detach()
                on.append(rates)
                previewed_seconds += steps * env.num_envs / rates[1]
            else:
                off.append(_round(env, actions, steps))
    results.get(timeout=120)          # the first frame arrived (the server builds it a moment after it was handed in)
    stop.set()
    frames, mean_bytes = results.get(timeout=60)
    reader.join(30)
    server.stop()
    env.close()
    wall = [r[0] for r in off], [r[0] for r in on]
    return {"server": "child process" if process else "thread", "worlds": worlds, "cars": env.num_envs,
            "steps": steps, "fps": fps, "pairs": pairs,
            "agent_steps_per_s_without": [int(x) for x in wall[0]], "agent_steps_per_s_with": [int(x) for x in wall[1]],
            "wall_slowdown": _summary(_slowdowns(*wall)),
            "run_thread_cpu_slowdown": _summary(_slowdowns([r[1] for r in off], [r[1] for r in on])),
            "process_cpu_slowdown": _summary(_slowdowns([r[2] for r in off], [r[2] for r in on])),
            "run_thread_share_percent": round(100 * tap.seconds / previewed_seconds, 3),
            "frames_published": tap.hub.published, "frames_received": frames, "mean_frame_bytes": mean_bytes}
