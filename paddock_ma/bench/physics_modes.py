"""The physics modes ``bench core`` and ``bench env`` run (``--physics``), without importing numba (the
command line reads them before a benchmark module loads). The first is their default workload's:
simulator, the mode PaddockJS's guide trains in."""

PHYSICS_MODES = ("simulator", "arcade")
