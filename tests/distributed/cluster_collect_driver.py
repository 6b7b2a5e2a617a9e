"""A collection driver run as its own process on the local multi-node cluster (a client must have the
cluster's variables in its environment before Ray is imported): ``python cluster_collect_driver.py
ADDRESS OUT first|resume ONCE_DIR``. ``first``: shard 0 SIGKILLs itself halfway through its first file of
fragment 1 (``die_writing_at_seq`` 32) and the run stops at step 36; prints the nodes each shard ran on
(JSON). ``resume``: the same command, to the end."""

import json
import re
import sys

from paddock_ma.distributed.collection.run import collect
from paddock_ma.distributed.testing import FaultyShardCore

from tests.distributed.conftest import collect_config


class Stop(Exception):
    pass


def main(address: str, out: str, mode: str, once_dir: str) -> None:
    import ray
    ray.init(address=address, log_to_driver=False)
    node_of = {n["NodeID"]: next((k for k in n["Resources"] if re.fullmatch(r"node\d+", k)), "head")
               for n in ray.nodes()}
    cfg, nodes = collect_config(file_worlds=2), {}

    def watch(fleet, st):
        for shard, node in fleet.shard_nodes().items():
            if node:
                nodes.setdefault(shard, set()).add(node_of.get(node, node))
        if mode == "first" and st.seq >= 36 and all(sh.seq >= 36 for sh in fleet.shards):
            raise Stop()

    dying = FaultyShardCore.with_faults({0: {"die_writing_at_seq": 32}}, once_dir=once_dir)
    try:
        collect(cfg, out, progress=False, on_step=watch, shard_cls=dying, deadline_s=120)
    except Stop:
        pass
    print(json.dumps({str(k): sorted(v) for k, v in nodes.items()}))


if __name__ == "__main__":
    main(*sys.argv[1:5])
