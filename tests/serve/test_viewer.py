"""The viewer page in a real headless Chromium (Debian's chromium, driven by playwright): against a live
run and a frame recording it draws every car at its position in its colour, the followed car's rays and its
metrics and end reason; scrubbing the timeline moves the cars to that frame's positions."""

import json

import numpy as np
import pytest

from paddock_ma.adapters.vector_env import CarVectorEnv
from paddock_ma.env.views.frames import in_metres
from paddock_ma.serve.preview import PreviewServer, attach_preview
from paddock_ma.serve.recording import FrameRecorder, FrameRecording

from tests.helpers.viewer_page import CHROMIUM, assert_cars_drawn_at, drawn_pixels, rgb, yellowest_near

from tests.helpers.raw_http import free_port


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    path = tmp_path_factory.mktemp("rec") / "oval.frames.jsonl"
    env = CarVectorEnv("paddock/oval-batch-v0", 1)
    recorder = FrameRecorder(path, name="oval test run")
    attach_preview(env.engine, recorder, every=1, observe=True)
    env.reset(seed=11)
    for _ in range(40):
        env.step(np.tile([0.0, 1.0, 0.0], (env.num_envs, 1)))
    recorder.close()
    env.close()
    return path


@pytest.fixture(scope="module")
def server(recording):
    s = PreviewServer(port=free_port(), viewer_sources=[FrameRecording(recording)]).start()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


def open_page(browser, url):
    page = browser.new_page(viewport={"width": 1200, "height": 800})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    return page, errors


def test_recording_draws_cars_and_a_scrub_moves_them(browser, server, recording, tmp_path):
    frames = [in_metres(json.loads(line)) for line in recording.read_text().splitlines()[1:]]
    page, errors = open_page(browser, f"{server.url}/?source=0")
    page.wait_for_function("window.paddockViewer && window.paddockViewer.state.frames.length === 41 "
                           "&& window.paddockViewer.state.trackImage")
    assert page.evaluate("window.paddockViewer.state.index") == 0
    first = assert_cars_drawn_at(page, frames[0]["snapshot"]["cars"])
    page.eval_on_selector("#timeline", "el => { el.value = 40; el.dispatchEvent(new Event('input')); }")
    assert page.inner_text("#frame-label").startswith("frame 41 / 41")
    last = assert_cars_drawn_at(page, frames[40]["snapshot"]["cars"])
    moved = [np.hypot(a["px"] - b["px"], a["py"] - b["py"]) for a, b in zip(first, last)]
    assert sum(m > 3 for m in moved) >= len(moved) - 1, moved     # the cars drove off: the scrub moved them
    page.screenshot(path=str(tmp_path / "recording.png"))
    assert not errors, errors


def test_follow_a_car_shows_its_rays_metrics_and_end_reason(browser, server, recording):
    frames = [in_metres(json.loads(line)) for line in recording.read_text().splitlines()[1:]]
    page, errors = open_page(browser, f"{server.url}/?source=0")
    page.wait_for_function("window.paddockViewer && window.paddockViewer.state.frames.length === 41 "
                           "&& window.paddockViewer.state.trackImage")
    page.eval_on_selector("#timeline", "el => { el.value = 30; el.dispatchEvent(new Event('input')); }")
    def forward_ray(car_id):
        return next(r for r in frames[30]["observation"][car_id]["object"]["rays"] if r["angleDegrees"] == 0)

    # a car whose forward ray sees the road edge (drawn bright; a ray that sees none is drawn faint)
    car = next(c for c in frames[30]["snapshot"]["cars"] if forward_ray(c["id"])["track"]["hit"])
    page.select_option("#follow", car["id"])
    w, h = page.evaluate("[document.getElementById('view').width, document.getElementById('view').height]")
    point = drawn_pixels(page, [car])[0]
    assert abs(point["px"] - w / 2) < 1 and abs(point["py"] - h / 2) < 1 and point["rgb"] == rgb(point["colour"])
    # the forward ray (0 degrees) is drawn ahead of the car to its road-edge distance
    ray = forward_ray(car["id"])
    reach = min(ray["track"]["distanceMeters"], ray["lengthMeters"])
    probe = min(0.7 * reach, 40.0)                   # m ahead: inside the followed view (5 px/m)
    ahead = {"id": "probe", "x": car["x"] + probe * np.cos(car["heading"]), "y": car["y"] + probe * np.sin(car["heading"])}
    r, g, b = yellowest_near(page, ahead)
    assert r > 150 and g > 150 and b < r - 20, (r, g, b)     # ray yellow over the asphalt grey
    assert page.inner_text("#car-title") == car["id"]
    facts = dict(page.eval_on_selector_all("#car-facts tr", "rows => rows.map(r => [r.dataset.name, r.cells[1].textContent])"))
    assert facts["step"] == "30" and facts["end reason"] == "—" and "legalProgressDeltaMeters" in facts
    page.uncheck("#rays")
    r2, g2, b2 = yellowest_near(page, ahead)
    assert (r2, g2, b2) != (r, g, b)
    assert not errors, errors


def test_live_run_is_drawn_as_it_steps(browser, server):
    env = CarVectorEnv("paddock/oval-batch-v0", 1)
    attach_preview(env.engine, server, every=1)
    env.reset(seed=3)
    page, errors = open_page(browser, f"{server.url}/?source=live")
    page.wait_for_function("window.paddockViewer && window.paddockViewer.state.trackImage")
    for _ in range(25):
        env.step(np.tile([0.0, 1.0, 0.0], (env.num_envs, 1)))
    page.wait_for_function("window.paddockViewer.state.frames.length > 0 && "
                           "window.paddockViewer.state.frames.at(-1).snapshot.step === 25")
    assert page.evaluate("window.paddockViewer.state.index") == page.evaluate("window.paddockViewer.state.frames.length - 1")
    from paddock_ma.env.views.state_view import minimal_state
    cars = minimal_state(env.engine, 0)["snapshot"]["cars"]
    assert_cars_drawn_at(page, cars)
    env.close()
    assert not errors, errors
