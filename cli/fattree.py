"""The fat-tree family's command-line options and its model-only verbs.

:mod:`fatnet.cli.main` builds the parser from :func:`add_arguments` and calls the verbs in
:data:`VERBS`; the hardware verbs (``gen``, ``sim``) are family-agnostic and live there.
The model behind them is :mod:`fatnet.golden.fattree` (:mod:`~fatnet.golden.fattree.api`
for the verbs' data).
"""

from __future__ import annotations

import argparse
import json
import time


from ..api.params import check_choice, check_fraction, from_args, takes_keywords_of
from ..api.registry import Demo, Family, Kind
from ..golden.bist import min_payload_bits
from ..golden.errors import ParameterError
from ..golden.fattree.api import build, info, schedule_report, spec_from_options
from ..golden.fattree.network import FatTreeNetwork
from ..golden.fattree.schedule import METHODS
from ..golden.fattree.spec import (CONCENTRATORS, DIRECTION_NAMES, MAX_LEAVES,
                                  MAX_LINK_STAGES, MAX_PAYLOAD_BITS, MODES, FatTreeSpec,
                                  min_universal_root)
from ..golden.messages import PATTERNS, load_message_file, make_pattern
from .options import (DEFAULT_PATTERN, MAX_CYCLES, loss_status, add_pattern_option,
                      add_seed_option,
                      add_start_stages_option, add_unused_seed_option,
                      add_stuck_link_option, bounded_int, stuck_links,
                      comma_ints, fraction, power_of_two)
from .family import Bench, CosimCase, SoakModel, Verb, WavesCase

__all__ = ["FAMILY", "VERBS", "BENCH", "add_arguments", "network_spec", "build_network",
           "make_messages", "run_network", "schedule_messages", "spec_from_args", "build",
           "network_from_args", "messages_from_args", "run_model", "board_defaults",
           "check_board", "board_fit_key"]

#: The family as a plug-in (the entry point ``fattree`` of ``fatnet.families``).
FAMILY = Family(
    "fattree",
    [Kind("fat-tree", "Leiserson's fat-tree with concentrator switches",
          demo=Demo(network={"leaves": 16, "root_capacity": 8, "seed": 1},
                    traffic={"pattern": "random-permutation"}))],
    golden="fatnet.golden.fattree", commands="fatnet.cli.fattree",
    hardware="fatnet.hdl.fattree", testbench="fatnet.sim.fattree")

#: The syntax of a fat-tree's ``--stuck-link``.
STUCK_LINK_SYNTAX = "up|down:HEAP:WIRE:0|1"
#: The words of its first field, as the model's directions.
_DIRECTION_WORDS = {name: d for d, name in DIRECTION_NAMES.items()}


def _add_network_options(p: argparse.ArgumentParser, *, hardware: bool = True):
    p.add_argument("--leaves", type=power_of_two("leaves", 2, MAX_LEAVES), required=True,
                   help=f"processors n (a power of two in [2, {MAX_LEAVES}])")
    caps = p.add_mutually_exclusive_group(required=True)
    caps.add_argument("--root-capacity", type=bounded_int("root-capacity", 1), metavar="W",
                      help="universal fat-tree with root capacity W, n^(2/3) <= W <= n")
    caps.add_argument("--capacities", type=comma_ints("integers (levels 0..lg n)"),
                      metavar="C0,C1,...",
                      help="explicit capacity per level, root (level 0) first, lg n + 1 values")
    caps.add_argument("--capacity", type=bounded_int("capacity", 1), metavar="C",
                      help="constant capacity C on every channel")
    if hardware:
        add_seed_option(p, "seed for every random choice: the concentrators' graphs and, "
                           "for route and sim, the random patterns (default 0)")
        p.add_argument("--concentrator", choices=CONCENTRATORS, default="pippenger",
                       help="concentrator switch (default pippenger)")
        p.add_argument("--mode", choices=MODES, default="offline",
                       help="switch-setting mode (default offline)")
        p.add_argument("--payload-bits", type=bounded_int("payload-bits", 0, MAX_PAYLOAD_BITS),
                       default=8, help=f"data bits per message (0 .. {MAX_PAYLOAD_BITS}; "
                                       f"default 8)")
        p.add_argument("--link-stages", type=bounded_int("link-stages", 0, MAX_LINK_STAGES),
                       default=0, metavar="S",
                       help=f"registers on every node-to-node link, each way, for the "
                            f"clock of large trees (0 .. {MAX_LINK_STAGES}; default 0)")
        add_start_stages_option(p)
        add_stuck_link_option(p, STUCK_LINK_SYNTAX,
                              "wire WIRE of heap HEAP's UP or DOWN channel held at 0 or 1, "
                              "HEAP 1 .. n - 2 (a link between two nodes)",
                              words=_DIRECTION_WORDS)


def _add_traffic_options(p: argparse.ArgumentParser):
    src = p.add_mutually_exclusive_group()
    src.add_argument("--messages", metavar="FILE",
                     help='JSON message file {"messages": [[src, dst(, payload)], ...]}, '
                          'instead of --pattern')
    add_pattern_option(src, PATTERNS, "leaf", "leaf")
    p.add_argument("--hot-fraction", type=fraction("hot-fraction"), default=0.25,
                   help="hot-spot pattern: fraction of leaves sending to leaf 0 "
                        "(default 0.25)")
    p.add_argument("--method", choices=METHODS, default="best",
                   help="off-line scheduler (default best)")
    p.add_argument("--max-cycles", type=bounded_int("max-cycles", 1, MAX_CYCLES), default=None,
                   help="give up after this many delivery cycles, >= 1 (default 4 times "
                        "the schedule's cycles + 16 off-line, 1000 on-line)")


def add_arguments(p: argparse.ArgumentParser, verb: str, kind: str) -> None:
    """The options of one verb for a fat-tree."""
    if verb == "schedule":
        _add_network_options(p, hardware=False)
        # the schedule is against the nominal capacities: no concentrator graph is drawn
        add_unused_seed_option(p, verb)
        p.add_argument("--messages", required=True,
                       help='JSON file {"messages": [[src, dst(, payload)], ...]} (the '
                            'payload column is accepted and ignored)')
        p.add_argument("--method", choices=METHODS, default="best",
                       help="off-line scheduler (default best)")
        return
    _add_network_options(p)
    if verb in ("route", "sim"):
        _add_traffic_options(p)
    if verb == "route":
        p.add_argument("--allow-loss", action="store_true",
                       help="exit 0 even if messages are reported lost")


def network_spec(kind: str, *, leaves: int, root_capacity: int | None = None,
                 capacities=None, capacity: int | None = None, seed: int = 0,
                 concentrator: str = "pippenger", mode: str = "offline",
                 payload_bits: int = 8, link_stages: int = 0, start_stages: int = 0,
                 stuck_link=()) -> FatTreeSpec:
    """The spec of plain parameters (the options' names with underscores): one of
    ``root_capacity``, ``capacities``, ``capacity``; ``stuck_link`` as texts
    (``"up:3:0:1"``) or parsed pairs. Validated by :class:`FatTreeSpec`."""
    profiles = {"root_capacity": root_capacity, "capacities": capacities,
                "capacity": capacity}
    given = [name for name, value in profiles.items() if value is not None]
    if len(given) != 1:
        raise ParameterError(f"give exactly one of root_capacity, capacities, capacity "
                             f"for a fat-tree, got {', '.join(given) or 'none'}")
    opts = {"seed": seed, "concentrator": concentrator, "mode": mode,
            "payload_bits": payload_bits, "link_stages": link_stages,
            "start_stages": start_stages}
    if stuck_link:
        opts["stuck_links"] = tuple(stuck_links(stuck_link, STUCK_LINK_SYNTAX,
                                                  _DIRECTION_WORDS).items())
    return spec_from_options(leaves, root_capacity=root_capacity, capacity=capacity,
                             capacities=capacities, **opts)


@takes_keywords_of(network_spec)
def build_network(kind: str, **params) -> FatTreeNetwork:
    """The golden network of :func:`network_spec`'s parameters (the API's hook)."""
    return build(network_spec(kind, **params))


def spec_from_args(kind: str, args) -> FatTreeSpec:
    return network_spec(kind, **from_args(network_spec, args))


def network_from_args(kind: str, args) -> FatTreeNetwork:
    """The golden network the options name."""
    return build(spec_from_args(kind, args))


def make_messages(net, *, messages=None, pattern: str = DEFAULT_PATTERN, seed: int = 0,
                  hot_fraction: float = 0.25):
    """The message set of plain parameters: a message file (``messages``, a path) or a
    pattern drawn from ``seed`` (the API's hook)."""
    n, payload_bits = net.spec.leaves, net.spec.payload_bits
    check_fraction("hot_fraction", hot_fraction)
    if messages is not None:
        return load_message_file(messages, n, payload_bits, seed)
    return make_pattern(n, pattern, seed, payload_bits, hot_fraction)


def messages_from_args(args, net):
    """The message set a ``route`` or ``sim`` command names: a file or a pattern."""
    return make_messages(net, **from_args(make_messages, args))


def run_network(net, ms, *, max_cycles: int | None = None, method: str = "best"):
    """The model's delivery cycles in the network's mode, every cycle's result kept (the
    API's hook); ``method`` is the off-line scheduler's."""
    from ..golden.fattree.route import run
    check_choice("method", method, METHODS)
    return run(net, ms, method=method, keep_results=True, max_cycles=max_cycles)


def schedule_messages(net, ms, *, method: str = "best") -> dict:
    """The off-line schedule of ``ms`` on the tree (the API's hook; :func:`schedule_report`)."""
    check_choice("method", method, METHODS)
    return schedule_report(net.spec, ms, method)


def board_defaults(kind: str) -> dict:
    """``fatnet board``'s defaults for the self-test (:class:`fatnet.cli.board.BoardDefault`):
    on-line switch setting, and the shortest payload that holds its fields."""
    from .board import BoardDefault, payload_bits_default
    return {
        "mode": BoardDefault(
            "switch-setting mode (default online: the self-test sends each source's "
            "message to a destination with one fixed header, which an off-line schedule "
            "of the whole cycle's messages does not give)", lambda args: "online"),
        "payload_bits": payload_bits_default("leaves", "leaves", MAX_PAYLOAD_BITS)}


def board_fit_key(kind: str, args) -> str:
    """The measured builds (``hdl/board_builds.json``) whose logic per terminal this
    network's is estimated from: the fat-trees' (on-line, any capacities)."""
    return kind


def check_board(kind: str, args) -> None:
    """Refuse, naming the option, what the self-test cannot take."""
    from .board import require_payload_bits
    if args.mode != "online":
        raise ParameterError(
            f"mode must be online on a board, got {args.mode}: the self-test sends each "
            f"message with one fixed header per source and destination, and an off-line "
            f"schedule sets the switches from the whole cycle's messages (--mode online, "
            f"fatnet board's default)")
    require_payload_bits(args, "leaves")


def run_model(net, ms, args):
    """The model's own delivery cycles (results kept) for ``sim``."""
    return run_network(net, ms, max_cycles=args.max_cycles)


# ---------------------------------------------------------------------- verbs
def cmd_schedule(kind: str, args) -> int:
    spec = spec_from_args(kind, args)
    # no payload is sent: any file route takes is taken, whatever its payload column
    ms = load_message_file(args.messages, spec.leaves, None, args.seed)
    print(json.dumps(schedule_report(spec, ms, args.method)))
    return 0


def cmd_route(kind: str, args) -> int:
    from ..golden.fattree.route import run
    spec = spec_from_args(kind, args)
    net = build(spec)
    ms = messages_from_args(args, net)
    t0 = time.perf_counter()
    report = run(net, ms, method=args.method, max_cycles=args.max_cycles)
    seconds = time.perf_counter() - t0
    doc = report.to_dict()
    doc["spec"] = spec.to_dict()
    doc["source"] = args.messages or {"pattern": args.pattern, "seed": args.seed}
    if args.json:
        print(json.dumps(doc))
    else:
        _print_route(doc, seconds)
    return loss_status(len(report.lost), doc["messages"],
                       args.allow_loss, "a message the schedule or arbitration could not "
                       "place within --max-cycles")


def _print_route(doc: dict, seconds: float):
    spec = doc["spec"]
    print(f"fat-tree: {spec['leaves']} leaves, capacities {spec['capacities']}, "
          f"{spec['concentrator']} concentrators, {spec['mode']} mode, seed {spec['seed']}")
    print(f"messages: {doc['messages']}  delivered: {doc['delivered']} "
          f"(+{doc['delivered_locally']} local)  lost: {len(doc['lost'])}")
    sched = f", scheduled {doc['scheduled_cycles']}" if doc["scheduled_cycles"] else ""
    print(f"delivery cycles: {doc['cycles']}{sched}  lower bound ceil(lambda): "
          f"{doc['lower_bound']}  load factor: {doc['load_factor']:.3f}  retries: "
          f"{doc['retries']}")
    print(f"cycle length: {doc['cycle_length_bits']} bit-times, total "
          f"{doc['total_bit_times']} bit-times ({seconds:.2f} s of model time)")
    print("utilisation per level (root first): "
          + " ".join(f"{u:.2f}" for u in doc["utilisation_per_level"]))
    for item in doc["lost"][:10]:
        print(f"lost: message {item['message']}: {item['reason']}")


def cmd_info(kind: str, args) -> int:
    spec = spec_from_args(kind, args)
    doc = info(spec)
    if args.json:
        print(json.dumps(doc))
        return 0
    print(f"fat-tree: {spec.leaves} leaves, profile {spec.profile}, seed {spec.seed}")
    print("level  capacity  effective  nodes  selectors  switch-edges")
    comps = {x["level"]: x for x in doc["components"]["per_level"]}
    for k in range(spec.levels + 1):
        c = comps.get(k, {"nodes": 0, "selectors": 0, "switch_edges": 0})
        print(f"{k:5d}  {spec.capacities[k]:8d}  {doc['effective_capacities'][k]:9d}  "
              f"{c['nodes']:5d}  {c['selectors']:9d}  {c['switch_edges']:12d}")
    print(f"components in total: {doc['components']['total']}")
    print(f"delivery cycle: {doc['cycle_length_bits']} bit-times ({spec.mode} mode, "
          f"{spec.payload_bits} payload bits)"
          + (f"; start through {spec.start_stages} register stage(s) (bit-time 0 is the "
             f"clock {spec.start_stages + 1} after the strobe)" if spec.start_stages else ""))
    print("concentrator shapes (inputs -> outputs): kind, wires per stage, guarantee, "
          "decision bits, cascade seed; per random stage its seed and measured alpha")
    for c in doc["concentrators"]:
        stages = " -> ".join(str(x) for x in c["sizes"])
        print(f"  {c['inputs']:4d} -> {c['outputs']:4d}: {c['kind']}, {stages}, guarantee "
              f"{c['guarantee']}, {c['decision_width']} decision bits, seed {c['seed']}")
        for st in c.get("stages", []):
            if st["kind"] == "random":
                how = "exact" if st["alpha_exact"] else "search"
                print(f"        stage {st['inputs']} -> {st['outputs']}: seed {st['seed']}, "
                      f"alpha {st['achieved_alpha']:.3f} ({how}), guarantee {st['guarantee']}")
    return 0


def _bench_workload(leaves: int) -> dict:
    """The co-simulation's fat-tree: the smallest universal one (off-line, Pippenger,
    seed 0)."""
    return {"leaves": leaves, "root_capacity": min_universal_root(leaves)}


def _bench_options(leaves: int) -> dict:
    """The board search's fat-tree: the co-simulation's, on-line, with the shortest
    payload the self-test's fields fit in (the leaves are its terminals)."""
    return {**_bench_workload(leaves), "mode": "online",
            "payload_bits": min_payload_bits((leaves - 1).bit_length())}


def _bench_traffic(net: FatTreeNetwork, rng) -> tuple:
    """One run of the co-simulation's workload: random destinations from every leaf and
    the external interface (4 (n + 1) messages), scheduled off-line."""
    from ..golden.fattree.route import run_offline
    from ..golden.messages import MessageSet
    k = 4 * (net.n + 1)
    src = rng.integers(-1, net.n, k)
    dst = rng.integers(0, net.n, k)
    ms = MessageSet.from_pairs(src, dst, net.spec.payload_bits, int(rng.integers(1 << 30)))
    return ms, run_offline(net, ms, keep_results=True)


def _soak_draw(net: FatTreeNetwork, cycles: int, rng) -> tuple:
    """The soak's chunk: the off-line tree's cycles, each a random one-cycle set
    (:func:`fatnet.golden.fattree.batchwaves.one_cycle_sets`: four random messages a
    terminal offered, each kept while its path has room) with random payloads (at most
    62 bits random, the rest 0), and each message's cycle."""
    from ..golden.fattree.batchwaves import one_cycle_sets
    cycle, src, dst = one_cycle_sets(net, cycles, rng)
    payload = rng.integers(0, 1 << min(net.spec.payload_bits, 62), src.size)
    return src, dst, payload, cycle


def _soak_waves(net: FatTreeNetwork, cycle, src, dst, payload):
    """Every terminal wire of the soak's cycles, from the batched engine."""
    from ..golden.fattree.batchwaves import terminal_waves
    return terminal_waves(net, cycle, src, dst, payload)


#: The benchmarks' fat-trees (:class:`fatnet.cli.family.BenchCommands`): the ladder
#: ends at a size that does not fit on the largest board, the ULX3S's ECP5-85F (128
#: leaves did not).
BENCH = Bench(kind="fat-tree", ladder=(4, 8, 16, 32, 64, 128), options=_bench_options,
              workload=_bench_workload, traffic=_bench_traffic, soak_size=16,
              summary="the smallest universal fat-trees, off-line (cocotb: "
                      "random-destinations schedules)",
              cosim=(CosimCase(16, 2_000_000, 2000, 300, quick=True),
                     CosimCase(64, 400_000, 600, 60)),
              waves=WavesCase("fat-tree, 64 leaves",
                              {"leaves": 64, "root_capacity": 16, "seed": 0},
                              {"pattern": "random-permutation", "seed": 0}),
              soak=SoakModel(_soak_draw, _soak_waves))


#: Model-only verbs: name -> (help, function(kind, args) -> exit status).
VERBS = {
    "schedule": Verb("off-line schedule of a message file (JSON out)", cmd_schedule),
    "route": Verb("run a message set through the cycle-exact model", cmd_route),
    "info": Verb("capacities, concentrators and component counts", cmd_info),
}
