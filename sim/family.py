"""What a network family's testbench package provides to the engines of this layer.

The planner and comparator (:mod:`fatnet.sim.plan`), the cocotb runner
(:mod:`fatnet.sim.cocotb_runner`), the Amaranth-simulator bench
(:mod:`fatnet.sim.amaranth_bench`), the waves (:mod:`fatnet.sim.waves`,
:mod:`fatnet.sim.wavedecode`) and the self-test (:mod:`fatnet.sim.bist`) never look a
family up and never branch on one: they are handed a :class:`SimFamily`, whose
``testbench`` (in practice the package ``fatnet.sim.<family>``) has the hooks below and
whose ``hardware`` those of :class:`~fatnet.hdl.family.HardwareFamily`. The registered
family objects of :mod:`fatnet.api.registry` are such objects; ``tests/test_families.py``
checks every one against these protocols, parameters included.

The hooks come in small protocols, one per concern. Every family has the required ones,
together :class:`TestbenchFamily`:

* :class:`Naming`: which port and wire a model waveform is, and names for reports;
* :class:`ModelStepping`: one delivery cycle of the model, checked and run;
* :class:`BuildKey`: what keys a simulator build (:class:`BuildParams`).

The optional capabilities are detected by type (``isinstance`` against the protocol), never
stubbed:

* :class:`Waves`: GTKWave groups and decoded message traces (``--waves``);
* :class:`RuntimeFaults`: a run-time fault mask and status registers (splitter networks);
  a family without it has no ``fault_mask`` port and no status to compare;
* :class:`SelfTest`: what the self-testing top's stuck-wire prediction needs (``fatnet
  board``);
* :class:`CycleBatches`: many independent delivery cycles through the family's batched
  model at once (the self-test's outcome table, :mod:`fatnet.sim.bisttable`); a family
  without it runs them one by one through :class:`ModelStepping`
  (:func:`run_cycle_batch`), the same outcomes, slower.

The endpoints and their names are not a hook: they are the network top's signature
(:func:`fatnet.hdl.signatures.endpoints`: ``leaf__3``, ``ext``, ``term__5``), the one
port map of the harness, the manifest, the planner and the waves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..golden.cycle import CycleResult
from ..golden.errors import ParameterError
from .waves import WaveGroup

if TYPE_CHECKING:  # the cocotb test imports this module in every simulator's process,
    # which needs no Amaranth (a fifth of a second a run to import)
    from ..hdl.family import HardwareFamily

__all__ = ["Naming", "ModelStepping", "BuildKey", "BuildParams", "TestbenchFamily",
           "Waves", "RuntimeFaults", "SelfTest", "SimFamily", "Hooks", "runtime_faults",
           "waves_of", "has_self_test", "self_test_of", "fault_mask_width", "OPTIONAL",
           "CycleBatch", "CycleBatches", "run_cycle_batch", "has_cycle_batches",
           "cycles_one_by_one"]


@runtime_checkable
class Naming(Protocol):
    """Ports, wires and names for reports; ``net`` is always the family's golden network,
    a port is an endpoint's name in the top's signature (``leaf__3``)."""

    def port_name(self, net, endpoint) -> str:
        """The port of a golden endpoint (a message's source or destination)."""
        ...

    def label(self, net, src, dst) -> str:
        """A message's route, for reports (``leaf__1 -> leaf__3``)."""
        ...

    def recv_port(self, net, key: tuple) -> tuple[str, int] | None:
        """The ``(port, wire)`` of the ``recv`` wire a model waveform key
        ``(*channel, wire)`` is, or None for an interior wire."""
        ...

    def ack_port(self, net, key: tuple) -> tuple[str, int] | None:
        """The same for the ``send_ack`` wires (acknowledgment waveforms)."""
        ...

    def site(self, net, port: str, kind: str, wire: int) -> str:
        """Which node or switch drives a port's wire, for reports."""
        ...


@runtime_checkable
class ModelStepping(Protocol):
    """One delivery cycle of the model."""

    def prepare(self, net, ms, idx, mask=None) -> Any:
        """Check one cycle of message indices (raise
        :class:`~fatnet.golden.errors.FatnetInputError` for a cycle the network cannot
        carry) and return what :meth:`simulate` needs; ``mask``: a run-time fault mask,
        for a family with :class:`RuntimeFaults` (None otherwise)."""
        ...

    def simulate(self, net, ms, prepared) -> CycleResult:
        """Run a prepared cycle through the model once."""
        ...


@dataclass(frozen=True)
class BuildParams:
    """What keys a simulator build of a network: its ``params`` (JSON-serialisable, also
    the ``network`` of ``fatnet board``'s board.json) and the model's ``sources`` (file
    paths whose text the build key hashes with the generator's)."""

    params: dict
    sources: tuple[str, ...]


@runtime_checkable
class BuildKey(Protocol):
    """What keys a simulator build."""

    def build_params(self, net) -> BuildParams:
        """The parameters and model sources that key a build of ``net``."""
        ...


@runtime_checkable
class TestbenchFamily(Naming, ModelStepping, BuildKey, Protocol):
    """Every testbench hook a family must have."""


@runtime_checkable
class Waves(Protocol):
    """Optional: GTKWave groups and decoded message traces (``fatnet sim --waves``)."""

    def wave_groups(self, net, top: str, core: str) -> list[WaveGroup]:
        """The groups shown (:class:`~fatnet.sim.waves.WaveGroup`): the ``controller``
        and ``terminals`` groups (:func:`~fatnet.sim.waves.controller_group`,
        :func:`~fatnet.sim.waves.terminal_group`) and the network's inside."""
        ...

    def hop_field_labels(self, net, src, dst) -> list[list[str]]:
        """Per hop of a message's route, a label per header bit it consumes."""
        ...

    def interior_wires(self, net) -> dict:
        """Model waveform key -> [(data signal, ack signal, bit)] of the interior signals
        that carry it (relative to the network top; empty: none placed)."""
        ...


@runtime_checkable
class RuntimeFaults(Protocol):
    """Optional: a run-time fault mask (the top's ``fault_mask`` input) and the status
    registers the model predicts under it."""

    def mask_width(self, net) -> int:
        """Bits of the run-time fault mask."""
        ...

    def mask_int(self, net, mask) -> int:
        """A fault mask as the integer the ``fault_mask`` port takes (refusing a wrong
        width in one line)."""
        ...

    def expected_status(self, net, mask) -> Any:
        """The settled status registers the model predicts under ``mask`` (None: no
        mask), as a bool array."""
        ...

    def status_settle_clocks(self, net) -> int:
        """Clocks the status registers take to settle after the fault mask changes."""
        ...

    def status_paths(self, net, top: str) -> list[str]:
        """The status registers' hierarchical names under the harness (``top``: the
        network top's instance name) in :meth:`expected_status`'s order, for the cocotb
        testbench."""
        ...

    def status_signals(self, net, dut) -> Any:
        """The status registers of an elaborated network top ``dut`` for the Amaranth
        simulator, nested as :meth:`expected_status` is."""
        ...

    def status_site(self, net, index: tuple) -> str:
        """What the status register at ``index`` (of :meth:`expected_status`) belongs to,
        for reports (``switch (level 2, row 5)``)."""
        ...


@runtime_checkable
class SelfTest(Protocol):
    """Optional: what the self-testing top (``fatnet board``) needs beyond the model."""

    def destination_acknowledges(self, net) -> bool:
        """Whether a source's ``send_ack`` is the destination's ``recv_ack`` passed
        back through the network (False: the network acknowledges by itself and
        ``recv_ack`` is not used), for the stuck-wire prediction."""
        ...


@dataclass
class CycleBatch:
    """What became of every message of a batch of delivery cycles (one entry per
    message, in the order given to :meth:`CycleBatches.run_cycles`).

    Attributes
    ----------
    delivered : (M,) bool
        Delivered to its destination's port.
    recv_wire : (M,) int
        The wire of that port's ``recv`` bundle it arrived on (-1: not delivered).
    ack_time : (M,) int
        Bit-time the source's acknowledgment rises, -1 for never.
    """

    delivered: Any
    recv_wire: Any
    ack_time: Any


@runtime_checkable
class CycleBatches(Protocol):
    """Optional: many independent delivery cycles through the family's batched model."""

    def batches_cycles(self, net) -> bool:
        """Whether :meth:`run_cycles` runs ``net``'s cycles in batches (a network whose
        model has no batched engine, e.g. one whose switch settings depend on the whole
        cycle, runs one cycle at a time through :class:`ModelStepping` instead)."""
        ...

    def run_cycles(self, net, cycle, src, dst) -> CycleBatch:
        """Every message ``src[i] -> dst[i]`` of delivery cycle ``cycle[i]`` (int arrays,
        ``cycle`` sorted; at most one message per source and cycle; messages of
        different cycles never meet) through the model, with the payloads of zeros (the
        network routes by the header alone), each cycle as :meth:`ModelStepping.simulate`
        runs it."""
        ...


#: The optional testbench capabilities, by name (for reports and the family checks).
OPTIONAL: dict[str, type] = {"waves": Waves, "runtime faults": RuntimeFaults,
                             "self-test": SelfTest, "cycle batches": CycleBatches}


@runtime_checkable
class SimFamily(Protocol):
    """A family as the testbench engines receive it: its hardware and testbench hooks."""

    @property
    def hardware(self) -> HardwareFamily: ...

    @property
    def testbench(self) -> TestbenchFamily: ...


@dataclass(frozen=True)
class Hooks:
    """A :class:`SimFamily` made of the two hook objects themselves, for code below the
    registry (the benchmarks, a test's toy family)."""

    hardware: HardwareFamily
    testbench: TestbenchFamily


#: id(testbench) -> (testbench, whether it has RuntimeFaults): a Protocol's isinstance
#: check inspects every member, and the planner asks once per cycle.
_HAS_FAULTS: dict[int, tuple[Any, bool]] = {}


def runtime_faults(family: SimFamily) -> RuntimeFaults | None:
    """The family's run-time fault hooks, or None for a family without them."""
    tb = family.testbench
    known = _HAS_FAULTS.get(id(tb))
    if known is None or known[0] is not tb:
        known = _HAS_FAULTS[id(tb)] = (tb, isinstance(tb, RuntimeFaults))
    return tb if known[1] else None  # type: ignore[return-value]  # checked above


def waves_of(family: SimFamily) -> Waves | None:
    """The family's wave hooks, or None for a family without them."""
    tb = family.testbench
    return tb if isinstance(tb, Waves) else None


def has_self_test(family: SimFamily) -> bool:
    """Whether the family's testbench has the self-test's hooks (:class:`SelfTest`)."""
    return isinstance(family.testbench, SelfTest)


def self_test_of(family: SimFamily, net) -> SelfTest:
    """The family's self-test hooks; a family without them is refused in one line."""
    tb = family.testbench
    if not isinstance(tb, SelfTest):
        raise ParameterError(f"the {net.family} family has no self-testing top (its "
                             f"testbench has no destination_acknowledges)")
    return tb


def fault_mask_width(net, family: SimFamily) -> int:
    """Bits of ``net``'s run-time fault mask (0 for a family without run-time faults)."""
    faults = runtime_faults(family)
    return 0 if faults is None else faults.mask_width(net)


def has_cycle_batches(family: SimFamily, net) -> bool:
    """Whether the family runs many cycles of ``net`` at once (:class:`CycleBatches`)."""
    tb = family.testbench
    return isinstance(tb, CycleBatches) and tb.batches_cycles(net)


def run_cycle_batch(family: SimFamily, net, cycle, src, dst) -> CycleBatch:
    """:meth:`CycleBatches.run_cycles` on the family's batched model, or, for a family
    or a network without one, each cycle through :class:`ModelStepping` in turn (the
    same result)."""
    import numpy as np
    tb = family.testbench
    cycle, src, dst = (np.asarray(a, dtype=np.int64) for a in (cycle, src, dst))
    if has_cycle_batches(family, net):
        return tb.run_cycles(net, cycle, src, dst)  # type: ignore[attr-defined]
    return cycles_one_by_one(tb, net, cycle, src, dst)


def cycles_one_by_one(tb: TestbenchFamily, net, cycle, src, dst) -> CycleBatch:
    """:func:`run_cycle_batch` through ``prepare`` and ``simulate``, a cycle at a time."""
    import numpy as np

    from ..golden.messages import MessageSet
    m = src.size
    out = CycleBatch(np.zeros(m, dtype=bool), np.full(m, -1, dtype=np.int64),
                     np.full(m, -1, dtype=np.int64))
    bounds = np.flatnonzero(np.r_[True, cycle[1:] != cycle[:-1], True]) if m else \
        np.zeros(0, dtype=np.int64)
    for start, stop in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        ms = MessageSet.from_pairs(src[start:stop].tolist(), dst[start:stop].tolist(),
                                   int(net.payload_bits), payload=[0] * (stop - start))
        res = tb.simulate(net, ms, tb.prepare(net, ms, list(range(stop - start))))
        for j, o in res.outcomes.items():
            if o.status == "delivered":
                out.delivered[start + j] = True
                port = tb.recv_port(net, (*o.path[-1].channel, o.path[-1].wire))
                out.recv_wire[start + j] = -1 if port is None else port[1]
            if o.ack_time is not None:
                out.ack_time[start + j] = o.ack_time
    return out
