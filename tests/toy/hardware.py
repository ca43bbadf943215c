"""The toy family's hardware hooks (:class:`fatnet.hdl.family.HardwareFamily`): the
crossbar as an Amaranth component, built from the shared switches, signatures and
controller.

Per input, a binary tree of :class:`~fatnet.hdl.switches.Selector` s reads the address
bits (one level per bit, no register between levels); per output, one on-line
:class:`~fatnet.hdl.switches.StageSwitch` (instance ``out_<j>``) takes the first free
wire, and a register drives the terminal's ``recv``. The acknowledgment comes back
through the same connections and one register at the input.
"""

from __future__ import annotations

from amaranth import Cat, Module
from amaranth.lib import wiring
from amaranth.lib.wiring import Out

from fatnet.hdl.controller import add_cycle_controller, controller_meaning, controller_members
from fatnet.hdl.family import destination_header
from fatnet.hdl.signatures import EndpointSignature
from fatnet.hdl.switches import Selector, StageSwitch


def check_buildable(net) -> None:
    """Every golden crossbar is built."""


def size_text(net) -> str:
    return f"terminals {net.n}"


def network_signature(net) -> wiring.Signature:
    return wiring.Signature({
        **controller_members(net.cycle_length),
        "term": Out(EndpointSignature(1, recv_width=net.recv_wires)).array(net.n)})


def port_meaning(net, row: dict) -> str:
    if row["endpoint"] is not None:
        return EndpointSignature.MEANING[row["path"][-1]].format(
            who=f"terminal {row['path'][1]}")
    return controller_meaning(row["name"], net.cycle_length)


def manifest_fields(net, modules) -> dict:
    return {
        "spec": {"kind": "toy", **net.params()},
        "message_format": f"M = 1, the destination's {net.address_bits} address bits "
                          f"(MSB first), {net.payload_bits} payload bits",
        "timing": f"M reaches the output at bit-time {net.arrival}; send_ack rises one "
                  f"bit-time after recv_ack; a message that finds every wire of its "
                  f"output taken (lower inputs first) is lost",
        "fields": {"spec": "the options the crossbar was built from",
                   "message_format": "what a source drives",
                   "timing": "latency, acknowledgment and arbitration"},
    }


def top(net, library=None) -> "CrossbarHW":
    return CrossbarHW(net)  # small and flat: nothing to share through ``library``


class CrossbarHW(wiring.Component):
    def __init__(self, net):
        self._net = net
        super().__init__(network_signature(net))

    def elaborate(self, platform):
        m, net = Module(), self._net
        add_cycle_controller(m, self.start, self.bit_time, self.busy, net.cycle_length)
        leaves = []  # leaves[i][j]: input i's branch to output j (a ChannelSignature)
        for i, term in enumerate(self.term):
            root = m.submodules[f"sel_{i}"] = Selector(1)
            m.d.comb += [root.clear.eq(self.start), root.i.data.eq(term.send)]
            with m.If(self.start):
                m.d.sync += term.send_ack.eq(0)
            with m.Else():
                m.d.sync += term.send_ack.eq(root.i.ack)
            level = [root]
            for depth in range(1, net.address_bits):  # one Selector per address bit
                below = []
                for k, parent in enumerate(level):
                    for b, branch in enumerate((parent.b0, parent.b1)):
                        sel = m.submodules[f"sel_{i}_{depth}_{2 * k + b}"] = Selector(1)
                        m.d.comb += sel.clear.eq(self.start)
                        wiring.connect(m, branch, sel.i)
                        below.append(sel)
                level = below
            leaves.append([b for sel in level for b in (sel.b0, sel.b1)])
        for j, term in enumerate(self.term):
            sw = m.submodules[f"out_{j}"] = StageSwitch(net.stage, online=True)
            m.d.comb += [sw.clear.eq(self.start), sw.o.ack.eq(term.recv_ack),
                         sw.i.data.eq(Cat(leaves[i][j].data for i in range(net.n))),
                         Cat(leaves[i][j].ack for i in range(net.n)).eq(sw.i.ack)]
            with m.If(self.start):
                m.d.sync += term.recv.eq(0)
            with m.Else():
                m.d.sync += term.recv.eq(sw.o.data)
        return m


def bist_header(net, source, destination):
    """The self-test's header: the destination's address bits, MSB first (the toy's
    message format), whatever the source."""
    return destination_header(destination)
