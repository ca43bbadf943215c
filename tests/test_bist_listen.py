"""``fatnet board ... --listen PORT`` without hardware: a pseudo-terminal (the CLI opens
its slave end as a serial port) or a fake port, fed report lines made by the model
(:func:`fatnet.sim.bist.predict`), one of them altered, one garbled; the listener must
match the true ones, flag the altered field, show the garbled line and exit 1.

Replay a failure with ``python -m pytest tests/test_bist_listen.py -k <name>``; the seeds
are in the tests.
"""

import os
import threading
import time

import pytest

from fatnet.cli.listen import check_capture, field_marks, listen
from fatnet.cli.main import main
from fatnet.golden import bist as gb
from fatnet.sim import bisttable
from fatnet.sim.bist import predict
from test_bist import plan_of

HERE = "tests/test_bist_listen.py"


@pytest.fixture(autouse=True)
def small_tables_only(tmp_path, monkeypatch):
    """The listener computes the plan's outcome table first: a minute or two for the 8
    terminals of these plans, so they run without one (the model's speed is not what
    they test), except where a test raises the limit; tables go to a cache of the
    test's own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(bisttable, "MAX_ENTRIES", 3 ** 4)


def board_lines(plan, count, *, alter=None, garble=None):
    """The model's first ``count`` report lines; line ``alter`` (0-based) with its D
    counter one higher, and a garbled line inserted before line ``garble``."""
    lines = []
    for i, r in enumerate(predict(plan, count * plan.report_cycles)):
        if i == garble:
            lines.append("fat\x00et C=0000zz")
        if i == alter:
            r = dict(r, delivered=r["delivered"] + 1)
        lines.append(gb.report_line(r))
    return lines


class FakePort:
    """A serial port that returns the given lines, then nothing (read timeouts)."""

    def __init__(self, lines):
        self._lines = [(ln + "\r\n").encode() for ln in lines]
        self.closed = False

    def readline(self):
        if self._lines:
            return self._lines.pop(0)
        time.sleep(0.05)
        return b""

    def close(self):
        self.closed = True


def run_listen(plan, lines, reports):
    out = []
    port = FakePort(lines)
    status = listen(plan, "fake", baud=115200, reports=reports, out=out.append,
                    open_port=lambda name, rate: port)
    assert port.closed
    return status, out


def test_true_reports_match_and_pass():
    plan = plan_of("butterfly", load=0.7, bist_seed=8)
    status, out = run_listen(plan, board_lines(plan, 3), 3)
    assert status == 0, (8, out)
    assert sum(ln.endswith("  match") for ln in out) == 3, out
    assert out[-1].startswith("summary: 3 reports, 3 matched") and out[-1].endswith("PASS")


def test_an_altered_counter_is_flagged_under_its_field_and_fails():
    plan = plan_of("butterfly", load=0.7, bist_seed=8)
    lines = board_lines(plan, 3, alter=1)
    status, out = run_listen(plan, lines, 3)
    assert status == 1, (8, out)
    flagged = [i for i, ln in enumerate(out) if ln.endswith("MISMATCH D")]
    assert len(flagged) == 1, out
    board_line, marks = out[flagged[0] - 1], out[flagged[0] + 1]
    digits = board_line.index(" D=") + 3
    assert marks.index("^") == digits and marks.strip() == "^" * 8, (board_line, marks)
    assert "1 differed (line 2)" in out[-1] and out[-1].endswith("FAIL")


def test_a_garbled_line_is_shown_and_fails_but_a_cut_first_line_does_not():
    plan = plan_of("butterfly", load=0.7, bist_seed=8)
    status, out = run_listen(plan, board_lines(plan, 2, garble=1), 2)
    assert status == 1 and any("unparseable: 'fat\\x00et C=0000zz'" in ln
                               for ln in out), out
    # a line cut when the port opened (before the first report) is shown but not held
    # against the run
    status, out = run_listen(plan, ["0000001 E=00000000"] + board_lines(plan, 2), 2)
    assert status == 0 and "unparseable" in out[1], out


def test_reports_counts_reports_not_lines():
    # two unparseable lines among three reports: --reports 3 waits for the third report
    plan = plan_of("butterfly", load=0.7, bist_seed=8)
    lines = board_lines(plan, 3)
    status, out = run_listen(plan, ["garbage"] + lines[:2] + ["more garbage"] + lines[2:],
                             3)
    assert sum(ln.endswith("  match") for ln in out) == 3, out
    assert out[-1].startswith("summary: 3 reports, 3 matched the model, 0 differed, 1 "
                              "unparseable after the first report") and \
        out[-1].endswith("FAIL"), out


def listen_shown(plan, reports):
    """Listen to ``reports`` true report lines: the status and every progress text."""
    shown = []
    status = listen(plan, "fake", baud=115200, reports=reports, out=lambda ln: None,
                    open_port=lambda name, rate: FakePort(board_lines(plan, reports)),
                    progress=shown.append)
    return status, shown


def test_the_model_shows_its_progress_while_it_catches_up():
    plan = plan_of("butterfly", load=0.7, bist_seed=8, report_cycles=600)
    status, shown = listen_shown(plan, 1)
    assert status == 0
    texts = [t for t in shown if t is not None]
    # a block of 256 cycles at a time while the table fills, then the line is cleared
    assert texts == [f"model: predicting report 1 (cycle {c} of 600)" for c in (256, 512, 600)] \
        and shown[-1] is None, shown


def test_a_capture_that_matches_passes(tmp_path):
    plan = plan_of("butterfly", load=0.7, bist_seed=8)
    capture = tmp_path / "capture.txt"
    capture.write_text("\r\n".join(["ut C=000", *board_lines(plan, 3)]) + "\r\n")
    out = []
    assert check_capture(plan, capture, out=out.append) == 0, (8, out)
    assert out[-1].startswith("summary: 3 reports, 3 matched") and out[-1].endswith("PASS")


def test_a_capture_stops_at_its_first_differing_report(tmp_path):
    plan = plan_of("butterfly", load=0.7, bist_seed=8)
    capture = tmp_path / "capture.txt"
    lines = board_lines(plan, 3, alter=1)
    capture.write_text("\n".join(lines) + "\n")
    out = []
    assert check_capture(plan, capture, out=out.append) == 1, (8, out)
    # the board's line, the model's, the marks: the third report is not compared
    assert out[-4] == f"line 2   board {lines[1]}", out
    assert out[-3].endswith("MISMATCH D") and out[-2].strip() == "^" * 8, out
    assert out[-1].startswith("summary: 2 reports, 1 matched the model, 1 differed (line 2)")


def test_fatnet_board_check_capture_exit_status(tmp_path, capsys):
    plan = plan_of("butterfly", load=0.1, bist_seed=2, report_cycles=4300, baud_divisor=104)
    good, bad = tmp_path / "good.txt", tmp_path / "bad.txt"
    good.write_text("\n".join(board_lines(plan, 2)) + "\n")
    bad.write_text("\n".join(board_lines(plan, 2, alter=0)) + "\n")
    assert main(BOARD + ["--check-capture", str(good)]) == 0
    assert main(BOARD + ["--check-capture", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH D" in out and out.rstrip().endswith("FAIL")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt", "good.txt"]


def test_a_board_reset_restarts_the_model():
    plan = plan_of("butterfly", load=0.7, bist_seed=8)
    lines = board_lines(plan, 2)
    status, out = run_listen(plan, lines + lines[:1], 3)
    assert status == 0 and sum(ln.endswith("  match") for ln in out) == 3, out


def test_field_marks_name_every_differing_counter():
    a = dict.fromkeys(gb.COUNTERS, 5)
    b = dict(a, cycles=6, errors=1)
    differ, marks = field_marks(a, b)
    line = gb.report_line(a)
    assert differ == ["C", "E"]
    assert [i for i, ch in enumerate(marks) if ch == "^"] == \
        list(range(line.index("C=") + 2, line.index("C=") + 10)) + \
        list(range(line.index("E=") + 2, line.index("E=") + 10))


BOARD = ["board", "butterfly", "--inputs", "8", "--payload-bits", "12", "--board",
         "icebreaker", "--load", "0.1", "--bist-seed", "2", "--report-cycles", "4300"]


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="no pseudo-terminals on this OS")
def test_fatnet_board_listen_reads_a_serial_port(capsys, tmp_path):
    # the board's plan as the CLI makes it: the 12 MHz clock's divisor, 104
    plan = plan_of("butterfly", load=0.1, bist_seed=2, report_cycles=4300, baud_divisor=104)
    lines = board_lines(plan, 2, alter=1)
    master, slave = os.openpty()
    path = os.ttyname(slave)

    def board():            # waits for the listener to open the port
        time.sleep(1.0)
        for ln in lines:
            os.write(master, (ln + "\r\n").encode())
    writer = threading.Thread(target=board, daemon=True)
    writer.start()
    os.chdir(tmp_path)          # nothing may be written
    try:
        status = main(BOARD + ["--listen", path, "--reports", "2"])
    finally:
        writer.join()
        os.close(master)
        os.close(slave)
    out = capsys.readouterr().out
    assert status == 1, (f"replay: python -m pytest {HERE} -k serial_port", out)
    assert f"listening on {path} at 115200 baud 8N1" in out
    assert f"line 1   board {lines[0]}" in out and "MISMATCH D" in out, out
    assert list(tmp_path.iterdir()) == []


def test_a_port_that_cannot_be_opened_is_one_line_exit_2(capsys, tmp_path):
    missing = tmp_path / "no-such-tty"
    status = main(BOARD + ["--listen", str(missing), "--reports", "1"])
    cap = capsys.readouterr()
    assert status == 2 and cap.out == "" and cap.err.count("\n") == 1, cap
    assert f"listen: cannot open {str(missing)!r}" in cap.err
    assert list(tmp_path.iterdir()) == []


def test_without_listen_the_output_directory_is_required(capsys):
    status = main(BOARD)
    cap = capsys.readouterr()
    assert status == 2 and cap.out == "" and cap.err.count("\n") == 1, cap
    assert "output is required (-o DIR) unless --listen PORT" in cap.err


def test_the_listener_fills_the_outcome_table_and_keeps_it():
    from test_bist_engines import small_plan
    plan = small_plan("butterfly-4", load=1.0, bist_seed=5, report_cycles=150)
    space = bisttable.pattern_space(plan)
    kept = bisttable.cache_path(bisttable.cache_key(plan, space))
    assert not kept.exists()
    status, _ = listen_shown(plan, 3)
    assert status == 0 and kept.is_file()
