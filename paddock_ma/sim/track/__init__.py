"""Tracks: immutable geometry arrays shared by every world that races on them. Getting one (``load``),
building it (``build``: spline, start straight, ``pit_lane``, ``index``), its query kernels (``geometry``:
locate, point, band; ``surface``: the surface at a point and the pit complex), and the centreline-ahead
table the built-in driver reads (``preview``).
"""
