"""A collected dataset's world as a viewer source (``paddock-ma view --dataset DIR``).

``DatasetSource`` reads one world of a dataset and replays it from its seed and actions
(``dataset.replay``: every observation checked against the recorded one), turning each step into a
frame (``env.views.frames``); the document says where the replay diverged, if it did.
"""

from __future__ import annotations

from pathlib import Path

from ..dataset.replay import load_dataset_world, replay_dataset_world


class DatasetSource:
    """One world of a dataset as a viewer source, replayed into frames."""

    kind = "dataset"

    def __init__(self, root, world: int = 0):
        self.root, self.world = Path(root), world
        self.data = load_dataset_world(root, world)
        self.name = f"{self.root.name} ({self.data.manifest['config']['env']}, world {world})"

    def describe(self) -> dict:
        return {"kind": self.kind, "name": self.name}         # no path: a reply names nothing of this machine

    def document(self) -> dict:
        from ..env.views.frames import preview_frame, track_picture
        frames, track = [], {}

        def collect(engine, seq):
            if not track:
                track.update(track_picture(engine))
            frames.append(preview_frame(engine, 0, observe=True, meta={"datasetSeq": seq, "datasetWorld": self.world}))
        divergence = replay_dataset_world(self.data, collect)
        return {"kind": self.kind, "name": self.name, "track": track, "frames": frames,
                "divergence": None if divergence is None else str(divergence)}
