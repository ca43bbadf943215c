"""The toy family's model: one n x n crossbar switch, bit-serial, on the shared cycle engine.

Terminal ``i`` sends on input ``i`` (one wire) and receives on output ``i``
(``recv_wires`` wires). A message is ``M, lg n address bits (the destination), payload``
(:func:`fatnet.golden.bitstream.frame`); the switch reads the address and claims the first
free wire of that output (lower inputs first), or the message is lost. One register on
the way out, one on the acknowledgment's way back.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fatnet.golden.bitstream import frame, int_to_bits
from fatnet.golden.cycle import Fabric as CycleFabric, run_cycle
from fatnet.golden.errors import FatnetInputError, ParameterError
from fatnet.golden.runner import ChannelUsage, RunReport, drive_online


@dataclass(frozen=True)
class Stage:
    """The crossbar's one stage per output (what the engine and StageSwitch read)."""

    inputs: int
    outputs: int
    adjacency: tuple
    decision_width: int = 0


class Crossbar:
    """The golden network: the one structure the hardware is built from."""

    family = "toy"  # the registered family's name

    def __init__(self, n: int, recv_wires: int = 1, payload_bits: int = 8):
        if n < 2 or n & (n - 1):
            raise ParameterError(f"terminals must be a power of two >= 2, got {n}")
        if recv_wires < 1 or payload_bits < 1:
            raise ParameterError("recv-wires and payload-bits must be >= 1")
        self.n, self.recv_wires, self.payload_bits = n, recv_wires, payload_bits
        self.address_bits = n.bit_length() - 1
        self.stage = Stage(n, recv_wires, (tuple(range(recv_wires)),) * n)
        self.arrival = self.address_bits + 1  # bit-time of M at the output
        self.cycle_length = self.arrival + max(payload_bits, 1) + 1  # payload or ack

    def params(self) -> dict:
        return {"terminals": self.n, "recv_wires": self.recv_wires,
                "payload_bits": self.payload_bits}


class Fabric(CycleFabric):
    """The crossbar seen by :func:`fatnet.golden.cycle.run_cycle`: switch ``"X"``,
    channels ``("in", i)`` (one wire) and ``("out", j)`` (``recv_wires`` wires)."""

    online = True

    def __init__(self, net: Crossbar):
        self.net = net

    def head(self, channel, wire):
        return ("X", channel[1]) if channel[0] == "in" else None

    def field_width(self, switch, in_port):
        return self.net.address_bits

    def branch(self, switch, in_port, value):
        return value

    def stages(self, switch, out_port):
        return (self.net.stage,)

    def stage_input(self, switch, out_port, in_port, wire):
        return in_port

    def out_wire(self, switch, out_port, output):
        return ("out", out_port), output

    def registers(self, switch, out_port):
        return 1

    @staticmethod
    def port_name(port):
        return str(port)


def encode(net: Crossbar, dst: int, payload: int) -> list[int]:
    return frame([int_to_bits(dst, net.address_bits)], payload, net.payload_bits)


def check_messages(net: Crossbar, ms) -> None:
    for m in range(len(ms)):
        for what, e in (("source", ms.src[m]), ("destination", ms.dst[m])):
            if not 0 <= e < net.n:
                raise FatnetInputError(f"message {m} {what} must be a terminal in "
                                       f"[0, {net.n - 1}], got {e}")


def injections(net: Crossbar, ms, idx) -> dict:
    """What the sources drive for messages ``idx`` in one cycle: message -> (wire,
    stream); a source with two messages in one cycle is refused (it has one wire)."""
    out, busy = {}, {}
    for m in sorted(int(i) for i in idx):
        s = int(ms.src[m])
        if s in busy:
            raise FatnetInputError(f"this cycle cannot carry message {m}: input {s} "
                                   f"sends message {busy[s]} on its one wire")
        busy[s] = m
        out[m] = (0, encode(net, int(ms.dst[m]), ms.payload[m]))
    return out


def simulate_cycle(net: Crossbar, ms, inj: dict):
    messages = {m: (int(ms.src[m]), int(ms.dst[m]), ("in", int(ms.src[m]))) for m in inj}
    return run_cycle(Fabric(net), net.cycle_length, messages, inj)


def run(net: Crossbar, ms, keep_results: bool = False, max_cycles: int = 1000) -> RunReport:
    """On-line: each input sends its oldest message every cycle until it is delivered."""
    check_messages(net, ms)
    per_src = np.bincount(ms.src, minlength=net.n)
    per_dst = np.bincount(ms.dst, minlength=net.n) / net.recv_wires
    report = RunReport("online", len(ms), cycle_length=net.cycle_length,
                       lower_bound=int(np.ceil(max(per_src.max(), per_dst.max()))),
                       load_factor=float(max(per_src.max(), per_dst.max())))
    usage = ChannelUsage(lambda ch: 0 if ch[0] == "in" else 1,
                         [net.n, net.n * net.recv_wires])
    return drive_online(report, usage, ms, lambda s: 1,
                        lambda idx: (simulate_cycle(net, ms, injections(net, ms, idx)), []),
                        keep_results, max_cycles, local_delivery=False)
