"""Property-based fuzzing of the command line (issue 18): hostile option values and
message files for every verb and kind, each invocation under a deadline, asserting the
contract. Whatever the arguments, ``fatnet`` either runs (status 0 or 1) or refuses
them with status 2 and exactly one line on stderr, never a traceback, never a hang, and
a refused ``gen`` or ``board`` writes nothing.

The options and their kinds are read from the command line's own parser, so a new
option is fuzzed without touching this file. Values: small valid ones (so that the
commands also run), and hostile ones: negative, zero, 2^63, 2^64, 10^30, NaN, inf,
words, empty strings, control characters; paths to a file, a directory, a missing one,
one below a file, a FIFO, and message files that are not UTF-8, nested 100,000 deep,
hold a 5,000-digit integer, or are not messages at all.

Budget: ``FATNET_FUZZ_EXAMPLES`` examples per verb (default 12, the regression's);
``make fuzz`` runs many more and prints the invocations per outcome. A failure prints
the arguments (Hypothesis's falsifying example) and the seed to replay it with
``--hypothesis-seed``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import signal
from collections import Counter
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from cli_parsers import verb_kinds, verb_names, verb_parser  # noqa: E402
from fatnet.cli.main import main  # noqa: E402
from fatnet.api.registry import families  # noqa: E402

EXAMPLES = int(os.environ.get("FATNET_FUZZ_EXAMPLES", "12"))
#: Seconds one invocation may take before it counts as a hang (a hang never returns;
#: the margin is for a machine busy with the rest of the regression).
DEADLINE = int(os.environ.get("FATNET_FUZZ_DEADLINE", "120"))
#: Outcomes of every invocation, for ``make fuzz``'s summary.
OUTCOMES: Counter = Counter()

#: Verbs left out: sim builds a simulator at every run (the co-simulation tests cover it).
UNFUZZED_VERBS = {"sim"}


def _verb_kinds() -> list[tuple[str, str]]:
    """(verb, kind) pairs from the command line's parser and the family registry: each
    verb of each registered family once, the family's kinds taken in turn so that every
    kind is fuzzed; every experiment."""
    pairs = []
    for fam in families():
        kinds = sorted(fam.kinds)
        verbs = [v for v in verb_names() if v not in UNFUZZED_VERBS and kinds[0] in verb_kinds(v)]
        pairs += [(verb, kinds[i % len(kinds)]) for i, verb in enumerate(verbs)]
    return pairs + [("experiment", e) for e in verb_kinds("experiment")]


VERB_KINDS = _verb_kinds()

#: Options whose value sets a size: drawn from small valid values or hostile ones, never
#: a large valid one (that is slow, not wrong).
SIZE_VALUES = {
    "--leaves": ["4", "8"], "--inputs": ["4", "8"], "--dimension": ["2", "3"],
    # the kuszmaul experiment checks all 40,320 permutations at k = 3 (seconds): k = 2
    "--dimensions": ["2", "2..2"], "--sweep": ["2..2"], "--compare": ["2..2"],
    "--root-capacity": ["3", "4"], "--capacity": ["1", "2"], "--capacities": ["2,1,1"],
    "--problems": ["1", "2"], "--trials": ["1", "2"], "--steps": ["8", "64"],
    "--max-cycles": ["1", "3"], "--report-cycles": ["1", "5"], "--predict": ["0", "1"],
    "--buffer": ["1", "2"], "--multiplicity": ["1", "2"], "--payload-bits": ["4", "12"],
    "--message-bits": ["10", "13"], "--faults": ["0", "1"], "--table": ["1"],
}
#: Options left out: they run external tools (the bitstream, the loader) or wait on a port.
SKIPPED = {"--bitstream", "--program", "--listen", "--help", "-h", "--json"}

HOSTILE_NUMBERS = ["0", "-1", "-7", str(2 ** 63), str(2 ** 64), "1" + "0" * 30, "nan",
                   "inf", "-inf", "1e3", "0x10", "", " ", "abc", "3\n4", "½"]


def _actions(verb: str, kind: str) -> list[argparse.Action]:
    return [a for a in verb_parser(verb, kind)._actions
            if a.option_strings and not set(a.option_strings) & SKIPPED]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict:
    """Hostile paths, made once: message files of every bad kind, a FIFO, a directory."""
    root = tmp_path_factory.mktemp("fuzz")
    made = {"file": root / "plain.txt", "dir": root / "adir", "fifo": root / "fifo",
            "good": root / "good.json", "utf16": root / "utf16.json",
            "ff": root / "ff.json", "latin1": root / "latin1.json",
            "deep": root / "deep.json", "digits": root / "digits.json",
            "notmsgs": root / "notmsgs.json", "payload": root / "payload.json"}
    made["file"].write_text("x")
    made["dir"].mkdir()
    if hasattr(os, "mkfifo"):
        os.mkfifo(made["fifo"])
    made["good"].write_text(json.dumps({"messages": [[0, 1], [1, 0]]}))
    made["payload"].write_text(json.dumps({"messages": [[0, 1, 3], [1, 0, 2]]}))
    made["utf16"].write_bytes(json.dumps({"messages": [[0, 1]]}).encode("utf-16"))
    made["ff"].write_bytes(b'{"messages": [[0, 1]]}\xff')
    made["latin1"].write_bytes('{"messages": [[0, 1]], "n": "\xe9"}'.encode("latin-1"))
    made["deep"].write_text("[" * 100_000 + "]" * 100_000)
    made["digits"].write_text('{"messages": [[0, ' + "9" * 5000 + "]]}")
    made["notmsgs"].write_text('{"messages": "all of them"}')
    return {k: str(v) for k, v in made.items()} | {
        "missing": str(root / "missing" / "x.json"), "below-file": str(made["file"] / "x"),
        "newline": str(root / "new\nline"), "empty": ""}


def _values(action: argparse.Action, paths: dict):
    option = action.option_strings[-1]
    if action.nargs == 0:                       # a flag
        return st.just(None)
    if action.choices:
        valid = [str(c) for c in action.choices]
        pool = st.sampled_from(valid) | st.sampled_from(["", "nosuch", "Fat-Tree"])
    elif option in SIZE_VALUES:
        pool = st.sampled_from(SIZE_VALUES[option]) | st.sampled_from(HOSTILE_NUMBERS)
    elif option in ("-o", "--output", "--build-dir", "--waves", "--plot", "--messages",
                    "--fault-masks"):
        pool = st.sampled_from(sorted(paths.values()))
    elif action.type in (int, float):
        pool = st.sampled_from(["0", "1", "0.5"]) | st.sampled_from(HOSTILE_NUMBERS)
    else:
        pool = st.sampled_from(["1", "a", "1:2", "0x1"]) | st.text(max_size=12)
    if action.nargs not in (None, 1):           # several values
        return st.lists(pool, min_size=1, max_size=3)
    return pool


def _argv(verb, kind, paths):
    actions = _actions(verb, kind)

    @st.composite
    def build(draw):
        argv = [verb, kind]
        chosen = draw(st.lists(st.sampled_from(actions), max_size=5,
                               unique_by=lambda a: a.dest))
        # a required option is usually there, so that the rest is reached; a size is
        # always given (small or hostile): a default size may be a long valid run (the
        # paper's tables take minutes), which is slow, not wrong
        for a in actions:
            if a in chosen:
                continue
            if a.option_strings[-1] in SIZE_VALUES or (
                    a.required and draw(st.integers(0, 9)) < 8):
                chosen.append(a)
        for a in chosen:
            value = draw(_values(a, paths))
            argv.append(a.option_strings[-1])
            if isinstance(value, list):
                argv += value
            elif value is not None:
                argv.append(value)
        if draw(st.booleans()):                 # options before the kind, sometimes
            argv = [verb] + argv[2:] + [kind]
        return argv
    return build()


def _tree(path: Path) -> list[str]:
    """Every path below ``path`` (what a refused command must leave as it was)."""
    return sorted(str(p.relative_to(path)) for p in Path(path).rglob("*"))


class _Hang(Exception):
    pass


def _invoke(argv: list[str], cwd: Path) -> tuple[int, str, str]:
    """Run ``fatnet argv`` in this process under the deadline: (status, stdout, stderr)."""
    def alarm(signum, frame):
        raise _Hang(f"no answer within {DEADLINE} s")
    out, err = io.StringIO(), io.StringIO()
    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(DEADLINE)
    here = os.getcwd()
    try:
        os.chdir(cwd)
        with redirect_stdout(out), redirect_stderr(err):
            try:
                status = main(argv)
            except SystemExit as e:            # argparse's own refusals and --help
                status = e.code if isinstance(e.code, int) else 2
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        os.chdir(here)
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("verb, kind", VERB_KINDS, ids=[f"{v}-{k}" for v, k in VERB_KINDS])
def test_any_arguments_keep_the_contract(verb, kind, files, tmp_path_factory):
    work = tmp_path_factory.mktemp(f"fuzz-{verb}-{kind}")
    root = Path(files["file"]).parent

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=False,
              suppress_health_check=list(HealthCheck))
    @given(_argv(verb, kind, files))
    def check(argv):
        before = _tree(work) + _tree(root)
        status, out, err = _invoke(argv, work)
        replay = "fatnet " + " ".join(repr(a) if not a or set(a) & set(" \n\t'\"") else a
                                      for a in argv)
        assert "Traceback" not in err + out, replay
        assert status in (0, 1, 2), (status, replay)
        OUTCOMES[(verb, "refused" if status == 2 else "ran")] += 1
        if status == 2:
            lines = err.strip().splitlines()
            assert len(lines) == 1, f"{len(lines)} stderr lines: {err!r}; {replay}"
            assert lines[0].startswith("fatnet"), f"{err!r}; {replay}"
            assert _tree(work) + _tree(root) == before, f"a refusal wrote: {replay}"
    check()


@pytest.fixture(scope="module", autouse=True)
def summary():
    """Invocations per verb and outcome, printed at the end (``make fuzz`` shows it)."""
    yield
    print("\nfuzzed invocations per verb and outcome:")
    for (verb, outcome), n in sorted(OUTCOMES.items()):
        print(f"{verb:>10} {outcome:>8}: {n}")
