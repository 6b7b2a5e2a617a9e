"""Shared helpers of the live preview's and the viewer's tests: a WebSocket client of the preview stream,
the headless Chromium the viewer's tests drive and what the page drew where a car stands."""

import asyncio
import json
import threading

import aiohttp
import numpy as np

CHROMIUM = "/usr/bin/chromium"      # Debian's chromium package (make install installs it)


def rgb(hex_colour):
    return [int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)]


def drawn_pixels(page, cars):
    """For each car {id, x, y} (world m): its canvas point by the page's transform and the pixel there."""
    return page.evaluate("""(cars) => {
        const v = window.paddockViewer, ctx = document.getElementById('view').getContext('2d');
        return cars.map((c) => { const [px, py] = v.worldToScreen(c.x, c.y);
            const d = ctx.getImageData(Math.round(px), Math.round(py), 1, 1).data;
            return {id: c.id, px, py, rgb: [d[0], d[1], d[2]], colour: v.carColour(c)}; }); }""", cars)


def assert_cars_drawn_at(page, cars, min_checked=4):
    """Every car standing apart from the others (15 px) shows its own colour at its position."""
    pixels = drawn_pixels(page, cars)
    apart = [p for p in pixels if all(np.hypot(p["px"] - q["px"], p["py"] - q["py"]) > 15 for q in pixels if q is not p)]
    assert len(apart) >= min_checked, pixels
    for p in apart:
        assert p["rgb"] == rgb(p["colour"]), p
    return pixels


class WebSocketReader:
    """A real WebSocket client of ``ws://HOST:PORT/preview`` on its own thread, retrying until the server
    listens: ``packets`` are the snapshot packets it received; ``wait(predicate)`` waits for one."""

    def __init__(self, host, port, timeout=120):
        self.packets, self._found, self._predicate = [], threading.Event(), lambda p: False
        self.url, self.timeout, self.closed = f"ws://{host}:{port}/preview", timeout, False
        threading.Thread(target=lambda: asyncio.run(self._read()), daemon=True).start()

    async def _read(self):
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        async with aiohttp.ClientSession() as session:
            while loop.time() < deadline and not self.closed:    # closed: stop retrying
                try:
                    async with session.ws_connect(self.url) as ws:
                        async for msg in ws:
                            packet = json.loads(msg.data)
                            if packet.get("type") == "preview:snapshot":
                                self.packets.append(packet)
                                if self._predicate(packet):
                                    self._found.set()
                except aiohttp.ClientError:
                    await asyncio.sleep(0.2)

    def wait(self, predicate, timeout=120) -> dict:
        self._predicate = predicate
        if not any(predicate(p) for p in self.packets):
            assert self._found.wait(timeout), f"no such packet over the WebSocket; got {len(self.packets)}"
        return next(p for p in reversed(self.packets) if predicate(p))
