"""The hypercube's hardware: Algorithm 1's dimension routers at every node of the k-cube
(:mod:`.router`, :mod:`.network`), the enumeration's serial adders (:mod:`.enumerator`),
Algorithm 2's nodes with their global sequencer (:mod:`.alg2`) and the store-and-forward
baselines, the e-cube router with small buffers and Valiant's two phases (:mod:`.ecube`).

The names below are the family's hooks for generation (:mod:`fatnet.hdl.gen`).
"""

from ...golden.hypercube.circuit import check_buildable
from .alg2 import Alg2NetworkHW, Alg2Node
from .ecube import EcubeNetworkHW, EcubeRouter
from .network import HypercubeNetworkHW, network_signature, port_meaning, router_key
from .router import DimensionRouter, router_signature

__all__ = ["Alg2NetworkHW", "Alg2Node", "DimensionRouter", "EcubeNetworkHW", "EcubeRouter",
           "HypercubeNetworkHW", "check_buildable", "size_text", "top",
           "network_signature", "port_meaning", "manifest_fields", "router_key",
           "router_signature", "SPEC_FIELDS"]

#: The manifest's ``spec``: the options the network was built from, each documented.
SPEC_FIELDS = {
    "kind": "hypercube",
    "dimension": "k: 2^k nodes, dimension i joins node x and node x xor 2^i",
    "algorithm": "what the hardware routes: alg1 (Kuszmaul's Algorithm 1, the router "
                 "chain), alg2 (Algorithm 2, any partial permutation), ecube (the e-cube "
                 "router, store-and-forward with link queues of B messages) or valiant "
                 "(the same router, two phases through an intermediate node)",
    "message_bits": "M: alg1, the k relative-address bits and the payload; alg2, ecube "
                    "and valiant, the k-bit destination and the data",
    "order": "the dimension each rank of routers handles, rank 0 first (alg2, ecube, "
             "valiant: 0 .. k - 1)",
    "buffer": "ecube, valiant: B, messages per link queue",
    "steps": "ecube, valiant: store-and-forward steps per delivery cycle",
    "seed": "valiant: the seed of the intermediate nodes the harness and the model "
            "draw (numpy default_rng(seed).integers(0, 2^k, messages)); the hardware "
            "takes each message's intermediate from its stream",
}


def _spec_fields(net) -> dict:
    """The documentation of the spec's fields this network has."""
    have = {"kind", *net.params()}
    return {f"spec.{key}": v for key, v in SPEC_FIELDS.items() if key in have}


def size_text(net) -> str:
    """The network's size as the options name it, for messages."""
    return f"dimension {net.k}"


def top(net, library=None):
    """The network top of a golden :class:`HypercubeCircuit` (``library``: generation):
    Algorithm 1's router chains, or Algorithm 2's network."""
    check_buildable(net)
    if net.algorithm == "alg2":
        return Alg2NetworkHW(net, library=library)
    if net.algorithm in ("ecube", "valiant"):
        return EcubeNetworkHW(net, library=library)
    return HypercubeNetworkHW(net, library=library)


def manifest_fields(net, modules) -> dict:
    """The k-cube's part of the manifest: parameters, terms, timing, wiring and the
    distinct modules (Algorithm 1's routers, or Algorithm 2's node)."""
    if net.algorithm == "alg2":
        return _alg2_manifest(net, modules)
    if net.algorithm in ("ecube", "valiant"):
        return _store_forward_manifest(net, modules)
    k, N, P, T = net.k, net.nodes, net.payload_bits, net.cycle_length
    return {
        "spec": {"kind": "hypercube", **net.params()},
        "terms": {
            "k": f"the dimension (= {k}); nodes x = 0 .. 2^k - 1 = {N - 1}",
            "rank": "0 .. k - 1: a node's routers in chain order; rank r handles "
                    "dimension order[r]",
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
            **_spec_fields(net),
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


def _message_terms(net) -> dict:
    """The terms k, M and P of Algorithm 2's and the baselines' manifests."""
    return {
        "k": f"the dimension (= {net.k}); nodes x = 0 .. 2^k - 1 = {net.nodes - 1}",
        "M": f"message bits (= {net.M}): the destination's k bits, then P data bits",
        "P": f"data bits of a message (= {net.payload_bits}) = M - k",
    }


def _alg2_manifest(net, modules) -> dict:
    from ...golden.hypercube.bitserial import schedule
    k, M, P, T = net.k, net.M, net.payload_bits, net.cycle_length
    sched = schedule(k, M)
    S, D = sched.total, net.arrival
    return {
        "spec": {"kind": "hypercube", **net.params()},
        "terms": {
            **_message_terms(net),
            "f": "an iteration's free dimensions: iteration i works in the subcubes "
                 "spanned by dimensions i + 1 .. k - 1, f = k - 1 - i",
            "S": f"the schedule's bit-times (= {S}) = 5k^2 + (3M + 1)k - 2M - 5",
            "T": f"the delivery cycle's length in bit-times (= {T}) = 2(M + 1) + S = "
                 f"cycle_length_bits",
        },
        "payload_bits": P,
        "arrival_bit_time": D,
        "ack_latency": 0,
        "message_format": (
            f"node x drives on node{{x}}.send: M = 1 at bit-time 0 (a node with no "
            f"message drives 0 throughout), then its message's M = {M} bits: the "
            f"destination's k = {k} bits (MSB first), then the {P} data bits (MSB first), "
            f"bit p of the stream during bit-time p; the messages of one cycle must be a "
            f"partial permutation (no destination twice)"),
        "timing": (
            f"one bit-time per clock; bit-time 0 is the clock after the start strobe. A "
            f"global sequencer runs the phases in 'phases': inject (bit-times 0 .. M = "
            f"{M}: each node shifts its message into a buffer), then Algorithm 2's "
            f"steps, iteration by iteration (the cycle-exact model's fixed schedule, S = "
            f"{S} bit-times from bit-time M + 1 = {M + 1}; docs/hypercube.md gives every "
            f"step's wires and bit-times), then deliver (bit-times {D} .. {T - 1}): every "
            f"node holding a message drives on node{{x}}.recv M = 1 at bit-time {D}, then "
            f"the message's M bits (destination, data), and every node that injected a "
            f"message raises node{{x}}.send_ack at bit-time {D} and holds it to the "
            f"cycle's end (Theorem 3: every message of a partial permutation is "
            f"delivered, none is retried). recv_ack is not used. Delivery cycle T = "
            f"2(M + 1) + S = {T}; busy is high for bit-times 0 .. {T - 1}; bit_time then "
            f"stays at {T}; the next start strobe begins a new cycle."),
        "phases": [[kind, i, length] for kind, i, length in net.phases],
        "wiring": (
            "node x is instance node_<x> of the one node module; its cx_out[d], en_out[d] "
            "and xo[d] feed node_<x xor 2^d>'s cx_in[d], en_in[d] and xi[d] (Step 1's "
            "wire, the enumeration's t, the router of dimension d); inside a node, "
            "rt_<d> and en_<d> are dimension d's router and enumeration cell"),
        "node_modules": [{"module": name} for name, key in modules if key[0] == "alg2node"],
        "fields": {
            "spec": "the options the network was built from; spec.<name> below",
            **_spec_fields(net),
            "terms": "the terms every other field and text uses, each defined once",
            "payload_bits": "P = M - k: data bits after the destination",
            "arrival_bit_time": "the deliver phase's first bit-time: M + 1 + S",
            "ack_latency": "0: send_ack rises with the deliver phase, at every node that "
                           "injected",
            "message_format": "what a node drives on its send wire",
            "timing": "the phases, delivery, acknowledgment and the delivery cycle",
            "phases": "the sequencer's program: [phase, iteration (-1: none), bit-times] "
                      "in order; phases cross, enum2, pack3, enum4, pack5, rdv are Steps "
                      "1 .. 6 (steps of length 0 are left out)",
            "wiring": "how the nodes are named and joined",
            "node_modules": "the one node module",
        },
    }


def _store_forward_manifest(net, modules) -> dict:
    M, P, T = net.M, net.payload_bits, net.cycle_length
    B, n, S, Wd, h = net.buffer, net.steps, net.step_length, net.word_bits, net.header_bits
    valiant = net.algorithm == "valiant"
    fields_text = ("the intermediate node's k bits, then the destination's k bits, then "
                   "the data" if valiant else "the destination's k bits, then the data")
    return {
        "spec": {"kind": "hypercube", **net.params()},
        "terms": {
            **_message_terms(net),
            "B": f"messages per link queue (= {B})",
            "h": f"header bits (= {h}): " + ("the intermediate node and the destination, "
                                             "2k" if valiant else "the destination, k"),
            "Wd": f"a stored message (= {Wd}) = h + P",
            "S": f"bit-times per step (= {S}) = Wd + 3",
            "n": f"steps per delivery cycle (= {n}) = spec.steps",
            "T": f"the delivery cycle's length in bit-times (= {T}) = n*S + Wd + 3 + "
                 f"max(M, 2) = cycle_length_bits",
        },
        "payload_bits": P,
        "arrival_bit_time": net.arrival,
        "ack_latency": 0,
        "message_format": (
            f"node x drives on node{{x}}.send: 1 at bit-time 0 (a node with no message "
            f"drives 0 throughout), then its {Wd} bits: {fields_text} (MSB first each), "
            f"bit p of the stream during bit-time p; the messages of one cycle must be a "
            f"partial permutation (no destination twice)"),
        "timing": (
            f"one bit-time per clock; bit-time 0 is the clock after the start strobe. "
            f"Step s (s = 0 .. n) takes bit-times s*S .. s*S + S - 1. Step 0 is the "
            f"injection (send, bit-times 0 .. Wd = {Wd}). In every step s >= 1 the head "
            f"of every non-empty link queue crosses its link (a valid bit, then its word, "
            f"bit-serial), and at bit-time s*S + Wd + 1 every node decides, by the rules "
            f"of fatnet.golden.hypercube.store_forward (docs/hypercube.md): a message that "
            f"reached its destination is delivered; " + (
                "a message that reached its intermediate node goes on to its destination "
                "(phase 2, straight on: no buffer at the intermediate node); " if valiant
                else "") +
            f"any other message wants the queue of the lowest dimension in which the "
            f"node and its target differ, and the candidates for one queue are admitted "
            f"lowest arrival dimension first while the queue had room at the step's "
            f"start (B = {B}); a head not admitted stays, and its queue sends nothing "
            f"else in that step. A message delivered in step s drives on node{{dst}}.recv "
            f"1 at bit-time s*S + Wd + 2 (= {net.arrival} for step 0), then its M = {M} "
            f"bits: the destination's k bits and the data, MSB first. send_ack rises at "
            f"every node that injected a message at bit-time (c + 1)*S + 1, c the step of "
            f"the cycle's last delivery, when every message is delivered (the network is "
            f"empty at a step's start), and holds to the cycle's end; a cycle that ends "
            f"with messages still in the network (n too small" +
            (", or a deadlock of bounded queues: Valiant straight on can deadlock" if valiant
             else "") +
            f") acknowledges none, and its undelivered messages are lost (the model's "
            f"on-line runs send them again in the next cycle). recv_ack is not used. "
            f"Delivery cycle T = {T}; busy is high for bit-times 0 .. {T - 1}; bit_time "
            f"then stays at {T}; the next start strobe clears every queue."),
        "step_bit_times": S,
        "steps": n,
        "wiring": (
            "node x is instance node_<x> of the one router module; its xo[d] (data: the "
            "link to node x xor 2^d; ack: that node's grant back) feeds node_<x xor "
            "2^d>'s xi[d]; inside a router, q<j>_s<p> is slot p of dimension j's link "
            "queue (slot 0 the head), q<j>_full its full slots, stage<i> the word "
            "arriving across dimension i, inj the injected word, dlv the delivery"),
        "node_modules": [{"module": name} for name, key in modules if key[0] == "ecube"],
        "fields": {
            "spec": "the options the network was built from; spec.<name> below",
            **_spec_fields(net),
            "terms": "the terms every other field and text uses, each defined once",
            "payload_bits": "P = M - k: data bits after the destination",
            "arrival_bit_time": "Wd + 2: the bit-time a message delivered in step 0 (to "
                                "its own node) reaches recv; step s adds s*S",
            "ack_latency": "0: send_ack rises for the whole cycle at once, at "
                           "(c + 1)*S + 1",
            "message_format": "what a node drives on its send wire",
            "timing": "the steps, arbitration, delivery, acknowledgment and the delivery "
                      "cycle",
            "step_bit_times": "S: bit-times per step",
            "steps": "n: the steps of one delivery cycle",
            "wiring": "how the routers are named and joined",
            "node_modules": "the one router module",
        },
    }
