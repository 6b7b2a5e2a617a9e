"""``paddock-ma bench threads``: BatchEnv(parallel=True) rows at each thread count, and the --threads option."""

import pytest

from paddock_ma.bench import threads
from paddock_ma.bench.env import bench_batch_env
from paddock_ma.cli.main import build_parser, main


def test_threads_rows_restore_the_thread_count_and_compare_with_the_first_row():
    import numba

    before = numba.get_num_threads()
    row = bench_batch_env(2, seconds=0.05, actions_from="driver", warmup_steps=2, threads=1)
    assert row["threads"] == 1 and row["car_steps_per_s"] > 0 and numba.get_num_threads() == before
    report = {"env_workload": "e", "threads": [row, dict(row, car_steps_per_s=2 * row["car_steps_per_s"], threads=2)]}
    text = threads.format_report(report)
    assert "| driver | 2 | 2 |" in text and "| 2.00 |" in text and "| driver | 2 | 1 |" in text


def test_the_threads_option(capsys):
    assert build_parser().parse_args(["bench", "threads", "--threads", "1,2,1,2"]).threads == (1, 2, 1, 2)
    assert build_parser().parse_args(["bench", "threads"]).threads == threads.DEFAULT_THREADS
    with pytest.raises(SystemExit) as exit:
        build_parser().parse_args(["bench", "threads", "--threads", "0,x"])
    assert exit.value.code == 2 and ("argument --threads: got '0,x'; expected comma-separated whole numbers >= 1"
                                     in capsys.readouterr().err)
    for bad in ("0,2", "x", ""):                       # the counts type: each count a whole number >= 1
        with pytest.raises(SystemExit):
            build_parser().parse_args(["bench", "threads", "--threads", bad])
        assert f"argument --threads: got {bad!r}" in capsys.readouterr().err


def test_more_threads_than_numba_allows_is_refused_before_anything_runs(capsys):
    """The test session pins numba to one thread (tests/conftest.py): two are refused, naming the fix."""
    import numba

    assert numba.config.NUMBA_NUM_THREADS == 1
    assert main(["bench", "threads", "--threads", "1,2", "--seconds", "0.01"]) == 2
    err = capsys.readouterr().err
    assert "threads: got 2" in err and "NUMBA_NUM_THREADS to at least 2" in err
