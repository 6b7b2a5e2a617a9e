"""A shipped track (envs/tracks/<name>.json) as a PaddockJS 2.0.0 track object, for its `track` option.

    PYTHONPATH=. python tools/paddockjs/shipped_track_object.py grand-prix \
        > tests/fixtures/paddockjs-2.0.0/tracks/grand-prix.object.json

PaddockJS has no track files, but createPaddockEnvironment passes a `track` option through to its race
setup, which builds it with buildTrackModel (the code its procedural tracks go through): a closed
Catmull-Rom spline through `centerlineControls` sampled at `sampleCount` (3,600) parameter steps, then
rotated to the "standing start" its score picks and straightened there over `generationOptions.startStraight`
(grid, exit, lockExtra, blend), with its TRACK widths and a pit lane it places itself.

The object written here makes that pipeline return paddock_ma's own centreline unchanged:

* controls: the shipped track as paddock_ma builds it (``load_track(name)``'s 2 m polyline) resampled to
  3,600 points equally spaced along it, so PaddockJS's 3,600 samples are those points (a sample at
  parameter i/3600 is control point i);
* startStraight all 0: nothing is straightened (the shipped centreline has its own straight at the line);
  with no grid or exit the standing-start score is only the world clearance (PaddockJS's WORLD, 3,550 x
  2,148 m, less 24 m padding), so the track is translated to put the finish line (sample 0) at
  y = 1,074 m, the middle of that world's height, where the clearance is the largest any point can have:
  sample 0 wins (ties go to the first sample) and the lap starts where the shipped one does;
* widths: PaddockJS's TRACK's (15 m road, 1.5 m kerb, 12 m gravel, 20 m runoff, 0.55 m barrier), which
  are the shipped tracks' widths too (an object without them leaves buildTrackModel's bands NaN: its
  procedural tracks spread TRACK into theirs); the pit lane is PaddockJS's, placed by its rule on this
  centreline.

Printed: {"shippedTrack", "translationMeters": [dx, dy] (m, added to the shipped coordinates), "track": the
object (sim units, 12 per metre, rounded to 1e-3 su)}.
"""

import json
import sys

import numpy as np

from paddock_ma.sim.track.load import load_track

U = 12.0                      # PaddockJS sim units per metre
SAMPLES = 3600                # TRACK.sampleCount
WORLD_HEIGHT = 2148.0         # m, PaddockJS's WORLD.height
START_X = 1400.0              # m: keeps the world's x clearance above its y clearance at the line


def shipped_track_object(name: str) -> dict:
    """{"shippedTrack", "translationMeters", "track": the PaddockJS track object} for a shipped track."""
    track = load_track(name)
    s = np.asarray(track.cs)
    at = track.length * np.arange(SAMPLES) / SAMPLES
    x = np.interp(at, s, track.cx)
    y = np.interp(at, s, track.cy)
    dx, dy = START_X - x[0], WORLD_HEIGHT / 2 - y[0]
    controls = [{"x": round((px + dx) * U, 3), "y": round((py + dy) * U, 3)} for px, py in zip(x, y)]
    return {"shippedTrack": name, "translationMeters": [dx, dy], "track": {
        "name": f"paddock_ma {name}",
        "curveInterpolation": "centripetal",
        "sampleCount": SAMPLES,
        "width": 15 * U, "kerbWidth": 1.5 * U, "gravelWidth": 12 * U, "runoffWidth": 20 * U, "barrierWidth": 0.55 * U,
        "centerlineControls": controls,
        "generationOptions": {"startStraight": {"grid": 0, "exit": 0, "lockExtra": 0, "blend": 0}},
    }}


if __name__ == "__main__":
    json.dump(shipped_track_object(sys.argv[1] if len(sys.argv) > 1 else "grand-prix"), sys.stdout)
    sys.stdout.write("\n")
