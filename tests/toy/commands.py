"""The toy family's command line (:class:`fatnet.cli.family.CommandFamily`) and the
family itself: ``fatnet route|info|gen|sim toy --terminals N ...``."""

from __future__ import annotations

import json

from fatnet.api.params import from_args
from fatnet.api.registry import Family, Kind
from fatnet.cli.family import Verb
from fatnet.golden.errors import MessageFileError
from fatnet.golden.messages import PATTERNS, load_message_file, make_pattern

from . import golden

#: The family as a plug-in: register it with ``fatnet.api.registry.register(FAMILY)``
#: (or an entry point ``toy = "<package>.commands:FAMILY"`` in ``fatnet.families``).
FAMILY = Family("toy", [Kind("toy", "a single n x n crossbar switch (worked example)")],
                golden=f"{__package__}.golden", commands=f"{__package__}.commands",
                hardware=f"{__package__}.hardware", testbench=f"{__package__}.testbench")

TOY_PATTERNS = [p for p in PATTERNS if "ext" not in p]  # a crossbar has no ext


def add_arguments(p, verb: str, kind: str) -> None:
    p.add_argument("--terminals", type=int, required=True, help="n (a power of two >= 2)")
    p.add_argument("--recv-wires", type=int, default=1, help="wires per output (default 1)")
    p.add_argument("--payload-bits", type=int, default=8, help="data bits (default 8)")
    p.add_argument("--seed", type=int, default=0, help="seed of the traffic (default 0)")
    if verb in ("route", "sim"):
        src = p.add_mutually_exclusive_group(required=True)
        src.add_argument("--messages", help="JSON message file")
        src.add_argument("--pattern", choices=TOY_PATTERNS)
        p.add_argument("--max-cycles", type=int, default=1000)


def build_network(kind: str, *, terminals: int, recv_wires: int = 1,
                  payload_bits: int = 8) -> golden.Crossbar:
    return golden.Crossbar(terminals, recv_wires, payload_bits)


def make_messages(net, *, messages=None, pattern=None, seed: int = 0):
    if messages is None:
        return make_pattern(net.n, pattern, seed, net.payload_bits)
    ms = load_message_file(messages, net.n, net.payload_bits, seed)
    if (ms.src < 0).any() or (ms.dst < 0).any():
        raise MessageFileError(f"messages file {messages}: a crossbar has no \"ext\"")
    return ms


def run_network(net, ms, *, max_cycles: int = 1000):
    return golden.run(net, ms, keep_results=True, max_cycles=max_cycles)


def network_from_args(kind: str, args) -> golden.Crossbar:
    return build_network(kind, **from_args(build_network, args))


def messages_from_args(args, net):
    return make_messages(net, **from_args(make_messages, args))


def run_model(net, ms, args):
    return run_network(net, ms, max_cycles=args.max_cycles)


def cmd_route(kind: str, args) -> int:
    net = network_from_args(kind, args)
    report = golden.run(net, messages_from_args(args, net), max_cycles=args.max_cycles)
    doc = report.to_dict()
    print(json.dumps(doc) if args.json else f"{doc['delivered']} of {doc['messages']} "
          f"delivered in {doc['cycles']} cycles, {len(doc['lost'])} lost")
    return 0 if not report.lost else 1


def cmd_info(kind: str, args) -> int:
    net = network_from_args(kind, args)
    print(json.dumps({**net.params(), "cycle_length_bits": net.cycle_length}))
    return 0


def board_defaults(kind: str) -> dict:
    """``fatnet board``'s defaults for the self-test: none beyond ``gen``'s (the toy's
    ``--payload-bits`` default of 8 holds the self-test's fields up to 4 terminals)."""
    return {}


def check_board(kind: str, args) -> None:
    """A payload too short for the self-test's fields is refused, naming the option."""
    from fatnet.cli.board import require_payload_bits
    require_payload_bits(args, "terminals")


def board_fit_key(kind: str, args) -> str:
    """The toy has no measured builds: its fit is not estimated (the key matches none)."""
    return kind


VERBS = {"route": Verb("run a message set through the cycle-exact model (JSON out)", cmd_route),
         "info": Verb("the crossbar's parameters and cycle length (JSON out)", cmd_info)}
