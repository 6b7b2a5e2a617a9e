"""`paddock-ma bench sampling` runs the four sampling paths on a tiny budget and reports comparable rows."""

import json

import pytest

from paddock_ma.bench import sampling as bench_sampling


def test_bench_sampling_reports_every_path_with_one_policy_network(capsys):
    from paddock_ma.cli.main import main
    assert main(["bench", "sampling", "--worlds", "1", "--seconds", "0.2", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["env_id"] == "paddock/gp-batch-v0"
    assert (report["worlds"], report["cars_per_world"], report["cars"]) == (1, 8, 8)
    rows = {r["path"]: r for r in report["rows"]}
    assert list(rows) == list(bench_sampling.PATHS)
    for r in rows.values():
        assert r["agent_steps"] > 0 and r["seconds"] >= 0.2 and r["cpu_seconds"] > 0
        assert abs(r["agent_steps_per_s"] / (r["agent_steps"] / r["seconds"]) - 1) < 0.01   # seconds rounded
    # the three policies are one network: RLlib's default PPO actor, as RLlib builds it and in plain torch
    params = {rows[p]["policy_params"] for p in ("rllib_vector", "rllib_packed", "torch")}
    assert len(params) == 1 and params.pop() > 0 and rows["engine"]["policy_params"] == 0
    # the engine steps every car of every step of whole rollouts
    assert rows["engine"]["agent_steps"] % (report["rollout"] * report["cars"]) == 0
    goals = {(g["path"], g["versus"]): g for g in report["goals"]}
    assert set(goals) == {(a, b) for a, b, _ in bench_sampling.GOALS}
    for (a, b), g in goals.items():
        ratio = rows[a]["agent_steps_per_s"] / rows[b]["agent_steps_per_s"]
        assert abs(g["ratio"] - ratio) < 1e-3 and g["met"] == (g["ratio"] >= g["target"])


def test_format_report_names_every_path_and_goal():
    rows = [{"path": p, "what": bench_sampling.LABELS[p], "agent_steps": 100 * (i + 1), "seconds": 1.0,
             "cpu_seconds": 1.0, "agent_steps_per_s": 100.0 * (i + 1), "agent_steps_per_cpu_s": 100.0 * (i + 1),
             "policy_params": 0 if p == "engine" else 20870} for i, p in enumerate(bench_sampling.PATHS)]
    report = {"env_id": "paddock/gp-batch-v0", "worlds": 2, "cars_per_world": 8, "cars": 16, "rollout": 64,
              "seconds_per_path": 1.0, "policy": "p", "rows": rows,
              "goals": [{"path": "torch", "versus": "engine", "ratio": 0.75, "target": 0.7, "met": True},
                        {"path": "rllib_vector", "versus": "rllib_packed", "ratio": 0.5, "target": 2.0, "met": False}]}
    text = bench_sampling.format_report(report)
    assert all(label in text for label in bench_sampling.LABELS.values())
    assert "torch / engine = 0.75 (goal >= 0.7): met" in text
    assert "rllib_vector / rllib_packed = 0.50 (goal >= 2.0): NOT met" in text


def test_paths_subset_and_unknown_paths(capsys):
    from paddock_ma.cli.main import main
    assert main(["bench", "sampling", "--worlds", "1", "--seconds", "0.05", "--rollout", "4", "--paths", "engine",
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [r["path"] for r in report["rows"]] == ["engine"] and report["rollout"] == 4 and report["goals"] == []
    assert report["rows"][0]["agent_steps"] % (4 * report["cars"]) == 0
    with pytest.raises(ValueError, match="paths: got \\['sideways'\\]"):
        bench_sampling.run(paths=("sideways",))
    with pytest.raises(SystemExit):
        main(["bench", "sampling", "--paths", "torch,sideways"])
