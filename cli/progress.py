"""A rich progress bar for long experiments, on stderr so that stdout keeps the tables
or the JSON alone."""

from __future__ import annotations

__all__ = ["progress_bar"]


def progress_bar(default: str = "trials"):
    """``(progress, stop)``: ``progress(done, total, what="")`` starts the bar on its first
    call and moves it; ``stop()`` ends it (call it in a ``finally``)."""
    from rich.console import Console
    from rich.progress import Progress
    bar = Progress(console=Console(stderr=True), transient=True)
    task = {}

    def progress(done, total, what=""):
        if not task:
            bar.start()
            task["id"] = bar.add_task(what or default, total=total)
        bar.update(task["id"], completed=done, description=what or default)

    def stop():
        if task:
            bar.stop()
    return progress, stop
