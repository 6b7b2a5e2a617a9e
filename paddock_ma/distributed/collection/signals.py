"""Stopping a collection on a signal: SIGINT and SIGTERM end a run like Ctrl-C, after its last committed
fragment (the command line's choice, ``collect(..., stop_on_sigterm=True)``)."""

from __future__ import annotations


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived (``stop_on_sigterm``): the run stops as on Ctrl-C, after its last committed fragment."""


class StopSignals:
    """SIGINT and SIGTERM while a collection runs (the command line's choice, ``stop_on_sigterm``): each
    raises at once (``KeyboardInterrupt``, ``Terminated``) and is also remembered, and ``check()`` raises
    a remembered one. Both are needed: a handler runs inside Ray's blocking calls (``ray.wait`` checks
    for signals in C++), and when that call completes in the same instant Ray drops the exception the
    handler raised, so the run would go on as if no signal came; the collect loop calls ``check()``
    after each step. ``restore()`` puts the previous handlers back."""

    def __init__(self):
        self.pending: type | None = None
        self._previous: dict = {}

    def install(self) -> None:
        import signal
        for signum in (signal.SIGINT, signal.SIGTERM):
            self._previous[signum] = signal.signal(signum, self._handle)

    def _handle(self, signum, frame):
        import signal
        self.pending = Terminated if signum == signal.SIGTERM else KeyboardInterrupt
        raise self.pending()

    def check(self) -> None:
        if self.pending is not None:
            raise self.pending()

    def restore(self) -> None:
        import signal
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()
