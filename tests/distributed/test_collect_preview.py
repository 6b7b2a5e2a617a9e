"""collect --preview on a real local Ray: one world's frames reach PaddockJS's preview stream (a real
preview server process, read over HTTP) while the dataset stays byte-identical to a run without it."""

import socket

import pytest

from paddock_ma.cli.main import main as cli_main
from paddock_ma.dataset.format import CollectError
from paddock_ma.distributed.collection.run import collect
from paddock_ma.serve.preview import PreviewProcess

from tests.helpers.preview_client import WebSocketReader

from tests.helpers.raw_http import http
from .conftest import collect_config, parquet_bytes      # and the fixture clean: the fault-free dataset

pytestmark = pytest.mark.ray


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_collection_publishes_one_world_and_its_data_is_unchanged(clean, tmp_path):    # noqa: F811
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    seen = []

    def on_step(fleet, st):
        if st.seq >= 4:          # the feed has had steps to ask for the track and frames
            status, _, frame = http("GET", f"{url}/preview/frame")
            if status == 200 and frame["type"] == "preview:snapshot":      # not the waiting status
                seen.append(frame)

    reader = WebSocketReader("127.0.0.1", port, timeout=600)       # connects once the server listens
    res = collect(collect_config(), tmp_path / "ds", progress=False, on_step=on_step, preview=PreviewProcess("127.0.0.1", port),
                  preview_world=3, preview_fps=1000.0)
    assert res.failures == 0
    assert parquet_bytes(tmp_path / "ds") == parquet_bytes(clean)             # publishing changed no byte of the data
    assert seen, "no frame reached the preview server during the collection"
    frame = seen[-1]
    assert frame["type"] == "preview:snapshot" and set(frame) == {"type", "snapshot", "observation", "meta"}
    assert frame["meta"]["globalWorld"] == 3 and frame["meta"]["world"] == 1      # shard 1's second world
    assert 1 <= frame["meta"]["seq"] <= 40
    assert len(frame["snapshot"]["cars"]) >= 1 and all("x" in c and "y" in c for c in frame["snapshot"]["cars"])
    assert [f["meta"]["seq"] for f in seen] == sorted(f["meta"]["seq"] for f in seen)   # newest frame wins
    reader.closed = True
    pushed = reader.packets                                     # the same stream over the real WebSocket
    assert pushed and all(p["meta"]["globalWorld"] == 3 for p in pushed)
    assert [p["meta"]["seq"] for p in pushed] == sorted(p["meta"]["seq"] for p in pushed)


def test_a_preview_world_outside_the_fleet_is_refused_before_ray_starts(tmp_path, capsys):
    with pytest.raises(CollectError, match="preview_world: .*99"):
        collect(collect_config(), tmp_path / "a", progress=False, preview=PreviewProcess("127.0.0.1", _free_port()),
                preview_world=99)
    assert not (tmp_path / "a").exists()
    code = cli_main(["collect", "--env", "paddock/oval-batch-v0", "--shards", "1", "--worlds-per-shard", "2",
                     "--steps", "4", "--out", str(tmp_path / "b"), "--preview", "127.0.0.1:8787",
                     "--preview-world", "2", "--no-progress"])
    assert code == 2 and "preview_world" in capsys.readouterr().err
