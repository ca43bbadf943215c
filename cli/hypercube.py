"""The hypercube family's command-line hooks: options, model-only verbs, the Kuszmaul
experiment.

:mod:`fatnet.cli.main` builds the parser from :func:`add_arguments` and calls
:data:`VERBS` and :data:`EXPERIMENTS`; the data behind them is
:mod:`fatnet.golden.hypercube.api` (one routing's report, the cube's costs) and
:mod:`fatnet.golden.hypercube.experiment` (the tables). The family has no hardware yet
(``gen`` and ``sim`` are not its verbs; ``fatnet demo`` does not show it).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..api.params import check_fraction, check_int, from_args
from ..api.registry import Demo, Family, Kind
from ..golden.bist import min_payload_bits
from ..golden.checks import is_integer
from ..golden.errors import MessageFileError, ParameterError
from ..golden.hypercube import experiment as hx
from ..golden.hypercube.alg2 import READINGS
from ..golden.hypercube.api import (ALG2_BIT_TIMES_FORMULA, ALGORITHMS,
                                    HARDWARE_ALGORITHMS, MAX_MESSAGE_BITS, algorithm_class,
                                    info_report)
from ..golden.hypercube.circuit import (DEFAULT_HW_BUFFER, MAX_HW_BUFFER, MAX_HW_STEPS,
                                        HypercubeCircuit)
from ..golden.hypercube.cube import MAX_DIMENSION, MIN_DIMENSION, Hypercube, check_dimension
from ..golden.hypercube.deadlock import MAX_DEADLOCK_DIMENSION
from ..golden.hypercube.patterns import MAX_PROBLEMS, PATTERNS, make_pattern
from ..golden.hypercube.store_forward import ALGORITHMS as STORE_FORWARD
from ..golden.hypercube.store_forward import MAX_BUFFER, check_buffer
from ..golden.messages import (MessageSet, json_excerpt, message_entries,
                                plain_node_pairs, read_message_file)
from .options import (DEFAULT_PATTERN, MAX_CYCLES, loss_status, add_pattern_option,
                      add_seed_option, add_stuck_link_option, stuck_links,
                      add_unused_seed_option, bounded_int, comma_ints, fraction,
                      output_file)
from ..api.outputs import staged_file
from .plots import plot_kuszmaul
from .progress import Progress
from .family import Bench, CosimCase, Experiment, SoakModel, Verb, WavesCase

__all__ = ["FAMILY", "VERBS", "BENCH", "EXPERIMENTS", "add_arguments", "build_network",
           "make_messages", "run_network", "network_from_args",
           "messages_from_args", "run_model", "board_defaults", "check_board",
           "board_fit_key"]

#: The family as a plug-in (the entry point ``hypercube`` of ``fatnet.families``). Its
#: hardware: Algorithm 1's router chains and Algorithm 2's nodes (``gen``, ``sim``
#: ``--algorithm alg1|alg2``).
FAMILY = Family(
    "hypercube",
    [Kind("hypercube", "Kuszmaul's k-cube routing, e-cube and Valiant",
          demo=Demo(network={"dimension": 4, "algorithm": "alg1"},
                    traffic={"pattern": "complement"}))],
    golden="fatnet.golden.hypercube", commands="fatnet.cli.hypercube",
    hardware="fatnet.hdl.hypercube", testbench="fatnet.sim.hypercube")


#: ``--algorithm`` of every verb (route, gen, sim, board): one default, so that the same
#: options route and simulate the same algorithm. Algorithm 1 because its router chain is
#: the hardware the demo and the boards build (the smallest of the four).
DEFAULT_ALGORITHM = "alg1"

#: Why Algorithm 1 loses messages, and what routes them all: said when ``route`` exits 1.
ALG1_LOSS = ("Algorithm 1 drops a message that collides; it routes Kuszmaul's "
             "semi-contracting routings, and --algorithm alg2, ecube or valiant deliver "
             "every message")
#: What ``route`` adds when an algorithm leaves messages undelivered.
_LOSS_HINTS = {"alg1": ALG1_LOSS}

#: The syntax of Algorithm 1's ``--stuck-link``.
STUCK_LINK_SYNTAX = "RANK:NODE:WIRE:0|1"

#: ``--order``: comma-separated dimensions (checked against k by ``check_order``)
_order = comma_ints("dimensions (a permutation of 0..k-1)")


def add_arguments(p: argparse.ArgumentParser, verb: str, kind: str) -> None:
    """The options of one verb for the k-cube (``--json`` is added by the main parser)."""
    p.add_argument("--dimension", type=bounded_int("dimension", MIN_DIMENSION, MAX_DIMENSION),
                   required=True, metavar="K",
                   help=f"k, the cube's dimension: 2**k nodes, an integer in "
                        f"[{MIN_DIMENSION}, {MAX_DIMENSION}]")
    p.add_argument("--message-bits", type=bounded_int("message-bits", 1, MAX_MESSAGE_BITS),
                   default=None, metavar="M",
                   help=("message length M in bits (default 2k): alg1, the k "
                         "relative-address bits and the payload (M >= k + 1); alg2, ecube "
                         "and valiant, the destination (k bits) and the data (M >= k); "
                         "valiant's stream also carries its intermediate node (k bits) "
                         "besides M" if verb in ("gen", "sim") else
                         "message length M in bits (default 2k): alg1's pipeline counts the "
                         "k address bits in M (M >= k + 1); alg2's storage figures take "
                         "M-bit messages (M >= k) with a k-bit header in transit; the "
                         "e-cube and Valiant bit-times add a header of k or 2k bits to M "
                         "(gen and sim count the destination in M)"))
    if verb in ("gen", "sim"):
        _hardware_arguments(p, verb)
        return
    if verb == "info":
        _deadlock_arguments(p)
    if verb != "route":
        add_unused_seed_option(p, verb)
        return
    p.add_argument("--algorithm", choices=ALGORITHMS, default=DEFAULT_ALGORITHM,
                   help="alg1: Kuszmaul's Algorithm 1, dimensions in order, collisions "
                        "detected (a collided message is reported not delivered; sim's "
                        "hardware sends it again in the next delivery cycle); alg2: "
                        "Algorithm 2, any partial permutation; ecube, valiant: synchronous "
                        f"store-and-forward baselines (default {DEFAULT_ALGORITHM}, as for "
                        "gen and sim)")
    _traffic_arguments(p, "a third, payload column is accepted and ignored",
                       "the random patterns and Valiant's intermediate nodes")
    p.add_argument("--problems", type=bounded_int("problems", 1, MAX_PROBLEMS), default=1,
                   metavar="H",
                   help=f"--pattern: H problems at once, every node the source of H "
                        f"messages (1..{MAX_PROBLEMS}; more than 1 only for ecube and "
                        f"valiant, default 1)")
    _model_queue_arguments(p, "ecube, valiant: the model's bound on every link queue")
    p.add_argument("--reading", choices=READINGS, default="corrected",
                   help="alg2: the reading of Definition 5 (default corrected; the others "
                        "are the paper's literal text and fail, kept to show it)")
    p.add_argument("--order", type=_order, default=None, metavar="D0,D1,...",
                   help="alg1: the order of the dimensions (default 0,1,...,k-1)")
    p.add_argument("--allow-loss", action="store_true",
                   help="exit 0 even if messages are not delivered (alg1: collided)")


def _deadlock_arguments(p: argparse.ArgumentParser) -> None:
    """info: the store-and-forward configuration whose deadlock check it prints."""
    p.add_argument("--algorithm", choices=STORE_FORWARD, default=None,
                   help="ecube, valiant: also check this store-and-forward configuration "
                        "for deadlock, its channel-dependence graph: acyclic, or a cycle "
                        f"of link queues q(node,dimension) (K <= {MAX_DEADLOCK_DIMENSION})")
    _model_queue_arguments(p, "with --algorithm: the bound on every link queue")
    p.add_argument("--straight-on", action="store_true",
                   help="valiant: a message at its intermediate node goes straight on "
                        "into its phase-2 link queue, as the hardware's router does "
                        "(default: through that node's unbounded buffer, as route's model)")


def _model_queue_arguments(p: argparse.ArgumentParser, buffer_what: str) -> None:
    """route and info: the store-and-forward model's ``--buffer`` (``buffer_what``: what
    it bounds, for which verb) and Valiant's ``--phased``."""
    _add_buffer_option(p, MAX_BUFFER,
                       f"{buffer_what}, B messages with back-pressure, an integer in "
                       f"[1, {MAX_BUFFER}] (default unbounded: no head ever waits)")
    p.add_argument("--phased", action="store_true",
                   help="valiant: a barrier between the two phases")


def _add_buffer_option(p: argparse.ArgumentParser, high: int, help: str) -> None:
    """``--buffer B``: what it means and its range are the verb's (``route``: the
    model's bound, unbounded by default; ``gen``, ``sim``, ``board``: the hardware's
    queues), checked once, by argparse, with the model's one check
    (:func:`~fatnet.golden.hypercube.store_forward.check_buffer`)."""
    def parse(text: str) -> int:
        try:
            return check_buffer(int(text), high)
        except ValueError as e:        # not an integer, or out of the verb's range
            words = str(e) if isinstance(e, ParameterError) else \
                f"buffer must be an integer in [1, {high}], got {text[:40]!r}"
            raise argparse.ArgumentTypeError(words) from None
    p.add_argument("--buffer", type=parse, default=None, metavar="B", help=help)


def _traffic_arguments(p: argparse.ArgumentParser, payload_column: str,
                       seeded: str) -> None:
    """route and sim: a message file or a pattern, its seed, the hot-spot's fraction;
    the verbs differ in what the file's payload column and the seed are for."""
    src = p.add_mutually_exclusive_group()
    src.add_argument("--messages", metavar="FILE",
                     help=f'JSON file {{"messages": [[src, dst], ...]}} ({payload_column}), '
                          f'instead of --pattern')
    add_pattern_option(src, PATTERNS, "node", "node")
    add_seed_option(p, f"seed of {seeded} (default 0)")
    p.add_argument("--hot-fraction", type=fraction("hot-fraction"), default=0.1,
                   help="hot-spot pattern: fraction of the nodes sending to node 0 "
                        "(default 0.1)")


def _hardware_arguments(p: argparse.ArgumentParser, verb: str) -> None:
    """gen and sim: what the hardware routes, and (sim) the traffic."""
    p.add_argument("--algorithm", choices=ALGORITHMS, default=DEFAULT_ALGORITHM,
                   help="what the hardware routes: alg1, Algorithm 1's router chain "
                        "(collisions lose messages, which are sent again); alg2, Algorithm "
                        "2's nodes (any partial permutation, one delivery cycle); ecube, "
                        "the e-cube router, store-and-forward with link queues of B "
                        "messages; valiant, the same router through random intermediate "
                        f"nodes (default {DEFAULT_ALGORITHM}, as for route)")
    p.add_argument("--order", type=_order, default=None, metavar="D0,D1,...",
                   help="alg1: the dimension each rank of routers handles (default "
                        "0,1,...,k-1)")
    _add_buffer_option(p, MAX_HW_BUFFER,
                       f"ecube, valiant: the hardware's link queues, B message registers "
                       f"each, an integer in [1, {MAX_HW_BUFFER}] (default "
                       f"{DEFAULT_HW_BUFFER})")
    p.add_argument("--steps", type=bounded_int("steps", 1, MAX_HW_STEPS), default=None,
                   metavar="N",
                   help=f"ecube, valiant: store-and-forward steps per delivery cycle, "
                        f"1..{MAX_HW_STEPS} (default k*2^k for ecube, which delivers every "
                        f"partial permutation; 2k*2^k for valiant)")
    add_stuck_link_option(p, STUCK_LINK_SYNTAX,
                          "alg1: node NODE's link into its rank-RANK router (from its "
                          "rank-(RANK - 1) router's register) held at 0 or 1, RANK 1 .. "
                          "k - 1, WIRE 0")
    if verb != "sim":
        add_seed_option(p, "seed of every random choice: Valiant's intermediate nodes "
                           "(default 0; the alg1, alg2 and ecube hardware itself draws "
                           "nothing; a board's self-test takes --bist-seed)")
        return
    _traffic_arguments(p, "a third column, if given, is the payload; else payloads are "
                          "drawn from --seed", "the random patterns and payloads")
    p.add_argument("--max-cycles", type=bounded_int("max-cycles", 1, MAX_CYCLES), default=1000,
                   help="delivery cycles before what is left is reported lost (default "
                        "1000; a lost message is sent again in the next cycle)")


def build_network(kind: str, *, dimension: int, algorithm: str = DEFAULT_ALGORITHM,
                  message_bits: int | None = None, order=None, buffer: int | None = None,
                  steps: int | None = None, seed: int = 0,
                  stuck_link=()) -> HypercubeCircuit:
    """The hardware circuit of plain parameters (the API's hook): the circuit of
    ``algorithm`` (:data:`~fatnet.golden.hypercube.api.ALGORITHMS`), its options checked
    once, here (None: the algorithm's default). ``seed`` draws Valiant's intermediate
    nodes; the other algorithms draw nothing from it (as ``--seed`` also draws a
    simulation's payloads, it is not refused for them). ``stuck_link`` (Algorithm 1's)
    as texts (``"1:3:0:1"``) or parsed pairs."""
    cls = algorithm_class(algorithm, hardware=True).circuit
    options = {"message_bits": message_bits, "order": order, "buffer": buffer,
               "steps": steps, "stuck_links": stuck_links(stuck_link, STUCK_LINK_SYNTAX)}
    if "seed" in cls.spec_class.options:
        options["seed"] = seed
    return cls.from_options(dimension, **options)


def network_from_args(kind: str, args) -> HypercubeCircuit:
    """The hardware the options of ``gen``, ``sim`` and ``board`` name
    (:func:`build_network`). ``route`` and ``info`` read the cube alone
    (:func:`cube_from_args`)."""
    return build_network(kind, **from_args(build_network, args))


def cube_from_args(args) -> Hypercube:
    """The k-cube ``route`` and ``info`` work on (no hardware is built)."""
    return Hypercube(check_dimension(args.dimension))


#: The algorithms a board's self-test does not build, and why.
_NOT_ON_A_BOARD = {
    "valiant": "Valiant's intermediate node is drawn per message and the self-test sends "
               "one fixed header per source and destination",
}
#: The algorithms on a board that route partial permutations only: a fixed pattern.
_PERMUTATIONS_ONLY = tuple(name for name in HARDWARE_ALGORITHMS
                           if ALGORITHMS[name].circuit.permutations_only
                           and name not in _NOT_ON_A_BOARD)
#: The self-test's pattern for them (every node sends, and every message crosses every
#: dimension).
_BOARD_PATTERN = "complement"


def board_defaults(kind: str) -> dict:
    """``fatnet board``'s defaults for the self-test (:class:`fatnet.cli.board.BoardDefault`):
    the shortest message that holds its payload's fields, and a fixed pattern for the
    algorithms that route partial permutations only."""
    from .board import BoardDefault, least_payload
    return {
        "message_bits": BoardDefault(
            "message length M in bits (default 3k + 4: the k address bits and the "
            "shortest payload the self-test's source, sequence and check fields fit in, "
            "2k + 4; 13 for k = 3)",
            lambda args: args.dimension + least_payload(1 << args.dimension)),
        "pattern": BoardDefault(
            f"destinations: random (every other node) or a fixed pattern (default random "
            f"for alg1; {_BOARD_PATTERN} for {' and '.join(_PERMUTATIONS_ONLY)}, which "
            f"route partial permutations only, and random destinations repeat)",
            lambda args: _BOARD_PATTERN if args.algorithm in _PERMUTATIONS_ONLY
            else "random"),
        "nextpnr_opts": BoardDefault(
            "more options for nextpnr, one string given with '=' (iCE40, ECP5, Gowin; "
            f"default {_ECUBE_NEXTPNR_OPTS!r} for ecube, none for the other algorithms: "
            "nextpnr's default router does not finish the e-cube self-test on the "
            "iCEBreaker)",
            _board_nextpnr_opts)}


#: nextpnr's options for the e-cube router's self-test: nextpnr's default router stalls
#: on the 3-cube's iCEBreaker build (73 % of the LCs) with thousands of arcs left, where
#: router2 finishes in under a minute.
_ECUBE_NEXTPNR_OPTS = "--router router2"
#: nextpnr's options per algorithm (the others: none).
_NEXTPNR_OPTS = {"ecube": _ECUBE_NEXTPNR_OPTS}


def _board_nextpnr_opts(args) -> str | None:
    """The algorithm's nextpnr options (:data:`_NEXTPNR_OPTS`) on a board nextpnr
    builds."""
    from ..hdl.board import BOARDS
    return _NEXTPNR_OPTS.get(args.algorithm) if BOARDS[args.board].nextpnr else None


def board_fit_key(kind: str, args) -> str:
    """The measured builds (``hdl/board_builds.json``) whose logic per terminal this
    network's is estimated from: those of the kind and its algorithm."""
    return f"{kind} {args.algorithm}"


def check_board(kind: str, args) -> None:
    """Refuse, naming the option, what the self-test cannot take."""
    from .board import least_payload, require_payload
    if args.algorithm in _NOT_ON_A_BOARD:
        built = [name for name in HARDWARE_ALGORITHMS if name not in _NOT_ON_A_BOARD]
        raise ParameterError(
            f"algorithm {args.algorithm} is not available on a board, because "
            f"{_NOT_ON_A_BOARD[args.algorithm]} (--algorithm {', '.join(built[:-1])} or "
            f"{built[-1]})")
    if args.algorithm in _PERMUTATIONS_ONLY and args.pattern == "random":
        raise ParameterError(
            f"pattern must be a fixed pattern for {args.algorithm} on a board, got "
            f"random: random destinations repeat, and {args.algorithm} routes partial "
            f"permutations only (--pattern {_BOARD_PATTERN}, fatnet board's default for "
            f"{args.algorithm})")
    k = args.dimension
    require_payload("message-bits", args.message_bits, k + least_payload(1 << k), "3k + 4",
                    1 << k)


def load_messages(path, n: int, payload_bits: int | None = None):
    """``(src, dst, payload)`` of a message file ``{"messages": [[src, dst(, payload)],
    ...]}`` (the other families' format) on ``n`` nodes; ``payload`` is None unless every
    entry has a third column, which is then checked against ``payload_bits`` (``route``
    passes None: it ignores payloads). A file that cannot be read or parsed, or an entry
    that is not a pair of nodes in ``[0, n - 1]``, is one line naming the file, the entry
    and the accepted range."""
    doc = read_message_file(path)
    pairs = plain_node_pairs(doc, n)
    if pairs is not None:
        return pairs[0], pairs[1], None
    src, dst, payload = [], [], []
    for where, e in message_entries(doc, f"messages file {os.fspath(path)!r}"):
        for v in e[:2]:
            if not is_integer(v, numpy=False) or not 0 <= v < n:
                raise MessageFileError(f"{where}: node must be an integer in [0, {n - 1}], "
                                       f"got {json_excerpt(v)}")
        src.append(e[0])
        dst.append(e[1])
        if len(e) > 2 and payload_bits is not None:
            v = e[2]
            if not is_integer(v, numpy=False) or not 0 <= v < (
                    1 << payload_bits):
                raise MessageFileError(f"{where}: payload must be an integer in [0, "
                                       f"2^{payload_bits} - 1], got {json_excerpt(v)}")
            payload.append(v)
    return src, dst, (payload if payload and len(payload) == len(src) else None)


def make_messages(net: Hypercube, *, messages=None, pattern: str = DEFAULT_PATTERN,
                  seed: int = 0, hot_fraction: float = 0.1, problems: int = 1) -> MessageSet:
    """The routing of plain parameters (the API's hook): a message file
    (:func:`load_messages`) or a pattern (``problems`` problems, problem 0's messages
    first). A hardware circuit (``sim``): payloads from the file's third column or drawn
    from ``seed``; the cube alone (``route``): payloads 0 (no model reads them)."""
    check_fraction("hot_fraction", hot_fraction)
    bits = net.payload_bits if isinstance(net, HypercubeCircuit) else None
    if messages is not None:
        src, dst, payload = load_messages(messages, net.nodes, bits)
    else:
        options: dict = {"problems": problems}
        if pattern == "hot-spot":
            options["fraction"] = hot_fraction
        src, dst = make_pattern(net.k, pattern, seed, **options)
        payload = None
    if bits is None:
        return MessageSet.from_pairs(src, dst, 0, payload=[0] * len(src))
    return MessageSet.from_pairs(src, dst, bits, seed, payload=payload)


def messages_from_args(args, net: Hypercube) -> MessageSet:
    """The routing a ``route`` or ``sim`` command names (:func:`make_messages`)."""
    return make_messages(net, **from_args(make_messages, args))


def run_network(net: HypercubeCircuit, ms: MessageSet, *, max_cycles: int = 1000):
    """The hardware's delivery cycles (:meth:`HypercubeCircuit.run`, on-line, a lost
    message sent again), every cycle's result kept (the API's hook)."""
    return net.run(ms, keep_results=True, max_cycles=max_cycles)


def run_model(net: HypercubeCircuit, ms: MessageSet, args):
    """``sim``'s model run (:func:`run_network`)."""
    return run_network(net, ms, max_cycles=args.max_cycles)


# ---------------------------------------------------------------------- verbs
def cmd_route(kind: str, args) -> int:
    net = cube_from_args(args)
    routing = algorithm_class(args.algorithm).from_options(   # checked before any work
        net.k, args.message_bits, order=args.order, reading=args.reading,
        buffer=args.buffer, phased=args.phased, seed=args.seed)
    ms = messages_from_args(args, net)
    t0 = time.perf_counter()
    doc = routing.report(ms.src, ms.dst)
    seconds = time.perf_counter() - t0
    doc["source"] = (args.messages if args.messages is not None else
                     {"pattern": args.pattern, "seed": args.seed, "problems": args.problems})
    if args.json:
        print(json.dumps(doc))
    else:
        _print_route(doc, seconds)
    return loss_status(doc["messages"] - doc["delivered"], doc["messages"], args.allow_loss,
                       _LOSS_HINTS.get(args.algorithm, ""))


def _print_route(doc: dict, seconds: float) -> None:
    k, printer = doc["dimension"], _ROUTE_PRINTERS[doc["algorithm"]]
    src = doc["source"]
    what = src if isinstance(src, str) else (
        f"{src['pattern']}, seed {src['seed']}"
        + (f", {src['problems']} problems" if src["problems"] > 1 else ""))
    print(f"hypercube: k = {k} ({doc['nodes']} nodes), {printer.title(doc)}; {what}: "
          f"{doc['messages']} messages, M = {doc['message_bits']} bits")
    print(f"delivered {doc['delivered']}/{doc['messages']}, not delivered "
          f"{len(doc['lost'])}; {doc['steps']} steps; at most "
          f"{doc['max_messages_per_node']} "
          f"message{'' if doc['max_messages_per_node'] == 1 else 's'} in a node"
          + (f" ({doc['max_bits']} bits)" if "max_bits" in doc else "")
          + f"; model {seconds:.2f} s")
    printer.details(doc)


def _print_alg1(doc: dict) -> None:
    c = doc["collisions"]
    print(f"pipelined router chain: {doc['bit_times']} bit-times (M + k + 1); "
          f"{len(c)} collisions" + (": " + "; ".join(
              f"{x['kind']} at step {x['step']}, node {x['node']}, dimension "
              f"{x['dimension']}, messages {x['messages']}" for x in c[:3])
              + (" ..." if len(c) > 3 else "") if c else ""))


def _print_alg2(doc: dict) -> None:
    ops = doc["operations"]
    bad = [v for v, b in doc["violations"].items() if b]
    print("operations: " + ", ".join(f"{n} {c}" for n, c in ops.items())
          + (f"; violations: {', '.join(bad)}" if bad else "; no violation"))
    if doc["bit_times"] is None:
        print("bit-times: n/a (the cycle-exact model runs the corrected reading only)")
        return
    per = doc["bit_times_per_iteration"]
    print(f"bit-times (cycle-exact schedule): {doc['bit_times']} "
          f"({ALG2_BIT_TIMES_FORMULA}); per iteration " + ", ".join(str(b) for b in per))
    cyc = doc["cycle_model"]
    if cyc is not None:
        print(f"bit by bit: {cyc['delivered']}/{doc['messages']} delivered intact, "
              + ("every message at the same node after every step"
                 if cyc["same_positions"] else "POSITIONS DIFFER from the step model"))


def _print_store_forward(doc: dict) -> None:
    lat = doc["latency"]
    print(f"largest link queue {doc['max_queue']}"
          + (f" (bound {doc['buffer']})" if doc["buffer"] is not None else "")
          + f", stopped: {doc['stopped']}; latency mean "
          + (f"{lat['mean']:.2f}, max {lat['max']}" if lat["mean"] is not None else "-"))
    print(f"bit-times with a {doc['header_bits']}-bit header: store-and-forward "
          f"{doc['store_forward_bit_times']}, cut-through {doc['cut_through_bit_times']}")


@dataclass(frozen=True)
class _RoutePrinter:
    """How ``route`` prints one algorithm's report: its title, then its own lines."""

    title: Callable[[dict], str]
    details: Callable[[dict], None]


#: ``route``'s printing, per algorithm.
_ROUTE_PRINTERS = {
    "alg1": _RoutePrinter(lambda doc: "Algorithm 1", _print_alg1),
    "alg2": _RoutePrinter(lambda doc: f"Algorithm 2 ({doc['reading']} reading)",
                          _print_alg2),
    "ecube": _RoutePrinter(lambda doc: "e-cube store-and-forward", _print_store_forward),
    "valiant": _RoutePrinter(lambda doc: "Valiant store-and-forward"
                             + (" with a barrier" if doc["phased"] else ""),
                             _print_store_forward),
}


def cmd_info(kind: str, args) -> int:
    net = cube_from_args(args)
    doc = info_report(net.k, args.message_bits, algorithm=args.algorithm,
                      buffer=args.buffer, phased=args.phased,
                      straight_on=args.straight_on)
    if args.json:
        print(json.dumps(doc))
        return 0
    k, M, node, bt = doc["dimension"], doc["message_bits"], doc["per_node"], doc["bit_times"]
    print(f"hypercube: k = {k}, {doc['nodes']} nodes, {doc['links']} links "
          f"({doc['directed_links']} directed), M = {M} bits")
    print(f"per node: {node['dimension_routers']} dimension routers "
          f"({node['router_register_bits']} register bits), "
          f"{node['enumeration_serial_adders']} serial adders for the enumeration, "
          f"buffers: Algorithm 1 {node['alg1_buffer_messages']} message, Algorithm 2 "
          f"{node['alg2_buffer_messages']} messages / {node['alg2_buffer_bits']} bits "
          f"(2M + 2k), store-and-forward {node['link_queues']} link queues")
    print(f"bit-times: Algorithm 1 pipeline {bt['alg1_pipeline']} (M + k + 1), enumeration "
          f"{bt['enumeration']} (2k + 1), Algorithm 2 {bt['alg2']} ({bt['alg2_formula']}); "
          f"a lone e-cube message across k dimensions: store-and-forward "
          f"{bt['ecube_lone_message_store_forward']}, cut-through "
          f"{bt['ecube_lone_message_cut_through']}")
    print(f"Algorithm 2, batches in flight (Sec. IV: d + 1 wires across dimension d, a "
          f"stage per iteration): a batch every {bt['alg2_batches_period']} bit-times, "
          f"{bt['alg2_batches_buffer_bits']} message-buffer bits per node")
    if doc["deadlock"] is not None:
        print(doc["deadlock"]["verdict"])
    return 0


def _bench_workload(dimension: int) -> dict:
    """The co-simulation's hypercube: Algorithm 1's router chains, M = 2k."""
    return {"dimension": dimension}


def _bench_options(dimension: int) -> dict:
    """The board search's hypercube: Algorithm 1 with the shortest message the
    self-test's fields fit in, 3k + 4 bits (k address bits and 2k + 4)."""
    return {"dimension": dimension, "message_bits": dimension + min_payload_bits(dimension)}


def _bench_traffic(net: HypercubeCircuit, rng) -> tuple:
    """One run of the co-simulation's workload: a full-load random permutation (every
    node sends one message) run on-line, collisions retried."""
    n = net.nodes
    ms = MessageSet.from_pairs(np.arange(n), rng.permutation(n), net.payload_bits,
                               int(rng.integers(1 << 30)))
    return ms, net.run(ms, keep_results=True)


def _soak_draw(net: HypercubeCircuit, cycles: int, rng) -> tuple:
    """The soak's chunk at full load: a random permutation every cycle (every node
    sends one message), random payloads (at most 62 payload bits random, the rest 0)."""
    n = net.nodes
    src = np.tile(np.arange(n), cycles)
    dst = np.argsort(rng.random((cycles, n)), axis=1).reshape(-1)
    payload = rng.integers(0, 1 << min(net.payload_bits, 62), src.size)
    return src, dst, payload


def _soak_waves(net: HypercubeCircuit, cycle, src, dst, payload):
    """Every terminal wire of the soak's independent cycles, from the batched engine."""
    from ..golden.hypercube.cyclebatch import terminal_waves
    return terminal_waves(net, cycle, src, dst, payload)


#: The benchmarks' hypercubes (:class:`fatnet.cli.family.BenchCommands`): the ladder
#: ends at a size that does not fit on the largest board, the ULX3S's ECP5-85F (its
#: dimension 8 fits in 87 % of its LUTs, 2.2 times dimension 7's, so 9 would not).
BENCH = Bench(kind="hypercube", ladder=(2, 3, 4, 5, 6, 7, 8, 9), options=_bench_options,
              workload=_bench_workload, traffic=_bench_traffic, soak_size=4,
              summary="the k-cube's Algorithm 1 router chains (size k; cocotb: full-load "
                      "random permutations, collisions retried)",
              cosim=(CosimCase(6, 2_000_000, 3000, 300),),
              waves=WavesCase("hypercube, k = 6", {"dimension": 6},
                              {"pattern": "random-permutation", "seed": 0}),
              soak=SoakModel(_soak_draw, _soak_waves))


#: Model-only verbs (:class:`fatnet.cli.family.Verb`).
VERBS = {
    "route": Verb("route messages: Kuszmaul's Algorithms 1 and 2, e-cube, Valiant",
                  cmd_route),
    "info": Verb("nodes, links, per-node hardware, bit-time costs, a store-and-forward "
                 "configuration's deadlock check", cmd_info),
}


# ---------------------------------------------------------------------- experiments
def parse_dimensions(text, what: str = "dimensions",
                     high: int = hx.MAX_EXPERIMENT_DIMENSION) -> tuple[int, ...]:
    """``"2..12"``, ``"6,8,10"`` or a mix (``"2..4,8"``) as sorted distinct ints in
    ``[1, high]``; anything else one line naming ``what`` and the accepted range."""
    bad = argparse.ArgumentTypeError(f"{what} must be integers in [1, {high}] as A..B or "
                                     f"A,B,C (e.g. 2..12), got {text!r}")
    out: set[int] = set()
    try:
        for part in str(text).split(","):
            a, sep, b = part.strip().partition("..")
            lo, hi = (int(a), int(b)) if sep else (int(a), int(a))
            if not (1 <= lo <= hi <= high):
                raise bad
            out.update(range(lo, hi + 1))
    except ValueError:
        raise bad from None
    if not out:
        raise bad
    return tuple(sorted(out))


def _dimensions(what):
    def parse(text):
        return parse_dimensions(text, what)
    return parse


def _kuszmaul_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dimensions", type=_dimensions("dimensions"), default=hx.DEFAULT_DIMENSIONS,
                   metavar="A..B",
                   help="k of the census (k <= 3), the Algorithm 1 classes, the bit-times "
                        "and the Algorithm 2 sweep: A..B or A,B,C (default 2..12, at most "
                        f"{hx.MAX_EXPERIMENT_DIMENSION})")
    p.add_argument("--compare", type=_dimensions("compare"), default=hx.DEFAULT_COMPARE,
                   metavar="K,K,...",
                   help="k of the comparison of Algorithm 2 with e-cube and Valiant on every "
                        "pattern (default 6,8,10)")
    p.add_argument("--sweep", type=_dimensions("sweep"), default=hx.DEFAULT_SWEEP,
                   metavar="A..B",
                   help="k of the bit-time sweep of Algorithm 2, e-cube and Valiant on the "
                        "permutation patterns (default 2..14)")
    p.add_argument("--trials", type=bounded_int("trials", 1, hx.MAX_TRIALS), default=5,
                   help="random draws per cell (default 5)")
    add_seed_option(p, "each trial draws from its own seed, derived from this one "
                       "(default 0)")
    p.add_argument("--json", action="store_true", help="print the tables as JSON")
    p.add_argument("--plot", type=output_file("plot"), default=None, metavar="FILE",
                   help="write bit-times, steps and node storage against k per algorithm "
                        "and pattern (PNG)")


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _table(title, rows, columns) -> list[str]:
    cells = [[_fmt(r.get(key)) for _, key in columns] for r in rows]
    widths = [max([len(c)] + [len(row[j]) for row in cells])
              for j, (c, _) in enumerate(columns)]
    out = [title, "  ".join(f"{c:>{w}}" for (c, _), w in zip(columns, widths))]
    out += ["  ".join(f"{v:>{w}}" for v, w in zip(row, widths)) for row in cells]
    return out


def _poly(a: float, b: float, c: float) -> str:
    """``a k^2 + b k + c`` with the signs written once (``11 k^2 - 3 k - 5``)."""
    def term(v, unit):
        return f" {'-' if v < 0 else '+'} {abs(v):.4g}{unit}"
    return f"{a:.4g} k^2" + term(b, " k") + term(c, "")


def format_kuszmaul(doc: dict) -> str:
    lines = [f"Kuszmaul 1990 on the k-cube: dimensions {doc['dimensions']}, comparison at "
             f"{doc['compare_dimensions']}, {doc['trials']} trials, seed {doc['seed']}", ""]
    if doc["census"]:
        lines += _table("Algorithm 1 census, every partial permutation (Theorem 1: every "
                        "semi-contraction collision-free)", doc["census"],
                        [("k", "k"), ("partial", "partial_permutations"),
                         ("free", "collision_free"), ("packings", "packings"),
                         ("free", "packings_collision_free"),
                         ("semi-contr", "semi_contractions"),
                         ("free", "semi_contractions_collision_free"),
                         ("other free", "other_collision_free"),
                         ("perms", "permutations"), ("free", "permutations_collision_free")])
        lines.append("")
    if doc["readings"]:
        lines += _table("Algorithm 2 under each reading, every permutation", doc["readings"],
                        [("k", "k"), ("reading", "reading"), ("perms", "permutations"),
                         ("failed", "failed"), ("misrouted", "misrouted"),
                         ("collision", "collision"), ("unpaired", "unpaired"),
                         ("overfull6", "overfull6")])
        lines.append("")
    lines += _table("Algorithm 1 on random routings: fraction collision-free",
                    doc["alg1_classes"],
                    [("k", "k"), ("trials", "trials"), ("packing", "packing"),
                     ("semi-contr", "semi_contraction"),
                     ("partial perm", "partial_permutation")])
    lines.append("")
    rows = [{**b, **b["alg2_per_step"]} for b in doc["bit_times"]]
    lines += _table("Bit-times (cycle-exact model): Algorithm 1's pipeline, the enumeration, "
                    "Algorithm 2's schedule (per step kind summed over the iterations, "
                    "M = 2k)", rows,
                    [("k", "k"), ("alg1 M=2k", "alg1_pipeline_2k"),
                     ("alg1 M=4k", "alg1_pipeline_4k"), ("enumeration", "enumeration"),
                     ("cross", "cross"), ("enum doubles", "enumerate doubles"),
                     ("pack", "pack"), ("enum holes", "enumerate holes"),
                     ("pack addr", "pack hole addresses"), ("rendezvous", "rendezvous"),
                     ("iter 0", "alg2_iteration0"), ("alg2 M=2k", "alg2"),
                     ("alg2 M=4k", "alg2_4k")])
    for f in doc["alg2_fit"]:
        lines.append(f"fit, M = {f['message_bits']}: {_poly(f['a'], f['b'], f['c'])} "
                     f"(largest residual {f['max_residual']:.2g})")
    lines.append("")
    lines += _table("Algorithm 2 on random permutations (M = 2k; cycle-checked: also run bit "
                    "by bit, same nodes after every step)", doc["alg2"],
                    [("k", "k"), ("delivered", "delivered"), ("of", "trials"),
                     ("cycle-checked", "cycle_checked"), ("steps", "steps"),
                     ("max msgs", "max_messages"), ("max bits", "max_bits"),
                     ("bits/k", "bits_per_k")])
    lines.append("")
    lines += _table("Second formulation (Sec. IV): batches in flight, a stage per iteration "
                    "(M = 2k)", doc["batches"],
                    [("k", "k"), ("batches", "batches"), ("delivered", "delivered"),
                     ("bit-times/batch", "period"), ("latency", "latency"),
                     ("speed-up", "speedup"),
                     ("buffer bits/node", "buffer_bits"), ("wires/node", "wires_per_node")])
    lines.append("")
    if doc["sweep"]:
        ks = doc["sweep_dimensions"]
        table = {(r["k"], r["pattern"], r["algorithm"]): r for r in doc["sweep"]}
        srows = []
        for k in ks:
            row = {"k": k, "alg2": table[(k, "complement", "alg2")]["bit_times"]}
            for r in doc["sweep"]:
                if r["k"] == k and r["algorithm"] != "alg2":
                    row[f"{r['algorithm']} {r['pattern']}"] = r["bit_times"]
            srows.append(row)
        cols = [("k", "k"), ("alg2 (any)", "alg2")] + [
            (key, key) for key in srows[0] if key not in ("k", "alg2")]
        lines += _table("Bit-times against k at M = 2k: Algorithm 2's schedule, the baselines' "
                        "cut-through (mean over the trials)", srows, cols)
        for o in doc["overtakes"]:
            since = o["alg2_fewer_from_k"]
            lines.append(f"{o['pattern']}: Algorithm 2 takes fewer bit-times than "
                         f"{o['baseline']} from k = {since} on" if since is not None else
                         f"{o['pattern']}: Algorithm 2 takes more bit-times than "
                         f"{o['baseline']} at k = {ks[-1]}")
        lines.append("")
    cmp_rows = [r if r.get("routed") else {**r, "delivered": "n/a"} for r in doc["compare"]]
    lines += _table("Algorithm 2 against e-cube and Valiant (steps: store-and-forward steps; "
                    "alg2: dimension steps in sequence; storage at M = 2k with headers)",
                    cmp_rows,
                    [("k", "k"), ("pattern", "pattern"), ("algorithm", "algorithm"),
                     ("delivered", "delivered"), ("steps", "steps_mean"),
                     ("max", "steps_max"), ("msgs/node", "max_messages"),
                     ("bits/node", "max_bits"), ("bit-times", "bit_times"),
                     ("SAF bit-times", "store_forward_bit_times"),
                     ("CT bit-times", "cut_through_bit_times")])
    lines.append("")
    lines += _table("Where each wins (among the algorithms that delivered everything)",
                    doc["wins"],
                    [("k", "k"), ("pattern", "pattern"), ("fewest steps", "fewest_steps"),
                     ("steps", "steps"), ("fewest bit-times", "fewest_bit_times"),
                     ("bit-times", "bit_times"), ("least storage", "smallest_storage"),
                     ("bits", "storage_bits")])
    return "\n".join(lines)


def kuszmaul(*, dimensions=hx.DEFAULT_DIMENSIONS, compare=hx.DEFAULT_COMPARE,
             sweep=hx.DEFAULT_SWEEP, trials: int = 5, seed: int = 0, progress=None) -> dict:
    """Every table of the Kuszmaul experiment (:func:`fatnet.golden.hypercube.experiment.run`;
    the API's data of ``fatnet experiment kuszmaul``): ``dimensions``, ``compare`` and
    ``sweep`` are sequences of k."""
    check_int("trials", trials, 1, hx.MAX_TRIALS)
    return hx.run(dimensions, compare, trials, seed, progress, sweep=sweep)


def cmd_kuszmaul(args) -> int:
    with Progress("fatnet experiment", args.verbose, "tables") as progress:
        doc = kuszmaul(dimensions=args.dimensions, compare=args.compare, sweep=args.sweep,
                       trials=args.trials, seed=args.seed, progress=progress)
    if args.plot:
        with staged_file(args.plot) as tmp:
            plot_kuszmaul(doc, str(tmp))
    if args.json:
        print(json.dumps(doc))
    else:
        print(format_kuszmaul(doc))
        if args.plot:
            print(f"plot written to {args.plot}")
    return 0


#: The family's experiments (:class:`fatnet.cli.family.ExperimentCommands`).
EXPERIMENTS = {
    "kuszmaul": Experiment("Kuszmaul's hypercube routing: Algorithm 1 census, enumeration, "
                           "Algorithm 2 against e-cube and Valiant", _kuszmaul_options,
                           cmd_kuszmaul, kuszmaul),
}
