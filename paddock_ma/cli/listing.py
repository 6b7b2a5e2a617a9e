"""``paddock-ma envs`` (the environment catalogue) and ``paddock-ma tracks`` (the shipped tracks)."""

from __future__ import annotations


def add_parsers(sub) -> None:
    envs = sub.add_parser("envs", help="list the environment catalogue (versioned env ids)")
    envs.set_defaults(func=cmd_envs)
    tracks = sub.add_parser("tracks", help="list the shipped tracks with their lap lengths")
    tracks.set_defaults(func=cmd_tracks)


def cmd_envs(args) -> int:
    from ..catalog import list_envs

    for env in list_envs():
        print(f"{env['id']:28s} {env['description']}")
    return 0


def cmd_tracks(args) -> int:
    from ..sim.track.load import list_tracks, load_track

    for name in list_tracks():
        print(f"{name:12s} {load_track(name).length:8.1f} m")
    return 0
