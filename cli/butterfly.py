"""The butterfly family's command-line hooks: options, model-only verbs, experiments.

:mod:`fatnet.cli.main` builds the parser from :func:`add_arguments` and calls
:data:`VERBS` and :data:`EXPERIMENTS`; the functions behind them are
:mod:`fatnet.golden.butterfly.api` (store-and-forward, faults, expansion, the
Leighton-Maggs tables) and :mod:`fatnet.golden.butterfly.cyclemodel` (the cycle-exact
circuit-switched model the hardware follows).
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from ..api.params import (check_choice, check_fraction, check_int, from_args,
                          takes_keywords_of)
from ..api.registry import Demo, Family, Kind
from ..golden.butterfly import api as bf
from ..golden.butterfly.api import build_circuit as build
from ..golden.butterfly.cyclemodel import (MAX_LINK_STAGES, MAX_PAYLOAD_BITS,
                                           CircuitNetwork, run_circuit, run_masked)
from ..golden.butterfly.faults import ADVERSARIES, RULES
from ..golden.butterfly.patterns import PATTERNS
from ..golden.butterfly.store_forward import EDGE_CHOICES, QUEUES, TIES
from ..golden.butterfly.topology import MAX_INPUTS, WIRINGS
from ..golden.bist import min_payload_bits
from ..golden.checks import is_integer
from ..golden.errors import ParameterError
from ..golden.messages import MessageSet, json_excerpt, read_json_file
from .options import (DEFAULT_PATTERN, MAX_CYCLES, loss_status, MAX_TRIALS,
                      add_pattern_option, add_seed_option,
                      add_start_stages_option,
                      add_stuck_link_option, stuck_links,
                      bounded_int, fraction, output_file, power_of_two)
from ..api.outputs import staged_file
from .plots import plot_sweep
from .progress import Progress
from .family import Bench, CosimCase, Experiment, SoakModel, Verb, WavesCase

__all__ = ["FAMILY", "VERBS", "BENCH", "EXPERIMENTS", "add_arguments", "network_spec",
           "build_network", "make_messages", "run_network", "fault_masks_of",
           "spec_from_args", "build",
           "network_from_args", "messages_from_args", "run_model", "parse_fault_mask",
           "format_experiment",
           "masks_from_args", "board_defaults", "check_board",
           "board_fit_key"]

#: The family as a plug-in (the entry point ``butterfly`` of ``fatnet.families``).
FAMILY = Family(
    "butterfly",
    [Kind("butterfly", "the butterfly of 2x2 splitter switches"),
     Kind("dilated-butterfly", "the d-dilated butterfly"),
     Kind("multibutterfly", "randomly-wired splitter networks",
          demo=Demo(network={"inputs": 16, "multiplicity": 2, "seed": 1},
                    traffic={"pattern": "random-permutation"}))],
    golden="fatnet.golden.butterfly", commands="fatnet.cli.butterfly",
    hardware="fatnet.hdl.butterfly", testbench="fatnet.sim.butterfly")

#: The syntax of a splitter network's ``--stuck-link``.
STUCK_LINK_SYNTAX = "LEVEL:ROW:WIRE:0|1"


def _network_options(p: argparse.ArgumentParser, kind: str) -> None:
    p.add_argument("--inputs", type=power_of_two("inputs", 4, MAX_INPUTS), default=64,
                   help=f"N, a power of two in [4, {MAX_INPUTS}] (default 64)")
    p.add_argument("--multiplicity", type=bounded_int("multiplicity", 1, bf.MAX_MULTIPLICITY),
                   default=None, metavar="D",
                   help="edges per direction d (default 1 for butterfly, 2 otherwise)")
    faults = p.add_mutually_exclusive_group()
    faults.add_argument("--faults", type=bounded_int("faults", 0), default=None, metavar="F",
                        help="faulty interior switches, placed at random (or by --adversary)")
    faults.add_argument("--fault-rate", type=fraction("fault-rate"), default=None,
                        metavar="P",
                        help="probability that an interior switch is faulty")
    p.add_argument("--adversary", choices=ADVERSARIES, default=None,
                   help="place the --faults on purpose instead of at random")
    p.add_argument("--fault-rule", choices=RULES, default="all",
                   help="propagation: all (Sec. IV) or half (Sec. III) (default all)")
    p.add_argument("--modified", action="store_true",
                   help="the '*' network of Sec. IV (4x4 complete last levels, level -1)")
    p.add_argument("--wiring", choices=WIRINGS, default="uniform",
                   help="random wiring of a multibutterfly (default uniform)")
    p.add_argument("--expansion", type=float, nargs=2, default=None,
                   metavar=("ALPHA", "BETA"),
                   help="retry the wiring until every splitter has this expansion")
    p.add_argument("--payload-bits", type=bounded_int("payload-bits", 0, MAX_PAYLOAD_BITS),
                   default=8, help=f"data bits per message in the bit-serial model (0 .. "
                                   f"{MAX_PAYLOAD_BITS}; default 8)")
    p.add_argument("--link-stages", type=bounded_int("link-stages", 0, MAX_LINK_STAGES),
                   default=0, metavar="S",
                   help=f"registers on every switch-to-switch link, each way, for the "
                        f"clock of large networks (0 .. {MAX_LINK_STAGES}; default 0)")
    add_start_stages_option(p)
    add_stuck_link_option(p, STUCK_LINK_SYNTAX,
                          "input wire WIRE of switch (LEVEL, ROW) held at 0 or 1, LEVEL 1 .. "
                          "lg N - 1")
    wired = kind == "multibutterfly"
    add_seed_option(p, "seed for every random choice: " + ("the wiring, " if wired else "")
                    + "faults placed at random, the random patterns (default 0"
                    + ("" if wired else f"; a {kind}'s wiring is fixed") + ")")


def add_arguments(p: argparse.ArgumentParser, verb: str, kind: str) -> None:
    """The options of one verb for a splitter network."""
    _network_options(p, kind)
    if verb in ("route", "sim"):
        add_pattern_option(p, PATTERNS)
        p.add_argument("--problems", type=bounded_int("problems", 1), default=1,
                       help="messages per input (several problems at once; default 1)")
        p.add_argument("--hot-fraction", type=fraction("hot-fraction"), default=0.1,
                       help="hot-spot pattern: fraction of inputs sending to output 0 "
                            "(default 0.1)")
        p.add_argument("--max-cycles", type=bounded_int("max-cycles", 1, MAX_CYCLES), default=1000,
                       help="circuit model: give up after this many delivery cycles, >= 1 "
                            "(default 1000)")
    if verb == "sim":
        masks = p.add_mutually_exclusive_group()
        masks.add_argument(
            "--fault-mask", default=None, metavar="MASK",
            help="run-time faults for every delivery cycle (the fault_mask port): "
                 "level:row switches, e.g. 1:3,2:5 (levels 1 .. lg N - 1, rows 0 .. N - "
                 "1), or the port's value as 0x<hex> or 0b<bits> (bit (level - 1) * N + "
                 "row); the model runs under the same mask")
        masks.add_argument(
            "--fault-masks", default=None, metavar="FILE",
            help="per-cycle run-time faults: a JSON list, entry c the mask of delivery "
                 "cycle c in --fault-mask syntax (a string) or a list of [level, row] "
                 "pairs; null or \"\" = no faults; after the list the last entry stays")
    if verb == "route":
        p.add_argument("--queue", choices=QUEUES, default="fifo",
                       help="store-and-forward queue discipline (default fifo)")
        p.add_argument("--edge-choice", choices=EDGE_CHOICES, default="first",
                       help="store-and-forward choice among the d edges (default first)")
        p.add_argument("--tie", choices=TIES, default="in-edge",
                       help="store-and-forward arbitration (default in-edge order)")
        p.add_argument("--allow-loss", action="store_true",
                       help="exit 0 even if messages are reported lost")


def network_spec(kind: str, *, inputs: int = 64, multiplicity: int | None = None,
                 faults: int | None = None, fault_rate: float | None = None,
                 adversary: str | None = None, fault_rule: str = "all",
                 modified: bool = False, wiring: str = "uniform", expansion=None,
                 seed: int = 0) -> bf.ButterflySpec:
    """The spec of plain parameters (the options' names with underscores;
    ``expansion`` is ``(alpha, beta)``), validated by
    :func:`fatnet.golden.butterfly.api.spec_from_options`."""
    if expansion is not None and len(expansion) != 2:
        raise ParameterError(f"expansion must be two numbers (alpha, beta), got "
                             f"{expansion!r}")
    if faults is not None and fault_rate is not None:
        raise ParameterError("give faults or fault_rate, not both")
    alpha, beta = expansion if expansion else (None, None)
    return bf.spec_from_options(kind, inputs, multiplicity, faults, fault_rate, modified,
                                seed, wiring, fault_rule, adversary, alpha=alpha, beta=beta)


@takes_keywords_of(network_spec)
def build_network(kind: str, *, payload_bits: int = 8, link_stages: int = 0,
                  start_stages: int = 0, stuck_link=(), **spec) -> CircuitNetwork:
    """The bit-serial network of plain parameters (the API's hook): :func:`network_spec`'s
    and the bit-serial ones; ``stuck_link`` as texts (``"1:3:0:1"``) or parsed pairs."""
    return build(network_spec(kind, **spec), payload_bits, link_stages, start_stages,
                 stuck_wires=stuck_links(stuck_link, STUCK_LINK_SYNTAX))


def spec_from_args(kind: str, args) -> bf.ButterflySpec:
    return network_spec(kind, **from_args(network_spec, args))


def network_from_args(kind: str, args) -> CircuitNetwork:
    """The bit-serial network the options name."""
    return build_network(kind, **from_args(build_network, args))


def make_messages(circuit: CircuitNetwork, *, pattern: str = DEFAULT_PATTERN,
                  seed: int = 0, problems: int = 1, hot_fraction: float = 0.1) -> MessageSet:
    """The pattern's messages, ``problems`` per input, inputs in order within each (the
    API's hook)."""
    check_fraction("hot_fraction", hot_fraction)
    return bf.pattern_messages(circuit, pattern, problems, hot_fraction, seed)


def messages_from_args(args, circuit: CircuitNetwork) -> MessageSet:
    """The pattern's messages, ``--problems`` per input, inputs in order within each."""
    return make_messages(circuit, **from_args(make_messages, args))


def board_defaults(kind: str) -> dict:
    """``fatnet board``'s defaults for the self-test (:class:`fatnet.cli.board.BoardDefault`):
    the shortest payload that holds its fields."""
    from .board import payload_bits_default
    return {"payload_bits": payload_bits_default("inputs", "inputs", MAX_PAYLOAD_BITS)}


def board_fit_key(kind: str, args) -> str:
    """The measured builds (``hdl/board_builds.json``) whose logic per terminal this
    network's is estimated from: those of the kind."""
    return kind


def check_board(kind: str, args) -> None:
    """Refuse, naming the option, what the self-test cannot take."""
    from .board import require_payload_bits
    require_payload_bits(args, "inputs")


def _mask_range(circuit: CircuitNetwork) -> str:
    n, N = circuit.depth, circuit.n_inputs
    return (f"level:row switches with level in [1, {n - 1}] and row in [0, {N - 1}] (e.g. "
            f"1:3,{n - 1}:{N - 1}), or 0x<hex> / 0b<bits> of the {(n - 1) * N}-bit "
            f"fault_mask (bit (level - 1) * {N} + row)")


def parse_fault_mask(text, circuit: CircuitNetwork, what: str = "fault-mask") -> np.ndarray:
    """A run-time fault mask as a ``(lg N - 1, N)`` bool array (row ``level - 1``).

    ``text``: ``"level:row,level:row"`` (interior switches: level in ``[1, lg N - 1]``,
    row in ``[0, N - 1]``), ``"0x<hex>"`` or ``"0b<bits>"`` (the port's value: bit
    ``(level - 1) * N + row``; ``0b`` takes 1 to ``(lg N - 1) * N`` digits, MSB first),
    ``""``/``"none"`` (no faults), or a list of ``[level, row]`` pairs (``--fault-masks``
    entries). Anything else, a value wider than the port or a switch out of range raises
    :class:`ParameterError` naming ``what`` and the accepted range.
    """
    n, N = circuit.depth, circuit.n_inputs
    width = (n - 1) * N
    bits = np.zeros((n - 1, N), dtype=bool)
    accepted = _mask_range(circuit)

    def bad(why):
        return ParameterError(f"{what} must be {accepted}; {why}")

    if text is None:
        return bits
    if isinstance(text, list):
        pairs = text
        for p in pairs:
            if (not isinstance(p, list) or len(p) != 2
                    or not all(is_integer(v, numpy=False) for v in p)):
                raise bad(f"got the entry {json_excerpt(p)}")
    elif isinstance(text, str):
        t = text.strip().lower()
        if t in ("", "none"):
            return bits
        if t.startswith(("0x", "0b")):
            base, digits = (16, t[2:]) if t[1] == "x" else (2, t[2:])
            try:
                value = int(digits, base) if digits and "_" not in digits else None
            except ValueError:
                value = None
            if value is None or value < 0:
                raise bad(f"got {text!r}")
            if base == 2 and len(digits) > width:
                raise bad(f"got {len(digits)} bits")
            if value >> width:
                raise bad(f"got {text!r}, wider than {width} bits")
            flat = np.array([(value >> b) & 1 for b in range(width)], dtype=bool)
            return flat.reshape(n - 1, N)
        pairs = []
        for item in t.split(","):
            level, sep, row = item.strip().partition(":")
            try:
                pairs.append([int(level), int(row)])
            except ValueError:
                raise bad(f"got {text!r}") from None
            if not sep:
                raise bad(f"got {text!r}")
    else:
        raise bad(f"got {json_excerpt(text)}")
    for level, row in pairs:
        if not (1 <= level <= n - 1 and 0 <= row <= N - 1):
            raise bad(f"got switch {level}:{row}")
        bits[level - 1, row] = True
    return bits


def fault_masks_of(circuit: CircuitNetwork, fault_mask=None, fault_masks=None):
    """``fault_mask`` (one mask for every cycle) or ``fault_masks`` (a JSON file's path,
    or the list itself: one entry per delivery cycle, the last staying after the list)
    as a list of ``(lg N - 1, N)`` bool arrays; None when neither is given. Validated
    before anything runs."""
    if fault_mask is not None and fault_masks is not None:
        raise ParameterError("give fault_mask or fault_masks, not both")
    if fault_mask is not None:
        return [parse_fault_mask(fault_mask, circuit)]
    if fault_masks is None:
        return None
    doc = fault_masks if isinstance(fault_masks, list) else \
        read_json_file(fault_masks, "fault-masks")
    if not isinstance(doc, list) or not doc:
        raise ParameterError(f"fault-masks must be a JSON list of one or more masks (one "
                             f"per delivery cycle), got {type(doc).__name__} in "
                             f"{fault_masks!r}")
    return [parse_fault_mask(entry, circuit, f"fault-masks entry {c}")
            for c, entry in enumerate(doc)]


def masks_from_args(args, circuit: CircuitNetwork):
    """``--fault-mask`` or ``--fault-masks FILE`` (:func:`fault_masks_of`)."""
    return fault_masks_of(circuit, getattr(args, "fault_mask", None),
                          getattr(args, "fault_masks", None))


def run_network(circuit: CircuitNetwork, ms: MessageSet, *, max_cycles: int = 1000,
                fault_mask=None, fault_masks=None):
    """The cycle-exact circuit-switched run, every cycle's result kept (the API's hook),
    under the run-time fault masks if given (:func:`fault_masks_of`; then
    ``report.masks``: the mask of every cycle, for the testbench)."""
    masks = fault_masks_of(circuit, fault_mask, fault_masks)
    if masks is None:
        return run_circuit(circuit, ms, keep_results=True, max_cycles=max_cycles)
    return run_masked(circuit, ms, masks, max_cycles)


def run_model(circuit: CircuitNetwork, ms: MessageSet, args):
    """``sim``'s model run (:func:`run_network`) under ``--fault-mask``/``--fault-masks``."""
    return run_network(circuit, ms, max_cycles=args.max_cycles,
                       fault_mask=getattr(args, "fault_mask", None),
                       fault_masks=getattr(args, "fault_masks", None))


# ---------------------------------------------------------------------- verbs
def cmd_route(kind: str, args) -> int:
    circuit = network_from_args(kind, args)
    spec = circuit.spec
    # store-and-forward on the same network; the circuit result is the cycle-exact run's
    with Progress("fatnet route", args.verbose, "messages") as progress:
        doc = bf.route_report(spec, circuit, args.pattern, args.problems, args.hot_fraction,
                              queue=args.queue, edge_choice=args.edge_choice, tie=args.tie,
                              max_cycles=args.max_cycles, progress=progress)
    if args.json:
        print(json.dumps(doc))
    else:
        sf, c = doc["store_and_forward"], doc["circuit"]
        stuck = sorted(circuit.stuck_wires.items())
        print(f"{kind}: {spec.inputs} inputs, multiplicity {spec.multiplicity}"
              f"{', modified (*)' if spec.modified else ''}, seed {spec.seed}; "
              f"{args.pattern}, {args.problems} per input: {doc['messages']} messages, "
              f"{doc['lost_at_faults']} cut off by faults"
              + (f"; stuck links {', '.join(f'{i}:{r}:{w}:{v}' for (i, r, w), v in stuck)} "
                 f"(the circuit model's)" if stuck else ""))
        print(f"store-and-forward: {sf['delivered']} delivered in {sf['steps']} steps, "
              f"{sf['never_delayed_fraction']:.1%} never delayed")
        acc = c["first_cycle_acceptance"]
        print(f"circuit (bit-serial, cycle-exact): first cycle {c['first_cycle_delivered']}"
              f"/{c['first_cycle_offered']} delivered"
              + (f" (acceptance {acc:.3f})" if acc is not None else "")
              + f"; all in {c['cycles']} cycles of {c['cycle_length_bits']} bit-times, "
              f"{c['retries']} retries, {len(c['lost'])} lost")
    lost = doc["lost_at_faults"] + len(doc["circuit"]["lost"])
    return loss_status(lost, doc["messages"], args.allow_loss,
                       "cut off by faults or not through within --max-cycles")


def cmd_info(kind: str, args) -> int:
    spec = spec_from_args(kind, args)
    doc = bf.info_report(spec, args.payload_bits, args.link_stages, args.start_stages,
                         stuck_wires=stuck_links(args.stuck_link))
    if args.json:
        print(json.dumps(doc))
        return 0
    print(f"{kind}: {doc['inputs']} inputs, multiplicity {doc['multiplicity']}, levels "
          f"{doc['levels'][0]}..{doc['levels'][-1]}, {doc['switches']} switches "
          f"({doc['interior_switches']} interior), {doc['edges']} edges, wiring "
          f"{doc['wiring']}, seed {spec.seed}")
    ex = doc["expansion"]
    print(f"expansion at alpha = {ex['alpha']:.4g} (every input set of at most alpha M "
          f"inputs of an M-input splitter; beta = min |N(S)| / |S|):")
    for r in ex["levels"]:
        beta = "vacuous" if r["beta"] is None else f"{r['beta']:.3f}"
        print(f"  level {r['level']:3d} ({r['kind']}): splitters of {r['block_inputs']} "
              f"inputs, sets <= {r['max_set_size']}, beta {beta} "
              f"({'exact' if r['exact'] else 'search'})")
    if doc["faults"]:
        f = doc["faults"]
        print(f"faults ({f['rule']} rule): {f['faults']} placed, declared per level "
              f"{f['declared_per_level']}, surviving inputs {f['surviving_inputs']}, "
              f"outputs {f['surviving_outputs']}")
    b = doc["bit_serial"]
    links = (f", {b['link_stages']} register(s) per link" if b["link_stages"] else "") + \
        (f", start through {b['start_stages']} register stage(s) (bit-time 0 is the clock "
         f"{b['start_stages'] + 1} after the strobe)" if b["start_stages"] else "")
    print(f"bit-serial: {b['header_bits']} address bits, {b['payload_bits']} payload bits"
          f"{links}; M reaches the output at bit-time {b['arrival']}, acknowledgment "
          f"{b['ack_latency']} later; delivery cycle {b['cycle_length_bits']} bit-times")
    return 0


def _bench_workload(inputs: int) -> dict:
    """The co-simulation's butterfly: ``inputs`` rows, 8 payload bits, no faults."""
    return {"inputs": inputs}


def _bench_options(inputs: int) -> dict:
    """The board search's butterfly: the shortest payload the self-test's fields fit in."""
    return {"inputs": inputs, "payload_bits": min_payload_bits((inputs - 1).bit_length())}


def _bench_traffic(circuit: CircuitNetwork, rng) -> tuple:
    """One run of the co-simulation's workload: a full-load random-destination problem
    (every input sends one message) run on-line, losses retried."""
    n = circuit.n_inputs
    ms = MessageSet.from_pairs(np.arange(n), rng.integers(0, n, n), circuit.payload_bits,
                               int(rng.integers(1 << 30)))
    return ms, run_circuit(circuit, ms, keep_results=True)


def _soak_draw(circuit: CircuitNetwork, cycles: int, rng) -> tuple:
    """The soak's chunk at full load: every input, every cycle, a random output and
    payload (at most 62 payload bits random, the rest 0)."""
    n = circuit.n_inputs
    src = np.tile(np.arange(n), cycles)
    dst = rng.integers(0, n, src.size)
    payload = rng.integers(0, 1 << min(circuit.payload_bits, 62), src.size)
    return src, dst, payload


def _soak_waves(circuit: CircuitNetwork, cycle, src, dst, payload):
    """Every terminal wire of the soak's independent cycles, from the batched engine."""
    from ..golden.butterfly.cyclebatch import BatchedCircuit, terminal_waves
    return terminal_waves(BatchedCircuit(circuit), cycle, src, dst, payload)


#: The benchmarks' butterflies (:class:`fatnet.cli.family.BenchCommands`): the ladder
#: ends at a size that does not fit on the largest board, the ULX3S's ECP5-85F (256
#: inputs did not).
def _bench_acceptance(inputs: int, accepted) -> str:
    """The co-simulation's first-cycle acceptance beside the theory: the exact recursion
    for this butterfly (two delivery wires per output: Patel's recursion over the levels
    but the last, from half a request per wire) and Patel's delta network."""
    from ..golden.butterfly.circuit import patel_acceptance
    acc = np.asarray(accepted)
    levels = inputs.bit_length() - 1
    return (f"(butterfly N = {inputs}, first cycle at full load, {len(acc)} problems, "
            f"every wire equal to the model's): {acc.mean():.4f} ± {acc.std():.4f}; exact "
            f"recursion for this butterfly (two delivery wires per output) "
            f"{patel_acceptance(levels - 1, load=0.5):.4f}; Patel's delta network of 2x2 "
            f"crossbars {patel_acceptance(levels):.4f}")


BENCH = Bench(kind="butterfly", ladder=(4, 8, 16, 32, 64, 128, 256),
              options=_bench_options, workload=_bench_workload, traffic=_bench_traffic,
              soak_size=16,
              summary="the butterfly of 2x2 switches (cocotb: full-load random "
                      "destinations, losses retried)",
              cosim=(CosimCase(64, 2_000_000, 3000, 300),), acceptance=_bench_acceptance,
              waves=WavesCase("butterfly, 64 inputs", {"inputs": 64, "seed": 0},
                              {"pattern": "random-destinations", "seed": 0}),
              soak=SoakModel(_soak_draw, _soak_waves))


#: Model-only verbs: name -> (help, function(kind, args) -> exit status).
VERBS = {
    "route": Verb("route a pattern: store-and-forward and cycle-exact circuit switching",
                  cmd_route),
    "info": Verb("levels, switches, edges, expansion per level, faults", cmd_info),
}


# ---------------------------------------------------------------------- experiments
#: ``--trials`` of every experiment
_trials = bounded_int("trials", 1, MAX_TRIALS)


def _leighton_maggs_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--table", default="all", choices=("1", "2", "3", "all"),
                   help="which table (default all)")
    p.add_argument("--inputs", type=power_of_two("inputs", 8, MAX_INPUTS), default=1024,
                   help="N (default 1024, the paper's)")
    p.add_argument("--trials", type=_trials, default=None,
                   help="trials per cell (default the paper's: 2000 for Table I, 500 else)")
    add_seed_option(p)
    p.add_argument("--json", action="store_true", help="print the cells as JSON")
    p.add_argument("--plot", type=output_file("plot"), default=None, metavar="FILE",
                   help="also write the load sweep of the three networks (PNG)")


def format_experiment(cells: list[dict]) -> str:
    """Tables I-III as plain text, ours beside the paper's: ``mean ± std (paper mean ±
    std)``."""
    lines = []
    by_table: dict[int, list[dict]] = {}
    for c in cells:
        by_table.setdefault(c["table"], []).append(c)
    titles = {1: "Table I: % of trials in which a fault reached an input",
              2: "Table II: store-and-forward completion time (steps)",
              3: "Table III: % of messages never delayed (circuit switching)"}
    for table in sorted(by_table):
        group = by_table[table]
        rows = list(dict.fromkeys(c["row"] for c in group))
        cols = list(dict.fromkeys(c["column"] for c in group))
        first = group[0]
        lines.append(f"{titles[table]} — N = {first['inputs']}, {first['trials']} trials")

        def text(c):
            ours = f"{c['mean']:.1f}" if table == 1 else f"{c['mean']:.2f} ± {c['std']:.2f}"
            if c["paper"] is None:
                return ours
            paper = f"{c['paper']}" + (f" ± {c['paper_std']}" if c["paper_std"] is not None
                                       else "")
            return f"{ours} ({paper})"
        table_cells = {(c["row"], c["column"]): text(c) for c in group}
        width = max(len(v) for v in table_cells.values()) + 2
        lines.append(f"{'':8}" + "".join(f"{col:>{width}}" for col in cols))
        for row in rows:
            lines.append(f"{row:8}" + "".join(
                f"{table_cells.get((row, col), ''):>{width}}" for col in cols))
        lines.append("")
    lines.append("ours: mean ± std over the trials; (paper) beside it.")
    return "\n".join(lines)


def leighton_maggs(*, table="all", inputs: int = 1024, trials: int | None = None,
                   seed: int = 0, progress=None) -> list[dict]:
    """The cells of Tables I-III (``table`` 1, 2, 3 or ``"all"``), the paper's beside
    ours (the API's data of ``fatnet experiment leighton-maggs``)."""
    table = table if table == "all" else int(check_choice("table", str(table),
                                                         ("1", "2", "3", "all")))
    _check_trials(trials)
    return bf.experiment(table, inputs, trials, seed, progress)


def _check_trials(trials) -> None:
    if trials is not None:
        check_int("trials", trials, 1, MAX_TRIALS)


def cmd_leighton_maggs(args) -> int:
    with Progress("fatnet experiment", args.verbose, "trials") as progress:
        cells = leighton_maggs(table=args.table, inputs=args.inputs, trials=args.trials,
                               seed=args.seed, progress=progress)
        if args.plot:
            with staged_file(args.plot) as tmp:
                load_sweep(inputs=min(args.inputs, 256), seed=args.seed, plot=tmp,
                           progress=progress)
    if args.json:
        print(json.dumps(cells))
    else:
        print(format_experiment(cells))
        if args.plot:
            print(f"load sweep written to {args.plot}")
    return 0


def _acceptance_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--inputs", type=power_of_two("inputs", 4, MAX_INPUTS), default=64,
                   help="N (default 64)")
    p.add_argument("--trials", type=_trials, default=300, help="random problems (default 300)")
    p.add_argument("--load", type=fraction("load", zero=False), default=1.0,
                   help="fraction of inputs with a message, in (0, 1] (default 1: full "
                        "load)")
    add_seed_option(p)
    p.add_argument("--json", action="store_true", help="print the rows as JSON")


def acceptance(*, inputs: int = 64, trials: int = 300, load: float = 1.0, seed: int = 0,
               progress=None) -> list[dict]:
    """One circuit-switched cycle under load, random destinations, for the three
    networks (:func:`fatnet.golden.butterfly.api.acceptance_table`; the API's data of
    ``fatnet experiment acceptance``)."""
    _check_trials(trials)
    return bf.acceptance_table(inputs, trials, seed, load, progress)


def cmd_acceptance(args) -> int:
    """``fatnet experiment acceptance``: :func:`acceptance` as a table."""
    with Progress("fatnet experiment", args.verbose, "networks") as progress:
        rows = acceptance(inputs=args.inputs, trials=args.trials, load=args.load,
                          seed=args.seed, progress=progress)
    if args.json:
        print(json.dumps(rows))
        return 0
    print(f"one circuit-switched cycle, N = {args.inputs}, load {args.load}, "
          f"{args.trials} random problems, seed {args.seed}")
    print(f"{'network':>18}  {'d':>2}  {'model':>22}  {'acceptance':>16}  {'Patel':>6}")
    for r in rows:
        patel = f"{r['patel']:.3f}" if r["patel"] is not None and r["node_capacity"] == 1 \
            else "-"
        print(f"{r['kind']:>18}  {r['multiplicity']:>2}  {r['model']:>22}  "
              f"{r['acceptance_mean']:.4f} ± {r['acceptance_std']:.4f}  {patel:>6}")
    return 0


def _sweep_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--inputs", type=power_of_two("inputs", 4, MAX_INPUTS), default=256,
                   help="N (default 256)")
    p.add_argument("--trials", type=_trials, default=20, help="problems per load (default 20)")
    add_seed_option(p)
    p.add_argument("--plot", type=output_file("plot"), default=None, metavar="FILE",
                   help="write the plot (PNG)")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")


def load_sweep(*, inputs: int = 256, trials: int = 20, seed: int = 0, plot=None,
               progress=None) -> list[dict]:
    """Throughput and latency against offered load for the three networks, ``plot``
    (a path) the PNG if given (the API's data of ``fatnet experiment load-sweep``)."""
    _check_trials(trials)
    rows = bf.sweep(inputs, trials, seed, progress=progress)
    if plot is not None:
        plot_sweep(rows, str(plot))
    return rows


def cmd_sweep(args) -> int:
    with Progress("fatnet experiment", args.verbose, "loads") as progress:
        if args.plot:
            with staged_file(args.plot) as tmp:
                rows = load_sweep(inputs=args.inputs, trials=args.trials, seed=args.seed,
                                  plot=tmp, progress=progress)
        else:
            rows = load_sweep(inputs=args.inputs, trials=args.trials, seed=args.seed,
                              progress=progress)
    if args.json:
        print(json.dumps(rows))
        return 0
    keys = list(rows[0]) if rows else []
    print("  ".join(f"{k:>12}" for k in keys))
    for r in rows:
        print("  ".join(f"{v:>12.4f}" if isinstance(v, float) else f"{v!s:>12}"
                        for v in r.values()))
    if args.plot:
        print(f"plot written to {args.plot}")
    return 0


#: The family's experiments (:class:`fatnet.cli.family.ExperimentCommands`).
EXPERIMENTS = {
    "leighton-maggs": Experiment("Leighton-Maggs Tables I-III: paper beside ours",
                                 _leighton_maggs_options, cmd_leighton_maggs, leighton_maggs),
    "acceptance": Experiment("one circuit-switched cycle under load, against Patel's "
                             "recursion", _acceptance_options, cmd_acceptance, acceptance),
    "load-sweep": Experiment("throughput and latency against offered load, three networks",
                             _sweep_options, cmd_sweep, load_sweep),
}
