"""Ray shards across a cluster (DESIGN.md section 7).

* ``shard``: ``EnvShard``, a Ray actor owning one BatchEnv of W worlds (array fast path and JSON protocol).
* ``fleet``: ``ShardFleet``, N shards stepped asynchronously with deadlines, snapshots and bit-exact recovery.
* ``collect``: ``paddock-ma collect``: Parquet datasets with a manifest, resumable.
* ``dataset``: the format (schema, fragment tables, manifest hashes); ``dataset_writer``: its one-commit-point
  writer; ``dataset_lock``: one collector per directory; ``verify``: whether a dataset directory is complete
  and untouched (``paddock-ma verify``); ``processes``: a process's start time and group (from /proc).
* ``vector``: ``FleetVectorEnv``, a gymnasium VectorEnv over a fleet (the cluster twin of CarVectorEnv).
* ``policies``: ``builtin``, ``random`` (counter-based) and ``MODULE:FN`` policies.
* ``testing``: test doubles (a shard that crashes or hangs on request, a fleet that pins a shard to a node).
* ``demo``: a collection on a local Ray with its summary, verify's verdict, a replay and a PNG.

Nothing here imports Ray until it is used.
"""
