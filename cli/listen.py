"""``fatnet board <kind> [network options] --board B --listen PORT``: read the
self-testing top's UART report lines from a serial port and print each beside the
model's prediction for the same cycle count (:func:`fatnet.sim.bist.run_counters`).

The model is slow (hundreds to a few thousand delivery cycles a second in Python) and a
board at 12 MHz reports about every half-million cycles, so the model runs lazily, as
far as the newest line asks, and falls behind: lines wait in a queue (a reader thread
keeps the port drained) and the listener says how far behind it is. A line whose cycle
count goes back (the board was reset) restarts the model.
"""

from __future__ import annotations

import queue
import threading
import time

from ..golden.bist import COUNTERS, REPORT_FIELDS, parse_report_line, report_line
from ..golden.errors import ParameterError

__all__ = ["ReportModel", "field_marks", "listen"]

#: Seconds a read waits before the reader thread looks whether it should stop.
READ_TIMEOUT = 0.2
#: The indent of the model's line and the marks under the board's line.
INDENT = " " * 8


class ReportModel:
    """The model's counters at any cycle count, run lazily from reset (and again from
    reset when asked for a count below the one it has reached)."""

    def __init__(self, plan):
        from ..sim.bist import run_counters
        self._run_counters, self._plan = run_counters, plan
        self._restart()

    def _restart(self):
        self._cycles = self._run_counters(self._plan)
        self._counts = {name: 0 for name in COUNTERS}

    @property
    def cycles(self) -> int:
        """The completed delivery cycles the model has run."""
        return self._counts["cycles"]

    def at(self, cycles: int) -> dict:
        """The counters after ``cycles`` completed delivery cycles (a copy)."""
        if cycles < self.cycles:
            self._restart()
        while self.cycles < cycles:
            self._counts = next(self._cycles)
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


def listen(plan, port_name: str, *, baud: int, reports: int | None = None, out=print,
           open_port=None) -> int:
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
        Stop after this many lines (None: at Ctrl-C or when the port closes).
    out : callable
        Where the listener's lines go.
    open_port : callable or None
        ``open_port(name, baud)`` -> an open port (tests); default pyserial's
        ``serial_for_url``.

    Returns
    -------
    int
        0 if at least one report was compared and every one matched the model (an
        unparseable first line, a line cut when the port opened, does not count), 1
        otherwise. A port that cannot be opened is a ParameterError (exit 2).
    """
    from ..sim.bist import unpredicted
    why = unpredicted(plan)
    if why is not None:
        raise ParameterError(f"listen: the model does not predict stuck-wire "
                             f"{plan.stuck_wire}: {why}")
    if open_port is None:
        import serial

        def open_port(name, rate):
            return serial.serial_for_url(name, baudrate=rate, bytesize=serial.EIGHTBITS,
                                         parity=serial.PARITY_NONE,
                                         stopbits=serial.STOPBITS_ONE,
                                         timeout=READ_TIMEOUT)
    try:
        port = open_port(port_name, baud)
    except (OSError, ValueError) as e:   # SerialException is an OSError
        raise ParameterError(f"listen: cannot open {port_name!r} at {baud} baud: "
                             f"{e}") from None
    model = ReportModel(plan)
    lines: queue.Queue = queue.Queue()
    stop = threading.Event()
    reader = threading.Thread(target=_reader, args=(port, lines, stop), daemon=True)
    reader.start()
    out(f"listening on {port_name} at {baud} baud 8N1; the model predicts each line "
        f"(a report every {plan.report_cycles} cycles); Ctrl-C ends")
    seen = matched = 0
    differed, unparseable = [], []
    rate = None       # the model's measured delivery cycles per second
    try:
        while reports is None or seen < reports:
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
            if not item.strip():
                continue
            seen += 1
            board = parse_report_line(item)
            if board is None:
                out(f"line {seen:<3} unparseable: {item!r}")
                if seen > 1:
                    unparseable.append(seen)
                continue
            ahead = board["cycles"] - (model.cycles if board["cycles"] >=
                                       model.cycles else 0)
            if rate and ahead / rate > 2:
                out(f"{INDENT}model: behind, running {ahead} cycles (about "
                    f"{ahead / rate:.0f} s at {rate:.0f} cycles/s)")
            t0, c0 = time.perf_counter(), model.cycles
            want = model.at(board["cycles"])
            spent = time.perf_counter() - t0
            if model.cycles > c0 and spent > 0:
                rate = (model.cycles - c0) / spent
            differ, marks = field_marks(board, want)
            out(f"line {seen:<3} board {report_line(board)}")
            verdict = "match" if not differ else "MISMATCH " + " ".join(differ)
            out(f"{INDENT} model {report_line(want)}  {verdict}")
            if differ:
                out(f"{INDENT}       {marks}")
                differed.append(seen)
            else:
                matched += 1
            waiting = lines.qsize()
            if waiting:
                out(f"{INDENT}model: behind by {waiting} line{'s' * (waiting != 1)}")
    except KeyboardInterrupt:
        out("interrupted")
    finally:
        stop.set()
        reader.join(timeout=2 * READ_TIMEOUT + 1)
        port.close()
    ok = matched > 0 and not differed and not unparseable
    speed = f"; the model ran {rate:.0f} cycles/s" if rate else ""
    out(f"summary: {seen} line{'s' * (seen != 1)}, {matched} matched the model, "
        f"{len(differed)} differed"
        + (f" (line{'s' * (len(differed) > 1)} {', '.join(map(str, differed))})"
           if differed else "")
        + f", {len(unparseable)} unparseable after the first{speed}: "
        + ("PASS" if ok else "FAIL"))
    return 0 if ok else 1
