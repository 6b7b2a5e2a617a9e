"""``paddock-ma export-minari``: a collected dataset opened by ``minari.load_dataset``, episode by episode the
dataset's rows (one episode per car life), with the env's spaces and the dataset's provenance."""

import json

import numpy as np
import pyarrow.parquet as pq
import pytest

from paddock_ma.cli import main as cli_main
from paddock_ma.dataset.format import MANIFEST, CollectError
from paddock_ma.dataset.manifest import new_manifest, run_base
from paddock_ma.distributed.collection.config import CollectConfig

from .conftest import ENV_ID, OVERRIDES
from .writer_double import run_shard_writes

# 1 shard x 3 worlds, 30 steps, episodes of 20 steps: first lives end at max-steps, second lives are cut
CFG = dict(env=ENV_ID, num_shards=1, worlds_per_shard=3, steps=30, seed=11, policy="random", fragment_steps=16,
           snapshot_every=16, env_overrides=OVERRIDES, file_worlds=3)


@pytest.fixture
def dataset(warm_cache, tmp_path, monkeypatch):
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    cfg = CollectConfig(**CFG)
    base = run_base(cfg.identity(), cfg.layout(), cfg.env_config(), "test")
    run_shard_writes(tmp_path / "ds", cfg, cfg.env_config(), new_manifest(base, cfg.identity(), cfg.env_config()))
    return tmp_path / "ds"


def test_export_minari_gives_one_episode_per_car_life_with_the_rows_values(dataset, capsys):
    import minari

    assert cli_main(["export-minari", str(dataset), "paddock/oval-random-v0"]) == 0
    ds = minari.load_dataset("paddock/oval-random-v0")
    t = pq.read_table(dataset / "data").sort_by([("world", "ascending"), ("driver", "ascending"), ("seq", "ascending")])
    m = json.loads((dataset / MANIFEST).read_text())
    controlled = m["layout"]["controlled"]
    lives = sorted({(w, controlled.index(d), e) for w, d, e in zip(t["world"].to_pylist(), t["driver"].to_pylist(),
                                                                    t["episode_id"].to_pylist())})
    assert ds.total_episodes == len(lives) == 3 * 8 * 2 and ds.total_steps == t.num_rows == 30 * 3 * 8
    assert ds.observation_space.shape == (298,) and ds.action_space.shape == (3,)
    assert ds.action_space.low.tolist() == [-1, 0, 0] and ds.action_space.high.tolist() == [1, 1, 1]
    meta = ds.storage.metadata
    assert meta["paddock_ma_env_id"] == ENV_ID and meta["paddock_ma_config_hash"] == m["config_hash"]
    assert meta["paddock_ma_provenance_sha256"] == m["provenance_sha256"] and meta["paddock_ma_seed"] == 11
    episodes = list(ds.iterate_episodes())
    for i in (0, 1, 17, len(lives) - 1):      # episode i is life i in (world, driver, episode) order
        w, k, e = lives[i]
        rows = t.filter((t["world"].to_numpy() == w) & (np.array(t["driver"].to_pylist()) == controlled[k])
                        & (t["episode_id"].to_numpy() == e))
        ep = episodes[i]
        n = rows.num_rows
        assert n == (20 if e == 1 else 10) and len(ep.actions) == n and len(ep.observations) == n + 1
        obs = np.stack(rows["obs"].to_numpy(zero_copy_only=False))
        assert np.array_equal(ep.observations[:n], obs)
        assert np.array_equal(ep.observations[n], np.asarray(rows["final_obs"][n - 1].as_py(), np.float32))
        assert np.array_equal(ep.actions, np.stack(rows["action"].to_numpy(zero_copy_only=False)))
        assert np.array_equal(ep.rewards, rows["legal_progress_delta_meters"].to_numpy())
        assert ep.truncations.tolist() == rows["truncated"].to_pylist() and ep.truncations[-1]   # max-steps / the end
        names = meta["paddock_ma_metric_names"].split(",")
        assert ep.infos["metrics"].shape == (n + 1, len(names)) and not ep.infos["metrics"][0].any()
        assert np.array_equal(ep.infos["metrics"][1:, names.index("off_track")], rows["off_track"].to_numpy())
    with pytest.raises(CollectError, match="already in Minari's local store"):
        from paddock_ma.dataset.minari_export import export_minari
        export_minari(dataset, "paddock/oval-random-v0")
