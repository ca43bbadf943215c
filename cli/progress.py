"""The command line's one progress display: what a long step is doing, on stderr, so
that stdout keeps the result (tables, JSON) alone.

Every verb makes one :class:`Progress` and hands it down as a plain callback,
``progress(done, total, what)`` (the layers below take any such callable and never
import rich): ``what`` says the step (``"Yosys writing the Verilog"``), ``done`` of
``total`` how far the command is (steps, trials, messages). On a terminal it is a
transient rich bar, gone when the command ends, which then prints its few lines of
result; on anything else (a pipe, a log, a test) it shows nothing. With ``-v``
(``verbose``) each new step is one plain line on stderr instead, between the tools'
own output, which ``-v`` lets through.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

__all__ = ["Progress", "ProgressFn"]

#: The callback the layers below take: ``progress(done, total, what)``.
ProgressFn = Callable[[int, int, str], None]


class Progress:
    """One command's progress on stderr; a context manager, and the callback itself.

    Parameters
    ----------
    label : str
        The command, shown before each step (``fatnet gen`` shows ``fatnet gen: ...``).
    verbose : bool
        One line per new step instead of a bar (``-v``).
    default : str
        The step's name when a caller gives none (``"trials"``).
    """

    def __init__(self, label: str, verbose: bool = False, default: str = "working"):
        self.label = label
        self.verbose = verbose
        self.default = default
        self._bar: Any = None    # a rich Progress once started (rich is imported lazily)
        self._task: Any = None
        self._what: str | None = None
        self._off = False   # stderr is not a terminal: nothing is shown

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def __call__(self, done: int, total: int | None, what: str = "") -> None:
        """Report ``done`` of ``total`` (None: unknown) in the step ``what``."""
        what = what or self.default
        new = what != self._what
        self._what = what
        if self.verbose:
            if new:
                print(f"{self.label}: {what}", file=sys.stderr, flush=True)
            return
        description = f"{self.label}: {what}"
        if self._off or (self._bar is None and not self._start(description)):
            return
        self._bar.update(self._task, completed=done, total=total, description=description)
        if new:   # a new step shows at once, not at the next tick
            self._bar.refresh()

    def _start(self, description: str) -> bool:
        """Start the bar on ``description``; False (and no bar) when stderr is not a
        terminal."""
        from rich.console import Console
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress as Bar,
                                   SpinnerColumn, TextColumn, TimeElapsedColumn)
        console = Console(stderr=True)
        if not console.is_terminal:   # rich would still end its bar with a newline
            self._off = True
            return False
        # stdout and stderr are left alone: a print while the bar runs stays on its own
        # stream (rich would move stdout's lines to the bar's stream, stderr)
        self._bar = Bar(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                        MofNCompleteColumn(), TimeElapsedColumn(),
                        console=console, transient=True,
                        redirect_stdout=False, redirect_stderr=False)
        self._task = self._bar.add_task(description, total=None)
        self._bar.start()
        return True

    def stop(self) -> None:
        """End the bar (it leaves nothing on the terminal); idempotent."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
