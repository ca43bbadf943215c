"""The toy family's testbench hooks (:class:`fatnet.sim.family.TestbenchFamily`): which
endpoint wire a model waveform is, what a cycle drives, and labels for reports and waves.

Model waveform keys are ``("in", i, 0)`` (terminal ``i``'s send wire; its reverse is
``send_ack``) and ``("out", j, w)`` (terminal ``j``'s ``recv[w]``).
"""

from __future__ import annotations

from fatnet.hdl.signatures import endpoint_name, port_rows
from fatnet.sim.faultless import (expected_status, mask_int, mask_width,  # noqa: F401
                                  status_paths, status_settle_clocks, status_signals,
                                  status_site)

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


def build_params(net) -> tuple[dict, list]:
    return net.params(), [golden.__file__]


def wave_groups(net, top: str, core: str) -> list:
    rows = port_rows(network_signature(net))
    return [("controller", [(f"{top}.clk", 1)] + [(f"{top}.{core}.{r['name']}", r["width"])
                                                 for r in rows if r["endpoint"] is None]),
            ("terminals", [(f"{top}.{core}.{r['name']}", r["width"])
                           for r in rows if r["endpoint"] is not None])]


def hop_field_labels(net, src, dst) -> list[list[str]]:
    return [[f"addr{b}" for b in range(net.address_bits)]]


def interior_wires(net) -> dict:
    return {}  # every wire the model names is a terminal's
