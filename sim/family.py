"""What a network family's testbench package provides to the engines of this layer.

The planner and comparator (:mod:`fatnet.sim.plan`), the cocotb runner
(:mod:`fatnet.sim.cocotb_runner`), the Amaranth-simulator bench
(:mod:`fatnet.sim.amaranth_bench`) and the waves (:mod:`fatnet.sim.waves`,
:mod:`fatnet.sim.wavedecode`) never look a family up and never branch on one: they are
handed a :class:`SimFamily`, whose ``testbench`` has the members of
:class:`TestbenchFamily` (in practice the package ``fatnet.sim.<family>``) and whose
``hardware`` those of :class:`~fatnet.hdl.family.HardwareFamily`. The registered family
objects of :mod:`fatnet.api.registry` are such objects; ``tests/test_families.py``
checks that every one provides these members with these parameters.

The endpoints and their names are not a hook: they are the network top's signature
(:func:`fatnet.hdl.signatures.endpoints`: ``leaf__3``, ``ext``, ``term__5``), the one
port map of the harness, the manifest, the planner and the waves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ..hdl.family import HardwareFamily

__all__ = ["TestbenchFamily", "SimFamily", "Hooks"]


@runtime_checkable
class TestbenchFamily(Protocol):
    """The testbench hooks of one family; ``net`` is always that family's golden network,
    a port is an endpoint's name in the top's signature (``leaf__3``)."""

    def port_name(self, net, endpoint) -> str:
        """The port of a golden endpoint (a message's source or destination)."""

    def label(self, net, src, dst) -> str:
        """A message's route, for reports (``leaf__1 -> leaf__3``)."""

    def recv_port(self, net, key) -> tuple[str, int] | None:
        """The ``(port, wire)`` of the ``recv`` wire a model waveform key
        ``(*channel, wire)`` is, or None for an interior wire."""

    def ack_port(self, net, key) -> tuple[str, int] | None:
        """The same for the ``send_ack`` wires (acknowledgment waveforms)."""

    def destination_acknowledges(self, net) -> bool:
        """Whether a source's ``send_ack`` is the destination's ``recv_ack`` passed
        back through the network (False: the network acknowledges by itself and
        ``recv_ack`` is not used), for the self-testing top's stuck-wire prediction."""

    def site(self, net, port: str, kind: str, wire: int) -> str:
        """Which node or switch drives a port's wire, for reports."""

    def prepare(self, net, ms, idx, mask=None) -> Any:
        """Check one cycle of message indices (raise
        :class:`~fatnet.golden.errors.FatnetInputError` for a cycle the network cannot
        carry) and return what :meth:`simulate` needs."""

    def simulate(self, net, ms, prepared) -> Any:
        """Run a prepared cycle through the model once: a
        :class:`~fatnet.golden.cycle.CycleResult`."""

    def mask_width(self, net) -> int:
        """Bits of the run-time fault mask (0: the family has none)."""

    def mask_int(self, net, mask) -> int:
        """A fault mask as the integer the ``fault_mask`` port takes (refusing a wrong
        width in one line)."""

    def expected_status(self, net, mask) -> Any:
        """The settled status registers the model predicts under ``mask``, or None."""

    def status_settle_clocks(self, net) -> int:
        """Clocks the status registers take to settle after the fault mask changes
        (0 for a family without them)."""

    def status_paths(self, net, top: str) -> list[str]:
        """The status registers' hierarchical names under the harness (``top``: the
        network top's instance name) in :meth:`expected_status`'s order, for the cocotb
        testbench; empty for a family without them."""

    def status_signals(self, net, dut) -> Any:
        """The status registers of an elaborated network top ``dut`` for the Amaranth
        simulator, nested as :meth:`expected_status` is (None without them)."""

    def status_site(self, net, index: tuple) -> str:
        """What the status register at ``index`` (of :meth:`expected_status`) belongs to,
        for reports (``switch (level 2, row 5)``)."""

    def build_params(self, net) -> tuple[dict, list]:
        """(parameters, model source files) that key a simulator build."""

    def wave_groups(self, net, top: str, core: str) -> list:
        """GTKWave groups: ``[(title, [(path, width) or (subgroup, [...])])]``."""

    def hop_field_labels(self, net, src, dst) -> list[list[str]]:
        """Per hop of a message's route, a label per header bit it consumes (waves)."""

    def interior_wires(self, net) -> dict:
        """Model waveform key -> [(data signal, ack signal, bit)] of the interior signals
        that carry it (waves)."""


@runtime_checkable
class SimFamily(Protocol):
    """A family as the testbench engines receive it: its hardware and testbench hooks."""

    hardware: HardwareFamily
    testbench: TestbenchFamily


@dataclass(frozen=True)
class Hooks:
    """A :class:`SimFamily` made of the two hook objects themselves, for code below the
    registry (the benchmarks, a test's toy family)."""

    hardware: HardwareFamily
    testbench: TestbenchFamily
