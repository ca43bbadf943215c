"""Toy fabrics for the family-agnostic engines: a table-driven fabric of the cycle
engine (:mod:`fatnet.golden.cycle`), and three small networks built on it that are
neither a fat-tree nor a butterfly: an n x n crossbar (one switch), a line of two
switches, and a ring of nodes.

Every question the engine asks is answered from a dict, so an engine that asks about a
switch, port, input or output it has no business with fails with a KeyError where it
asks, instead of getting a plausible answer.

Streams here are built bit by bit from ``format(value, "0{w}b")``, not with
:mod:`fatnet.golden.bitstream`, so that the tests do not check the engine against its
own helpers.
"""

from __future__ import annotations

from dataclasses import dataclass

from fatnet.golden.cycle import Fabric


def bits(value: int, width: int) -> list[int]:
    """``width`` bits of ``value``, MSB first (independent of the engine's helpers)."""
    assert 0 <= value < (1 << width) or width == value == 0
    return [int(c) for c in format(value, f"0{width}b")] if width else []


def stream(fields, payload: int, payload_bits: int) -> list[int]:
    """M bit, the fields in path order, the payload."""
    out = [1]
    for f in fields:
        out += list(f)
    return out + bits(payload, payload_bits)


@dataclass(frozen=True)
class Stage:
    """What the engine reads of a stage: edges per input (edge order) and the
    decision bits an off-line message carries for it."""

    adjacency: tuple
    decision_width: int = 0


def complete(inputs: int, outputs: int, decision_width: int = 0,
             order=None) -> Stage:
    """Every input reaches every output, in ``order`` (default increasing)."""
    edges = tuple(order) if order is not None else tuple(range(outputs))
    return Stage(tuple(edges for _ in range(inputs)), decision_width)


class TableFabric(Fabric):
    """A fabric of the cycle engine whose every answer is a table lookup.

    Parameters
    ----------
    online : bool
    heads : dict
        (channel, wire) -> (switch, in_port); a wire not in it is a destination.
    widths : dict
        (switch, in_port) -> branch bits k.
    branches : dict
        (switch, in_port, value) -> out_port.
    cascades : dict
        (switch, out_port) -> tuple of stages.
    inputs : dict
        (switch, out_port, in_port, wire) -> input index of the first stage (or, for a
        branch without stages, the output index).
    outs : dict
        (switch, out_port, output) -> (channel, wire).
    masked : set
        (switch, out_port, stage, output) not usable.
    """

    def __init__(self, online, heads, widths, branches, cascades, inputs, outs,
                 masked=()):
        self.online = online
        self.heads, self.widths, self.branches = heads, widths, branches
        self.cascades, self.inputs, self.outs = cascades, inputs, outs
        self.masked = set(masked)
        self.asked_usable = []

    def head(self, channel, wire):
        return self.heads.get((channel, wire))

    def field_width(self, switch, in_port):
        return self.widths[(switch, in_port)]

    def branch(self, switch, in_port, value):
        return self.branches[(switch, in_port, value)]

    def stages(self, switch, out_port):
        return self.cascades[(switch, out_port)]

    def stage_input(self, switch, out_port, in_port, wire):
        return self.inputs[(switch, out_port, in_port, wire)]

    def out_wire(self, switch, out_port, output):
        return self.outs[(switch, out_port, output)]

    def registers(self, switch, out_port):
        return max(1, len(self.cascades[(switch, out_port)]))

    @staticmethod
    def port_name(port):
        return str(port)

    def usable(self, switch, out_port, stage, output):
        self.asked_usable.append((switch, out_port, stage, output))
        return (switch, out_port, stage, output) not in self.masked


# ---------------------------------------------------------------- crossbar
def crossbar(n: int, *, online: bool = True, k=None, cascade=None, port_outputs: int = 1,
             masked=()):
    """One switch "X", n x n. Source i drives channel ("src", i) wire 0 into input
    port "i<i>"; its ``k[i]`` branch bits (default: enough for n) name the destination
    port "o<j>", whose ``cascade`` (default one complete stage, n inputs ->
    ``port_outputs``) ends on channel ("dst", j), wire x for last-stage output x. Input
    port "i<i>" is input i of the first stage."""
    kk = k if k is not None else [max(1, (n - 1).bit_length())] * n
    casc = cascade if cascade is not None else (complete(n, port_outputs),)
    heads, widths, branches, cascades, inputs, outs = {}, {}, {}, {}, {}, {}
    for i in range(n):
        heads[(("src", i), 0)] = ("X", f"i{i}")
        widths[("X", f"i{i}")] = kk[i]
        for v in range(min(n, 1 << kk[i])):
            branches[("X", f"i{i}", v)] = f"o{v}"
    for j in range(n):
        cascades[("X", f"o{j}")] = casc
        for i in range(n):
            inputs[("X", f"o{j}", f"i{i}", 0)] = i
        for x in range(port_outputs):
            outs[("X", f"o{j}", x)] = (("dst", j), x)
    return TableFabric(online, heads, widths, branches, cascades, inputs, outs, masked)


# ---------------------------------------------------------------- ring
def ring(n: int, wires: int, eject: int):
    """n nodes in a ring, on-line. Node i: input port "inj" (channel ("inj", i), one
    wire) and "ring" (channel ("ring", i-1), ``wires`` wires); one branch bit: 1 goes on
    ("fwd": one complete stage, 1 + wires inputs -> ``wires`` outputs onto channel
    ("ring", i)), 0 gets off ("ej": one complete stage -> ``eject`` outputs onto channel
    ("ej", i), a destination). Stage inputs: the injection wire is 0, ring wire w is
    1 + w."""
    heads, widths, branches, cascades, inputs, outs = {}, {}, {}, {}, {}, {}
    for i in range(n):
        heads[(("inj", i), 0)] = (i, "inj")
        for w in range(wires):
            heads[(("ring", (i - 1) % n), w)] = (i, "ring")
        for p in ("inj", "ring"):
            widths[(i, p)] = 1
            branches[(i, p, 0)] = "ej"
            branches[(i, p, 1)] = "fwd"
        cascades[(i, "fwd")] = (complete(1 + wires, wires),)
        cascades[(i, "ej")] = (complete(1 + wires, eject),)
        for port in ("fwd", "ej"):
            inputs[(i, port, "inj", 0)] = 0
            for w in range(wires):
                inputs[(i, port, "ring", w)] = 1 + w
        for x in range(wires):
            outs[(i, "fwd", x)] = (("ring", i), x)
        for x in range(eject):
            outs[(i, "ej", x)] = (("ej", i), x)
    return TableFabric(True, heads, widths, branches, cascades, inputs, outs)


def ring_stream(n: int, src: int, dst: int, payload: int, payload_bits: int):
    """Forward (1) at every node from src up to dst, get off (0) at dst."""
    hops = (dst - src) % n
    return stream([[1]] * hops + [[0]], payload, payload_bits)
