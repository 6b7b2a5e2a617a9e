"""Frame recordings: a run's preview packets in a file the viewer opens and scrubs.

Format (JSON lines): the first line ``{"type": "preview:track", "name", "track"}`` (``frames.track_picture``),
then one PaddockJS preview packet per line. ``FrameRecorder(path)`` is a publisher for ``attach_preview``
(``attach_preview(engine, FrameRecorder("run.frames.jsonl"), every=1)``): it writes each frame as it comes.
``FrameRecording(path)`` reads one back as a viewer source.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import INVALID_CONFIG, PaddockError
from ..env.views.frames import copy_frame
from ..env.views.world_copy import WorldCopy

TRACK_LINE = "preview:track"


class FrameRecorder:
    """Writes the frames ``attach_preview`` publishes to a JSON-lines file (synchronously, in order)."""

    def __init__(self, path, name: str | None = None):
        self.path = Path(path)
        self.name = name or self.path.name
        self._file = open(self.path, "w")
        self._track = None
        self.published = 0

    @property
    def track(self):
        return self._track

    @track.setter
    def track(self, picture: dict) -> None:
        if self._track is None:
            self._file.write(json.dumps({"type": TRACK_LINE, "name": self.name, "track": picture}) + "\n")
        self._track = picture

    def publish_threadsafe(self, frame) -> None:
        """Write a frame (a packet dict, or a ``WorldCopy`` built into one here)."""
        if self._track is None:
            raise PaddockError(INVALID_CONFIG, "recording: the track line must come first (use attach_preview)",
                               "track")
        if isinstance(frame, WorldCopy):
            frame = copy_frame(frame)
        self._file.write(json.dumps(frame, allow_nan=False) + "\n")
        self.published += 1

    def close(self) -> None:
        self._file.close()


class FrameRecording:
    """A recording file as a viewer source: ``describe()`` for the list, ``document()`` for the page."""

    kind = "recording"

    def __init__(self, path):
        self.path = Path(path)
        try:
            with open(self.path) as fh:
                head = json.loads(fh.readline())
        except (OSError, ValueError) as exc:
            raise PaddockError(INVALID_CONFIG, f"recording: cannot read {path}: {exc}", "recording") from None
        if head.get("type") != TRACK_LINE:
            raise PaddockError(INVALID_CONFIG, f"recording: {path} does not start with a {TRACK_LINE!r} line; "
                               "is it a frame recording (FrameRecorder)?", "recording")
        self.name = head.get("name") or self.path.name

    def describe(self) -> dict:
        return {"kind": self.kind, "name": self.name}         # no path: a reply names nothing of this machine

    def document(self) -> dict:
        with open(self.path) as fh:
            head = json.loads(fh.readline())
            frames = [json.loads(line) for line in fh if line.strip()]
        return {"kind": self.kind, "name": self.name, "track": head["track"], "frames": frames}
