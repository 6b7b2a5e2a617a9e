"""``paddock-ma race``: built-in drivers race on every shipped track (``paddock_ma.rollout.race``); a table."""

from __future__ import annotations

from .arguments import count, integer, seconds


def add_parsers(sub) -> None:
    race = sub.add_parser("race", help="race built-in drivers on every shipped track with the numba core",
                          description="Race built-in drivers on every shipped track (rolling start, cars scattered "
                                      "round the lap) and print laps, best lap, contacts, the final state's checksum "
                                      "and the core's speed.")
    race.add_argument("--worlds", type=count, default=8, help="worlds per track (default 8)")
    race.add_argument("--cars", type=count, default=20, help="built-in cars per world (default 20)")
    race.add_argument("--seconds", type=seconds, default=90.0, help="simulated seconds per track (default 90)")
    race.add_argument("--seed", type=integer, default=0, help="seed of the start positions (default 0)")
    race.set_defaults(func=cmd_race)


def cmd_race(args) -> int:
    from rich.console import Console
    from rich.table import Table

    from ..rollout.race import race_every_track

    console = Console(width=max(120, Console().width))
    table = Table(title=f"paddock_ma demo: {args.worlds} worlds x {args.cars} built-in cars, "
                        f"{args.seconds:.0f} simulated s per track")
    for col in ("track", "lap (m)", "car-ticks/s", "laps done", "best lap (s)", "contacts", "destroyed", "checksum"):
        table.add_column(col, justify="right")
    for r in race_every_track(worlds=args.worlds, cars=args.cars, seconds=args.seconds, seed=args.seed):
        table.add_row(r.track, f"{r.lap_meters:.0f}", f"{r.car_ticks_per_s:,.0f}", str(r.laps_completed),
                      "-" if r.best_lap_seconds is None else f"{r.best_lap_seconds:.2f}", str(r.contacts),
                      str(r.destroyed), f"{r.checksum:016x}")
    console.print(table)
    return 0
