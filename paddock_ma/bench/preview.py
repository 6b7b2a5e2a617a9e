"""What publishing a live preview costs a run: agent-steps/s of a vector env with and without it.

    paddock-ma bench preview --worlds 16 --steps 2000 --fps 10

Runs paddock/oval-batch-v0 (``--worlds`` worlds x 8 cars, full throttle) for ``--steps`` steps
``--repeats`` times each way, alternating, with a preview server on a free port and one WebSocket client
reading every frame; reports the best of each, the slowdown in percent, the extra CPU time of this
process (all its threads: the cost a loaded machine's scheduling does not blur), and the share of the run's time
its own thread spent building and handing in frames (``PreviewTap.seconds``: the cost that does not
depend on how loaded the machine is; the rest of the slowdown is the server thread's serialising and
sending, which shares the interpreter lock).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import threading
import time

import numpy as np


_CPU = {"plain": [], "previewed": []}      # CPU seconds of this process (all its threads) per run


def _steps_per_second(env, steps: int, kind: str | None = None) -> float:
    actions = np.tile([0.0, 1.0, 0.0], (env.num_envs, 1)).astype(np.float32)
    env.reset(seed=0)
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps):
        env.step(actions)
    if kind:
        _CPU[kind].append(time.process_time() - c0)
    return steps * env.num_envs / (time.perf_counter() - t0)


def run(worlds: int = 16, steps: int = 2000, fps: float = 10.0, repeats: int = 5, process: bool = True) -> dict:
    import aiohttp

    from ..adapters.vector_env import CarVectorEnv
    from ..serve.preview import PreviewProcess, PreviewServer, attach_preview
    server = (PreviewProcess if process else PreviewServer)(port=0).start()
    received = []

    async def client():
        async with aiohttp.ClientSession() as session:
            async with session.ws_connect(f"ws://{server.host}:{server.port}/preview") as ws:
                async for msg in ws:
                    received.append(len(msg.data))
    threading.Thread(target=lambda: asyncio.run(client()), daemon=True).start()
    plain, previewed = CarVectorEnv("paddock/oval-batch-v0", worlds), CarVectorEnv("paddock/oval-batch-v0", worlds)
    tap = attach_preview(previewed.engine, server, world=0, fps=fps)
    _steps_per_second(plain, 50), _steps_per_second(previewed, 50)        # warm
    off, on = [], []
    tap.seconds, t_on = 0.0, 0.0
    for _ in range(repeats):
        off.append(_steps_per_second(plain, steps, "plain"))
        on.append(_steps_per_second(previewed, steps, "previewed"))
        t_on += steps * previewed.num_envs / on[-1]
    server.stop()
    return {"server": "child process" if process else "thread", "worlds": worlds, "cars": plain.num_envs, "steps": steps, "fps": fps,
            "agent_steps_per_s_without": int(max(off)), "agent_steps_per_s_with": int(max(on)),
            "slowdown_percent": round(100 * (1 - max(on) / max(off)), 2),
            "run_thread_share_percent": round(100 * tap.seconds / t_on, 2),
            "process_cpu_slowdown_percent": round(100 * (min(_CPU["previewed"]) / min(_CPU["plain"]) - 1), 2),
            "frames_published": tap.hub.published, "frames_received": len(received),
            "mean_frame_bytes": int(np.mean(received)) if received else 0}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="paddock-ma bench preview", description=__doc__.split("\n\n")[0])
    p.add_argument("--worlds", type=int, default=16)
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--fps", type=float, default=10.0)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--thread", action="store_true", help="the server on a thread of this process (PreviewServer)")
    args = p.parse_args(argv)
    print(json.dumps(run(args.worlds, args.steps, args.fps, args.repeats, process=not args.thread)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
