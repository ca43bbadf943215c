"""The hypercube's hardware: Algorithm 1's dimension routers at every node of the k-cube
(:mod:`.router`, :mod:`.network`).

The names below are the family's hooks for generation (:mod:`fatnet.hdl.gen`).
"""

from ...golden.hypercube.circuit import check_buildable
from .network import HypercubeNetworkHW, network_signature, port_meaning, router_key
from .router import DimensionRouter, router_signature

__all__ = ["DimensionRouter", "HypercubeNetworkHW", "check_buildable", "size_text", "top",
           "network_signature", "port_meaning", "manifest_fields", "router_key",
           "router_signature", "SPEC_FIELDS"]

#: The manifest's ``spec``: the options the network was built from, each documented.
SPEC_FIELDS = {
    "kind": "hypercube",
    "dimension": "k: 2^k nodes, dimension i joins node x and node x xor 2^i",
    "algorithm": "what the hardware routes: alg1 (Kuszmaul's Algorithm 1, the router "
                 "chain; the only one built so far)",
    "message_bits": "M: the k relative-address bits and the payload",
    "order": "the dimension each rank of routers handles, rank 0 first",
}


def size_text(net) -> str:
    """The network's size as the options name it, for messages."""
    return f"dimension {net.k}"


def top(net, library=None) -> HypercubeNetworkHW:
    """The network top of a golden :class:`HypercubeCircuit` (``library``: generation)."""
    return HypercubeNetworkHW(net, library=library)


def manifest_fields(net, modules) -> dict:
    """The k-cube's part of the manifest: parameters, terms, timing, wiring and the
    distinct router modules."""
    k, N, P, T = net.k, net.nodes, net.payload_bits, net.cycle_length
    return {
        "spec": {"kind": "hypercube", **net.params()},
        "terms": {
            "k": f"the dimension (= {k}); nodes x = 0 .. 2^k - 1 = {N - 1}",
            "rank": f"0 .. k - 1: a node's routers in chain order; rank r handles "
                    f"dimension order[r]",
            "P": f"payload bits of a message (= {P}) = M - k",
            "T": f"the delivery cycle's length in bit-times (= {T}) = cycle_length_bits",
        },
        "payload_bits": P,
        "arrival_bit_time": net.arrival,
        "ack_latency": net.ack_latency,
        "message_format": (
            f"node x drives on node{{x}}.send: M = 1 at bit-time 0, then k = {k} "
            f"relative-address bits (bit r is bit order[r] of src xor dst: 1 = cross "
            f"dimension order[r]), then the {P} payload bits (MSB first), bit p of the "
            f"stream during bit-time p"),
        "timing": (
            f"one bit-time per clock; bit-time 0 is the clock after the start strobe. "
            f"Rank r's router sees the message's M bit during bit-time 2r and its address "
            f"bit during 2r + 1, when it claims a register: its own node's (bit 0: stay) "
            f"or the neighbour's across dimension order[r] (bit 1: cross). The claimed "
            f"register drives a fresh M bit during 2r + 2, then every later bit one "
            f"bit-time after it arrived: M reaches node{{dst}}.recv at bit-time 2k = "
            f"{net.arrival}, the payload follows (every payload bit spends k = {k} clocks "
            f"in the network). Two claims of one register in one bit-time: the message "
            f"from the node whose bit order[r] is 0 keeps it; the other is lost, as is a "
            f"claim of a register already held (collision_<r>_<x> rises, not a port). A "
            f"destination raises recv_ack in the clock its M bit arrives and holds it to "
            f"the cycle's end; the source sees send_ack k = {k} bit-times later (one "
            f"register per router; the reverse wires carry whatever the destination "
            f"drives, so they also run a routing backwards). A lost message is never "
            f"acknowledged. Delivery cycle T = 2k + max(P, k) + 1 = {T} bit-times; busy "
            f"is high for bit-times 0 .. {T - 1}; bit_time then stays at {T}. After busy "
            f"falls nothing is cleared until the next start strobe: every connection made "
            f"stays, so recv carries the connected source's send bits k clocks later and "
            f"send_ack the destination's recv_ack k clocks later; the clock of the start "
            f"strobe clears every router, so both read 0 from bit-time 0."),
        "wiring": (
            "node x's rank-r router is instance rt_<r>_<x>; its o channel feeds rt_<r+1>_<x>'s "
            "i (rank 0's i is node<x>.send, rank k - 1's o is node<x>.recv); its xo feeds "
            "rt_<r>_<x xor 2^order[r]>'s xi"),
        "router_modules": [{"module": name, "high": key[1]} for name, key in modules
                           if key[0] == "router"],
        "fields": {
            "spec": "the options the network was built from; spec.<name> below",
            **{f"spec.{key}": v for key, v in SPEC_FIELDS.items()},
            "terms": "the terms every other field and text uses, each defined once",
            "payload_bits": "P = M - k: data bits after the address",
            "arrival_bit_time": "2k: the bit-time a message's M bit reaches its "
                                "destination",
            "ack_latency": "k: bit-times from a destination's recv_ack to its source's "
                           "send_ack",
            "message_format": "what a node drives on its send wire",
            "timing": "latency, arbitration, acknowledgment, the delivery cycle and what "
                      "the outputs carry after busy falls",
            "wiring": "how the routers are named and joined",
            "router_modules": "the distinct router modules: high is the node's bit of the "
                              "rank's dimension (it sets who wins a tie)",
        },
    }
