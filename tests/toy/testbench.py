"""The toy family's testbench hooks: the required ones
(:class:`fatnet.sim.family.TestbenchFamily`: which endpoint wire a model waveform is,
what a cycle drives, what keys a build) and two optional capabilities, the waves
(:class:`~fatnet.sim.family.Waves`) and the self-test's
(:class:`~fatnet.sim.family.SelfTest`). It has no run-time faults, so no mask or status
hook: the engines see that by its type.

Model waveform keys are ``("in", i, 0)`` (terminal ``i``'s send wire; its reverse is
``send_ack``) and ``("out", j, w)`` (terminal ``j``'s ``recv[w]``).
"""

from __future__ import annotations

from fatnet.hdl.signatures import endpoint_name, port_rows
from fatnet.sim.family import BuildParams
from fatnet.sim.waves import controller_group, terminal_group

from . import golden
from .hardware import network_signature


def port_name(net, endpoint) -> str:
    return endpoint_name("term", int(endpoint))


def label(net, src, dst) -> str:
    return f"{port_name(net, src)} -> {port_name(net, dst)}"


def recv_port(net, key):
    return (port_name(net, key[1]), key[2]) if key[0] == "out" else None


def destination_acknowledges(net) -> bool:
    return True          # the root's ack is the terminal's recv_ack


def ack_port(net, key):
    return (port_name(net, key[1]), key[2]) if key[0] == "in" else None


def site(net, port: str, kind: str, wire: int) -> str:
    return "output register" if kind == "recv" else "input acknowledgment register"


def prepare(net, ms, idx, mask=None):
    golden.check_messages(net, ms)
    return golden.injections(net, ms, idx)


def simulate(net, ms, prepared):
    return golden.simulate_cycle(net, ms, prepared)


def build_params(net) -> BuildParams:
    return BuildParams(net.params(), (golden.__file__,))


def wave_groups(net, top: str, core: str) -> list:
    rows = port_rows(network_signature(net))
    root = f"{top}.{core}"
    return [controller_group(rows, top, root), terminal_group(rows, root)]


def hop_field_labels(net, src, dst) -> list[list[str]]:
    return [[f"addr{b}" for b in range(net.address_bits)]]


def interior_wires(net) -> dict:
    return {}  # every wire the model names is a terminal's
