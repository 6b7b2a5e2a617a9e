"""What Linux's ``/proc`` says about a process: when it started (to tell a live owner from a reused pid)
and which processes share its process group. Used by the dataset lock (``dataset.lock.OutLock``) and the
local cluster launcher (``cluster/local_cluster.py``)."""

from __future__ import annotations

import os


def process_start_ticks(pid: int) -> int | None:
    """The start time of process ``pid`` in clock ticks since boot (field 22 of ``/proc/PID/stat``), or
    None when there is no such process. A pid reused by a later process has another value."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return int(fh.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def process_group_members(pgid: int) -> list[int]:
    """Sorted pids of the live (not zombie) processes whose process group is ``pgid``."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            out.append(int(entry))
    return sorted(out)
