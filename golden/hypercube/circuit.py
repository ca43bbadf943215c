"""The k-cube as a circuit the hardware is built from: the golden network of
``fatnet gen|sim hypercube`` (the hardware hooks' ``net``).

One class for every verb: :class:`HypercubeCircuit` is a :class:`.cube.Hypercube` (what
``route`` and ``info`` read) that also records the options the hardware takes
(``--algorithm``, ``--message-bits``, ``--order``). Algorithms 1 and 2 are built in
hardware (:func:`check_buildable` refuses e-cube and Valiant in one line).

**Algorithm 2** (``algorithm="alg2"``): one delivery cycle routes a partial permutation:
the nodes shift their messages in (bit-times ``0 .. M``), the cycle-exact model
:func:`.bitserial.run_alg2` routes them on its fixed schedule (``S`` bit-times), and every
node holding a message drives it out from :attr:`arrival` ``= M + 1 + S`` on, when
``send_ack`` rises at every node that injected; ``phases`` is the sequencer's program
(:meth:`HypercubeCircuit._alg2_cycle`). Delivery cycle ``T = 2(M + 1) + S``.

**Algorithm 1**: the delivery cycle is the cycle-exact model's pass
(:class:`.bitserial.RouterChain`), with the acknowledgment every family's cycle has:

* node ``x`` drives on its ``send`` wire ``1`` (the M bit), the ``k`` relative-address bits
  of its message (``src ^ dst``, the bit of dimension ``order[r]`` at position ``r``), then
  ``P = M - k`` payload bits, stream index ``p`` during bit-time ``p``;
* rank ``r``'s router reads its address bit during bit-time ``2r + 1`` and claims a
  register (its own node's next router, or the neighbour's across dimension
  ``order[r]``); M reaches the destination's ``recv`` at bit-time ``2k`` (the arrival),
  followed by the payload;
* the destination raises ``recv_ack`` from the arrival; it comes back one register per
  rank, so the source sees ``send_ack`` ``k`` bit-times later;
* a message that loses a claim (a collision: two messages for one node's register in one
  bit-time; the one from the node whose bit ``order[r]`` is 0 keeps it) is lost and never
  acknowledged, and its source sends it again in the next cycle (:meth:`run`).

Delivery cycle ``T = 2k + max(P, k) + 1`` bit-times: the payload or the acknowledgment,
whichever ends later, and one more.

**e-cube and Valiant** (``algorithm="ecube"|"valiant"``): the store-and-forward baselines
of :mod:`.store_forward` built as they are specified there: link queues of ``buffer`` (B)
messages, back-pressure, the same admission and order rules, Valiant's second phase
straight on from the intermediate node (``intermediate_buffer=False``: the intermediate
field is the first address field, chosen by the source from ``seed``). The hardware runs
the model's steps on a fixed clock; with ``Wd`` the stored word (the header, k bits for
e-cube, 2k for Valiant: intermediate then destination, and the ``P = M - k`` data bits):

* step ``s`` takes bit-times ``s*S .. s*S + S - 1``, ``S = Wd + 3``: the queue heads cross
  their links bit-serially (a valid bit, then the ``Wd`` word bits), the receivers decide
  (bit-time ``s*S + Wd + 1``: deliver, or admit into a queue by the model's rule; the
  decision goes back on the link's reverse wire) and the senders of admitted heads pop
  them (``s*S + Wd + 2``). Step 0's "crossing" is the injection: node ``x`` drives ``1``
  and its ``Wd`` bits on ``send`` in bit-times ``0 .. Wd``;
* a message the model delivers in step ``s`` reaches ``recv`` at
  ``arrival(s) = s*S + Wd + 2``: ``1``, then its destination and data (M bits);
* ``send_ack`` rises at every node that injected, at ``(c + 1)*S + 1`` with ``c`` the
  step of the last delivery, when the whole cycle's traffic has been delivered (a global
  "network empty" flag: store-and-forward keeps no path to acknowledge a message
  along); a cycle that ends with messages in the network (``steps`` too small, or
  Valiant's deadlock) acknowledges none;
* the cycle runs ``steps`` steps (default ``k * 2^k`` for e-cube: every step moves a
  message and no message makes more than k hops, so every partial permutation is
  delivered; ``2k * 2^k`` for Valiant), ``T = steps*S + Wd + 3 + max(M, 2)``.

A cycle routes a partial permutation: a message whose destination already receives one
in the cycle waits for the next (:meth:`HypercubeCircuit.injections`).
"""

from __future__ import annotations

import numpy as np

from ..bitstream import bits_to_int, int_to_bits
from ..cycle import CycleResult, Occupancy, Outcome, run_cycle
from ..errors import FatnetInputError, ParameterError
from ..runner import ChannelUsage, RunReport, drive_online
from .alg1 import check_order
from .bitserial import RouterChain, run_alg2, schedule
from .cube import Hypercube
from ..seeds import check_seed, generator
from .store_forward import route as store_forward_route

__all__ = ["HARDWARE_ALGORITHMS", "HypercubeCircuit", "check_buildable", "run_blocks"]

#: The algorithms built in hardware (``fatnet gen|sim hypercube --algorithm``).
HARDWARE_ALGORITHMS = ("alg1", "alg2", "ecube", "valiant")
#: The store-and-forward hardware's largest link queue (``--buffer``).
MAX_HW_BUFFER = 16
#: The most steps one delivery cycle of the store-and-forward hardware runs (``--steps``).
MAX_HW_STEPS = 1 << 16


class HypercubeCircuit(Hypercube):
    """The k-cube with the options of its hardware.

    Parameters
    ----------
    k : int
        The dimension, ``[1, 20]``.
    algorithm : str
        What the hardware routes (``alg1`` is built; see :func:`check_buildable`).
    message_bits : int, optional
        M, the ``k`` address bits and the payload (default ``2k``).
    order : sequence of int, optional
        Algorithm 1's dimension order (default ``0 .. k - 1``).
    buffer : int, optional
        e-cube, Valiant: messages per link queue, B (default 1).
    steps : int, optional
        e-cube, Valiant: steps per delivery cycle (module docstring).
    seed : int, optional
        Valiant: the seed of the intermediate nodes (default 0).

    The hardware attributes (``chain``, ``payload_bits``, ``arrival``, ``ack_latency``,
    ``cycle_length``) exist once :func:`check_buildable` accepts the options; ``route``
    and ``info`` use the cube alone.
    """

    #: The family's folder in every layer (the hardware is ``fatnet.hdl.hypercube``).
    family = "hypercube"

    def __init__(self, k, algorithm: str = "alg1", message_bits=None, order=None,
                 buffer=None, steps=None, seed=None):
        super().__init__(k)
        self.algorithm = algorithm
        self.message_bits = message_bits
        self.order_given = order
        self.buffer_given, self.steps_given, self.seed_given = buffer, steps, seed
        self.chain = None
        if algorithm in HARDWARE_ALGORITHMS:
            try:
                self._build()
            except ParameterError:
                pass                   # check_buildable says why, in one line

    def _build(self) -> None:
        k = self.k
        M = 2 * k if self.message_bits is None else self.message_bits
        low = k + 1 if self.algorithm == "alg1" else k
        if isinstance(M, bool) or not isinstance(M, (int, np.integer)) or not (
                low <= M <= k + 1024):
            raise ParameterError(f"message_bits must be an integer in [{low}, {k + 1024}] "
                                 f"for the {self.algorithm} hardware (k address bits and "
                                 f"{low - k} .. 1024 payload bits), got {M!r}")
        self.M = int(M)
        self.payload_bits = self.M - k
        if self.algorithm not in ("ecube", "valiant"):
            for name, v in (("buffer", self.buffer_given), ("steps", self.steps_given)):
                if v is not None:
                    raise ParameterError(f"{name} must be left out for {self.algorithm} "
                                         f"(an ecube and valiant option)")
        if self.seed_given is not None and self.algorithm != "valiant":
            raise ParameterError(f"seed must be left out of the {self.algorithm} hardware "
                                 f"(it chooses Valiant's intermediate nodes)")
        if self.algorithm in ("ecube", "valiant"):
            return self._build_store_forward()
        if self.algorithm == "alg2":
            if self.order_given is not None and tuple(self.order_given) != tuple(range(k)):
                raise ParameterError(f"order must be left out for alg2 (its passes cross "
                                     f"the free dimensions in increasing order), got "
                                     f"{self.order_given!r}")
            self.order = tuple(range(k))
            sched = schedule(k, self.M)
            kinds = {1: "cross", 2: "enum2", 3: "pack3", 4: "enum4", 5: "pack5", 6: "rdv"}
            #: the sequencer's program: (kind, iteration, bit-times), non-empty phases
            self.phases = ([("inject", -1, self.M + 1)]
                           + [(kinds[st.number], st.iteration, st.length)
                              for st in sched.steps if st.length]
                           + [("deliver", -1, self.M + 1)])
            self.schedule_start = self.M + 1
            self.arrival = self.M + 1 + sched.total    # the deliver phase's first bit-time
            self.ack_latency = 0
            self.cycle_length = self.arrival + self.M + 1
            self.chain = RouterChain(k, self.order)
            return
        self.order = check_order(k, self.order_given)
        self.chain = RouterChain(k, self.order)
        self.arrival = 2 * k
        self.ack_latency = k
        self.cycle_length = self.arrival + max(self.payload_bits, self.ack_latency) + 1

    def _build_store_forward(self) -> None:
        k, N = self.k, self.nodes
        if self.order_given is not None:
            raise ParameterError(f"order must be left out for {self.algorithm} (its routes "
                                 f"cross dimensions in increasing order)")
        B = 1 if self.buffer_given is None else self.buffer_given
        if isinstance(B, bool) or not isinstance(B, (int, np.integer)) or not (
                1 <= B <= MAX_HW_BUFFER):
            raise ParameterError(f"buffer must be an integer in [1, {MAX_HW_BUFFER}] (messages "
                                 f"per link queue), got {B!r}")
        valiant = self.algorithm == "valiant"
        default_steps = (2 if valiant else 1) * k * N
        n = default_steps if self.steps_given is None else self.steps_given
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not (
                1 <= n <= MAX_HW_STEPS):
            raise ParameterError(f"steps must be an integer in [1, {MAX_HW_STEPS}] (steps "
                                 f"per delivery cycle), got {n!r}")
        self.seed = check_seed(0 if self.seed_given is None else self.seed_given) \
            if valiant else None
        self.buffer, self.steps = int(B), int(n)
        self.order = tuple(range(k))
        self.chain = RouterChain(k, self.order)
        #: header bits: the destination, and Valiant's intermediate before it
        self.header_bits = (2 if valiant else 1) * k
        self.word_bits = self.header_bits + self.payload_bits
        self.step_length = self.word_bits + 3
        self.arrival = self.word_bits + 2          # of a delivery in step 0
        self.ack_latency = 0
        self.cycle_length = self.steps * self.step_length + self.word_bits + 3 + max(
            self.M, 2)

    def params(self) -> dict:
        p = {"dimension": self.k, "algorithm": self.algorithm, "message_bits": self.M,
             "order": list(self.order)}
        if self.algorithm in ("ecube", "valiant"):
            p.update(buffer=self.buffer, steps=self.steps)
            if self.algorithm == "valiant":
                p["seed"] = self.seed
        return p

    def arrival_of_step(self, step: int) -> int:
        """e-cube, Valiant: the bit-time a message delivered in ``step`` reaches recv."""
        return int(step) * self.step_length + self.word_bits + 2

    def intermediates(self, ms) -> np.ndarray:
        """Valiant: message m's intermediate node, drawn uniformly from :attr:`seed` (one
        draw per message of the set, the same in every cycle it is sent in)."""
        return generator(self.seed, "intermediates").integers(0, self.nodes, size=len(ms),
                                                         dtype=np.int64)

    # ---- one delivery cycle and whole runs
    def encode(self, src: int, dst: int, payload: int) -> list[int]:
        """The stream node ``src`` drives for a message to ``dst``: alg1 ``1``, the
        relative address, the payload; the others ``1``, the destination (MSB first),
        the payload (the message's data); Valiant's stream puts its intermediate node
        after the ``1`` (:meth:`encode_valiant`)."""
        if self.algorithm != "alg1":
            return [1] + int_to_bits(int(dst), self.k) + int_to_bits(int(payload),
                                                                      self.payload_bits)
        return self.chain.encode(src, dst, payload, self.payload_bits)

    def encode_valiant(self, inter: int, dst: int, payload: int) -> list[int]:
        """Valiant's stream: ``1``, the intermediate node, the destination (MSB first
        each), the data."""
        return [1] + int_to_bits(int(inter), self.k) + self.encode(0, dst, payload)[1:]

    def check_messages(self, ms) -> None:
        n = self.nodes
        for m in range(len(ms)):
            for what, v in (("source", ms.src[m]), ("destination", ms.dst[m])):
                if not 0 <= int(v) < n:
                    raise FatnetInputError(f"message {m}: {what} must be a node in "
                                           f"[0, {n - 1}], got {int(v)}")
            p = int(ms.payload[m])
            if not 0 <= p < (1 << self.payload_bits):
                raise FatnetInputError(f"message {m}: payload must be in [0, "
                                       f"2^{self.payload_bits} - 1], got {p}")

    def injections(self, ms, idx) -> dict:
        """What the nodes drive for messages ``idx`` in one cycle: message -> (wire,
        stream); a node with two messages in one cycle is refused (it has one wire).
        e-cube and Valiant route partial permutations: a message to a destination that
        an earlier one of ``idx`` already goes to is left out (it waits for the next
        cycle)."""
        out, busy, taken = {}, {}, set()
        inter = self.intermediates(ms) if self.algorithm == "valiant" else None
        for m in sorted(int(i) for i in idx):
            s, d = int(ms.src[m]), int(ms.dst[m])
            if s in busy:
                raise FatnetInputError(f"message {m}: node {s} already sends message "
                                       f"{busy[s]} in this cycle (a node has one wire)")
            if self.algorithm in ("ecube", "valiant"):
                if d in taken:
                    continue
                taken.add(d)
            busy[s] = m
            if inter is not None:
                out[m] = (0, self.encode_valiant(int(inter[m]), d, int(ms.payload[m])))
            else:
                out[m] = (0, self.encode(s, d, int(ms.payload[m])))
        return out

    def simulate_cycle(self, ms, injections: dict) -> CycleResult:
        if self.algorithm == "alg2":
            return self._alg2_cycle(ms, injections)
        if self.algorithm in ("ecube", "valiant"):
            return self._store_forward_cycle(ms, injections)
        messages = {m: (int(ms.src[m]), int(ms.dst[m]),
                        self.chain.channel(0, int(ms.src[m]))) for m in injections}
        return run_cycle(self.chain, self.cycle_length, messages, injections)

    def _alg2_cycle(self, ms, injections: dict) -> CycleResult:
        """One delivery cycle of Algorithm 2: the messages shift in (bit-times 0 .. M),
        :func:`.bitserial.run_alg2` routes them bit by bit, and every node holding one
        drives it on ``recv`` from :attr:`arrival` on; ``send_ack`` rises then at every
        node that injected (nothing is lost: Theorem 3)."""
        idx = sorted(injections)
        src = np.array([int(ms.src[m]) for m in idx], dtype=np.int64)
        dst = np.array([int(ms.dst[m]) for m in idx], dtype=np.int64)
        data = [int(ms.payload[m]) for m in idx]
        run = run_alg2(self.k, src, dst, message_bits=self.M, data=data)
        outcomes = {}
        for j, m in enumerate(idx):
            stream = list(injections[m][1])
            o = Outcome(m, int(src[j]), int(dst[j]), "lost", stream)
            o.path.append(Occupancy(self.chain.channel(0, int(src[j])), 0, 0, 0))
            if run.delivered[j]:
                o.status = "delivered"
                o.path.append(Occupancy(self.chain.channel(self.k, int(dst[j])), 0,
                                        self.arrival, 0))
                o.hop_registers = [0, 0]
                o.arrival = o.ack_time = self.arrival
            else:
                o.lost_at = ("node", "buffer", -1, "lost in Algorithm 2's cycle model")
            outcomes[m] = o
        return CycleResult(self.cycle_length, outcomes, dict(injections))

    def _store_forward_cycle(self, ms, injections: dict) -> CycleResult:
        """One delivery cycle of the e-cube or Valiant hardware: :func:`.store_forward.route`
        with the hardware's options (``buffer``, Valiant straight on from the intermediate
        node taken from the stream, ``max_steps = steps``), on the hardware's clock
        (module docstring)."""
        idx = sorted(injections)
        k = self.k
        src = np.array([int(ms.src[m]) for m in idx], dtype=np.int64)
        dst = np.array([int(ms.dst[m]) for m in idx], dtype=np.int64)
        options = {}
        if self.algorithm == "valiant":
            options = {"intermediate": np.array(
                [bits_to_int(injections[m][1][1:1 + k]) for m in idx],
                dtype=np.int64), "intermediate_buffer": False}
        run = store_forward_route(k, src, dst, algorithm=self.algorithm, buffer=self.buffer,
                                  max_steps=self.steps, **options)
        drained = run.stopped == "delivered"
        ack = (run.steps + 1) * self.step_length + 1 if drained else self.cycle_length
        offset = k if self.algorithm == "valiant" else 0   # recv leaves the intermediate
        outcomes = {}
        for j, m in enumerate(idx):
            o = Outcome(m, int(src[j]), int(dst[j]), "lost", list(injections[m][1]))
            o.path.append(Occupancy(self.chain.channel(0, int(src[j])), 0, 0, 0))
            step = int(run.delivery_step[j])
            if step >= 0:
                o.status = "delivered"
                o.arrival = self.arrival_of_step(step)
                o.path.append(Occupancy(self.chain.channel(k, int(dst[j])), 0, o.arrival,
                                        offset))
                o.hop_registers = [ack - o.arrival, 0]
                o.ack_time = ack if drained else None
            else:
                why = ("a deadlock" if run.deadlock else f"the cycle's {self.steps} steps "
                       f"ended")
                o.lost_at = ("node", "queue", -1, f"still at node {int(run.final[j])} when "
                             f"{why}")
            outcomes[m] = o
        return CycleResult(self.cycle_length, outcomes, dict(injections))

    def run(self, ms, keep_results: bool = False, max_cycles: int = 1000) -> RunReport:
        """On-line: every node sends its oldest undelivered message each cycle; a message
        lost in a collision is sent again in the next cycle."""
        self.check_messages(ms)
        n = self.nodes
        per_src = np.bincount(ms.src, minlength=n) if len(ms) else np.zeros(n)
        per_dst = np.bincount(ms.dst, minlength=n) if len(ms) else np.zeros(n)
        load = float(max(per_src.max(), per_dst.max()))
        report = RunReport("online", len(ms), cycle_length=self.cycle_length,
                           lower_bound=int(np.ceil(load)), load_factor=load)
        usage = ChannelUsage(lambda ch: ch[1], [n] * (self.k + 1))
        return drive_online(report, usage, ms, lambda s: 1,
                            lambda idx: (self.simulate_cycle(ms, self.injections(ms, idx)),
                                         []),
                            keep_results, max_cycles, local_delivery=False)


def check_buildable(net: HypercubeCircuit) -> None:
    """Refuse, in one line, options the hardware does not build."""
    if net.algorithm not in HARDWARE_ALGORITHMS:
        raise ParameterError(
            f"algorithm must be one of {', '.join(HARDWARE_ALGORITHMS)} for gen and sim, "
            f"got {net.algorithm!r}")
    if net.chain is None:
        net._build()                   # raises the option's one-line error


def run_blocks(net: HypercubeCircuit, ms, blocks, max_cycles: int = 50) -> list[list]:
    """Delivery cycles for ``blocks`` of message indices of ``ms``, each block on-line on
    its own, block after block (as :meth:`HypercubeCircuit.run` runs one set: every
    source sends its oldest undelivered message each cycle, a message left out or lost
    goes again in the next). A cycle that delivers nothing ends its block, its messages
    lost: for Valiant a deadlock, which the same messages with the same intermediate
    nodes would repeat. Returns one list of :class:`~fatnet.golden.cycle.CycleResult`
    per block (for one testbench run: concatenate them)."""
    out = []
    for block in blocks:
        left, cycles = [int(m) for m in block], []
        while left and len(cycles) < max_cycles:
            firsts: dict = {}
            for m in left:
                firsts.setdefault(int(ms.src[m]), m)
            res = net.simulate_cycle(ms, net.injections(ms, sorted(firsts.values())))
            cycles.append(res)
            if not res.delivered:
                break
            done = set(res.delivered)
            left = [m for m in left if m not in done]
        out.append(cycles)
    return out
