"""Dataset collection over a ShardFleet (``paddock-ma collect``), one job a module.

* ``run``: ``collect``, the run: inputs checked, Ray reached, the directory taken, the fleet's steps
  handed to the dataset writer (``paddock_ma.dataset``), the run's record in the manifest.
* ``config``: ``CollectConfig`` (what a dataset is) and ``CollectOptions`` (how one run goes).
* ``ray_connect``: the Ray address probe, ``ray.init`` and the CPU check.
* ``signals``: SIGINT / SIGTERM stop a run after its last commit (``StopSignals``, ``Terminated``).
* ``progress``: the rich progress line and the fleet's capacity notes.
* ``preview_feed``: one world of the fleet on PaddockJS's preview stream while it collects.
"""
