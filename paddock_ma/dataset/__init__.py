"""Datasets on disk: what a collection (``distributed.collection``) writes and what reads, checks and
replays it. Nothing here imports Ray or the fleet: the room sits below ``distributed`` and ``serve``,
which both use it (it imports only the contract, ``env``).

* ``format``: the directory layout, the row columns and their units, the manifest's keys and hashes.
* ``fragments``: the Parquet schema and how a shard's steps become rows (``fragment_table``).
* ``manifest``: a run's manifest: what it checks a directory against, its first version, its record.
* ``directory``: whether a directory may take a run (new, or the run to resume) and a new one's folders.
* ``writer``: committing a dataset so that a kill at any instant loses nothing (the manifest, one commit
  point), and writing the files the shards do not write themselves.
* ``shard_files``: a shard writing its own files straight to the dataset's storage.
* ``storage``: where a dataset lives (a directory, a shared filesystem, an object store URI) behind one
  interface, with the conditional writes and the lease object stores need.
* ``lock``: one collector per directory (a lease on an object store); ``processes``: a process's start time and group (from /proc).
* ``verify``: whether a dataset directory is complete and untouched (``paddock-ma verify``).
* ``worlds``: how a collection's worlds are built and started (a shard runs them, a replay re-runs one).
* ``replay``: one world read back and replayed from its seed and actions, checked against the record.
* ``minari_export``: a dataset as a Minari dataset (``paddock-ma export-minari``).
"""
