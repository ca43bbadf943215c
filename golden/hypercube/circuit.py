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
"""

from __future__ import annotations

import numpy as np

from ..bitstream import int_to_bits
from ..cycle import CycleResult, Occupancy, Outcome, run_cycle
from ..errors import FatnetInputError, ParameterError
from ..runner import ChannelUsage, RunReport, drive_online
from .alg1 import check_order
from .bitserial import RouterChain, run_alg2, schedule
from .cube import Hypercube

__all__ = ["HARDWARE_ALGORITHMS", "HypercubeCircuit", "check_buildable"]

#: The algorithms built in hardware (``fatnet gen|sim hypercube --algorithm``).
HARDWARE_ALGORITHMS = ("alg1", "alg2")


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

    The hardware attributes (``chain``, ``payload_bits``, ``arrival``, ``ack_latency``,
    ``cycle_length``) exist once :func:`check_buildable` accepts the options; ``route``
    and ``info`` use the cube alone.
    """

    #: The family's folder in every layer (the hardware is ``fatnet.hdl.hypercube``).
    family = "hypercube"

    def __init__(self, k, algorithm: str = "alg1", message_bits=None, order=None):
        super().__init__(k)
        self.algorithm = algorithm
        self.message_bits = message_bits
        self.order_given = order
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
            raise ParameterError(f"message-bits must be an integer in [{low}, {k + 1024}] "
                                 f"for the {self.algorithm} hardware (k address bits and "
                                 f"{low - k} .. 1024 payload bits), got {M!r}")
        self.M = int(M)
        self.payload_bits = self.M - k
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

    def params(self) -> dict:
        return {"dimension": self.k, "algorithm": self.algorithm,
                "message_bits": self.M, "order": list(self.order)}

    # ---- one delivery cycle and whole runs
    def encode(self, src: int, dst: int, payload: int) -> list[int]:
        """The stream node ``src`` drives for a message to ``dst``: alg1 ``1``, the
        relative address, the payload; alg2 ``1``, the destination (MSB first), the
        payload (the message's data)."""
        if self.algorithm == "alg2":
            return [1] + int_to_bits(int(dst), self.k) + int_to_bits(int(payload),
                                                                      self.payload_bits)
        return self.chain.encode(src, dst, payload, self.payload_bits)

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
        stream); a node with two messages in one cycle is refused (it has one wire)."""
        out, busy = {}, {}
        for m in sorted(int(i) for i in idx):
            s = int(ms.src[m])
            if s in busy:
                raise FatnetInputError(f"message {m}: node {s} already sends message "
                                       f"{busy[s]} in this cycle (a node has one wire)")
            busy[s] = m
            out[m] = (0, self.encode(s, int(ms.dst[m]), int(ms.payload[m])))
        return out

    def simulate_cycle(self, ms, injections: dict) -> CycleResult:
        if self.algorithm == "alg2":
            return self._alg2_cycle(ms, injections)
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
            f"algorithm must be {' or '.join(HARDWARE_ALGORITHMS)} for gen and sim (the "
            f"e-cube and Valiant routers are not built yet), got {net.algorithm!r}")
    if net.chain is None:
        net._build()                   # raises the option's one-line error
