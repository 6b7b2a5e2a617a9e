"""``paddock-ma``: the command line. One argparse tree (``cli.main``: ``build_parser``, ``main``); one module
per command group, argument parsing only; each command calls a library function with plain arguments.
``cli.arguments`` holds the one argparse type of each kind of value (seconds, whole numbers, counts,
names, addresses).

* ``paddock-ma demo``     the main job on a local Ray cluster (``cli.demo``; ``paddock_ma.distributed.demo``).
* ``paddock-ma warm``     compile the simulation's kernels ahead into numba's cache (``cli.warm``; ``paddock_ma.warm``).
* ``paddock-ma race``     built-in drivers race on every shipped track; a table (``cli.race``; ``rollout.race``).
* ``paddock-ma bench``    the benchmarks: ``bench core|env|threads|protocol|sampling|fleet|policy-server|preview``;
  with no subcommand, ``core`` then ``env`` (``cli.bench``; ``paddock_ma.bench``).
* ``paddock-ma envs``     the environment catalogue; ``paddock-ma tracks`` the shipped tracks (``cli.listing``).
* ``paddock-ma serve``    the JSON worker protocol as NDJSON on stdin/stdout (``cli.serve``; ``protocol.server``).
* ``paddock-ma collect``  a Parquet dataset over Ray shards; ``paddock-ma verify DIR`` checks one (``cli.collect``).
* ``paddock-ma export-paddockjs | policy-server | view | record | replay``  the bridge to PaddockJS and the
  viewer (``cli.bridge``).
"""
