"""The splitter networks' testbench hooks (:class:`~fatnet.sim.family.TestbenchFamily`;
butterflies, dilated butterflies, multibutterflies).

Ports are the top's terminals ``term__0`` .. ``term__{N-1}`` (named as the signature
names them, :func:`fatnet.hdl.signatures.endpoint_name`): terminal ``r`` sends on input
``r``'s one wire (channel ``(0, r)`` wire 0; its ``send_ack`` is that wire's reverse) and
receives on output ``r``'s delivery wires (channel ``(depth, r)``, one wire per incoming
edge, in the golden in-edge order).

Faults. A cycle may carry a run-time fault mask: ``(depth - 1) * N`` bits, bit
``(level - 1) * N + row`` marks interior switch ``(level, row)`` faulty on top of the
faults the network was built with. The model of that cycle is the network with the
placed faults and the mask's propagated together (:func:`masked_circuit`), and the
switches' settled status registers must equal that propagation (:func:`expected_status`).
"""

from __future__ import annotations

import numpy as np

from ...golden.butterfly.cyclemodel import masked_network, simulate_cycle
from ...golden.checks import is_integer
from ...golden.errors import ParameterError
from ...hdl.signatures import endpoint_name as port
from ..family import BuildParams
from ..masks import mask_refusal

__all__ = ["port_name", "label", "recv_port", "ack_port", "destination_acknowledges", "site",
           "prepare", "simulate", "batches_cycles", "run_cycles",
           "mask_width", "mask_bits", "mask_int", "masked_circuit", "expected_status",
           "status_settle_clocks", "status_paths", "status_signals", "status_site",
           "build_params"]


def port_name(net, endpoint: int) -> str:
    return port("term", int(endpoint))


def label(net, src: int, dst: int) -> str:
    return f"input {int(src)} -> output {int(dst)}"


def recv_port(net, key):
    level, row, wire = key
    return (port("term", row), wire) if level == net.depth else None


def destination_acknowledges(net) -> bool:
    return True          # the destination's recv_ack, back along the message's path


def ack_port(net, key):
    level, row, wire = key
    return (port("term", row), wire) if level == 0 else None


def _feeder(net, row: int, wire: int) -> str:
    """The last-level switch edge that drives output ``row``'s delivery wire ``wire``."""
    D = net.depth
    e = int(net.network.edges_per_group[D - 1])
    heads, rank = net.network.heads[D - 1], net.rank[D - 1]
    for src in range(net.n_inputs):
        for k in range(heads.shape[1]):
            if int(heads[src, k]) == row and int(rank[src, k]) == wire:
                return f"switch (level {D - 1}, row {src}) {'up' if k < e else 'down'} edge {k % e}"
    return "no switch"


def site(net, port_: str, kind: str, wire: int) -> str:
    row = int(port_.rsplit("__", 1)[1])
    if kind == "recv":
        return _feeder(net, row, wire)
    return f"switch (level 0, row {row}) input acknowledgment"


def mask_width(net) -> int:
    """Bits of the hardware's ``fault_mask``: one per interior switch."""
    return (net.depth - 1) * net.n_inputs


def mask_bits(net, mask) -> np.ndarray:
    """A fault mask as a (depth - 1, N) bool array. ``mask`` is an integer (bit
    ``(level - 1) * N + row``), or a sequence or array of exactly ``(depth - 1) * N`` bits
    (flat or (depth - 1, N)); anything wider or narrower is refused with a clear message."""
    width = mask_width(net)
    shape = (net.depth - 1, net.n_inputs)
    if is_integer(mask):
        why = mask_refusal(width, width, int(mask))
        if why:
            raise ParameterError(why)
        return np.array([(int(mask) >> b) & 1 for b in range(width)], dtype=bool).reshape(shape)
    arr = np.asarray(mask, dtype=bool)
    why = mask_refusal(width, arr.size)
    if why:
        raise ParameterError(why)
    return arr.reshape(shape)


def mask_int(net, mask) -> int:
    bits = mask_bits(net, mask).reshape(-1)
    return sum(1 << int(b) for b in np.flatnonzero(bits))


def _fixed(net) -> np.ndarray:
    f = net.network.faults
    return (f.faulty.copy() if f is not None
            else np.zeros((net.depth + 1, net.n_inputs), dtype=bool))


_cache: dict = {}


def masked_circuit(net, mask):
    """The golden model of a cycle run under ``mask``: the network with (placed faults |
    mask) propagated (the hardware's rule, Sec. IV "all"), as a :class:`CircuitNetwork`
    (:func:`~fatnet.golden.butterfly.cyclemodel.masked_network`, kept per mask)."""
    if mask is None or not mask_bits(net, mask).any():
        return net
    key = (id(net), mask_int(net, mask))
    hit = _cache.get(key)
    if hit is not None and hit[0] is net:
        return hit[1]
    circ = masked_network(net, mask_bits(net, mask))
    _cache[key] = (net, circ)
    return circ


def expected_status(net, mask):
    """(depth, N) bool: the settled ``bad`` register of every switch (levels 0..depth-1),
    faulty or declared faulty by the golden propagation of (placed faults | mask)."""
    return masked_circuit(net, mask).blocked[:net.depth].copy()


def status_settle_clocks(net) -> int:
    """Clocks the status registers take to settle after the mask changes (the golden
    network's, the manifest's ``status_settle_clocks``)."""
    return net.status_settle_clocks


def status_paths(net, top: str) -> list[str]:
    """Every switch's status register under the harness, level by level, row by row (the
    order of :func:`expected_status`)."""
    return [f"{top}.bad_{i}_{r}" for i in range(net.depth) for r in range(net.n_inputs)]


def status_signals(net, dut):
    """The status registers of the network top ``dut`` for a simulator testbench: its
    documented :attr:`~fatnet.hdl.butterfly.network.ButterflyNetworkHW.status`,
    ``[level][row]`` for levels 0..depth-1, in :func:`expected_status`'s order."""
    return dut.status


def status_site(net, index: tuple) -> str:
    level, row = index
    return f"switch (level {level}, row {row})"


def prepare(net, ms, idx, mask=None):
    circ = masked_circuit(net, mask)
    idx = sorted(int(i) for i in idx)
    seen = {}
    for m in idx:  # the model's own checks, before anything runs
        s, d = int(ms.src[m]), int(ms.dst[m])
        for what, v in (("source", s), ("destination", d)):
            if not 0 <= v < net.n_inputs:
                raise ParameterError(f"message {m}: {what} must be in [0, "
                                     f"{net.n_inputs - 1}], got {v}")
        if s in seen:
            raise ParameterError(f"message {m}: input {s} already sends in this cycle "
                                 f"(message {seen[s]}; an input has one wire)")
        seen[s] = m
    return circ, idx


def simulate(net, ms, prepared):
    circ, idx = prepared
    return simulate_cycle(circ, ms, idx)


def batches_cycles(net) -> bool:
    """Every butterfly-family network runs independent cycles in batches."""
    return True


def run_cycles(net, cycle, src, dst):
    """Many delivery cycles at once on the batched engine
    (:func:`fatnet.golden.butterfly.cyclebatch.run_cycles_streamed`), as
    :class:`~fatnet.sim.family.CycleBatch`."""
    from ...golden.butterfly.cyclebatch import DELIVERED, BatchedCircuit, run_cycles_streamed
    from ..family import CycleBatch
    bc = net.__dict__.get("_batched_circuit")
    if bc is None:
        bc = net.__dict__["_batched_circuit"] = BatchedCircuit(net)
    arrays = run_cycles_streamed(bc, cycle, src, dst)
    delivered = arrays.status == DELIVERED
    return CycleBatch(delivered, np.where(delivered, arrays.wires[:, net.depth], -1),
                      arrays.ack_time)


def build_params(net) -> BuildParams:
    import hashlib

    from ...golden.butterfly import cyclemodel, faults, topology
    from ...golden.butterfly.api import stuck_link_list
    g = net.network
    h = hashlib.sha1(np.ascontiguousarray(g.heads).tobytes())
    h.update(np.ascontiguousarray(_fixed(net)).tobytes())
    params = {"kind": g.kind, "inputs": g.inputs, "multiplicity": g.multiplicity,
              "modified": g.modified, "seed": g.seed, "wiring": g.wiring,
              "payload_bits": net.payload_bits, "link_stages": net.link_stages,
              "start_stages": net.start_stages,
              "stuck_links": stuck_link_list(net),
              "structure": h.hexdigest()}
    return BuildParams(params, (cyclemodel.__file__, faults.__file__, topology.__file__))
