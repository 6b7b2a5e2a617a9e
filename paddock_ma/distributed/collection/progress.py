"""What a collection shows while it runs: a rich progress line (steps, steps/s and rows/s, elapsed) and
the fleet's capacity notes (a shard waiting to be placed or retried), on the line when it is shown,
else printed on the console."""

from __future__ import annotations


class CollectProgress:
    """The run's progress line and notes (see the module docstring). enabled: show the line; console: a
    rich Console (None: nothing is printed); total / done: shard-steps of the run and already done (a
    resume); rows_per_step: rows a shard-step writes (for rows/s); on_event: the caller's ``fn(event)``,
    called first for each fleet event. Use as a context manager around the step loop."""

    def __init__(self, enabled: bool, console, total: int, done: int, rows_per_step: int, on_event=None):
        self.enabled, self.console, self.on_event = enabled, console, on_event
        self.total, self.done, self.rows_per_step = total, done, rows_per_step
        self.waiting: dict[int, str] = {}       # shard -> the line's note while it waits for capacity
        self._bar = None
        self._task = None

    def __enter__(self) -> CollectProgress:
        if self.enabled:
            bar = _rich_progress(self.rows_per_step, self.console)
            bar.__enter__()
            self._task = bar.add_task("collect", total=self.total, completed=self.done, note="")
            self._bar = bar
        return self

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.__exit__(*exc)
        return False

    def on_fleet_event(self, ev: dict) -> None:
        """The fleet's ``on_event``: the caller's hook, then a note for a shard waiting for capacity."""
        if self.on_event is not None:
            self.on_event(ev)
        if ev["kind"] == "retry":
            self.waiting[ev["shard"]] = (f"shard {ev['shard']} waits for capacity: retry {ev['attempt']} in "
                                         f"{ev['delay_s']:.0f} s, failing for {ev['failing_s']:.0f} s of "
                                         f"{ev['give_up_s']:.0f}")
        elif ev["kind"] == "wait":
            self.waiting[ev["shard"]] = (f"shard {ev['shard']} waits for a node with a free CPU: not placed for "
                                         f"{ev['waited_s']:.0f} s, failing for {ev['failing_s']:.0f} s of "
                                         f"{ev['give_up_s']:.0f}")
        if ev["kind"] in ("retry", "wait"):
            if self._bar is not None:
                self._bar.update(self._task, note="; ".join(self.waiting.values()))
            elif self.console is not None:
                self.console.print(f"collect: {self.waiting[ev['shard']]}")

    def step_done(self, shard: int) -> None:
        """Shard ``shard`` handed out a step: it no longer waits, and the line advances."""
        if self.waiting.pop(shard, None) is not None and self._bar is not None:
            self._bar.update(self._task, note="; ".join(self.waiting.values()))
        if self._bar is not None:
            self._bar.update(self._task, advance=1)


def _rich_progress(rows_per_step: int, console):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn
    from rich.text import Text

    class Rate(ProgressColumn):
        def render(self, task):
            speed = task.finished_speed or task.speed
            if not speed:
                return Text("-- steps/s")
            return Text(f"{speed:,.1f} steps/s {speed * rows_per_step:,.0f} rows/s")

    return Progress(TextColumn("[bold]collect"), BarColumn(), MofNCompleteColumn(), Rate(), TimeElapsedColumn(),
                    TextColumn("[yellow]{task.fields[note]}"),
                    console=console)
