"""Screenshots of the viewer for the README (docs/images/viewer-*.png), in headless Chromium.

    python tools/viewer_screenshots.py        # needs Debian's chromium (make install) and playwright

Records 200 steps of the gp track (built-in drivers beside 8 controlled cars driving flat out is a crash
fest, so every car is handed to the built-in driver) into a frame recording, serves it with the viewer and
photographs the whole track and a followed car with its rays and radar.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from paddock_ma.catalog import make  # noqa: E402
from paddock_ma.serve.preview import PreviewServer, attach_preview  # noqa: E402
from paddock_ma.serve.recording import FrameRecorder, FrameRecording  # noqa: E402

OUT = ROOT / "docs" / "images"


def main() -> None:
    from playwright.sync_api import sync_playwright
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "gp.frames.jsonl"
        env = make("paddock/gp-batch-v0", num_worlds=1)
        recorder = FrameRecorder(path, name="gp, built-in drivers")
        attach_preview(env, recorder, every=2)
        env.reset(seed=0)
        k = len(env.controlled)
        for _ in range(400):
            env.step(np.zeros((1, k, 3), np.float32), release=np.ones((1, k), bool))
        recorder.close()
        server = PreviewServer(port=0, viewer_sources=[FrameRecording(path)]).start()
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(f"{server.url}/?source=0")
            page.wait_for_function("window.paddockViewer && window.paddockViewer.state.trackImage "
                                   "&& window.paddockViewer.state.frames.length > 100")
            page.eval_on_selector("#timeline", "el => { el.value = el.max; el.dispatchEvent(new Event('input')); }")
            page.screenshot(path=str(OUT / "viewer-track.png"))
            page.select_option("#follow", env.controlled[0])
            page.screenshot(path=str(OUT / "viewer-follow.png"))
            browser.close()
        server.stop()
    print(f"wrote {OUT / 'viewer-track.png'} and {OUT / 'viewer-follow.png'}")


if __name__ == "__main__":
    main()
