"""The core of the simulation every room builds on: how kernels compile (``jit``), the state's field
layout with units (``layout``), the state arrays and snapshots (``state``), per-world random generators
(``rng``), shared math (``trig``), car parameters from ratings (``params``) and the compile status line.
"""
