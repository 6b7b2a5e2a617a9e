"""PaddockJS 2.0.0's procedural track generator, reproduced: ``trackSeed: N`` builds PaddockJS's track.

PaddockJS (``src/simulation/track/``) grows a random region of grid cells from a seeded Mulberry32
stream, traces and smooths its outline into 60-120 control points, samples a closed centripetal
Catmull-Rom spline through them at 3,600 equal parameter steps, rotates the lap so it starts where
the lap is straightest (the standing start) and blends 539 m before / 543 m after the line onto a
straight, then validates the result (length, shape variation, clearance, turn sharpness,
self-intersection) and tries further seeds derived from the first when it fails. The pit lane is a
straight lane beside the start straight with Bezier access roads.

This module follows those steps operation by operation in float64, in PaddockJS's units (sim units,
12 per metre) and frame (x right, y down), so the samples equal PaddockJS's to rounding (the
transcendental functions of V8 and of the C library may differ in the last bit); it returns them
in metres. It runs once per track at build time (plain Python and numpy; ~1 s).

Public: ``normalize_seed``, ``resolve_generation_options``, ``generate_track(seed, options)`` ->
``PaddockJSTrack`` (centreline samples, DRS zones and pit lane in metres).

Modules, in build order: ``jsmath`` (units, JS arithmetic, Mulberry32), ``options``
(``trackGeneration``), ``controls`` (control points), ``centerline`` (spline, start straight,
validation, DRS), ``pit_lane``, ``generator`` (``generate_track``).
"""
