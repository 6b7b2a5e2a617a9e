"""The viewer's source cache: one build per source however many ask at once, the kept bytes within the
bound (least recently asked for forgotten first), a document larger than the bound served and not kept."""

import asyncio
import threading

from paddock_ma.serve.source_cache import SourceCache


class Source:
    """A viewer source whose document is ``size`` bytes of JSON and takes ``seconds`` to build."""

    kind = "test"

    def __init__(self, name: str, size: int, seconds: float = 0.0):
        self.name, self.size, self.seconds, self.built = name, size, seconds, 0

    def describe(self) -> dict:
        return {"kind": self.kind, "name": self.name}

    def document(self) -> dict:
        threading.Event().wait(self.seconds)
        self.built += 1
        return {"name": self.name, "pad": "x" * (self.size - 30)}


def test_concurrent_requests_share_one_build_and_later_ones_hit():
    source = Source("a", 1000, seconds=0.3)
    cache = SourceCache([source], max_bytes=10_000)

    async def main():
        first = await asyncio.gather(*(cache.get(0) for _ in range(3)))
        return first, await cache.get(0)
    first, later = asyncio.run(main())
    cache.close()
    assert source.built == 1 and cache.builds == 1 and len({data for data, _ in first}) == 1
    assert sorted(status for _, status in first) == ["paddock-ma; fwd=miss; collapsed"] * 2 + ["paddock-ma; fwd=miss; stored"]
    assert later == (first[0][0], "paddock-ma; hit")


def test_the_kept_bytes_stay_within_the_bound():
    sources = [Source(str(i), 4000) for i in range(5)]
    cache = SourceCache(sources, max_bytes=10_000)

    async def main():
        for i in (0, 1, 0, 2, 3):
            await cache.get(i)
        return await cache.get(1)
    _, status = asyncio.run(main())
    cache.close()
    assert cache.kept_bytes <= 10_000 and list(cache.kept) == [3, 1]    # 1 was forgotten, then rebuilt
    assert status.endswith("stored") and sources[1].built == 2 and sources[0].built == 1


def test_a_document_over_the_bound_is_served_and_not_kept():
    cache = SourceCache([Source("big", 50_000)], max_bytes=10_000)
    data, status = asyncio.run(cache.get(0))
    cache.close()
    assert len(data) > 40_000 and "too-large" in status and cache.kept_bytes == 0
