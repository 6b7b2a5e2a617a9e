"""Read a collected dataset (a directory or an object store URI) with the three usual Parquet readers and
check they agree: rows, car lives and each life's legal progress.

    python examples/dataset_readers.py /tmp/gp-ds
    python examples/dataset_readers.py s3://my-bucket/datasets/gp-1      # AWS_* / AWS_PROFILE as usual

duckdb reads an object store through its httpfs extension; where that cannot be installed (no internet),
it is given fsspec's filesystem instead (``--duckdb-fsspec``).
"""

from __future__ import annotations

import argparse
import json


def summaries(dataset: str, duckdb_fsspec: bool = False) -> dict:
    """``{reader: (rows, lives, total legal progress in metres)}`` for pyarrow, polars and duckdb."""
    import duckdb
    import polars as pl
    import pyarrow.compute as pc
    import pyarrow.dataset as ds

    files = f"{dataset.rstrip('/')}/data/*.parquet"
    t = ds.dataset(dataset).to_table(columns=["world", "driver", "episode_id", "legal_progress_delta_meters"])
    lives = t.group_by(["world", "driver", "episode_id"]).aggregate([]).num_rows
    out = {"pyarrow": (t.num_rows, lives, round(pc.sum(t["legal_progress_delta_meters"]).as_py(), 3))}
    df = pl.scan_parquet(files).select(
        pl.len().alias("rows"), pl.struct("world", "driver", "episode_id").n_unique().alias("lives"),
        pl.col("legal_progress_delta_meters").sum().alias("progress")).collect()
    out["polars"] = (df["rows"][0], df["lives"][0], round(float(df["progress"][0]), 3))
    con = duckdb.connect()
    if duckdb_fsspec and "://" in dataset:
        import fsspec
        con.register_filesystem(fsspec.filesystem(dataset.split("://")[0]))
    rows, lives, progress = con.sql(
        f"select count(*), count(distinct (world, driver, episode_id)), sum(legal_progress_delta_meters) "
        f"from read_parquet('{files}')").fetchall()[0]
    out["duckdb"] = (rows, lives, round(float(progress), 3))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dataset", help="a dataset directory or object store URI (paddock-ma collect --out)")
    p.add_argument("--duckdb-fsspec", action="store_true", help="duckdb reads the store through fsspec")
    args = p.parse_args(argv)
    got = summaries(args.dataset, args.duckdb_fsspec)
    print(json.dumps(got))
    return 0 if len(set(got.values())) == 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
