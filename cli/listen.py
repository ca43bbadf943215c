"""``fatnet board <kind> [network options] --board B --listen PORT``: read the
self-testing top's UART report lines from a serial port and print each beside the
model's prediction for the same cycle count (:func:`fatnet.sim.bist.counter_run`);
``--check-capture FILE`` does the same for lines saved in a text file.

The model (the batched engine, :func:`~fatnet.sim.bist.counter_run`) runs a block of
cycles at a time on the plan's outcome table where one serves it (:mod:`fatnet.sim.bistrun`;
the table fills as the model meets its patterns where it is not kept on disk,
:mod:`fatnet.sim.bisttable`), about a million delivery cycles a second once the table
is filled, a few thousand to 300,000 a second where none serves it. A board may report
faster than the model runs, so the model runs lazily, as far as the newest report asks,
and may fall behind: lines wait in a queue (a reader thread keeps the port drained).
The listener is never silent: each board line is printed when it is taken, and while
the model catches up a live line says which report and cycle it has reached. A line
whose cycle count goes back (the board was reset) restarts the model.

Reports are lines that parse (:func:`fatnet.golden.bist.parse_report_line`); any other
line is shown as unparseable and not counted, so ``--reports N`` waits for N reports.
"""

from __future__ import annotations

import queue
import threading
import time

from ..golden.bist import COUNTERS, REPORT_FIELDS, parse_report_line, report_line
from ..golden.errors import ParameterError

__all__ = ["ReportModel", "Comparison", "field_marks", "listen", "check_capture"]

#: Seconds a read waits before the reader thread looks whether it should stop.
READ_TIMEOUT = 0.2
#: The indent of the model's line and the marks under the board's line.
INDENT = " " * 8


class ReportModel:
    """The model's counters at any cycle count, run lazily from reset (and again from
    reset when asked for a count below the one it has reached), on the plan's outcome
    table where one serves it (filled as the model meets its patterns where it is not
    kept on disk whole), a block of cycles at a time
    (:func:`fatnet.sim.bist.counter_run`)."""

    def __init__(self, plan):
        from ..sim.bist import counter_run
        self._counter_run, self._plan = counter_run, plan
        self._restart()

    def _restart(self):
        self._run = self._counter_run(self._plan, table="fill")
        self._counts = {name: 0 for name in COUNTERS}

    @property
    def cycles(self) -> int:
        """The completed delivery cycles the model has run."""
        return self._counts["cycles"]

    def at(self, cycles: int, on_cycle=None) -> dict:
        """The counters after ``cycles`` completed delivery cycles (a copy);
        ``on_cycle(done)`` on the way (:func:`fatnet.sim.bist.counter_run`)."""
        if cycles < self.cycles:
            self._restart()
        self._counts = self._run.at(cycles, on_cycle)
        return dict(self._counts)


def field_marks(board: dict, model: dict) -> tuple[list[str], str]:
    """The report keys whose counters differ, and a line of ``^`` under their digits in
    :func:`~fatnet.golden.bist.report_line`'s layout."""
    line = report_line(board)
    marks = [" "] * len(line)
    differ = []
    for key, name in zip(REPORT_FIELDS, COUNTERS):
        if board[name] != model[name]:
            differ.append(key)
            start = line.index(f" {key}=") + 3
            marks[start:start + 8] = "^" * 8
    return differ, "".join(marks).rstrip()


class Comparison:
    """Board lines compared with the model, one at a time (:meth:`take`), and the
    verdict (:meth:`summary`).

    Parameters
    ----------
    plan : fatnet.sim.bist.BistPlan
        The plan the board's top was built from.
    out : callable
        Where the comparison's lines go.
    progress : callable or None
        ``progress(text)`` shows the model's progress while it catches up (a live line),
        ``progress(None)`` clears it.
    """

    def __init__(self, plan, out=print, progress=None):
        from ..sim.bist import unpredicted
        why = unpredicted(plan)
        if why is not None:
            raise ParameterError(f"listen: the model does not predict stuck-wire "
                                 f"{plan.stuck_wire}: {why}")
        self.model = ReportModel(plan)
        self.out, self.progress = out, progress or (lambda text: None)
        self.lines = self.reports = self.matched = 0
        self.differed: list[int] = []
        self.unparseable: list[int] = []
        self.rate = None       # the model's measured delivery cycles per second

    def take(self, line: str) -> bool | None:
        """Compare one board line: True if it is a report that matches, False if a
        report that differs, None if it is no report (shown as unparseable; one before
        the first report, a line cut when the port opened, is not held against the
        run)."""
        self.lines += 1
        board = parse_report_line(line)
        if board is None:
            self.out(f"line {self.lines:<3} unparseable: {line!r}")
            if self.reports:
                self.unparseable.append(self.lines)
            return None
        self.reports += 1
        self.out(f"line {self.lines:<3} board {report_line(board)}")
        want = self._model_at(board["cycles"])
        differ, marks = field_marks(board, want)
        verdict = "match" if not differ else "MISMATCH " + " ".join(differ)
        self.out(f"{INDENT} model {report_line(want)}  {verdict}")
        if differ:
            self.out(f"{INDENT}       {marks}")
            self.differed.append(self.lines)
            return False
        self.matched += 1
        return True

    def _model_at(self, cycles: int) -> dict:
        """The model's counters at ``cycles``, its progress shown on the way."""
        start = self.model.cycles if cycles >= self.model.cycles else 0
        report = self.reports

        def shown(done):
            self.progress(f"model: predicting report {report} (cycle {done:,} of "
                          f"{cycles:,})")
        t0, c0 = time.perf_counter(), start
        try:
            want = self.model.at(cycles, on_cycle=shown)
        finally:
            self.progress(None)
        spent = time.perf_counter() - t0
        if cycles > c0 and spent > 0:
            self.rate = (cycles - c0) / spent
        return want

    def summary(self) -> int:
        """Print the verdict; 0 if at least one report was compared, all matched and no
        line after the first report was unparseable, else 1."""
        ok = self.matched > 0 and not self.differed and not self.unparseable
        speed = f"; the model ran {self.rate:.0f} cycles/s" if self.rate else ""
        d = self.differed
        self.out(f"summary: {self.reports} report{'s' * (self.reports != 1)}, "
                 f"{self.matched} matched the model, {len(d)} differed"
                 + (f" (line{'s' * (len(d) > 1)} {', '.join(map(str, d))})" if d else "")
                 + f", {len(self.unparseable)} unparseable after the first report"
                 + f"{speed}: " + ("PASS" if ok else "FAIL"))
        return 0 if ok else 1


def _reader(port, lines: queue.Queue, stop: threading.Event) -> None:
    """Put every text line the port receives on ``lines`` (an exception, if reading
    fails, then None)."""
    pending = b""
    try:
        while not stop.is_set():
            pending += port.readline()
            if pending.endswith(b"\n"):
                lines.put(pending.decode("ascii", errors="replace").rstrip("\r\n"))
                pending = b""
    except Exception as e:   # reported by the listener, which owns the exit status
        lines.put(e)
    lines.put(None)


def _open_serial(name, rate):
    import serial
    return serial.serial_for_url(name, baudrate=rate, bytesize=serial.EIGHTBITS,
                                 parity=serial.PARITY_NONE, stopbits=serial.STOPBITS_ONE,
                                 timeout=READ_TIMEOUT)


def listen(plan, port_name: str, *, baud: int, reports: int | None = None, out=print,
           open_port=None, progress=None) -> int:
    """Compare the report lines on a serial port (8N1 at ``baud``) with the model.

    Parameters
    ----------
    plan : fatnet.sim.bist.BistPlan
        The plan the board's top was built from (the same options).
    port_name : str
        A device (``/dev/ttyUSB1``, ``COM3``) or a pyserial URL (``loop://``).
    baud : int
        Bits per second.
    reports : int or None
        Stop after this many reports (lines that parse; None: at Ctrl-C or when the
        port closes).
    out : callable
        Where the listener's lines go.
    open_port : callable or None
        ``open_port(name, baud)`` -> an open port (tests); default pyserial's
        ``serial_for_url``.
    progress : callable or None
        The model's progress while it catches up (:class:`Comparison`).

    Returns
    -------
    int
        :meth:`Comparison.summary`'s status. A port that cannot be opened is a
        ParameterError (exit 2).
    """
    compare = Comparison(plan, out, progress)
    try:
        port = (open_port or _open_serial)(port_name, baud)
    except (OSError, ValueError) as e:   # SerialException is an OSError
        raise ParameterError(f"listen: cannot open {port_name!r} at {baud} baud: "
                             f"{e}") from None
    lines: queue.Queue = queue.Queue()
    stop = threading.Event()
    reader = threading.Thread(target=_reader, args=(port, lines, stop), daemon=True)
    reader.start()
    out(f"listening on {port_name} at {baud} baud 8N1; the model predicts each report "
        f"(one every {plan.report_cycles} cycles); Ctrl-C ends")
    try:
        while reports is None or compare.reports < reports:
            try:
                item = lines.get(timeout=READ_TIMEOUT)
            except queue.Empty:
                continue
            if item is None:
                out("the port closed")
                break
            if isinstance(item, Exception):
                out(f"reading {port_name} failed: {item}")
                continue
            if item.strip():
                compare.take(item)
            waiting = lines.qsize()
            if waiting:
                out(f"{INDENT}model: behind by {waiting} line{'s' * (waiting != 1)}")
    except KeyboardInterrupt:
        out("interrupted")
    finally:
        stop.set()
        reader.join(timeout=2 * READ_TIMEOUT + 1)
        port.close()
    return compare.summary()


def check_capture(plan, path, *, out=print, progress=None) -> int:
    """Compare the report lines saved in the text file ``path`` (a terminal's capture of
    the board's UART: ``screen -L``, ``picocom --logfile``, a copy of miniterm's
    output) with the model, up to the first report that differs.

    Returns
    -------
    int
        0 if at least one report was compared and all matched (no unparseable line
        after the first report), 1 otherwise. A file that cannot be read is a
        ParameterError (exit 2).
    """
    compare = Comparison(plan, out, progress)
    try:
        text = open(path, encoding="ascii", errors="replace").read()
    except OSError as e:
        raise ParameterError(f"check-capture: cannot read {str(path)!r}: "
                             f"{e.strerror or e}") from None
    out(f"checking {path}: the model predicts each report (one every "
        f"{plan.report_cycles} cycles)")
    for line in text.splitlines():
        line = line.strip("\r\n\x00 ")
        if line and compare.take(line) is False:
            break             # the first report that differs ends the check
    return compare.summary()
