"""A real WebSocket client of a preview server's stream (``ws://HOST:PORT/preview``), shared by the serve
and collection tests."""

from __future__ import annotations

import asyncio
import json
import threading

import aiohttp


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
