"""The hypercube's hardware: Algorithm 1's dimension routers at every node of the k-cube
(:mod:`.router`, :mod:`.network`), the enumeration's serial adders (:mod:`.enumerator`),
Algorithm 2's nodes with their global sequencer (:mod:`.alg2`) and the store-and-forward
baselines, the e-cube router with small buffers and Valiant's two phases (:mod:`.ecube`).

The names below are the family's hooks for generation (:mod:`fatnet.hdl.gen`).
"""

from dataclasses import dataclass
from typing import Callable

from ...golden.hypercube.circuit import (Alg1Circuit, Alg2Circuit, StoreForwardCircuit,
                                         check_buildable)
from amaranth import Cat, Const

from ...golden.errors import ParameterError
from ..controller import controller_meaning
from ..family import destination_header
from ..signatures import EndpointSignature
from .alg2 import Alg2NetworkHW, Alg2Node
from .ecube import EcubeNetworkHW, EcubeRouter
from .network import HypercubeNetworkHW, network_signature, router_key
from .router import DimensionRouter, router_signature

__all__ = ["Alg2NetworkHW", "Alg2Node", "DimensionRouter", "EcubeNetworkHW", "EcubeRouter",
           "HypercubeNetworkHW", "check_buildable", "size_text", "top",
           "network_signature", "port_meaning", "manifest_fields", "router_key",
           "router_signature", "bist_header", "SPEC_FIELDS"]

#: The manifest's ``spec``: the options the network was built from, each documented.
SPEC_FIELDS = {
    "kind": "hypercube",
    "dimension": "k: 2^k nodes, dimension i joins node x and node x xor 2^i",
    "algorithm": "what the hardware routes: alg1 (Kuszmaul's Algorithm 1, the router "
                 "chain), alg2 (Algorithm 2, any partial permutation), ecube (the e-cube "
                 "router, store-and-forward with link queues of B messages) or valiant "
                 "(the same router, two phases through an intermediate node)",
    "message_bits": "M: alg1, the k relative-address bits and the payload; alg2, ecube "
                    "and valiant, the k-bit destination and the data (valiant's stream "
                    "and stored word carry the k-bit intermediate node besides: M + k "
                    "bits)",
    "order": "the dimension each rank of routers handles, rank 0 first (alg2, ecube, "
             "valiant: 0 .. k - 1)",
    "buffer": "ecube, valiant: B, messages per link queue",
    "steps": "ecube, valiant: store-and-forward steps per delivery cycle",
    "stuck_links": "alg1: the --stuck-link faults built in, sorted: [rank, node, wire, "
                   "value], node `node`'s link from its rank-(rank - 1) router's register "
                   "into its rank-`rank` router (wire 0) held at `value` (0 or 1) whatever "
                   "drives it; no router knows of it (empty: none)",
    "seed": "valiant: the seed of the intermediate nodes the harness and the model "
            "draw (the intermediates stream of the seed, fatnet.golden.seeds: "
            "integers(0, 2^k, messages)); the hardware "
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
    its algorithm's hardware (:data:`_DESIGNS`)."""
    check_buildable(net)
    return _design(net).network(net, library=library)


def manifest_fields(net, modules) -> dict:
    """The k-cube's part of the manifest: parameters, terms, timing, wiring and the
    distinct modules (its algorithm's, :data:`_DESIGNS`)."""
    return _design(net).manifest(net, modules)


def bist_header(net, source, destination):
    """The self-test's header (:meth:`~fatnet.hdl.family.HardwareFamily.bist_header`):
    its algorithm's rule (:data:`_DESIGNS`)."""
    check_buildable(net)
    if len(destination) != net.k:
        raise ValueError(f"the destination has k = {net.k} bits, got {len(destination)}")
    return _design(net).header(net, source, destination)


def _relative_address(net, source, destination):
    """Algorithm 1's header: the relative address, k bits, the r-th sent 1 where the
    message crosses dimension order[r] (bit order[r] of source XOR destination)."""
    crossings = Const(source, net.k) ^ destination
    return Cat(crossings[d] for d in reversed(net.order)), Const(net.k)


def _destination_address(net, source, destination):
    """Algorithm 2's and e-cube's header: the destination, k bits, most significant
    first. Valiant's stream carries each message's intermediate node first, drawn per
    message of the cycle, which no function of the source and destination gives."""
    if net.via_intermediate:
        raise ParameterError(f"algorithm {net.algorithm} cannot be self-tested: its "
                             f"header carries each message's random intermediate node "
                             f"(--algorithm alg1, alg2 or ecube)")
    return destination_header(destination)


#: What a node's acknowledgment wires mean where the network, not the destination,
#: acknowledges (every algorithm but Algorithm 1): it acknowledges a whole cycle.
_NETWORK_ACK = {
    "send_ack": "node {x}'s message was delivered: high from the bit-time the network "
                "has delivered every message of the cycle ({when}) to the cycle's end, "
                "at every node that injected (manifest: timing, idle_outputs)",
    "recv_ack": "not used by {algorithm} (ignored)",
}


def port_meaning(net, row: dict) -> str:
    """What one top-level port (a :func:`fatnet.hdl.signatures.port_rows` row) means."""
    if row["endpoint"] is None:
        meaning = controller_meaning(row["name"], net.cycle_length)
        if meaning is None:
            raise ValueError(f"{row['name']!r} is no port of the hypercube's top")
        return meaning
    wire, x = row["path"][-1], row["path"][1]
    if not net.destination_acknowledges and wire in _NETWORK_ACK:
        return _NETWORK_ACK[wire].format(x=x, when=_design(net).acknowledged,
                                         algorithm=net.algorithm)
    return EndpointSignature.MEANING[wire].format(who=f"node {x}")


def _alg1_manifest(net, modules) -> dict:
    """Algorithm 1's manifest fields."""
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
            f"claim of a register already held (collision_flags). A "
            f"destination raises recv_ack in the clock its M bit arrives and holds it to "
            f"the cycle's end; the source sees send_ack k = {k} bit-times later (one "
            f"register per router; the reverse wires carry whatever the destination "
            f"drives, so they also run a routing backwards; acknowledgment). A lost "
            f"message is never acknowledged. Delivery cycle T = 2k + max(P, k) + 1 = {T} "
            f"bit-times; busy is high for bit-times 0 .. {T - 1}; bit_time then stays at "
            f"{T} (idle_outputs: what the outputs carry then)."),
        **_alg1_rules(net),
        "wiring": (
            "node x's rank-r router is instance rt_<r>_<x>; its o channel feeds rt_<r+1>_<x>'s "
            "i (rank 0's i is node<x>.send, rank k - 1's o is node<x>.recv; a link of "
            "spec.stuck_links [r, x, 0, v] holds rt_<r>_<x>'s i data at v, its ack passes "
            "back); its xo feeds rt_<r>_<x xor 2^order[r]>'s xi"),
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
            "timing": "latency, arbitration, acknowledgment and the delivery cycle",
            **ALG1_RULE_FIELDS,
            "idle_outputs": IDLE_FIELD,
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
        "idle_outputs": _idle_outputs(net, (
            f"recv and send_ack read 0 from bit-time T = {T} (send_ack falls with busy), "
            f"every message buffer is empty and send is ignored, until the next start "
            f"strobe")),
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
            "idle_outputs": IDLE_FIELD,
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
    valiant = net.via_intermediate
    fields_text = ("the intermediate node's k bits, then the destination's k bits, then "
                   "the data" if valiant else "the destination's k bits, then the data")
    return {
        "spec": {"kind": "hypercube", **net.params()},
        "terms": {
            **_message_terms(net),
            "B": f"messages per link queue (= {B})",
            "h": f"header bits (= {h}): " + ("the intermediate node and the destination, "
                                             "2k" if valiant else "the destination, k"),
            "Wd": f"a stored message (= {Wd}) = h + P: " + (
                "Wd = M + k (the intermediate node, then the M message bits)" if valiant
                else "Wd = M (the M message bits)"),
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
            f"injection (send, bit-times 0 .. Wd = {Wd}; injection). In every step s >= 1 "
            f"the head of every non-empty link queue crosses its link (a valid bit, then "
            f"its word, LSB first), at bit-time s*S + Wd + 1 every node decides "
            f"(arbitration) and at s*S + Wd + 2 the senders of admitted heads pop them. "
            f"A message delivered in step s drives on node{{dst}}.recv 1 at bit-time "
            f"s*S + Wd + 2 (= {net.arrival} for step 0), then its M = {M} bits: the "
            f"destination's k bits and the data, MSB first. send_ack rises at every node "
            f"that injected a message at bit-time (c + 1)*S + 1, c the step of the "
            f"cycle's last delivery, when every message is delivered (the network is "
            f"empty at a step's start), and holds to the cycle's end; a cycle that ends "
            f"with messages still in the network (n too small" +
            (", or a deadlock of bounded queues: Valiant straight on can deadlock" if valiant
             else "") +
            f") acknowledges none, and its undelivered messages are lost (the model's "
            f"on-line runs send them again in the next cycle). recv_ack is not used. "
            f"Delivery cycle T = {T}; busy is high for bit-times 0 .. {T - 1}; bit_time "
            f"then stays at {T}; the next start strobe clears every queue."),
        "injection": _injection_rule(net),
        "arbitration": _arbitration_rule(net),
        "queue_registers": _queue_registers(net),
        "idle_outputs": _idle_outputs(net, (
            "recv reads 0 (the last delivery has left by then) and send is ignored; "
            "send_ack holds its value at the cycle's end (1 at every node that injected "
            "if every message was delivered, else 0 everywhere) and the queues keep what "
            "the cycle left in them, until the clock of the next start strobe clears "
            "them (send_ack reads 0 from bit-time 0)")),
        "step_bit_times": S,
        "steps": n,
        "wiring": (
            "node x is instance node_<x> of the one router module; its xo[d] (data: the "
            "link to node x xor 2^d; ack: that node's grant back) feeds node_<x xor "
            "2^d>'s xi[d]; inside a router, q<j>_s<p> is slot p of dimension j's link "
            "queue (slot 0 the head), q<j>_full its full slots, stage<i> the word "
            "arriving across dimension i, inj the injected word, dlv the delivery "
            "(queue_registers)"),
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
            "timing": "the steps, delivery, acknowledgment and the delivery cycle",
            "injection": "how step 0's injections enter the link queues",
            "arbitration": "what a node decides for the messages that reach it: delivery, "
                           "the queue each wants, and which are admitted",
            "queue_registers": "the link queues' registers inside a router and the bit "
                               "order of q<j>_full",
            "idle_outputs": IDLE_FIELD,
            "step_bit_times": "S: bit-times per step",
            "steps": "n: the steps of one delivery cycle",
            "wiring": "how the routers are named and joined",
            "node_modules": "the one router module",
        },
    }


# ---- the rule texts (docs/hypercube.md, "Timing and arbitration rules", states the same)
#: What ``idle_outputs`` documents, in every hypercube manifest.
IDLE_FIELD = ("what bit_time, busy, recv and send_ack carry outside a delivery cycle: "
              "before the first start strobe, and after busy falls until the next one")

#: Algorithm 1's rule fields and what they document.
ALG1_RULE_FIELDS = {
    "collision_flags": "which router's collision_<r>_<x> rises, and in which bit-time",
    "acknowledgment": "how recv_ack comes back as send_ack, and a late recv_ack",
    "order_rule": "which routings the rank order routes without collision",
}


def _idle_outputs(net, after: str) -> str:
    """Before the first start strobe (the same for every algorithm), then ``after``."""
    T = net.cycle_length
    quiet = ("while every send and recv_ack is 0 (the routers are not gated by busy: "
             "drive send 0 outside a cycle)" if net.destination_acknowledges else
             "(the sequencer is idle, so send is ignored)")
    return (f"after reset (or power-up: the Verilog's initial values) and before the "
            f"first start strobe every register holds its reset value (0; a sequencer, "
            f"where there is one, idle): bit_time reads 0 (not T = {T}) and busy 0, and recv "
            f"and send_ack read 0 {quiet}; after busy falls bit_time stays at T = {T}, "
            f"and {after}")


def _alg1_rules(net) -> dict:
    """Algorithm 1's collision flags, acknowledgment, outputs outside a cycle and order."""
    k, T = net.k, net.cycle_length
    late = 3 * k + 1
    when = (f"after busy falls (T - 1 = {T - 1}): the source still sees it, since the "
            f"circuit stays, but only after the cycle" if late > T - 1 else
            f"still inside the cycle (T - 1 = {T - 1})")
    return {
        "collision_flags": (
            "every router has a status register collision_<r>_<x> in the top module (a "
            "Verilog reg, not a port; synthesis removes it, as nothing reads it): node "
            "x's rank-r router, the one that owns node x's register after dimension "
            "order[r], which both messages of a tie claimed. Every message starts at "
            "bit-time 0, so every claim of rank r is made in bit-time 2r + 1, and the "
            "flag reads 1 from bit-time 2r + 2 on, to the cycle's end and after busy "
            "falls; the clock of the next start strobe clears it (it reads 0 from "
            "bit-time 0). One flag per collision, at the contested register's node: the "
            "lost message's earlier routers raise none. Tie: the message from the node "
            "whose bit order[r] is 0 keeps the register, so node x keeps it for its own "
            "staying message when its bit order[r] is 0 and gives it to the neighbour's "
            "crossing message when it is 1"),
        "acknowledgment": (
            f"recv_ack at a destination goes back along its message's circuit, one "
            f"register per router: the source's send_ack is the destination's recv_ack "
            f"delayed by exactly k = {k} clocks, bit for bit. The model, the comparison "
            f"and the packed harness raise recv_ack in the bit-time the M bit arrives "
            f"(2k = {2 * k}), combinationally, and hold it: send_ack rises at 3k = "
            f"{3 * k}. A destination that raises it one clock late (from a register loaded "
            f"from recv) makes send_ack rise at 3k + 1 = {late}, {when}; the comparison "
            f"with the model then fails"),
        "idle_outputs": _idle_outputs(net, (
            "nothing is cleared until the next start strobe: every connection made stays, "
            "so recv carries the connected source's send bits k clocks later and send_ack "
            "the destination's recv_ack k clocks later, and the collision flags hold; the "
            "clock of the start strobe clears every router, so both read 0 from bit-time "
            "0")),
        "order_rule": (
            f"with sigma(x) the node whose bit r is bit order[r] of x (order = "
            f"{list(net.order)}), a routing src -> dst is collision-free exactly when "
            f"sigma(src) -> sigma(dst) is collision-free in the order 0 .. k - 1; Theorem "
            f"1 (every semi-contraction, packings included, is collision-free) applies to "
            f"sigma(src) -> sigma(dst), not to src -> dst unless order is 0 .. k - 1"),
    }


def _injection_rule(net) -> str:
    Wd, S = net.word_bits, net.step_length
    target = ("its target (the intermediate node; if that is x, the destination)"
              if net.via_intermediate else "its target (the destination)")
    return (f"step 0 (bit-times 0 .. S - 1 = {S - 1}) carries nothing on any link: node x "
            f"shifts its stream from send into its injection register (inj) during "
            f"bit-times 0 .. Wd = {Wd}, and at bit-time Wd + 1 = {Wd + 1} its message is "
            f"the node's only candidate. It is delivered there if x is {target}; else it "
            f"is written into slot 0 of the queue of the lowest dimension in which x and "
            f"that target differ (from bit-time Wd + 2 = {Wd + 2} on). Every queue is "
            f"empty then, so every injection is admitted, and it crosses that link in "
            f"step 1. A node injects at most one message per cycle (one send wire)")


def _arbitration_rule(net) -> str:
    valiant = net.via_intermediate
    return (
        "in step s >= 1 every non-empty queue's head crosses its link (at most one "
        "message per directed link per step). At bit-time s*S + Wd + 1 each node "
        "decides for every message that arrived: a message at its target that is its "
        "final destination is delivered (never refused: a cycle's destinations are "
        "distinct)" + (
            "; a message that passes its destination in phase 1, on its way to its "
            "intermediate node, is not delivered there: it goes on and comes back in "
            "phase 2; a message at its intermediate node takes its destination as target "
            "and goes straight on (no buffer at the intermediate node)" if valiant else "") +
        f"; any other message wants the queue of the lowest dimension in which the node "
        f"and its target differ. The candidates for one queue are admitted lowest "
        f"arrival dimension first (the dimension they crossed to get here), the first r "
        f"of them, r = B - (the queue's occupancy at the step's start), B = {net.buffer}: "
        f"a head that leaves in this step frees its slot for the next step only. They "
        f"join the queue's tail in that order. A head not admitted stays at the head of "
        f"its queue, intact, and that queue sends nothing else in the step (head-of-line "
        f"blocking). The grant goes back on the link's reverse wire (xi[i].ack), and the "
        f"senders pop admitted heads at s*S + Wd + 2. The rules are "
        f"fatnet.golden.hypercube.store_forward's with buffer=B" +
        (", intermediate_buffer=False" if valiant else ""))


def _queue_registers(net) -> str:
    B, P, Wd = net.buffer, net.payload_bits, net.word_bits
    layout = (f"its current target's k bits at the top (the intermediate node in phase "
              f"1, then the destination), the destination's k bits, then the P = {P} data "
              f"bits" if net.via_intermediate else
              f"the destination's k bits at the top, then the P = {P} data bits")
    return (f"inside node_<x>, q<j>_s<p> (p = 0 .. B - 1 = {B - 1}) is slot p of "
            f"dimension j's link queue, slot 0 the head; a slot holds Wd = {Wd} bits: "
            f"{layout}. q<j>_full is B = {B} bits: bit p is slot p's full flag (bit 0, "
            f"the LSB, the head's). The queue fills from slot 0 up and pops by shifting "
            f"down, so q<j>_full is a thermometer: 2^n - 1 when the queue holds n "
            f"messages")


@dataclass(frozen=True)
class _Design:
    """One algorithm's hardware: the top's class, its manifest fields, where the
    network acknowledges a whole cycle the bit-time it does (None: the destination
    acknowledges), and the self-test's header (:func:`bist_header`)."""

    network: type
    manifest: Callable
    acknowledged: str | None
    header: Callable


#: Each circuit class's hardware (a subclass takes its nearest base's).
_DESIGNS = {
    Alg1Circuit: _Design(HypercubeNetworkHW, _alg1_manifest, None, _relative_address),
    Alg2Circuit: _Design(Alg2NetworkHW, _alg2_manifest,
                         "the deliver phase's first bit-time", _destination_address),
    StoreForwardCircuit: _Design(EcubeNetworkHW, _store_forward_manifest,
                                 "(c + 1)*S + 1, c the step of the last delivery",
                                 _destination_address),
}


def _design(net) -> _Design:
    """The hardware of ``net``'s algorithm."""
    return next(_DESIGNS[cls] for cls in type(net).__mro__ if cls in _DESIGNS)
