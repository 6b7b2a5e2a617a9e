"""What a user sees while numba compiles the kernels: a status line on stderr instead of silence.

numba fires its ``numba:compile`` event only when it really compiles a function (one loaded from the
on-disk cache fires none), so a run whose kernels are cached shows nothing and pays nothing. When a kernel
of this package does compile (a cold cache: a fresh checkout without ``make install``'s warm-up, or
edited sources), stderr shows ``compiling simulation kernels (first run only)``: on a terminal a
transient spinner line with the kernel being compiled, the count so far and the time this outermost
compile has taken (the line is erased when it ends, before the program's own output goes on); otherwise
(logs, pipes, Ray workers) that one line once per process. Nothing is ever written to stdout (the worker
protocol speaks on it). ``PADDOCK_MA_COMPILE_STATUS=0`` turns it off.

``jit.py`` installs the listener when the first kernel module is imported.
"""

from __future__ import annotations

import os
import sys
import time

from numba.core import event

MESSAGE = "compiling simulation kernels (first run only)"
HINT = "`make install` (paddock-ma warm) compiles them ahead"
_PACKAGE_PREFIX = "paddock_ma."


def _kernel_name(data) -> str | None:
    """``module.function`` of the dispatcher an event is about, or None when it is not this package's."""
    func = getattr(data.get("dispatcher"), "py_func", None)
    module = getattr(func, "__module__", "") or ""
    if not module.startswith(_PACKAGE_PREFIX):
        return None
    return f"{module.rsplit('.', 1)[-1]}.{func.__qualname__}"


class CompileStatus(event.Listener):
    """numba's listener of ``numba:compile`` events: ``on_start``/``on_end`` of every compile.

    Counts the package's compiled functions (nested ones included: a kernel's callees compile inside
    it) and shows the status while an outermost compile runs. numba compiles under one global lock, so
    the events arrive one at a time."""

    def __init__(self, stream=None, message: str = MESSAGE):
        self.stream = stream if stream is not None else sys.stderr
        self.message = message     # the warm-up says what it does instead
        self.hint = HINT
        self.depth = 0
        self.compiled = 0          # functions of this package numba compiled in this process
        self.seconds = 0.0         # wall time inside outermost compiles
        self._t_outer = 0.0
        self._live = None
        self._task = None
        self._announced = False

    def on_start(self, event):
        name = _kernel_name(event.data)
        self.depth += 1
        if name is None:
            return
        self.compiled += 1
        if self.depth == 1:
            self._t_outer = time.perf_counter()
            self._show(name)
        else:
            self._update(name)

    def on_end(self, event):
        self.depth -= 1
        if self.depth == 0 and self._t_outer:
            self.seconds += time.perf_counter() - self._t_outer
            self._t_outer = 0.0
            self._hide()

    # display
    def _is_terminal(self) -> bool:
        try:
            return self.stream.isatty()
        except (AttributeError, ValueError):
            return False

    def _description(self, name: str) -> str:
        return f"{self.message}: {name} [{self.compiled}]"

    def _show(self, name: str) -> None:
        if not self._is_terminal():
            if not self._announced:
                self._announced = True
                hint = f"; {self.hint}" if self.hint else ""
                print(f"paddock_ma: {self.message}{hint} ...", file=self.stream, flush=True)
            return
        from rich.console import Console
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self._live = Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                              console=Console(file=self.stream), transient=True,
                              redirect_stdout=False, redirect_stderr=False)
        self._task = self._live.add_task(self._description(name), total=None)
        self._live.start()

    def _update(self, name: str) -> None:
        if self._live is not None:
            self._live.update(self._task, description=self._description(name))

    def _hide(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
            self._task = None


_INSTALLED: CompileStatus | None = None


def install() -> CompileStatus | None:
    """Register the process's one listener (idempotent); None when ``PADDOCK_MA_COMPILE_STATUS=0``."""
    global _INSTALLED
    if _INSTALLED is None and os.environ.get("PADDOCK_MA_COMPILE_STATUS", "1") != "0":
        _INSTALLED = CompileStatus()
        event.register("numba:compile", _INSTALLED)
    return _INSTALLED


def installed() -> CompileStatus | None:
    """The process's listener (its ``compiled`` count and ``seconds``), if installed."""
    return _INSTALLED
