"""A collected dataset replays from its seed and actions (every observation matches), a changed action
is caught, and the viewer page opens a dataset world in headless Chromium with its cars drawn."""

import os

import numpy as np
import pytest

os.environ.setdefault("RAY_AUTH_MODE", "disabled")

from paddock_ma.dataset.replay import load_dataset_world, replay_dataset_world  # noqa: E402
from paddock_ma.env.views.frames import in_metres  # noqa: E402
from paddock_ma.serve.dataset_replay import DatasetSource  # noqa: E402

pytestmark = pytest.mark.ray


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    import ray

    from paddock_ma.distributed.collection.config import CollectConfig
    from paddock_ma.distributed.collection.run import collect
    out = tmp_path_factory.mktemp("ds") / "ds"
    started_here = not ray.is_initialized()
    try:
        collect(CollectConfig(env="paddock/oval-batch-v0", num_shards=1, worlds_per_shard=2, steps=24, seed=3,
                              policy="random", fragment_steps=8, snapshot_every=8,
                              env_overrides={"episode": {"max_steps": 10}}),
                out, progress=False, ray_init_kwargs=dict(num_cpus=1, object_store_memory=100 * 1024**2))
    finally:
        if started_here:
            ray.shutdown()
    return out


def test_a_dataset_world_replays_with_every_observation_matching(dataset):
    data = load_dataset_world(dataset, 1)
    assert data.actions.shape == (24, 8, 3) and np.abs(data.actions).sum() > 0
    assert replay_dataset_world(data) is None
    data.actions[5, 2, 0] = -1.0 if data.actions[5, 2, 0] > 0 else 1.0       # car-02 steers the other way at seq 6
    divergence = replay_dataset_world(data)
    assert divergence is not None and divergence.seq == 7 and divergence.driver == "car-02" and divergence.world == 1


def test_the_viewer_opens_a_dataset_world(dataset):
    from playwright.sync_api import sync_playwright

    from paddock_ma.serve.preview import PreviewServer

    from tests.helpers.raw_http import free_port
    from tests.helpers.viewer_page import CHROMIUM, assert_cars_drawn_at
    source = DatasetSource(dataset, world=1)
    doc = source.document()
    assert doc["divergence"] is None and len(doc["frames"]) == 25
    server = PreviewServer(port=free_port(), viewer_sources=[source]).start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1200, "height": 800})
            page.goto(f"{server.url}/?source=0")
            page.wait_for_function("window.paddockViewer && window.paddockViewer.state.frames.length === 25 "
                                   "&& window.paddockViewer.state.trackImage")
            page.eval_on_selector("#timeline", "el => { el.value = 24; el.dispatchEvent(new Event('input')); }")
            assert_cars_drawn_at(page, in_metres(doc["frames"][24])["snapshot"]["cars"], min_checked=3)
            assert "dataset" in page.inner_text("#status")
            browser.close()
    finally:
        server.stop()
