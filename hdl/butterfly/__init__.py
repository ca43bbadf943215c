"""Splitter-network hardware (butterflies, dilated butterflies, multibutterflies).

The names below are the family's hooks for generation (:mod:`fatnet.hdl.gen`).
"""

from ...golden.butterfly.api import stuck_link_list
from ..controller import bit_time_zero, cleared_when
from ..family import destination_header
from .network import (ButterflyNetworkHW, SplitterSwitch, check_buildable, network_signature,
                      port_meaning, switch_key)

__all__ = ["ButterflyNetworkHW", "SplitterSwitch", "check_buildable", "size_text",
           "switch_key", "top", "network_signature", "port_meaning", "manifest_fields",
           "edges", "bist_header", "SPEC_FIELDS"]

#: The manifest's ``spec``: the options the network was built from, each documented.
SPEC_FIELDS = {
    "kind": "butterfly, dilated-butterfly or multibutterfly",
    "inputs": "N: inputs = outputs = rows of every level",
    "multiplicity": "d: edges per direction (up, down) of every switch",
    "modified": "the '*' network of Sec. IV (never built in hardware: always false here)",
    "seed": "the --seed given: the multibutterfly's random wiring, the random fault "
            "placement and the traffic patterns derive from it (a butterfly's and a "
            "dilated butterfly's wiring does not depend on it)",
    "wiring": "the --wiring option (random wiring rule; used by the multibutterfly only)",
    "wiring_attempt": "which retry of the seed gave the wiring (0 = first; > 0 only when "
                      "an expansion was required)",
    "faults": "the --faults count placed at build time (null: none given)",
    "fault_rate": "the --fault-rate given (null: none given)",
    "fault_rule": "the propagation rule of the built-in fault map (all = Sec. IV's, the "
                  "one the hardware computes)",
    "adversary": "the --adversary that placed the faults (null: random placement)",
    "expansion": "[alpha, beta] the wiring was required to have (null: none required)",
    "payload_bits": "data bits of every message",
    "link_stages": "s, the --link-stages given: registers on every switch-to-switch link "
                   "(into levels 1 .. lg N - 1), each way",
    "start_stages": "the --start-stages given: register stages of the start strobe's tree "
                    "to the switches (= start_latency_clocks)",
    "stuck_links": "the --stuck-link faults built in, sorted: [level, row, wire, value], "
                   "input wire `wire` of switch (level, row) held at `value` (0 or 1) whatever "
                   "drives it; no status register knows of it (empty: none)",
}


def size_text(circuit) -> str:
    """The network's size as the options name it, for messages."""
    return f"inputs {circuit.n_inputs} (multiplicity {circuit.network.multiplicity})"


def top(circuit, library=None) -> ButterflyNetworkHW:
    """The network top of a golden :class:`CircuitNetwork` (``library``: generation)."""
    return ButterflyNetworkHW(circuit, library=library)


def bist_header(circuit, source, destination):
    """The self-test's header (:meth:`~fatnet.hdl.family.HardwareFamily.bist_header`):
    the destination's lg N address bits, most significant first (0 = up, 1 = down), the
    same from every source and in every kind (dilated, multibutterfly)."""
    if len(destination) != circuit.depth:
        raise ValueError(f"the destination has lg N = {circuit.depth} bits, got "
                         f"{len(destination)}")
    return destination_header(destination)


def edges(circuit) -> list:
    """``edges[level][row]``: switch ``(level, row)``'s outgoing edges in slot order (up
    edges 0 .. d - 1, then down edges 0 .. d - 1), each ``[row', wire]``: the edge enters
    switch ``(level + 1, row')`` (output ``row'`` at the last level) as its input wire
    ``wire`` (the golden in-edge order, :meth:`SplitterNetwork.in_edge_rank`)."""
    net = circuit.network
    heads, rank = net.heads, circuit.rank
    out = []
    for i in range(circuit.depth):
        k = 2 * int(net.edges_per_group[i])
        out.append([[[int(heads[i, r, s]), int(rank[i, r, s])] for s in range(k)]
                    for r in range(circuit.n_inputs)])
    return out


def _spec(circuit) -> dict:
    """The options the network was built from (``circuit.spec`` when it was built from
    validated options, else what the network itself records)."""
    net = circuit.network
    spec = getattr(circuit, "spec", None)
    doc: dict[str, object] = {k: None for k in SPEC_FIELDS}
    doc.update(kind=net.kind, inputs=net.inputs, multiplicity=net.multiplicity,
               modified=net.modified, seed=net.seed, wiring=net.wiring,
               wiring_attempt=int(net.attempt), payload_bits=circuit.payload_bits,
               link_stages=circuit.link_stages, start_stages=circuit.start_stages,
               stuck_links=stuck_link_list(circuit),
               fault_rule=None if net.faults is None else net.faults.rule)
    if spec is not None:
        doc.update(seed=spec.seed, wiring=spec.wiring, faults=spec.faults,
                   fault_rate=spec.fault_rate, fault_rule=spec.fault_rule,
                   adversary=spec.adversary,
                   expansion=None if spec.alpha is None else [spec.alpha, spec.beta])
    return doc


#: The manifest's ``fault_rules``: what faulty and declared-faulty switches do, input
#: switches included, and why.
FAULT_RULES = (
    "A switch is faulty when its bit of the built-in fault map (faulty) or of "
    "fault_mask is set: it drives nothing and acknowledges nothing. A switch is "
    "declared faulty when all d up edges, or all d down edges, lead to faulty or "
    "declared-faulty switches (Sec. IV's rule; computed by the status registers, "
    "bad = faulty or declared). An edge into a bad switch is never claimed, so no "
    "message enters a bad interior switch. A declared-faulty input switch (level "
    "0) is not disabled: it keeps routing on the direction whose edges are good, "
    "and a message that needs the dead direction finds no free edge, is lost and "
    "is never acknowledged (its input retries it; the model reports it lost). "
    "The paper removes such inputs instead (Sec. III-A: 'we now erase all the "
    "remaining faulty switches', Theorem 3.4 counts only the surviving inputs; "
    "Sec. IV re-places faults until none reaches an input). Here the input is the "
    "terminal's only way in and it is not told it is declared faulty, so "
    "disabling it would also lose the messages that can still be delivered, "
    "without delivering any other; the model does the same (the cycle-exact "
    "model injects every message and masks only edges into bad switches).")


#: The manifest's ``fields`` after ``spec`` and its ``spec.<name>`` entries: what each
#: field of :func:`manifest_fields` means.
FIELD_MEANINGS = {
    "terms": "the terms every other field and text uses, each defined once",
    "levels": "lg N + 1: levels 0 .. lg N (switch levels and the outputs)",
    "switch_levels": "lg N: the levels that hold switches, 0 .. lg N - 1",
    "arrival_bit_time": "2 lg N + s (lg N - 1) (s = spec.link_stages): the "
                        "bit-time a message's M bit reaches its output",
    "ack_latency": "lg N + s (lg N - 1): bit-times from a destination's recv_ack "
                   "to its input's send_ack",
    "status_settle_clocks": "lg N + s (lg N - 1) (s = spec.link_stages): rising "
                            "clock edges after a fault_mask change (or reset) "
                            "until every status register holds its final value",
    "timing": "framing, latency, the delivery cycle, what the outputs carry after "
              "busy falls, and the status registers' settling",
    "fault_rules": "what faulty and declared-faulty switches do, input switches "
                   "included, and why",
    "edges": "edges[level][row] for level 0 .. lg N - 1: switch (level, row)'s "
             "2d outgoing edges in slot order (up edges 0 .. d - 1, then down edges "
             "0 .. d - 1; the switch claims the first free one of the direction), "
             "each [row', wire]: the edge enters switch (level + 1, row') as its "
             "input wire 'wire' (at level lg N - 1: output row' as "
             "term<row'>.recv[wire]). A switch's input wires are its incoming "
             "edges ordered by source row, then slot (level 0: the one wire "
             "term<row>.send); lower wires win arbitration. In the Verilog, "
             "switch (level, row) is instance sw_<level>_<row>, up edge j its "
             "up__data[j] (down: down__data[j]), input wire w its i__data[w]",
    "switch_modules": "every distinct switch module: input wires, edges per "
                      "direction, and registers on its incoming links (0 at "
                      "level 0)",
    "faulty": "[level, row] of the faults built in (the golden fault map); "
              "fault_mask adds more at run time",
    "declared_faulty": "[level, row] the golden propagation (rule all) of the "
                       "built-in faults declares faulty; the status registers "
                       "compute the same with fault_mask all 0",
}


def _terms(circuit) -> dict:
    """The manifest's ``terms``: every term the other fields use, defined once."""
    n, N, d = circuit.depth, circuit.n_inputs, circuit.network.multiplicity
    T = circuit.cycle_length
    return {
        "N": f"inputs = outputs = rows per level (= {N}); row r is 0 .. N - 1",
        "lg N": f"log2 N (= {n}): switch levels, address bits of a message, and "
                f"registers on every path (what the code calls depth)",
        "level": "0 .. lg N: levels 0 .. lg N - 1 hold switches (level 0: the input "
                 "switches, one per terminal's send wire); level lg N is the outputs "
                 "(the terminals' recv wires: no switch)",
        "interior switch": "a switch at levels 1 .. lg N - 1 (the only ones faults "
                           "are placed at and fault_mask can mark)",
        "(level, row)": "a switch, level first, everywhere in this manifest",
        "d": f"multiplicity (= {d}): edges per direction of every switch",
        "T": f"the delivery cycle's length in bit-times (= {T}) = cycle_length_bits",
    }


def _timing(circuit) -> str:
    """The manifest's ``timing``: framing, latency, the delivery cycle, what the outputs
    carry after busy falls, and the status registers' settling."""
    n, T, P, s = circuit.depth, circuit.cycle_length, circuit.payload_bits, circuit.link_stages
    # the latency rules in lg N (and s, when the links are pipelined)
    latency_rule = "lg N + s (lg N - 1)" if s else "lg N"
    arrival_rule = "2 lg N + s (lg N - 1)" if s else "2 lg N"
    return (
        f"one bit-time per clock; {bit_time_zero(circuit.start_stages)}. "
        f"Input r drives on term{{r}}.send: M = 1 at bit-time 0, then the lg N address "
        f"bits of the destination (MSB first; 0 = up, 1 = down), then the {P} payload "
        f"bits. Each switch level reads its bit in the bit-time after M, strips it "
        f"and registers its output"
        + (f"; each of the lg N - 1 = {n - 1} links between switch levels holds "
           f"s = {s} registers each way (link_stages), cleared with the switch it "
           f"enters" if s else "")
        + f": M reaches the output at bit-time {arrival_rule} = "
        f"{circuit.arrival} on the recv wire its path ends on, followed by the payload; "
        f"every bit after the address spends {latency_rule} = {circuit.ack_latency} "
        f"clocks in the network. A "
        f"destination raises recv_ack on that wire in the clock its M bit arrives and "
        f"holds it to the cycle's end; the input sees send_ack {latency_rule} = "
        f"{circuit.ack_latency} bit-times later (one register per level"
        + (", s per link" if s else "") + f"). A message "
        f"that finds no free edge is lost and never acknowledged. Delivery cycle T = "
        f"{arrival_rule} + max(payload_bits, {latency_rule}) + 1 = {T} bit-times; busy "
        f"is high for "
        f"bit-times 0 .. {T - 1}; bit_time then stays at {T}. After busy falls nothing "
        f"is cleared until the next start strobe: every connection made in the cycle "
        f"stays, so recv carries the connected input's send bits "
        f"{circuit.ack_latency} clocks later "
        f"and send_ack carries the destination's recv_ack {circuit.ack_latency} clocks "
        f"later (both 0 "
        f"if the inputs drive 0 and the destinations drop recv_ack); "
        f"{cleared_when(circuit.start_stages, 'switch')}"
        + (" and link register" if s else "") + ", so both read 0 from bit-time 0. "
        "Status: "
        "every switch has a status register <top>.bad_<level>_<row> (not a port); "
        "after fault_mask changes (or after reset) the registers settle backward one "
        "level per clock"
        + (f", and each pipelined link holds the status it carries back s = {s} "
           f"clocks more (those registers and the status registers reset to the "
           f"settled value under the built-in faults, so after reset with fault_mask "
           f"0 they hold it at once)" if s else "")
        + f", and hold their final value from the status_settle_clocks-th (= "
        f"{circuit.status_settle_clocks}th) rising edge on: change fault_mask only "
        f"while busy is low, then wait status_settle_clocks clocks before the start "
        f"strobe (the bundled testbenches wait one more). "
        f"A switch's faulty input takes effect at once (it drives and acknowledges "
        f"nothing).")


def manifest_fields(circuit, modules) -> dict:
    """The splitter network's part of the manifest: parameters, terms, timing, fault
    rules, every switch's edges, the distinct switch modules and the golden fault map."""
    faults = circuit.network.faults
    n = circuit.depth
    return {
        "spec": _spec(circuit),
        "terms": _terms(circuit),
        "levels": n + 1,
        "switch_levels": n,
        "arrival_bit_time": circuit.arrival,
        "ack_latency": circuit.ack_latency,
        "status_settle_clocks": circuit.status_settle_clocks,
        "timing": _timing(circuit),
        "fault_rules": FAULT_RULES,
        "edges": edges(circuit),
        "switch_modules": [{"module": name, "inputs": key[1], "edges": key[2],
                            "link_stages": key[3]}
                           for name, key in modules if key[0] == "switch"],
        "faulty": ([] if faults is None else
                   [[int(i), int(r)] for i, r in zip(*faults.faulty.nonzero())]),
        "declared_faulty": ([] if faults is None else
                            [[int(i), int(r)] for i, r in zip(*faults.declared.nonzero())]),
        "fields": {
            "spec": "the options the network was built from; spec.<name> below",
            **{f"spec.{k}": v for k, v in SPEC_FIELDS.items()},
            **FIELD_MEANINGS,
        },
    }
