"""Live preview from a run: a BatchEnv (under a vector env or PaddockEnv) publishes PaddockJS-shaped
packets on a real server's WebSocket and frame endpoint; a client that never reads holds nothing up."""

import asyncio
import json
import socket
import threading

import aiohttp
import numpy as np
import pytest

from paddock_ma.adapters.vector_env import CarVectorEnv
from paddock_ma.catalog import make
from paddock_ma.env.views.frames import UNITS_PER_METER
from paddock_ma.serve.preview import PreviewServer, attach_preview

from tests.helpers.preview_client import WebSocketReader

from tests.helpers.raw_http import free_port, http


@pytest.fixture
def server():
    s = PreviewServer(port=free_port()).start()
    yield s
    s.stop()


def car_positions(engine, w=0):
    from paddock_ma.env.views.state_view import minimal_state
    return {c["id"]: (c["x"], c["y"]) for c in minimal_state(engine, w)["snapshot"]["cars"]}


def assert_timing_tower_fields(frame):
    """What PaddockJS's timing tower and telemetry panel read of each car (timingTowerRenderer.js,
    telemetryRenderer.js), typed as it reads them: cars in race order with integer positions, applied
    throttle and brake in 0..1 (the observed driver's as its observation says), tyre, gaps, lap telemetry."""
    cars = frame["snapshot"]["cars"]
    assert [c["rank"] for c in cars] == list(range(1, len(cars) + 1))
    for car in cars:
        assert isinstance(car["throttle"], float) and 0.0 <= car["throttle"] <= 1.0
        assert isinstance(car["brake"], float) and 0.0 <= car["brake"] <= 1.0
        assert car["tire"] in ("S", "M", "H") and 0 < car["tireEnergy"] <= 100 and isinstance(car["lap"], int)
        assert car["status"] == car["raceStatus"] == "racing" and car["dnf"] is False
        assert car["lapTelemetry"]["currentSector"] in (1, 2, 3) and car["lapTelemetry"]["completedLaps"] == 0
        assert isinstance(car["lateralG"], float) and isinstance(car["gripUsage"], float) and car["stabilityState"]
    assert cars[0]["leaderGapSeconds"] is None and all(c["leaderGapSeconds"] >= 0 for c in cars[1:])
    assert all(a["raceDistanceMeters"] >= b["raceDistanceMeters"] for a, b in zip(cars, cars[1:]))
    (driver, observed), = frame["observation"].items()
    me = next(c for c in cars if c["id"] == driver)
    assert me["throttle"] == observed["object"]["self"]["throttle"]
    assert me["brake"] == observed["object"]["self"]["brake"]


def test_frames_are_paddockjs_packets_of_the_chosen_world(server):
    env = CarVectorEnv("paddock/oval-batch-v0", 3)
    tap = attach_preview(env.engine, server, world=2, every=1)
    env.reset(seed=4)
    for _ in range(5):
        env.step(np.tile([0.0, 0.8, 0.0], (env.num_envs, 1)))
    status, _, frame = http("GET", f"{server.url}/preview/frame")
    assert status == 200 and frame["type"] == "preview:snapshot" and set(frame) == {"type", "snapshot", "observation", "meta"}
    assert frame["meta"]["world"] == 2 and frame["snapshot"]["step"] == 5
    cars = {c["id"]: c for c in frame["snapshot"]["cars"]}
    assert frame["meta"]["unitsPerMeter"] == UNITS_PER_METER           # PaddockJS's simulation units
    for driver, (x, y) in car_positions(env.engine, 2).items():
        assert (cars[driver]["x"], cars[driver]["y"]) == (x * UNITS_PER_METER, y * UNITS_PER_METER)
    assert frame["snapshot"]["raceControl"]["mode"] == "green" and frame["snapshot"]["safetyCar"] == {"deployed": False}
    assert car_positions(env.engine, 0) != car_positions(env.engine, 2)
    me = frame["observation"]["car-00"]["object"]
    assert me["self"]["speedKph"] > 0 and len(me["rays"]) > 0 and "distanceMeters" in me["rays"][0]["track"]
    assert cars["car-00"]["controlled"] and "legalProgressDeltaMeters" in cars["car-00"]["metrics"]
    status, _, track = http("GET", f"{server.url}/preview/track")
    assert status == 200 and track["name"] == "oval" and len(track["surfaces"]) > 1000
    tap.detach()
    env.step(np.zeros((env.num_envs, 3)))
    assert http("GET", f"{server.url}/preview/frame")[2]["snapshot"]["step"] == 5     # detached: no more frames
    env.close()


def test_websocket_pushes_newest_frames_and_a_stalled_client_blocks_nothing(server):
    host, port = server.host, server.port
    stalled = socket.create_connection((host, port))       # a WebSocket client that never reads
    stalled.sendall(f"GET /preview HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
    received, ready, done = [], threading.Event(), threading.Event()

    async def reader():
        async with aiohttp.ClientSession() as session:
            async with session.ws_connect(f"ws://{host}:{port}/preview") as ws:
                ready.set()
                async for msg in ws:
                    received.append(json.loads(msg.data))
                    if received[-1].get("snapshot", {}).get("step") == 300:
                        break
        done.set()
    thread = threading.Thread(target=lambda: asyncio.run(reader()), daemon=True)
    thread.start()
    ready.wait(30)
    pe = make("paddock/gp-v0")                             # a PaddockEnv: its engine is .engine
    attach_preview(pe.engine, server, every=1)
    pe.reset(seed=1)
    for _ in range(300):
        pe.step({d: {"steering": 0.0, "throttle": 0.5, "brake": 0.0} for d in pe.controlled})
    assert done.wait(60), "the reading client never saw the last frame"
    assert received[0] == {"type": "preview:status", "status": "connected", "session": {"id": 0}}
    steps = [m["snapshot"]["step"] for m in received[1:]]
    assert steps == sorted(steps) and steps[-1] == 300
    assert server.hub.published == 301                    # the reset and every step handed in a frame
    stalled.close()
    pe.close()


def test_a_preview_server_in_a_child_process_serves_the_runs_frames():
    from paddock_ma.serve.preview import PreviewProcess
    server = PreviewProcess(port=free_port()).start()
    try:
        env = CarVectorEnv("paddock/oval-batch-v0", 1)
        attach_preview(env.engine, server, every=1)
        env.reset(seed=2)
        for step in range(1, 4):
            env.step(np.tile([0.0, 1.0, 0.0], (env.num_envs, 1)))
            for _ in range(200):                  # the child takes the frame a moment later
                frame = http("GET", f"{server.url}/preview/frame")[2]
                if frame.get("snapshot", {}).get("step") == step:
                    break
                threading.Event().wait(0.05)
            assert frame["snapshot"]["step"] == step
        cars = {c["id"]: (c["x"], c["y"]) for c in frame["snapshot"]["cars"]}
        assert cars == {d: (x * UNITS_PER_METER, y * UNITS_PER_METER) for d, (x, y) in car_positions(env.engine).items()}
        assert http("GET", f"{server.url}/preview/track")[2]["name"] == "oval"
        env.close()
    finally:
        server.stop()


def test_a_protocol_worker_publishes_its_world_across_engine_rebuilds(server):
    """A ``Dispatcher`` is observed through its engine's ``add_observer``; a reset with config options
    builds a new engine, which takes the observers over (nothing wraps the dispatcher's methods)."""
    from paddock_ma.catalog import env_config
    from paddock_ma.protocol.messages import Dispatcher
    dispatcher = Dispatcher(env_config("paddock/gp-v0"), num_worlds=1, env_id="paddock/gp-v0")
    methods = (Dispatcher.handle_line, Dispatcher.handle)
    tap = attach_preview(dispatcher, server, every=1)
    assert (type(dispatcher).handle_line, type(dispatcher).handle) == methods and "handle_line" not in vars(dispatcher)
    drivers = list(dispatcher.engine.controlled)
    step = json.dumps({"id": 3, "type": "step", "actions": {d: {"steering": 0.0, "throttle": 0.6, "brake": 0.0}
                                                             for d in drivers}})
    dispatcher.handle_line(json.dumps({"id": 1, "type": "reset", "options": {"seed": 7}}))
    for _ in range(3):
        dispatcher.handle_line(step)
    frame = http("GET", f"{server.url}/preview/frame")[2]
    assert frame["snapshot"]["step"] == 3 and frame["meta"]["track"] == dispatcher.config.track
    first = dispatcher.engine
    reply = json.loads(dispatcher.handle_line(json.dumps({"id": 4, "type": "reset", "options": {"seed": 7, "frameSkip": 2}})))
    assert reply.get("ok", True) is not False and dispatcher.engine is not first
    assert dispatcher.engine.observers == (tap,)
    dispatcher.handle_line(step)
    assert tap.engine is dispatcher.engine
    assert http("GET", f"{server.url}/preview/frame")[2]["snapshot"]["tick"] == 2


def test_paddock_ma_serve_with_preview_publishes_its_world_while_it_answers_on_stdout():
    """``paddock-ma serve --preview HOST:PORT`` as a user runs it: replies on stdout, frames on HTTP."""
    import subprocess
    import sys
    import time

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "paddock_ma.cli", "serve", "--env", "paddock/gp-v0",
                             "--preview", f"127.0.0.1:{port}"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    reader = WebSocketReader("127.0.0.1", port)
    try:
        def ask(message):
            proc.stdin.write((json.dumps(message) + "\n").encode())
            proc.stdin.flush()
            return json.loads(proc.stdout.readline())

        assert ask({"id": 1, "type": "reset", "options": {"seed": 3}})["ok"]
        drivers = ask({"id": 2, "type": "getActionSpec"})["result"]["controlledDrivers"]
        step = {"type": "step", "actions": {d: {"steering": 0.0, "throttle": 0.7, "brake": 0.0} for d in drivers}}
        for i in range(12):
            assert ask({"id": 10 + i, **step})["ok"]
        # frames are published at most 10 times a second: a step a while after the others is published
        time.sleep(0.3)
        assert ask({"id": 30, **step})["ok"]
        frame = None
        for _ in range(100):                     # the newest frame reaches the child server shortly after
            frame = http("GET", f"http://127.0.0.1:{port}/preview/frame")[2]
            if isinstance(frame, dict) and frame.get("snapshot", {}).get("step") == 13:
                break
            time.sleep(0.1)
        assert frame["type"] == "preview:snapshot" and frame["snapshot"]["step"] == 13
        assert_timing_tower_fields(frame)
        pushed = reader.wait(lambda p: p["snapshot"]["step"] == 13)        # the same frame, pushed
        assert pushed == frame
        reader.closed = True
    finally:
        proc.stdin.close()
        proc.wait(60)


def test_a_paddockenv_keeps_publishing_after_a_reset_that_rebuilds_its_engine(server):
    """The tap is an engine observer (``BatchEnv.add_observer``): a PaddockEnv reset with config options
    builds a new engine, which takes the observers over; frames then come from it, with its track."""
    pe = make("paddock/gp-v0")
    tap = attach_preview(pe, server, every=1)             # a PaddockEnv: its engine is observed
    pe.reset(seed=1)
    first_engine = pe.engine
    pe.reset(seed=1, options={"track": "oval", "frame_skip": 2})
    assert pe.engine is not first_engine and pe.engine.observers == (tap,)
    pe.step({d: {"steering": 0.0, "throttle": 0.5, "brake": 0.0} for d in pe.controlled})
    frame = http("GET", f"{server.url}/preview/frame")[2]
    assert frame["meta"]["track"] == "oval" and frame["snapshot"]["tick"] == 2 and frame["snapshot"]["step"] == 1
    assert http("GET", f"{server.url}/preview/track")[2]["name"] == "oval"
    published = server.hub.published
    tap.detach()
    assert pe.engine.observers == ()
    pe.step({d: {"steering": 0.0, "throttle": 0.5, "brake": 0.0} for d in pe.controlled})
    assert server.hub.published == published               # detached: nothing more
    pe.close()


def test_the_policy_runner_page_s_requests_from_its_vite_origin(server):
    """What PaddockJS's Policy Runner asks of a preview server, from the page's own origin (its Vite server):
    the WebSocket answers a status then packets its renderer reads (raceControl, safetyCar, events,
    meta.step); the polling mode's GET /preview/frame is allowed by CORS."""
    origin = "http://127.0.0.1:5173"
    env = CarVectorEnv("paddock/oval-batch-v0", 1)
    attach_preview(env.engine, server, every=1)
    env.reset(seed=5)
    received = []

    async def page_socket():
        async with aiohttp.ClientSession() as session:
            async with session.ws_connect(f"ws://{server.host}:{server.port}/preview", origin=origin) as ws:
                received.append(json.loads((await ws.receive()).data))
                received.append(json.loads((await ws.receive()).data))
    asyncio.run(page_socket())
    assert received[0]["type"] == "preview:status" and received[1]["type"] == "preview:snapshot"
    snapshot = received[1]["snapshot"]
    assert snapshot["raceControl"]["mode"] == "green" and snapshot["safetyCar"]["deployed"] is False
    assert snapshot["events"] == [] and snapshot["penalties"] == [] and received[1]["meta"]["step"] == 0
    # a snapshot with a `track` makes the renderer rebuild its track from it (it reads `track.samples`,
    # PaddockJS's whole centreline): a packet carries none, and the page keeps the track it built itself
    assert "track" not in snapshot
    status, headers, frame = http("GET", f"{server.url}/preview/frame", headers={"Origin": origin})
    assert status == 200 and headers["Access-Control-Allow-Origin"] == origin and frame["meta"]["step"] == 0
    env.close()


def test_paddock_ma_view_demo_streams_the_race_of_a_paddockjs_config():
    """``paddock-ma view --demo --config FILE``: the race the Policy Runner page is pointed at in
    docs/paddockjs-policy-runner.md, on PaddockJS's trackSeed 2097 track with its driver ids."""
    import subprocess
    import sys
    import time

    from .conftest import ROOT, stop_process
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "paddock_ma.cli", "view", "--demo", "--config",
                             str(ROOT / "examples" / "paddockjs_trackseed_config.json"), "--port", str(port)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        frame = None
        for _ in range(1200):
            try:
                frame = http("GET", f"http://127.0.0.1:{port}/preview/frame")[2]
            except OSError:
                frame = None
            if isinstance(frame, dict) and frame.get("snapshot", {}).get("step", 0) >= 2:
                break
            time.sleep(0.1)
        assert frame["meta"]["track"] == "paddockjs:2097" and frame["snapshot"]["step"] >= 2
        assert frame["meta"]["controlledDrivers"][0] == "policy-agent-01"
    finally:
        stop_process(proc)


def test_engine_observers_hear_each_batched_call_once():
    """``BatchEnv.add_observer``: one call per reset, step (auto-resets inside it included) and
    reset_drivers, with the engine; removed observers hear nothing."""
    from paddock_ma.env.batch_env import BatchEnv
    from paddock_ma.catalog import env_config
    engine = BatchEnv(env_config("paddock/oval-batch-v0", episode={"max_steps": 3}), 2, auto_reset=True,
                      reset_placement="random")
    heard = []
    observer = lambda call, e: heard.append((call, e is engine, int(e.world_steps()[0])))  # noqa: E731
    engine.add_observer(observer)
    engine.reset(seed=1)
    actions = np.zeros((2, len(engine.controlled), 3), np.float32)
    auto_reset = [engine.step(actions).reset_mask.any() for _ in range(4)]
    engine.reset_drivers(np.ones((2, len(engine.controlled)), bool), "random")
    assert auto_reset[2] and heard == [("reset", True, 0), ("step", True, 1), ("step", True, 2), ("step", True, 3),
                                       ("step", True, 4), ("reset_drivers", True, 4)]
    engine.remove_observer(observer)
    engine.step(actions)
    assert len(heard) == 6 and engine.observers == ()


def _drive_batch_env(server):
    from paddock_ma.catalog import env_config
    from paddock_ma.env.batch_env import BatchEnv
    engine = BatchEnv(env_config("paddock/oval-batch-v0"), 2)
    attach_preview(engine, server, every=1)
    engine.reset(seed=1)
    for _ in range(3):
        engine.step(np.tile([0.0, 0.7, 0.0], (2, len(engine.controlled), 1)).astype(np.float32))


def _drive_paddock_env(server):
    pe = make("paddock/oval-batch-v0")
    attach_preview(pe, server, every=1)
    pe.reset(seed=1)
    for _ in range(3):
        pe.step({d: {"steering": 0.0, "throttle": 0.7, "brake": 0.0} for d in pe.controlled})


def _drive_vector_env(server):
    env = CarVectorEnv("paddock/oval-batch-v0", 2)
    attach_preview(env, server, every=1)
    env.reset(seed=1)
    for _ in range(3):
        env.step(np.tile([0.0, 0.7, 0.0], (env.num_envs, 1)))


def _drive_pettingzoo(server):
    from paddock_ma.adapters.pettingzoo_env import parallel_env
    env = parallel_env("paddock/oval-batch-v0")
    attach_preview(env, server, every=1)
    env.reset(seed=1)
    for _ in range(3):
        env.step({a: np.zeros(env.action_space(a).shape, env.action_space(a).dtype) for a in env.agents})


def _drive_rllib(server):
    from paddock_ma.adapters.rllib_env import PaddockMultiAgentEnv
    env = PaddockMultiAgentEnv({"env_id": "paddock/oval-batch-v0", "num_worlds": 2})
    attach_preview(env, server, every=1)
    obs, _ = env.reset(seed=1)
    for _ in range(3):
        obs = env.step({a: np.zeros(3, np.float32) for a in obs})[0]


@pytest.mark.parametrize("drive", [_drive_batch_env, _drive_paddock_env, _drive_vector_env, _drive_pettingzoo,
                                   _drive_rllib], ids=lambda f: f.__name__[len("_drive_"):])
def test_every_entry_point_publishes_frames_a_websocket_client_receives(server, drive):
    """BatchEnv, PaddockEnv, the gymnasium vector env and the PettingZoo and RLlib adapters: each is
    passed to ``attach_preview`` as a user holds it; the packets of its reset and three steps reach a
    WebSocket client of the real server."""
    steps, connected = [], threading.Event()

    async def reader():
        async with aiohttp.ClientSession() as session:
            async with session.ws_connect(f"ws://{server.host}:{server.port}/preview") as ws:
                connected.set()
                async for msg in ws:
                    packet = json.loads(msg.data)
                    if packet["type"] == "preview:snapshot":
                        assert set(packet) == {"type", "snapshot", "observation", "meta"}
                        steps.append(packet["meta"]["step"])
                        if steps[-1] == 3:
                            return
    thread = threading.Thread(target=lambda: asyncio.run(reader()), daemon=True)
    thread.start()
    assert connected.wait(30)
    drive(server)
    thread.join(60)
    assert not thread.is_alive() and steps[-1] == 3 and steps == sorted(steps)


def test_engine_of_reads_the_engine_of_a_front_end_or_of_what_a_wrapper_unwraps_to():
    """``attach_preview`` observes ``.engine``: a BatchEnv's own, a front end's, or (through ``unwrapped``)
    that of a gymnasium or PettingZoo wrapper's env; anything else is a TypeError naming the type."""
    from gymnasium.wrappers.vector import RecordEpisodeStatistics
    from pettingzoo.utils.conversions import parallel_to_aec

    from paddock_ma.adapters.pettingzoo_env import parallel_env
    from paddock_ma.serve.preview import engine_of

    vector = CarVectorEnv("paddock/oval-batch-v0", 1)
    assert engine_of(vector.engine) is vector.engine and engine_of(vector) is vector.engine
    assert engine_of(RecordEpisodeStatistics(vector)) is vector.engine
    pz = parallel_env("paddock/oval-batch-v0")
    assert engine_of(parallel_to_aec(pz)) is pz.engine
    with pytest.raises(TypeError, match="list has no engine"):
        engine_of([])
