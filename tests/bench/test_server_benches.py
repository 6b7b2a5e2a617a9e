"""The servers' benchmarks run from the CLI on tiny budgets and report what they measure."""

import json
import subprocess
import sys


def _bench(*args) -> dict:
    out = subprocess.run([sys.executable, "-m", "paddock_ma.cli", "bench", *args], capture_output=True,
                         text=True, timeout=600, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_policy_server_bench_reports_latency_percentiles_of_real_requests():
    report = _bench("policy-server", "--drivers", "3", "--requests", "20")
    assert report["drivers"] == 3 and report["requests"] == 20
    assert 0 < report["p50_ms"] <= report["p99_ms"] <= report["max_ms"]


def test_preview_bench_compares_a_run_with_and_without_a_reading_viewer():
    # 1,000 frames/s: a 30-step round lasts milliseconds on an idle machine, so at 10 frames/s no frame
    # would fall due during it (the run thread's share would be an honest 0)
    report = _bench("preview", "--worlds", "2", "--steps", "30", "--pairs", "2", "--fps", "1000")
    assert len(report["agent_steps_per_s_without"]) == len(report["agent_steps_per_s_with"]) == 2
    assert min(report["agent_steps_per_s_without"] + report["agent_steps_per_s_with"]) > 0
    assert len(report["wall_slowdown"]["pairs_percent"]) == len(report["run_thread_cpu_slowdown"]["pairs_percent"]) == 2
    assert report["frames_published"] > 2 and report["run_thread_share_percent"] > 0
    assert report["frames_received"] >= 1 and report["mean_frame_bytes"] > 1000
