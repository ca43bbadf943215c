"""A board build's two parts, the network and its self-test: their LUTs and flip-flops
from Yosys's hierarchy statistics, and the network alone, its ports registered, whose
build on the same device and tools measures the network's own Fmax.

Per-part counts: the board's Yosys script (:func:`yosys_overrides`, Amaranth's
``script_after_read`` and ``script_after_synth`` overrides) marks the network's module
``keep_hierarchy`` before ``synth_*`` flattens the design, and writes ``stat -json``
after it. The network's module (its own submodules flattened into it) then holds
exactly the cells of the network, mapped to the device's LUTs and flip-flops, and the
top the rest: the self-test and the board's glue (reset synchroniser, I/O buffers,
PLL). The counts are of the very netlist nextpnr places and routes. The price is that
Yosys optimises nothing across the network's boundary; little, since Amaranth has
already removed the outputs the self-test leaves unread and fixed the inputs it leaves
undriven before Yosys reads the design: 2 of 1,247 LUTs in ``synth_ice40`` of
``fatnet board butterfly --inputs 4 --board icebreaker``'s top, with and without the
mark. A ``stat`` before flattening would count Yosys's generic cells, not LUTs; a
second, hierarchical synthesis would count a netlist that is not the one on the chip.

The network alone (:class:`NetworkAlone`) drives every input the self-test drives from
a register of a shift chain and captures every output it reads in a register, whose
values are folded into a shift chain (one XOR per bit) that drives the UART pin and
feeds the input chain, so that nothing is constant and nothing is removed. The paths
that set its clock are then the network's own, between registers, as on the board
(its reset's included); the wrapper's own paths are one LUT long.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from amaranth import Cat, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import Flow, Out

from .logic import FREE_INIT

__all__ = ["NETWORK_PATH", "network_module", "stat_file", "yosys_overrides", "Part",
           "count_part", "split_parts", "read_parts", "NetworkAlone", "LUT_CELLS",
           "FF_CELLS", "KEPT_SYNTH_OPTS", "BOARD_SYNTH_OPTS"]

#: The network's instance path below the board's top: the board top's ``bist``
#: (:class:`fatnet.hdl.board.BoardTop`), then the core's ``network`` (the self-test's
#: :class:`~fatnet.hdl.bist.BistCore`, or :class:`NetworkAlone`).
NETWORK_PATH = ("bist", "network")

#: Yosys's LUT cells per vendor (a board's ``pll`` key) after ``synth_*``, with the
#: LUTs each takes: an ECP5 carry cell (CCU2C) is two LUT4s of a slice, a Gowin ALU
#: one LUT4 in its ALU mode.
LUT_CELLS = {"ice40": {"SB_LUT4": 1},
             "ecp5": {"LUT4": 1, "CCU2C": 2},
             "gowin": {"LUT1": 1, "LUT2": 1, "LUT3": 1, "LUT4": 1, "ALU": 1}}
#: Yosys's flip-flop cells per vendor after ``synth_*``.
FF_CELLS = {"ice40": re.compile(r"SB_DFF"), "ecp5": re.compile(r"TRELLIS_FF$"),
            "gowin": re.compile(r"DFF")}


def network_module(top: str) -> str:
    """Yosys's name (without its backslash) of the network's module in the board's
    design whose top module is ``top``."""
    return ".".join((top, *NETWORK_PATH))


def stat_file(top: str) -> str:
    """The file the board's Yosys script writes its ``stat -json`` to."""
    return f"{top}.stat.json"


#: The options ``synth_*`` needs per vendor for a kept module: ``synth_gowin`` maps the
#: ports of every module, not the top's alone, to I/O buffers (Yosys 0.70), which would
#: put the network's ports on pins. Amaranth instantiates the buffer of every pin the
#: board's top uses, so without the mapping only an unused input (the UART's receive
#: pin) is left without one, and nextpnr leaves its pin alone.
KEPT_SYNTH_OPTS = {"gowin": "-noiopads"}
#: The options the boards' synthesis takes per vendor, before the user's:
#: ``-nowidelut``, LUT4s alone, as on the iCE40. With wide LUTs (LUT5 to LUT8 from a
#: slice's LUT4s and its multiplexers: ``PFUMX``, ``L6MUX21``, ``MUX2_LUT5`` ...)
#: ABC maps the networks' switches to a fifth more LUT4s (the 8-input butterfly's
#: network: 441 LUT4 against 361 on the ECP5 and the Gowin).
BOARD_SYNTH_OPTS = {"ecp5": "-nowidelut", "gowin": "-nowidelut"}


def yosys_overrides(top: str, vendor: str, synth_opts: str | None = None) -> dict[str, str]:
    """Amaranth's overrides that keep the network's hierarchy through synthesis, leave
    the power-up value of the registers that do not need one to the device (the
    registers marked :data:`~fatnet.hdl.logic.FREE_INIT`) and write Yosys's per-module
    statistics (:func:`stat_file`) after it, and the ``vendor``'s synthesis options
    (:data:`BOARD_SYNTH_OPTS`), then ``synth_opts`` (the user's, or None), then what
    the synthesis needs for the kept module (:data:`KEPT_SYNTH_OPTS`)."""
    overrides = {"script_after_read":
                 f"setattr -mod -set keep_hierarchy 1 {network_module(top)}\n"
                 f"setattr -unset init a:{FREE_INIT}",
                 "script_after_synth": f"tee -q -o {stat_file(top)} stat -json"}
    opts = " ".join(filter(None, (BOARD_SYNTH_OPTS.get(vendor), synth_opts,
                                  KEPT_SYNTH_OPTS.get(vendor))))
    if opts:
        overrides["synth_opts"] = opts
    return overrides


@dataclass(frozen=True)
class Part:
    """One part's LUTs and flip-flops."""

    luts: int
    ffs: int

    def __add__(self, other: Part) -> Part:
        return Part(self.luts + other.luts, self.ffs + other.ffs)

    def as_json(self) -> dict:
        """The counts for ``board.json``."""
        return asdict(self)


def count_part(cells: dict[str, int], vendor: str) -> Part:
    """The LUTs and flip-flops among ``cells`` (Yosys's ``num_cells_by_type``) of a
    ``vendor`` device (:data:`LUT_CELLS`, :data:`FF_CELLS`)."""
    weight = LUT_CELLS[vendor]
    return Part(luts=sum(n * weight.get(name, 0) for name, n in cells.items()),
                ffs=sum(n for name, n in cells.items() if FF_CELLS[vendor].match(name)))


def split_parts(stat: dict, top: str, vendor: str) -> dict[str, Part]:
    """The network's part, the self-test's (the top's own cells) and the design's total
    (Yosys's hierarchy: every module times its instances) of ``stat`` (Yosys's ``stat
    -json`` of a design kept as :func:`yosys_overrides` keeps it). Raises ValueError
    when the network's module is not among the design's."""
    modules = stat["modules"]
    network = modules.get("\\" + network_module(top))
    if network is None:
        raise ValueError(f"no module {network_module(top)} in Yosys's statistics (modules: "
                         f"{', '.join(name.lstrip(chr(92)) for name in modules)})")
    return {"network": count_part(network["num_cells_by_type"], vendor),
            "self_test": count_part(modules["\\" + top]["num_cells_by_type"], vendor),
            "total": count_part(stat["design"]["num_cells_by_type"], vendor)}


def read_parts(out: Path, top: str, vendor: str) -> dict[str, Part] | None:
    """:func:`split_parts` of the statistics a build in ``out`` wrote, or None when
    Yosys wrote none (no synthesis ran, or Amaranth's environment variable
    ``AMARANTH_script_after_synth`` replaced the script's line)."""
    path = Path(out) / stat_file(top)
    if not path.exists():
        return None
    return split_parts(json.loads(path.read_text()), top, vendor)


class NetworkAlone(wiring.Component):
    """The network with registered ports, in the place of the self-test on a board's
    top (the same ports as :class:`~fatnet.hdl.bist.BistCore`): each input below from
    a register of one shift chain, each output below registered, then folded into a
    second shift chain (``chain[i] <= chain[i - 1] ^ output[i]``) whose last bit drives
    ``uart_tx`` and the first bit of the input chain. The wrapper's registers
    have no reset, so that only the network loads the reset net.

    The ports registered are the ones the self-test drives and reads: ``start`` and
    the terminals' endpoints. The network's other members (the controller's
    ``bit_time`` and ``busy``, a fault mask) are left as the self-test leaves them,
    unread or at their reset value, so that Amaranth removes the same logic as on the
    board.

    Parameters
    ----------
    network : wiring.Component
        The family's network top.
    ports : list
        The terminals' endpoint interfaces, as :class:`~fatnet.hdl.bist.BistCore`
        takes them.
    """

    def __init__(self, network, ports):
        self._network = network
        # by identity: the members of the network's signature that are these ports
        self._used = {id(network.start)} | {id(value) for port in ports
                                            for _, _, value in port.signature.flatten(port)}
        super().__init__({"uart_tx": Out(1, init=1), "led_heartbeat": Out(1),
                          "led_error": Out(1)})

    def _ports(self, flow: Flow) -> list:
        """The network's port signals of ``flow``, in its signature's order."""
        net = self._network
        return [value for _, member, value in net.signature.flatten(net)
                if member.flow == flow and id(value) in self._used]

    def elaborate(self, platform):
        m = Module()
        m.submodules.network = self._network
        inputs, outputs = Cat(*self._ports(Flow.In)), Cat(*self._ports(Flow.Out))
        driven = Signal(len(inputs), name="driven", reset_less=True)
        captured = Signal(len(outputs), name="captured", reset_less=True)
        folded = Signal(len(outputs), name="folded", reset_less=True)
        m.d.comb += inputs.eq(driven)
        m.d.sync += [captured.eq(outputs),
                     folded.eq(Cat(driven[-1], folded[:-1]) ^ captured),
                     driven.eq(Cat(folded[-1], driven[:-1]))]
        m.d.comb += [self.uart_tx.eq(folded[-1]), self.led_heartbeat.eq(driven[-1]),
                     self.led_error.eq(captured[0])]
        return m
