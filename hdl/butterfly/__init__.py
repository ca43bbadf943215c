"""Splitter-network hardware (butterflies, dilated butterflies, multibutterflies).

The names below are the family's hooks for generation (:mod:`fatnet.hdl.gen`).
"""

from .network import (ButterflyNetworkHW, SplitterSwitch, network_signature, port_meaning,
                      switch_key)

__all__ = ["ButterflyNetworkHW", "SplitterSwitch", "switch_key", "top", "network_signature",
           "port_meaning", "manifest_fields"]


def top(circuit, library=None) -> ButterflyNetworkHW:
    """The network top of a golden :class:`CircuitNetwork` (``library``: generation)."""
    return ButterflyNetworkHW(circuit, library=library)


def manifest_fields(circuit, modules) -> dict:
    """The splitter network's part of the manifest: parameters, timing, every switch's
    input-wire count and edges, and the golden fault map."""
    net = circuit.network
    faults = net.faults
    return {
        "spec": {"kind": net.kind, "inputs": net.inputs, "multiplicity": net.multiplicity,
                 "modified": net.modified, "seed": net.seed, "wiring": net.wiring,
                 "payload_bits": circuit.payload_bits},
        "levels": circuit.depth + 1,
        "timing": (
            f"one bit-time per clock; bit-time 0 is the clock after the start strobe. "
            f"Inputs drive M at bit-time 0, then {circuit.header_bits} address bits (MSB "
            f"first, 0 = up), then {circuit.payload_bits} payload bits. Each level reads "
            f"its bit, strips it and registers its output: M reaches the output at "
            f"bit-time {circuit.arrival}, every later bit one bit-time per level after "
            f"it left. A destination raises recv_ack in the clock its M bit arrives; "
            f"the input sees send_ack {circuit.ack_latency} bit-times later. Delivery "
            f"cycle = {circuit.arrival} + max(payload_bits, {circuit.ack_latency}) + 1 = "
            f"{circuit.cycle_length} bit-times."),
        "switch_modules": [{"module": name, "inputs": key[1], "edges": key[2]}
                           for name, key in modules if key[0] == "switch"],
        "faulty": ([] if faults is None else
                   [[int(i), int(r)] for i, r in zip(*faults.faulty.nonzero())]),
        "declared_faulty": ([] if faults is None else
                            [[int(i), int(r)] for i, r in zip(*faults.declared.nonzero())]),
        "fields": {
            "levels": "switch levels 0 .. levels - 1; level 0 holds the inputs, the last "
                      "the outputs (rows 0 .. N - 1)",
            "switch_modules": "every distinct switch: input wires and edges per direction",
            "faulty": "[level, row] of the faults built in (the golden fault map); "
                      "fault_mask adds more at run time",
            "declared_faulty": "[level, row] the golden propagation declares faulty; the "
                               "hardware computes the same in its status registers",
        },
    }
