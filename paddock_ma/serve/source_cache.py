"""The viewer's recorded sources, each built once, off the event loop, and kept within a memory bound.

A source's document (``describe()`` / ``document()``: a frame recording read back, a trace or a dataset
world replayed into frames) costs seconds and tens of MB: ``SourceCache.get(i)`` builds it on one worker
thread of its own (so the loop keeps answering frames and pages, and a policy's decisions never wait
behind a replay), encodes it as JSON once, and keeps the bytes; later requests get the same bytes. A
request for a source being built waits for that build instead of starting another (never two replays of
one source at once, nor more than one replay at a time). The kept documents' bytes stay within
``max_bytes`` (the least recently asked for are forgotten first; a document larger than the whole bound is
served and not kept). ``get`` also says how it was answered, as an RFC 9211 ``Cache-Status`` value.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor

import orjson

DEFAULT_MAX_BYTES = 256 * 1024 * 1024
CACHE_NAME = "paddock-ma"


def encode_document(source) -> bytes:
    """A source's document as JSON bytes (numpy values as numbers; a non-finite number as null, as the
    worker protocol sends it)."""
    return orjson.dumps(source.document(), option=orjson.OPT_SERIALIZE_NUMPY)


class SourceCache:
    """Documents of ``sources`` (a list of viewer sources) by index; see the module docstring."""

    def __init__(self, sources, max_bytes: int = DEFAULT_MAX_BYTES):
        self.sources = list(sources or [])
        self.max_bytes = max_bytes
        self.kept: OrderedDict[int, bytes] = OrderedDict()
        self.kept_bytes = 0
        self.builds = 0                           # documents built (replays)
        self._building: dict[int, asyncio.Future] = {}
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="paddock-sources")

    def __len__(self) -> int:
        return len(self.sources)

    def describe(self) -> list[dict]:
        return [s.describe() for s in self.sources]

    async def get(self, index: int) -> tuple[bytes, str]:
        """(the JSON bytes of source ``index``'s document, its Cache-Status value)."""
        if index in self.kept:
            self.kept.move_to_end(index)
            return self.kept[index], f"{CACHE_NAME}; hit"
        if index in self._building:
            return await asyncio.shield(self._building[index]), f"{CACHE_NAME}; fwd=miss; collapsed"
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self._worker, encode_document, self.sources[index])
        self._building[index] = future
        try:
            data = await asyncio.shield(future)
        finally:
            if future.done():
                self._building.pop(index, None)
            else:                                  # this request went away: forget the build when it ends
                future.add_done_callback(lambda f: self._building.pop(index, None))
        self.builds += 1
        return data, f"{CACHE_NAME}; fwd=miss; " + ("stored" if self._keep(index, data) else "detail=too-large")

    def _keep(self, index: int, data: bytes) -> bool:
        if len(data) > self.max_bytes:
            return False
        if index not in self.kept:
            self.kept[index] = data
            self.kept_bytes += len(data)
        while self.kept_bytes > self.max_bytes:
            _, dropped = self.kept.popitem(last=False)
            self.kept_bytes -= len(dropped)
        return True

    def close(self) -> None:
        self._worker.shutdown(wait=False, cancel_futures=True)
