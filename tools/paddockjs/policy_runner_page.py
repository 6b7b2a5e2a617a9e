"""PaddockJS's own Policy Runner page, driven from here: our live race rendered by it, our exported actor
driving in it; a screenshot of each.

    python tools/paddockjs/policy_runner_page.py --checkout /tmp/paddockjs \
        --actor examples/paddockjs_actor_trackseed.json [--config examples/paddockjs_trackseed_config.json] \
        [--out-dir docs/images] [--seconds 8]

A maintainer tool (PaddockJS is not part of this repository): ``--checkout`` is a PaddockJS 2.0.0 source
tree (commit 28fc6c4). The script

1. installs its showcase once if needed (``npm install --omit=dev`` at the root for pixi.js,
   ``npm --prefix local-preview install`` for Vite; from the npm registry), copies ``--actor`` to
   ``local-preview/public/local-checkpoints/latest-distilled-policy.json`` (the first file the page looks
   for) and starts the showcase's Vite dev server on 127.0.0.1;
2. starts ``paddock-ma view --demo --config CONFIG`` (our race of that config, built-in drivers, real time,
   published on ``ws://127.0.0.1:PORT/preview``);
3. in headless Chromium (Debian's ``/usr/bin/chromium`` through playwright) opens
   ``policy-runner.html?controller=live-node-view&liveUrl=ws://127.0.0.1:PORT/preview``: the page attaches
   PaddockJS's external renderer to our stream; the script checks that frames of our run arrived
   (``renderer.lastMeta`` is our frame's meta: our track and world) with no render error, and saves
   ``docs/images/paddockjs-policy-runner-live.png``;
4. opens ``policy-runner.html?controller=distilled-policy``: the page loads our file with its checkpoint
   controller (``Loaded paddockjs-distilled-actor-v1``); the script ticks Auto run, lets it drive
   ``--seconds`` and checks that the policy stepped and the car moved, and saves
   ``docs/images/paddockjs-policy-runner-checkpoint.png``.

The default config is the Policy Runner's own track (``trackSeed`` 2097, its Generation configuration's)
with its driver ids (``policy-agent-01`` ..), so PaddockJS draws our cars on the track it builds itself.
What needs no PaddockJS (our servers' answers to the page's requests: the WebSocket packets, the frame
endpoint, CORS for the Vite origin, the checkpoint file's arithmetic) is tested in ``tests/serve`` and
``tests/paddockjs``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
# WebGL for PixiJS in a headless browser without a GPU: ANGLE over SwiftShader
CHROMIUM_ARGS = ["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--ignore-gpu-blocklist"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, proc: subprocess.Popen, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{proc.args[:3]} exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"{url} did not answer within {timeout} s")


def prepare_checkout(checkout: Path, actor: Path) -> None:
    if not (checkout / "local-preview" / "policy-runner.html").exists():
        raise SystemExit(f"--checkout: {checkout} has no local-preview/policy-runner.html (a PaddockJS 2.0.0 tree?)")
    if not (checkout / "node_modules" / "pixi.js").exists():
        subprocess.run(["npm", "install", "--omit=dev", "--no-audit", "--no-fund"], cwd=checkout, check=True)
    if not (checkout / "local-preview" / "node_modules" / "vite").exists():
        subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=checkout / "local-preview", check=True)
    target = checkout / "local-preview" / "public" / "local-checkpoints" / "latest-distilled-policy.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(actor, target)


def start(args, cwd, log):
    return subprocess.Popen(args, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, 15)          # the process group this script started (Vite's esbuild child too)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()


def readout(page) -> dict:
    return json.loads(page.evaluate("document.querySelector('[data-policy-runner-readout]').textContent"))


def small_png(path: Path) -> None:
    """Quantise a screenshot to 256 colours (a fraction of the size; the page is flat colours)."""
    try:
        from PIL import Image
    except ImportError:
        return
    Image.open(path).convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)


def shoot_live(browser, vite: str, live_url: str, out: Path, seconds: float) -> dict:
    page = browser.new_page(viewport={"width": 1100, "height": 800})
    page.set_default_timeout(600_000)     # software WebGL on a busy machine answers slowly
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{vite}/policy-runner.html?controller=live-node-view&liveUrl={live_url}")
    page.wait_for_function("document.querySelector('[data-policy-live-status]')?.textContent.includes('step')",
                           timeout=300_000)
    time.sleep(seconds)
    renderer = page.evaluate("window.paddockPreview['policy-runner'].expert.getExternalRendererState()")
    meta = renderer.get("lastMeta") or {}
    if not renderer.get("attached") or renderer.get("lastError") or "track" not in meta:
        raise SystemExit(f"live preview: PaddockJS's renderer did not take our frames: {renderer}; "
                         f"page errors {errors}")
    status = page.evaluate("document.querySelector('[data-policy-live-status]').textContent")
    shoot(page, out)
    page.close()
    return {"status": status, "renderer_error": renderer.get("lastError"),
            "meta": {k: meta.get(k) for k in ("track", "world", "step", "controlledDrivers")}, "page_errors": errors}


def shoot(page, out: Path) -> None:
    """The simulator's canvas (software WebGL: a busy machine takes minutes to hand over a frame)."""
    page.locator("#policy-runner-root canvas").first.screenshot(path=str(out), timeout=600_000)
    small_png(out)


def shoot_checkpoint(browser, vite: str, out: Path, seconds: float) -> dict:
    page = browser.new_page(viewport={"width": 1100, "height": 800})
    page.set_default_timeout(600_000)     # software WebGL on a busy machine answers slowly
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{vite}/policy-runner.html?controller=distilled-policy")
    page.wait_for_function("document.querySelector('[data-policy-runner-status]')?.textContent"
                           ".includes('Loaded paddockjs-distilled-actor-v1')", timeout=300_000)
    page.locator("[data-policy-runner-auto]").check()
    time.sleep(seconds)
    page.locator("[data-policy-runner-auto]").uncheck()
    state = readout(page)
    me = state.get("self") or {}
    if not state.get("loadedDistilledPolicy") or not state.get("policyStep"):
        raise SystemExit(f"checkpoint: the page did not drive with our file: {state.get('controller')}, "
                         f"policy steps {state.get('policyStep')}; page errors {errors}")
    shoot(page, out)
    page.close()
    return {"policyStep": state["policyStep"], "simStep": state.get("step"), "physicsMode": state.get("physicsMode"),
            "metadata": state.get("metadata"), "selectedDriver": state.get("selectedDriver"),
            "speed_kph": me.get("speedKph"), "page_errors": errors}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--checkout", required=True, type=Path, help="a PaddockJS 2.0.0 source tree (commit 28fc6c4)")
    p.add_argument("--actor", required=True, type=Path,
                   help="a paddockjs-distilled-actor-v1 file (paddock-ma export-paddockjs)")
    p.add_argument("--config", type=Path, default=ROOT / "examples" / "paddockjs_trackseed_config.json",
                   help="the race to stream (default: the Policy Runner's track and driver ids)")
    p.add_argument("--out-dir", type=Path, default=ROOT / "docs" / "images")
    p.add_argument("--seconds", type=float, default=8.0, help="how long each page runs before its screenshot")
    args = p.parse_args(argv)
    checkout, actor = args.checkout.resolve(), args.actor.resolve()
    prepare_checkout(checkout, actor)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    vite_port, preview_port = free_port(), free_port()
    vite_url, live_url = f"http://127.0.0.1:{vite_port}", f"ws://127.0.0.1:{preview_port}/preview"
    log_dir = Path(os.environ.get("TMPDIR", "/tmp"))
    with open(log_dir / "policy_runner_vite.log", "w") as vite_log, \
            open(log_dir / "policy_runner_preview.log", "w") as preview_log:
        vite = start(["node", "node_modules/vite/bin/vite.js", "--host", "127.0.0.1", "--port", str(vite_port),
                      "--strictPort"], checkout / "local-preview", vite_log)
        preview = start([sys.executable, "-m", "paddock_ma.cli", "view", "--demo",
                         "--config", str(args.config.resolve()), "--port", str(preview_port)], ROOT, preview_log)
        try:
            wait_http(f"{vite_url}/policy-runner.html", vite)
            wait_http(f"http://127.0.0.1:{preview_port}/preview/frame", preview)
            from playwright.sync_api import sync_playwright
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                try:
                    out = args.out_dir
                    live = shoot_live(browser, vite_url, live_url, out / "paddockjs-policy-runner-live.png",
                                      args.seconds)
                    drive = shoot_checkpoint(browser, vite_url, out / "paddockjs-policy-runner-checkpoint.png",
                                             args.seconds)
                finally:
                    browser.close()
        finally:
            stop(preview)
            stop(vite)
    print(json.dumps({"live_preview": live, "checkpoint": drive}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
