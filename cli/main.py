"""The ``fatnet`` command line: ``fatnet <verb> <kind> [options]``.

The verbs that only need the golden model (``schedule``, ``route``, ``info``, ``demo``,
``experiment``) come from each family's command module (``cli/<folder>.py``); ``gen``
and ``sim`` are the same for every family with hardware. A family's options are added
once its kind is known, so ``fatnet gen fat-tree --help`` lists exactly the fat-tree's
options.

The kind may stand anywhere among the options (:func:`named_kind`: the first argument
that is a kind of the verb).

Bad input exits with status 2 and one line on stderr naming the parameter and the
accepted range; nothing prints a traceback for it, and no character of a user's value
can split the line (:func:`one_line`).
"""

from __future__ import annotations

import argparse
import os
import sys
import unicodedata
from importlib.metadata import version
from pathlib import Path
from typing import NoReturn

from ..api.hardware import Cosimulation, Generated, cosimulate, generate
from ..api.registry import Family, families, get_family
from ..golden.errors import FatnetInputError
from . import demo
from .family import BoardCommands, Experiment, experiments_of
from .options import identifier, output_directory
from .progress import Progress

__all__ = ["main"]

#: Verbs every family with hardware has, beside its model-only ones.
HARDWARE_VERBS = {
    "gen": "write Verilog, the packed test harness, lint waivers and a JSON manifest",
    "sim": "co-simulate the Verilog against the model (cocotb)",
    "board": "build the self-testing top for an FPGA board (traffic generators, "
             "checkers, UART report), predict its reports, optionally the bitstream",
}


def one_line(message: str) -> str:
    """``message`` with every control character (a newline, a carriage return, an
    escape, a Unicode line separator) written as its Python escape: a user's value that
    reached an error line without ``repr`` still cannot split it or move the cursor."""
    return "".join(repr(c)[1:-1] if unicodedata.category(c) in ("Cc", "Zl", "Zp") else c
                   for c in message)


def _states_a_default(action: argparse.Action) -> bool:
    """Whether ``--help`` owes ``action``'s default: an option that takes a value, whose
    default is neither None (nothing, or a rule its help states in words) nor an empty
    list (a repeatable option not given)."""
    return (bool(action.option_strings) and action.nargs != 0
            and action.default not in (None, argparse.SUPPRESS) and action.default != [])


class _HelpFormatter(argparse.HelpFormatter):
    """Help that states every option's default: an option whose help does not say its
    default (``default X`` in its own words) gets ``(default X)``."""

    def _get_help_string(self, action):
        help_ = action.help or ""
        if _states_a_default(action) and "default" not in help_:
            help_ += " (default %(default)s)"
        return help_


class _RawDescriptionHelpFormatter(_HelpFormatter, argparse.RawDescriptionHelpFormatter):
    """:class:`_HelpFormatter` that keeps the description's and epilog's lines."""


class _Parser(argparse.ArgumentParser):
    """``fatnet``'s parsers: one-line errors; ``verbs`` holds the top-level parser's
    verb parsers by name (filled by :func:`build_parser`)."""

    def __init__(self, *args, formatter_class=_HelpFormatter, **kwargs):
        super().__init__(*args, formatter_class=formatter_class, **kwargs)
        self.verbs: dict[str, _VerbParser] = {}

    def error(self, message) -> NoReturn:  # one line, exit 2 (argparse's status for usage errors)
        self.exit(2, f"{self.prog}: error: {one_line(message)}\n")


VERBOSE_HELP = ("show everything: each step as a line and the tools' own output (cocotb, "
                "the simulator, the compiler), which otherwise goes to a log file")


class _VerbParser(_Parser):
    """A verb's parser: every verb takes ``-v`` after it too (``fatnet sim ... -v`` as
    well as ``fatnet -v sim ...``); its default is suppressed, so that it does not
    overwrite the ``True`` the top-level flag set."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        #: The name of the verb's positional (``kind``; ``name`` for an experiment),
        #: None for a verb without one.
        self.positional: str | None = None
        self.add_argument("-v", "--verbose", action="store_true",
                          default=argparse.SUPPRESS, help=VERBOSE_HELP)


def _verbs() -> dict[str, dict[str, tuple[str, list[str]]]]:
    """verb -> {family name: (help, its kinds)} over every registered family."""
    out: dict[str, dict[str, tuple[str, list[str]]]] = {}
    for fam in families():
        verbs = {v: verb.help for v, verb in fam.commands.VERBS.items()}
        if fam.has_hardware:
            verbs.update({v: h for v, h in HARDWARE_VERBS.items()
                          if v != "board" or _has_board(fam)})
        for v, h in verbs.items():
            out.setdefault(v, {})[fam.name] = (h, sorted(fam.kinds))
    return out


def _has_board(fam: Family) -> bool:
    """Whether the family builds a self-testing top (``fatnet board``): its commands
    are :class:`~fatnet.cli.family.BoardCommands` and its testbench a
    :class:`~fatnet.sim.family.SelfTest` (imported only then: a model-only command never
    loads the testbench)."""
    if not isinstance(fam.commands, BoardCommands):
        return False
    from ..sim.family import has_self_test
    return has_self_test(fam)


def _experiments() -> dict[str, tuple[Family, Experiment]]:
    """experiment name -> (its family, the experiment)."""
    return {name: (fam, experiment) for fam in families()
            for name, experiment in experiments_of(fam.commands).items()}


def _add_hardware_options(p: argparse.ArgumentParser, verb: str, kind: str) -> None:
    top = get_family(kind).name
    if verb == "gen":
        p.add_argument("-o", "--output", type=output_directory("output"), required=True,
                       help="output directory")
        p.add_argument("--top", type=identifier("top"), default=top,
                       help=f"top module name (default {top})")
        p.add_argument("--no-harness", action="store_true",
                       help="skip the packed-port test harness module")
    else:
        p.add_argument("--sim", choices=("icarus", "verilator"), default="icarus",
                       help="simulator (default icarus)")
        p.add_argument("--waves", type=output_directory("waves"), metavar="DIR", default=None,
                       help="write the waveform dump and a GTKWave .gtkw file into DIR")
        p.add_argument("--build-dir", type=output_directory("build-dir"), default="build/cocotb",
                       help="where the simulator's builds are kept and reused (default "
                            "build/cocotb)")


def named_kind(argv: list[str]) -> str | None:
    """The kind (or experiment) ``argv`` names for its verb ``argv[0]``: the first later
    token that is one, wherever it stands among the options (``fatnet info --leaves 4
    --capacity 1 fat-tree``); None if no token is."""
    if not argv:
        return None
    if argv[0] == "experiment":
        known = set(_experiments())
    else:
        known = {k for _, ks in _verbs().get(argv[0], {}).values() for k in ks}
    return next((a for a in argv[1:] if a in known), None)


def build_parser(argv: list[str], kind: str | None = None) -> _Parser:
    """The parser, with the options of the kind (or experiment) that ``argv`` names
    (:func:`named_kind`), or of ``kind`` if given."""
    verbs = _verbs()
    experiments = _experiments()
    parser = _Parser(prog="fatnet", description="Routing-network hardware generator and "
                     "golden model. Kinds: " + ", ".join(
                         f"{k.name} ({k.summary})" for f in families()
                         for k in sorted(f.kinds.values(), key=lambda k: k.name)))
    parser.add_argument("--version", action="version", version=f"fatnet {version('fatnet')}")
    parser.add_argument("-v", "--verbose", action="store_true", help=VERBOSE_HELP)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_VerbParser)
    verb = argv[0] if argv else None
    named = kind or named_kind(argv)
    for v, by_family in sorted(verbs.items()):
        helps = {h for h, _ in by_family.values()}
        help_ = (helps.pop() if len(helps) == 1
                 else "; ".join(f"{'/'.join(ks)}: {h}" for h, ks in by_family.values()))
        by_kind = [k for _, ks in by_family.values() for k in ks]
        p = parser.verbs[v] = sub.add_parser(
            v, help=help_, description=f"{help_}.",
            epilog=f"options depend on the kind: fatnet {v} <kind> --help")
        p.add_argument("kind", choices=sorted(by_kind),
                       help="network kind: " + ", ".join(sorted(by_kind)))
        p.positional = "kind"
        if v != verb or named not in by_kind:
            continue
        if v == "board":   # the network options gen takes, then the board's
            from .board import add_board_options
            add_board_options(p, named)
            continue
        get_family(named).commands.add_arguments(p, v, named)
        if v in HARDWARE_VERBS:
            _add_hardware_options(p, v, named)
        if v in ("route", "info"):
            p.add_argument("--json", action="store_true", help="print JSON")
    p = parser.verbs["demo"] = sub.add_parser("demo", help=demo.SUMMARY,
                                              description=demo.SUMMARY + ".")
    demo.add_arguments(p)
    if experiments:
        listing = "\n".join(f"  {name:16s} {experiment.help} ({fam.name} family)"
                             for name, (fam, experiment) in sorted(experiments.items()))
        p = parser.verbs["experiment"] = sub.add_parser(
            "experiment", help="reproduce a paper's experiments: "
            + ", ".join(sorted(experiments)),
            description="Reproduce a paper's experiments.",
            epilog=f"experiments:\n{listing}\n\noptions depend on the "
                   "experiment: fatnet experiment <name> --help",
            formatter_class=_RawDescriptionHelpFormatter)
        p.add_argument("kind", metavar="name", choices=sorted(experiments),
                       help="the experiment: " + ", ".join(sorted(experiments)))
        p.positional = "name"
        if verb == "experiment" and named in experiments:
            _, experiment = experiments[named]
            experiment.add_arguments(p)
    return parser


def cmd_gen(kind: str, args) -> int:
    """Generate through the API (:func:`fatnet.api.generate`, all or nothing)."""
    with Progress("fatnet gen", args.verbose) as progress:
        progress(0, None, "building the model network")
        net = get_family(kind).commands.network_from_args(kind, args)
        made = generate(net, args.output, top=args.top, harness=not args.no_harness,
                        progress=progress)
    print(generated_line(made, args.output))
    return 0


def generated_line(made: Generated, output) -> str:
    """What ``fatnet gen`` (and ``fatnet demo``) says of the files written to ``output``."""
    sizes = ", ".join(f"{f} ({(Path(output) / f).stat().st_size // 1024} KiB)"
                      for f in made.files)
    return (f"wrote {sizes} and {made.top}.json to {output} in {made.seconds:.1f} s; "
            f"delivery cycle {made.cycle_length} bit-times")


def cmd_sim(kind: str, args) -> int:
    """Co-simulate the generated Verilog against the model (cocotb), optionally with
    waves: the steps as progress, the tools' output in a log file (on the terminal with
    ``-v``), the result in a few lines, and a failure as one error line naming the seed,
    the command that replays it and the log."""
    from ..sim.cocotb_runner import SimulatorError
    replay = "fatnet " + " ".join(sys.argv[1:]) if sys.argv[1:] else "fatnet sim ..."
    try:
        with Progress("fatnet sim", args.verbose) as progress:
            net, done = _cosimulate(kind, args, replay, progress)
    except SimulatorError as e:
        return simulator_failed(e)
    return report_cosimulation(net, done, args.seed, replay)


def simulator_failed(error) -> int:
    """A simulator that could not build or run (:class:`~fatnet.sim.cocotb_runner.
    SimulatorError`): its log's last lines and one error line; exit status 1."""
    _error_with_log(str(error), error.log)
    return 1


def report_cosimulation(net, done: Cosimulation, seed: int, replay: str) -> int:
    """``fatnet sim``'s result lines (and ``fatnet demo``'s), the one error line of a
    failure; the exit status."""
    report, res, sim = done.model, done.run, done.sim
    print(f"model: {report.delivered} delivered (+{report.local} local), "
          f"{len(report.lost)} lost, {report.cycles} delivery cycles of {net.cycle_length} "
          f"bit-times")
    print(f"{sim}: PASS: RTL and model agree on every recv and send_ack wire at "
          f"every bit-time" if res.passed else f"{sim}: FAIL")
    for f in res.failures:
        print(f)
    print(f"{sim}: build {res.build_seconds:.1f} s, simulation "
          f"{res.cycles_per_second:.1f} delivery cycles/s "
          f"({res.clocks_per_second:.0f} bit-times/s)"
          + (f"; tool output in {_shown(res.log)}" if res.log else ""))
    if done.waves is not None:
        print(f"waves: {done.waves.dump}; open with: gtkwave {done.waves.gtkw}")
        if done.waves.note:
            print(f"waves: {done.waves.note}")
    if not res.passed:
        sys.stdout.flush()   # the result first, then the one error line
        _error_with_log(f"{sim}: FAIL: {_first_failure(res.failures)}; seed "
                        f"{seed}; replay: {replay}", res.log, tail=not res.ran)
    return 0 if res.passed else 1


def _cosimulate(kind: str, args, replay: str, progress):
    """The model run, the co-simulation and (``--waves``) the waves of ``fatnet sim``
    through the API (:func:`fatnet.api.cosimulate`): ``(net, Cosimulation)``."""
    from ..hdl.gen import check_generable
    fam = get_family(kind)
    progress(0, None, "building the model network")
    net = fam.commands.network_from_args(kind, args)
    check_generable(net, hardware=fam.hardware)  # before the messages are read or drawn
    ms = fam.commands.messages_from_args(args, net)
    progress(0, None, "running the model")
    # The model's own cycle results go to the testbench: nothing is simulated twice.
    # a family with run-time faults (--fault-mask) ran its model under per-cycle masks
    report = fam.commands.run_model(net, ms, args)
    return net, cosimulate(net, ms, model=report, sim=args.sim, seed=args.seed,
                           replay=replay, waves=args.waves, build_dir=args.build_dir,
                           log=not args.verbose, progress=progress)


def _first_failure(failures: list[str]) -> str:
    """The first failure in one line: its heading and its first item (``RTL differs
    from the golden model: cycle 0: leaf__0.recv[0] ...``)."""
    heading, *items = failures[0].splitlines()
    return ": ".join(x.strip().rstrip(":") for x in [heading, *items[:1]])


def _error_with_log(message: str, log, tail: bool = True) -> None:
    """``fatnet sim: error: <message>; log: <log>`` on stderr, one line, after the log's
    last lines (``tail``) so that the cause stands beside it."""
    from ..sim.cocotb_runner import log_tail
    if tail:
        for line in log_tail(log):
            print(f"  {line}", file=sys.stderr)
    where = f"; log: {_shown(log)}" if log else ""
    print(f"fatnet sim: error: {one_line(message)}{where}", file=sys.stderr)


def _shown(path) -> str:
    """``path`` relative to the working directory when it lies below it."""
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _dispatch(args) -> int:
    """Run the verb the arguments name; its exit status."""
    if args.command == "demo":
        return demo.run(args)
    if args.command == "experiment":
        _, experiment = _experiments()[args.kind]
        return experiment.run(args)
    if args.command == "gen":
        return cmd_gen(args.kind, args)
    if args.command == "sim":
        return cmd_sim(args.kind, args)
    if args.command == "board":
        from .board import cmd_board
        return cmd_board(args.kind, args)
    return get_family(args.kind).commands.VERBS[args.command].run(args.kind, args)


def _parse(argv: list[str]) -> argparse.Namespace:
    """``argv`` parsed with the options of the kind it names; argparse's refusals exit."""
    if argv[:1] in (["-v"], ["--verbose"]) and argv[1:2] and not argv[1].startswith("-"):
        argv = argv[1:] + argv[:1]   # fatnet -v <verb> ...: the verb's own -v takes it
    kind = named_kind(argv)
    parser = build_parser(argv, kind)
    if kind is None:   # refused below: name the token meant as the kind, not an option's value
        verb = parser.verbs.get(argv[0]) if argv else None
        positional = verb.positional if verb is not None else None
        if verb is not None and positional is not None and not {"-h", "--help"} & set(argv):
            moved = _unknown_kind_first(argv)
            if moved is None:
                verb.error(f"the following arguments are required: {positional}")
            argv = moved
    args, extras = parser.parse_known_args(argv)
    if getattr(args, "kind", None) not in (None, kind):
        # the first kind among the tokens was an option's value (--top butterfly): parse
        # again with the options of the kind argparse took as the positional
        parser = build_parser(argv, args.kind)
        args, extras = parser.parse_known_args(argv)
    if extras:   # argparse would say this as "fatnet: error:", not naming the verb
        verb = parser.verbs[args.command]
        verb.error(f"unrecognized arguments: {' '.join(map(repr, extras))}")
    return args


def _unknown_kind_first(argv: list[str]) -> list[str] | None:
    """``argv`` with the token most likely meant as the (unknown) kind moved to just after
    the verb, so that argparse's refusal names it: the first bare token that does not
    follow an option (``fatnet route --leaves 4 hypertorus`` names 'hypertorus', not
    '4'); failing that the last (``fatnet route --json hypertorus``: a flag takes no
    value); None when there is no bare token (no kind given)."""
    bare = [i for i in range(1, len(argv)) if not argv[i].startswith("-")]
    if not bare:
        return None
    meant = next((i for i in bare if not (argv[i - 1].startswith("-")
                                          and "=" not in argv[i - 1])), bare[-1])
    return [argv[0], argv[meant]] + argv[1:meant] + argv[meant + 1:]


def option_worded(message: str, args: argparse.Namespace) -> str:
    """The model's error ``message``, which names its parameter first (``message_bits
    must be ...``), with the option that sets it named instead (``--message-bits must be
    ...``), so the line says what to change on the command line. The option is the one
    whose destination is the parameter, or its singular (``stuck_links`` is set by the
    repeatable ``--stuck-link``); a message naming no option is left as it is."""
    head, sep, rest = message.partition(" ")
    options = vars(args)
    for dest in (head, head[:-1] if head.endswith("s") else None):
        if sep and dest and dest.isidentifier() and "_" in dest and dest in options:
            return f"--{dest.replace('_', '-')} {rest}"
    return message


def main(argv=None) -> int:
    """Run ``fatnet argv`` (default ``sys.argv[1:]``); the exit status, argparse's own
    included (2 for a refused option, 0 after ``--help``), is returned, not raised."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = _parse(argv)
    except SystemExit as e:  # argparse has printed its one line (or the help)
        return 0 if e.code is None else int(e.code)
    try:
        status = _dispatch(args)
        sys.stdout.flush()   # a full disk is seen here, where it can be reported
        return status
    except FatnetInputError as e:
        print(f"fatnet {args.command}: error: {one_line(option_worded(str(e), args))}",
              file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head` and closed early
        sys.stderr.close()
        return 0
    except OSError as e:
        # the machine's failure, not the input's (a full disk, a directory removed under
        # us): one line and status 1; stdout is dropped so that exit does not try again
        sys.stdout = open(os.devnull, "w")
        where = f" {e.filename!r}" if e.filename else ""
        print(f"fatnet {args.command}: error: cannot read or write{where}: "
              f"{e.strerror or e}", file=sys.stderr)
        return 1
