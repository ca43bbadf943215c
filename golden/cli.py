"""The ``fatnet`` command line: a registry of network kinds and subcommands.

Bad input exits with status 2 and one line on stderr naming the parameter and the
accepted range; nothing prints a traceback for it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from .errors import FatnetInputError
from .spec import CONCENTRATORS, KINDS, MODES, FatTreeSpec

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse's own status for usage errors)
        self.exit(2, f"{self.prog}: error: {message}\n")


def _int_list(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers (levels 0..lg n), got {text!r}") from None


def _add_network_options(p: argparse.ArgumentParser, *, hardware: bool = True):
    p.add_argument("--leaves", type=int, required=True, help="processors n (a power of two >= 2)")
    caps = p.add_mutually_exclusive_group(required=True)
    caps.add_argument("--root-capacity", type=int, metavar="W",
                      help="universal fat-tree with root capacity W, n^(2/3) <= W <= n")
    caps.add_argument("--capacities", type=_int_list, metavar="C0,C1,...",
                      help="explicit capacity per level, root (level 0) first, lg n + 1 values")
    caps.add_argument("--capacity", type=int, metavar="C",
                      help="constant capacity C on every channel")
    p.add_argument("--seed", type=int, default=0, help="seed for every random choice (default 0)")
    if hardware:
        p.add_argument("--concentrator", choices=CONCENTRATORS, default="pippenger",
                       help="concentrator switch (default pippenger)")
        p.add_argument("--mode", choices=MODES, default="offline",
                       help="switch-setting mode (default offline)")
        p.add_argument("--payload-bits", type=int, default=8,
                       help="data bits per message (default 8)")


def _add_traffic_options(p: argparse.ArgumentParser):
    from .messages import PATTERNS
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--messages", help="JSON message file")
    src.add_argument("--pattern", help="one of: " + ", ".join(PATTERNS))
    p.add_argument("--hot-fraction", type=float, default=0.25,
                   help="hot-spot pattern: fraction of leaves sending to leaf 0")
    p.add_argument("--method", default="best", help="off-line scheduler (default best)")
    p.add_argument("--max-cycles", type=int, default=None, help="give up after this many cycles")


def spec_from_args(args) -> FatTreeSpec:
    opts = {"seed": args.seed}
    for name in ("concentrator", "mode", "payload_bits"):
        if hasattr(args, name):
            opts[name] = getattr(args, name)
    if args.root_capacity is not None:
        return FatTreeSpec.universal(args.leaves, args.root_capacity, **opts)
    if args.capacity is not None:
        return FatTreeSpec.constant(args.leaves, args.capacity, **opts)
    return FatTreeSpec.explicit(args.leaves, args.capacities, **opts)


def _messages_from_args(args, n: int, payload_bits: int):
    from .messages import load_message_file, make_pattern
    if args.messages is not None:
        return load_message_file(args.messages, n, payload_bits, args.seed)
    return make_pattern(n, args.pattern, args.seed, payload_bits, args.hot_fraction)


# ---------------------------------------------------------------------- commands
def cmd_schedule(args) -> int:
    from .fattree import FatTree
    from .messages import load_message_file
    from .schedule import lower_bound, schedule
    spec = spec_from_args(args)
    tree = FatTree(spec)
    ms = load_message_file(args.messages, spec.leaves, 0, args.seed)
    cycles = schedule(tree, ms.src, ms.dst, method=args.method)
    out = {
        "leaves": spec.leaves,
        "capacities": list(spec.capacities),
        "load_factor": tree.load_factor(ms.src, ms.dst),
        "lower_bound": lower_bound(tree, ms.src, ms.dst),
        "cycles": [ms.pairs(sorted(int(i) for i in c)) for c in cycles],
    }
    print(json.dumps(out))
    return 0


def cmd_route(args) -> int:
    from .network import FatTreeNetwork
    from .route import run
    spec = spec_from_args(args)
    net = FatTreeNetwork(spec)
    ms = _messages_from_args(args, spec.leaves, spec.payload_bits)
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
    return 0 if not report.lost or args.allow_loss else 1


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


def cmd_info(args) -> int:
    from .concentrator import cascade_summary
    from .network import FatTreeNetwork
    spec = spec_from_args(args)
    net = FatTreeNetwork(spec)
    doc = {
        "spec": spec.to_dict(),
        "levels": spec.levels,
        "capacities": list(spec.capacities),
        "effective_capacities": [int(net.effective_cap[:, (1 << k) - 1].min())
                                 for k in range(spec.levels + 1)],
        "cycle_length_bits": net.cycle_length,
        "concentrators": [cascade_summary(c) for _, c in sorted(net.shapes.items())],
        "components": net.component_counts(),
    }
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
    print(f"delivery cycle: {net.cycle_length} bit-times ({spec.mode} mode, "
          f"{spec.payload_bits} payload bits)")
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


def cmd_gen(args) -> int:
    from .network import FatTreeNetwork
    from fatnet.hdl.gen import generate
    spec = spec_from_args(args)
    net = FatTreeNetwork(spec)
    doc = generate(net, args.output, top=args.top, harness=not args.no_harness)
    sizes = ", ".join(f"{f} ({(Path(args.output) / f).stat().st_size // 1024} KiB)"
                      for f in doc["files"])
    print(f"wrote {sizes} and {args.top}.json to {args.output} in "
          f"{doc['generation_seconds']:.1f} s; delivery cycle {doc['cycle_length_bits']} "
          f"bit-times")
    return 0


def cmd_sim(args) -> int:
    """Co-simulate the generated Verilog against the model (cocotb), optionally with waves."""
    import shutil

    from .network import FatTreeNetwork
    from .route import run
    from fatnet.sim.cocotb_fattree import run as cosim
    from fatnet.sim.waves import write_gtkw
    spec = spec_from_args(args)
    net = FatTreeNetwork(spec)
    ms = _messages_from_args(args, spec.leaves, spec.payload_bits)
    report = run(net, ms, keep_results=True, max_cycles=args.max_cycles)
    cycles = [sorted(r.outcomes) for r in report.results]
    replay = "fatnet " + " ".join(sys.argv[1:]) if sys.argv[1:] else "fatnet sim ..."
    res = cosim(net, ms, cycles, sim=args.sim, seed=args.seed, replay=replay,
                waves=args.waves is not None, build_root=args.build_dir)
    print(f"model: {report.delivered} delivered (+{report.local} local), "
          f"{len(report.lost)} lost, {report.cycles} delivery cycles of {net.cycle_length} "
          f"bit-times")
    print(f"{args.sim}: {'PASS' if res.passed else 'FAIL'}: RTL and model agree on every "
          f"recv and send_ack wire at every bit-time" if res.passed else
          f"{args.sim}: FAIL")
    for f in res.failures:
        print(f)
    print(f"{args.sim}: build {res.build_seconds:.1f} s, simulation "
          f"{res.cycles_per_second:.1f} delivery cycles/s "
          f"({res.bit_times / max(res.sim_seconds, 1e-9):.0f} bit-times/s)")
    if args.waves is not None and res.waves:
        out = Path(args.waves)
        out.mkdir(parents=True, exist_ok=True)
        dump = out / Path(res.waves).name
        shutil.copyfile(res.waves, dump)
        gtkw = write_gtkw(net, dump, out / "fattree.gtkw")
        print(f"waves: {dump}; open with: gtkwave {gtkw}")
    return 0 if res.passed else 1


def cmd_demo(args) -> int:
    from .messages import make_pattern
    from .network import FatTreeNetwork
    from .route import run_offline
    from .schedule import schedule
    spec = FatTreeSpec.universal(16, 8, seed=args.seed)
    net = FatTreeNetwork(spec)
    ms = make_pattern(16, "random-permutation", args.seed, spec.payload_bits)
    print(f"Universal fat-tree, 16 leaves, root capacity 8: capacities {list(spec.capacities)} "
          f"(effective with Pippenger concentrators: "
          f"{[int(net.effective_cap[:, (1 << k) - 1].min()) for k in range(5)]})")
    print(f"Random permutation (seed {args.seed}): "
          + " ".join(f"{s}->{d}" for s, d in ms.pairs()))
    cycles = schedule(net.tree, ms.src, ms.dst, cap=net.effective_cap)
    for i, c in enumerate(cycles):
        print(f"  cycle {i}: " + " ".join(f"{s}->{d}" for s, d in ms.pairs(sorted(c))))
    report = run_offline(net, ms)
    _print_route(dict(report.to_dict(), spec=spec.to_dict()), 0.0)
    return 0 if not report.lost else 1


def main(argv=None) -> int:
    parser = _Parser(prog="fatnet", description="Routing-network hardware generator "
                     "and golden model (Leiserson fat-trees).")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("schedule", help="off-line schedule of a message file (JSON out)")
    _add_network_options(p, hardware=False)
    p.add_argument("--messages", required=True, help='JSON file {"messages": [[src, dst], ...]}')
    p.add_argument("--method", default="best", help="best | greedy | theorem1 | corollary2")
    p.set_defaults(func=cmd_schedule)

    p = sub.add_parser("route", help="run a message set through the cycle-exact model")
    _add_network_options(p)
    _add_traffic_options(p)
    p.add_argument("--allow-loss", action="store_true",
                   help="exit 0 even if messages are reported lost")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_route)

    p = sub.add_parser("info", help="capacities, concentrators and component counts")
    p.add_argument("kind", choices=sorted(KINDS))
    _add_network_options(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("gen", help="write Verilog and a JSON manifest")
    p.add_argument("kind", choices=sorted(KINDS))
    _add_network_options(p)
    p.add_argument("-o", "--output", required=True, help="output directory")
    p.add_argument("--top", default="fattree", help="top module name (default fattree)")
    p.add_argument("--no-harness", action="store_true",
                   help="skip the packed-port test harness module")
    p.set_defaults(func=cmd_gen)

    p = sub.add_parser("sim", help="co-simulate the Verilog against the model (cocotb)")
    p.add_argument("kind", choices=sorted(KINDS))
    _add_network_options(p)
    _add_traffic_options(p)
    p.add_argument("--sim", choices=("icarus", "verilator"), default="icarus",
                   help="simulator (default icarus)")
    p.add_argument("--waves", metavar="DIR", default=None,
                   help="write the waveform dump and a GTKWave .gtkw file into DIR")
    p.add_argument("--build-dir", default="build/cocotb", help="where builds are kept")
    p.set_defaults(func=cmd_sim)

    p = sub.add_parser("demo", help="the main job on defaults: 16-leaf universal fat-tree")
    p.add_argument("--seed", type=int, default=1)
    p.set_defaults(func=cmd_demo)

    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except FatnetInputError as e:
        print(f"fatnet {args.command}: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head` and closed early
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
