"""Reaching the Ray cluster a collection runs on: the address probe (``check_address``, before any
work), ``ray.init`` with a message naming the address (``connect``) and the CPU check (``check_cpus``)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from ...dataset.format import CollectError


def check_address(address: str) -> str:
    """``local``, ``auto`` (needs a running cluster: RAY_ADDRESS or a `ray start` on this machine) or
    ``host:port`` (must accept a TCP connection). Returns the address for ray.init, or CollectError."""
    if address == "local":
        return "local"
    if address == "auto":
        if os.environ.get("RAY_ADDRESS"):
            return check_address(os.environ["RAY_ADDRESS"]) if os.environ["RAY_ADDRESS"] not in ("auto",) else "auto"
        if Path("/tmp/ray/ray_current_cluster").exists():
            return "auto"
        raise CollectError("address: got 'auto', but no running Ray cluster was found (RAY_ADDRESS is unset and no "
                           "`ray start` on this machine); start one (python cluster/local_cluster.py start, then give "
                           "its address, 127.0.0.1:PORT) or use the address 'local'")
    host, sep, port = address.rpartition(":")
    if address.startswith("ray://"):
        return address
    if not sep or not host or not port.isdigit():
        raise CollectError(f"address: got {address!r}; expected auto, local or HOST:PORT of a Ray head's GCS")
    try:
        with socket.create_connection((host, int(port)), timeout=3.0):
            pass
    except OSError as exc:
        raise CollectError(f"address: cannot reach {address} ({exc.strerror or exc}); check the head is running "
                           "and the port is its GCS port (6379 by default), or use the address 'local'") from None
    return address


def connect(ray_address: str, address: str, num_shards: int, ray_init_kwargs: dict | None = None) -> None:
    """``ray.init`` at ``ray_address`` (``check_address``'s answer for the given ``address``); a private
    ``local`` instance gets one logical CPU per shard. CollectError naming the address when it fails."""
    import ray

    kwargs = dict(log_to_driver=False)
    if ray_address == "local":
        # logical CPUs: one per shard (more shards than cores share them; the machine is the user's call)
        kwargs.update(num_cpus=num_shards, include_dashboard=False)
    kwargs.update(ray_init_kwargs or {})
    try:
        ray.init(address=ray_address, **kwargs)
    except Exception as exc:   # noqa: BLE001 - turned into a message naming the address
        raise CollectError(f"address: Ray could not connect to {address} ({type(exc).__name__}: {exc}); check "
                           "the cluster is up, or use the address 'local'") from None


def check_cpus(num_shards: int) -> None:
    """CollectError unless the cluster has a CPU for each of ``num_shards`` shards."""
    import ray

    cpus = ray.cluster_resources().get("CPU", 0)
    if cpus < num_shards:
        raise CollectError(f"num_shards: got {num_shards}, but the cluster has {cpus:g} CPUs and each shard takes "
                           f"one; use {int(cpus)} shards or fewer, or add nodes")
