"""Ray shards across a cluster (docs/design.md section 7).

* ``shard``: ``EnvShard``, a Ray actor owning one BatchEnv of W worlds: its array fast path (``ShardCore``),
  the actor's options, the code fingerprint; ``shard_protocol``: the JSON protocol path on the same actor.
* ``fleet``: ``ShardFleet``, N shards stepped asynchronously with deadlines, snapshots and bit-exact recovery;
  ``shard_lifecycle``: the shards' actors created, placed, failed, replaced and moved; ``fleet_types``: its
  options (``FleetOptions``) and value types.
* ``collection/``: ``paddock-ma collect``: a fleet's transitions into a Parquet dataset with a manifest,
  resumable (the dataset itself, its writer, lock and check: ``paddock_ma.dataset``).
* ``vector``: ``FleetVectorEnv``, a gymnasium VectorEnv over a fleet (the cluster twin of CarVectorEnv).
* ``policies``: ``builtin``, ``random`` (counter-based) and ``MODULE:FN`` policies.
* ``testing``: test doubles (a shard that crashes or hangs on request, a fleet that pins a shard to a node).
* ``demo``: a collection on a local Ray with its summary, verify's verdict, a replay and a PNG.

Nothing here imports Ray until it is used.
"""
