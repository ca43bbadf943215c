"""The k-cube as a circuit the hardware is built from: the golden network of
``fatnet gen|sim hypercube`` (the hardware hooks' ``net``).

One class per algorithm the hardware routes, each a :class:`HypercubeCircuit` (a
:class:`.cube.Hypercube` with the hardware's timing and its model of one delivery cycle)
made from a frozen spec of its options, checked when the spec is made:
:class:`Alg1Circuit` (:class:`Alg1Spec`), :class:`Alg2Circuit` (:class:`Alg2Spec`),
:class:`EcubeCircuit` (:class:`EcubeSpec`) and :class:`ValiantCircuit`
(:class:`ValiantSpec`). :meth:`HypercubeCircuit.from_options` makes one from the
options as the command line gives them (None: left out), refusing in one line an option
the algorithm does not take or a value out of range; :data:`.api.ALGORITHMS` names the
circuit of each ``--algorithm``.

**Algorithm 2** (``algorithm="alg2"``): one delivery cycle routes a partial permutation:
the nodes shift their messages in (bit-times ``0 .. M``), the cycle-exact model
:func:`.bitserial.run_alg2` routes them on its fixed schedule (``S`` bit-times), and every
node holding a message drives it out from :attr:`arrival` ``= M + 1 + S`` on, when
``send_ack`` rises at every node that injected; ``phases`` is the sequencer's program
(:meth:`Alg2Circuit.simulate_cycle`). Delivery cycle ``T = 2(M + 1) + S``.

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

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from ..bitstream import bits_to_int, int_to_bits
from ..checks import check_int, is_integer
from ..cycle import CycleResult, Occupancy, Outcome, checked_stuck_links, run_cycle
from ..errors import FatnetInputError, ParameterError
from ..runner import ChannelUsage, RunReport, check_engine, drive_online
from .alg1 import check_order
from .bitserial import RouterChain, run_alg2, schedule
from .cube import Hypercube, check_dimension
from .cyclebatch import run_online
from .deadlock import DeadlockVerdict, check_deadlock
from ..seeds import check_seed, generator
from .store_forward import check_buffer, route as store_forward_route

__all__ = ["HypercubeCircuit", "Alg1Circuit", "Alg2Circuit", "StoreForwardCircuit",
           "EcubeCircuit", "ValiantCircuit", "CircuitSpec", "Alg1Spec", "Alg2Spec",
           "EcubeSpec", "ValiantSpec", "check_buildable", "run_blocks"]

#: The store-and-forward hardware's largest link queue (``--buffer`` of gen, sim, board).
MAX_HW_BUFFER = 16
#: The store-and-forward hardware's link queue when ``buffer`` is left out.
DEFAULT_HW_BUFFER = 1
#: The most steps one delivery cycle of the store-and-forward hardware runs (``--steps``).
MAX_HW_STEPS = 1 << 16
#: The most payload bits a message of the hardware carries besides its k address bits.
MAX_HW_PAYLOAD_BITS = 1024


# ------------------------------------------------------------------ the options, checked
@dataclass(frozen=True)
class CircuitSpec:
    """The options every hypercube hardware takes, checked when the spec is made: a spec
    that exists is one its hardware builds.

    Parameters
    ----------
    k : int
        The dimension, ``[1, 20]``.
    message_bits : int
        M: the ``k`` address bits and ``[least_payload_bits, 1024]`` payload bits.
    """

    k: int
    message_bits: int
    #: The name ``--algorithm`` and the manifest give the hardware.
    algorithm: ClassVar[str]
    #: The fewest payload bits a message carries.
    least_payload_bits: ClassVar[int] = 0
    #: The options beside k and M this algorithm takes (:meth:`from_options`).
    options: ClassVar[tuple[str, ...]] = ()
    if TYPE_CHECKING:
        # each spec has it (Alg1Spec's field, the others' 0 .. k - 1), not a field here
        order: tuple[int, ...]

    def __post_init__(self):
        k = check_dimension(self.k)
        low, M = k + self.least_payload_bits, self.message_bits
        if not is_integer(M) or not low <= M <= k + MAX_HW_PAYLOAD_BITS:
            raise ParameterError(
                f"message_bits must be an integer in [{low}, {k + MAX_HW_PAYLOAD_BITS}] for "
                f"the {self.algorithm} hardware (k address bits and {self.least_payload_bits}"
                f" .. {MAX_HW_PAYLOAD_BITS} payload bits), got {M!r}")

    @classmethod
    def from_options(cls, k, message_bits=None, order=None, buffer=None, steps=None,
                     seed=None, stuck_links=None):
        """The spec from the options as a caller gives them (None: left out, the
        default: ``M = 2k`` and each option's own; an empty ``stuck_links`` is left
        out), or one line naming the option that the algorithm does not take or whose
        value it does not build."""
        k = check_dimension(k)
        M = 2 * k if message_bits is None else message_bits
        given = {"order": order, "buffer": buffer, "steps": steps, "seed": seed,
                 "stuck_links": stuck_links or None}
        for name, value in given.items():
            if value is not None and name not in cls.options:
                cls._refuse(name, value, k)
        return cls(k, M, **cls._defaults(k, {n: given[n] for n in cls.options}))

    @classmethod
    def _refuse(cls, name: str, value, k: int) -> None:
        """Refuse option ``name``, which this algorithm does not take, in one line (an
        order of ``0 .. k - 1``, the one its routes have, is accepted)."""
        if name == "seed":
            raise ParameterError(f"seed must be left out of the {cls.algorithm} hardware "
                                 f"(it chooses Valiant's intermediate nodes)")
        if name == "order":
            if tuple(value) == tuple(range(k)):
                return                     # the order every algorithm but alg1 has
            raise ParameterError(f"order must be left out for {cls.algorithm} (its routes "
                                 f"cross the dimensions in increasing order), got {value!r}")
        if name == "stuck_links":
            raise ParameterError(f"stuck_links must be left out for {cls.algorithm}: a "
                                 f"link stuck inside the network is built into Algorithm "
                                 f"1's router chains only (--algorithm alg1)")
        raise ParameterError(f"{name} must be left out for {cls.algorithm} (an ecube and "
                             f"valiant option)")

    @classmethod
    def _defaults(cls, k: int, given: dict) -> dict:
        """The algorithm's own options, their defaults filled in."""
        return {}


class _IncreasingOrder:
    """A spec whose routes cross the dimensions in increasing order (every algorithm but
    Algorithm 1, which takes its order as an option)."""

    k: int      # the spec's field (CircuitSpec), declared for the type checker

    @property
    def order(self) -> tuple[int, ...]:
        """The dimension each rank handles, rank 0 first: ``0 .. k - 1``."""
        return tuple(range(self.k))


@dataclass(frozen=True)
class Alg1Spec(CircuitSpec):
    """Algorithm 1's router chains: ``order``, the dimension each rank of routers
    handles (a permutation of ``0 .. k - 1``); a message carries at least one payload
    bit beyond its relative address.

    ``stuck_links``, ``((rank, node, wire), value)`` pairs (sorted when checked): links
    inside the network held at ``value`` (0 or 1) whatever drives them, a fault no
    router knows of (``--stuck-link RANK:NODE:WIRE:0|1``): the link from node
    ``node``'s rank-``rank - 1`` router's register into its rank-``rank`` router, rank
    ``1 .. k - 1``, wire 0 (a node's link carries one wire). It is channel ``("rank",
    rank, node)`` of the model (:class:`.bitserial.RouterChain`; its
    :attr:`~fatnet.golden.cycle.Fabric.stuck_wires` say what a stuck wire does).
    """

    order: tuple[int, ...]
    stuck_links: tuple = ()
    algorithm = "alg1"
    least_payload_bits = 1
    options = ("order", "stuck_links")

    def __post_init__(self):
        super().__post_init__()
        if not isinstance(self.order, tuple) or check_order(self.k, self.order) != self.order:
            raise ParameterError(f"order must be a tuple of the dimensions 0..{self.k - 1}, "
                                 f"got {self.order!r}")
        object.__setattr__(self, "stuck_links",
                           checked_stuck_links(self.stuck_links, self._check_stuck_link))

    def _check_stuck_link(self, rank, node, wire, value) -> tuple:
        """``((rank, node, wire), value)`` of a stuck link, checked; one line else."""
        k = self.k
        if k < 2:
            raise ParameterError(f"stuck_links needs a link between two routers: the "
                                 f"{k}-cube has none (dimension >= 2)")
        check_int("stuck_links rank", rank, 1, k - 1,
                  f"in [1, {k - 1}] (the link into a node's rank-r router from its "
                  f"rank-(r - 1) router)", numpy=False)
        check_int("stuck_links node", node, 0, (1 << k) - 1, numpy=False)
        check_int("stuck_links wire", wire, 0, 0, "0 (a node's link has one wire)",
                  numpy=False)
        if value not in (0, 1) or isinstance(value, bool):
            raise ParameterError(f"stuck_links value must be 0 or 1, got {value!r}")
        return (int(rank), int(node), int(wire)), int(value)

    @classmethod
    def _defaults(cls, k: int, given: dict) -> dict:
        links = given["stuck_links"] or {}
        return {"order": check_order(k, given["order"]),
                "stuck_links": tuple(dict(links).items())}


@dataclass(frozen=True)
class Alg2Spec(_IncreasingOrder, CircuitSpec):
    """Algorithm 2's nodes: k and M only (its passes cross the free dimensions in
    increasing order)."""

    algorithm = "alg2"


@dataclass(frozen=True)
class EcubeSpec(_IncreasingOrder, CircuitSpec):
    """The e-cube router: ``buffer`` messages per link queue, ``[1, 16]`` (default 1),
    and ``steps`` store-and-forward steps per delivery cycle, ``[1, 2^16]`` (default
    ``k * 2^k``: every partial permutation is delivered)."""

    buffer: int
    steps: int
    algorithm = "ecube"
    options: ClassVar[tuple[str, ...]] = ("buffer", "steps")
    #: Default steps per delivery cycle, in units of ``k * 2^k``.
    steps_per_k_nodes: ClassVar[int] = 1

    def __post_init__(self):
        super().__post_init__()
        check_buffer(self.buffer, MAX_HW_BUFFER)
        n = self.steps
        if not is_integer(n) or not 1 <= n <= MAX_HW_STEPS:
            raise ParameterError(f"steps must be an integer in [1, {MAX_HW_STEPS}] (steps "
                                 f"per delivery cycle), got {n!r}")

    @classmethod
    def _defaults(cls, k: int, given: dict) -> dict:
        steps = cls.steps_per_k_nodes * k << k if given["steps"] is None else given["steps"]
        return {"buffer": DEFAULT_HW_BUFFER if given["buffer"] is None else given["buffer"],
                "steps": steps}


@dataclass(frozen=True)
class ValiantSpec(EcubeSpec):
    """Valiant's two phases on the e-cube router: e-cube's options (steps default
    ``2k * 2^k``) and ``seed``, the seed of the intermediate nodes (default 0)."""

    seed: int
    algorithm = "valiant"
    options = ("buffer", "steps", "seed")
    steps_per_k_nodes = 2

    def __post_init__(self):
        super().__post_init__()
        check_seed(self.seed)

    @classmethod
    def _defaults(cls, k: int, given: dict) -> dict:
        return {**super()._defaults(k, given),
                "seed": 0 if given["seed"] is None else int(given["seed"])}


# --------------------------------------------------------------------------- the circuits
class HypercubeCircuit(Hypercube):
    """The k-cube with the hardware of one algorithm: its options (:attr:`spec`), its
    timing and its model of one delivery cycle (each algorithm's class; module
    docstring). Made from a spec (``Alg1Circuit(Alg1Spec(...))``) or from the options as
    a caller gives them (:meth:`from_options`, :func:`circuit`).

    Attributes
    ----------
    spec : CircuitSpec
        The options, checked.
    M, payload_bits : int
        Message bits and the payload's ``M - k``.
    order : tuple of int
        The dimension each rank handles.
    chain : RouterChain
        The channels the cycle results name.
    arrival, ack_latency, cycle_length : int
        The delivery cycle's timing in bit-times.
    """

    #: The family's folder in every layer (the hardware is ``fatnet.hdl.hypercube``).
    family = "hypercube"
    #: The spec this algorithm's circuit is made from.
    spec_class: ClassVar[type[CircuitSpec]]
    #: Bits of one delivery cycle (set by each circuit from its spec).
    cycle_length: int
    #: Whether a destination acknowledges its message itself (recv_ack comes back as
    #: send_ack), rather than the network acknowledging a whole cycle.
    destination_acknowledges: ClassVar[bool] = False
    #: Whether a delivery cycle routes partial permutations only (random destinations,
    #: which repeat, are not this algorithm's traffic on a board).
    permutations_only: ClassVar[bool] = True
    #: Whether a message goes through an intermediate node (Valiant): its header is the
    #: intermediate node, then the destination.
    via_intermediate: ClassVar[bool] = False

    def __init__(self, spec: CircuitSpec):
        if type(spec) is not self.spec_class:
            raise TypeError(f"{type(self).__name__} is made from a "
                            f"{self.spec_class.__name__}, got {spec!r}")
        super().__init__(spec.k)
        self.spec = spec
        self.M = spec.message_bits
        self.payload_bits = self.M - self.k
        self.order = spec.order
        self.chain = RouterChain(self.k, self.order)

    @classmethod
    def from_options(cls, k, **options) -> HypercubeCircuit:
        """The circuit of ``k`` and the options (:meth:`CircuitSpec.from_options`)."""
        return cls(cls.spec_class.from_options(k, **options))

    @property
    def algorithm(self) -> str:
        return self.spec.algorithm

    def __repr__(self):
        return f"{type(self).__name__}({self.spec!r})"

    def params(self) -> dict:
        return {"dimension": self.k, "algorithm": self.algorithm, "message_bits": self.M,
                "order": list(self.order)}

    @property
    def stuck_wires(self) -> dict:
        """``("rank", rank, node, wire)`` -> 0 or 1: the channel wires of the model held
        at a value (:class:`~fatnet.golden.cycle.StuckWires`; Algorithm 1's
        ``stuck_links``, the other algorithms none)."""
        return dict(self.chain.stuck_wires)

    # ---- one delivery cycle and whole runs
    def encode(self, src: int, dst: int, payload: int) -> list[int]:
        """The stream node ``src`` drives for a message to ``dst``: ``1``, the
        destination (MSB first), the payload (the message's data)."""
        return [1] + int_to_bits(int(dst), self.k) + int_to_bits(int(payload),
                                                                  self.payload_bits)

    def check_messages(self, ms) -> None:
        """Every message names two nodes and a payload of :attr:`payload_bits` bits, or
        one line naming the first that does not."""
        n = self.nodes
        for m in range(_first_suspect(ms, n, self.payload_bits), len(ms)):
            for what, v in (("source", ms.src[m]), ("destination", ms.dst[m])):
                if not 0 <= int(v) < n:
                    raise FatnetInputError(f"message {m}: {what} must be a node in "
                                           f"[0, {n - 1}], got {int(v)}")
            p = int(ms.payload[m])
            if not 0 <= p < (1 << self.payload_bits):
                raise FatnetInputError(f"message {m}: payload must be in [0, "
                                       f"2^{self.payload_bits} - 1], got {p}")

    def _stream_maker(self, ms):
        """Message index -> the stream its source drives (:meth:`encode`)."""
        return lambda m: self.encode(int(ms.src[m]), int(ms.dst[m]), int(ms.payload[m]))

    def _waits(self, dst: int, taken: set) -> bool:
        """Whether a message to ``dst`` waits for the next cycle, ``taken`` the
        destinations of the cycle's earlier messages (every algorithm but the
        store-and-forward ones: never)."""
        return False

    def injections(self, ms, idx) -> dict:
        """What the nodes drive for messages ``idx`` in one cycle: message -> (wire,
        stream); a node with two messages in one cycle is refused (it has one wire).
        e-cube and Valiant route partial permutations: a message to a destination that
        an earlier one of ``idx`` already goes to is left out (it waits for the next
        cycle)."""
        out: dict[int, tuple] = {}
        busy: dict[int, int] = {}
        taken: set[int] = set()
        stream = self._stream_maker(ms)
        for m in sorted(int(i) for i in idx):
            s, d = int(ms.src[m]), int(ms.dst[m])
            if s in busy:
                raise FatnetInputError(f"message {m}: node {s} already sends message "
                                       f"{busy[s]} in this cycle (a node has one wire)")
            if self._waits(d, taken):
                continue
            busy[s] = m
            out[m] = (0, stream(m))
        return out

    def simulate_cycle(self, ms, injections: dict) -> CycleResult:
        raise NotImplementedError

    def online_report(self, ms) -> RunReport:
        """An on-line run's report before its first cycle: its load and lower bound."""
        n = self.nodes
        per_src = np.bincount(ms.src, minlength=n) if len(ms) else np.zeros(n)
        per_dst = np.bincount(ms.dst, minlength=n) if len(ms) else np.zeros(n)
        load = float(max(per_src.max(), per_dst.max()))
        return RunReport("online", len(ms), cycle_length=self.cycle_length,
                         lower_bound=int(np.ceil(load)), load_factor=load)

    def channel_usage(self) -> ChannelUsage:
        """Wire-cycles per rank of channels (``("rank", r, x)``: level ``r``)."""
        return ChannelUsage(lambda ch: ch[1], [self.nodes] * (self.k + 1))

    def run(self, ms, keep_results: bool = False, max_cycles: int = 1000,
            engine: str = "batched", progress=None) -> RunReport:
        """On-line: every node sends its oldest undelivered message each cycle; a message
        lost in a collision is sent again in the next cycle. ``engine``, one of
        :data:`~fatnet.golden.runner.ENGINES`: ``"batched"`` (:func:`.cyclebatch.run_online`)
        or ``"scalar"`` (the specification,
        :func:`~fatnet.golden.runner.drive_online` with :meth:`simulate_cycle`);
        ``progress(done, total, what)`` is told the messages delivered as the batched
        engine runs."""
        check_engine(engine)
        if engine == "batched":
            return run_online(self, ms, keep_results, max_cycles, progress)
        self.check_messages(ms)
        report, usage = self.online_report(ms), self.channel_usage()
        return drive_online(report, usage, ms, lambda s: 1,
                            lambda idx: (self.simulate_cycle(ms, self.injections(ms, idx)),
                                         []),
                            keep_results, max_cycles, local_delivery=False)

    def _port_outcome(self, m: int, src: int, dst: int, stream) -> Outcome:
        """Message ``m``'s outcome, lost until its delivery is recorded, entering at its
        source's send port (Algorithm 2's and the baselines' cycles name the two ports
        only)."""
        o = Outcome(m, src, dst, "lost", list(stream))
        o.path.append(Occupancy(self.chain.channel(0, src), 0, 0, 0))
        return o


def _first_suspect(ms, nodes: int, payload_bits: int) -> int:
    """The first message that may name a node outside ``[0, nodes - 1]`` or a payload of
    more than ``payload_bits`` bits (``len(ms)`` if none), found with numpy where the
    payloads fit an int64, else 0 (every message is checked)."""
    if len(ms) == 0 or payload_bits > 62:
        return 0
    try:
        pay = np.asarray(ms.payload, dtype=np.int64)
    except OverflowError:
        return 0
    src, dst = np.asarray(ms.src), np.asarray(ms.dst)
    bad = ((src < 0) | (src >= nodes) | (dst < 0) | (dst >= nodes) | (pay < 0)
           | (pay >= (1 << payload_bits)))
    return int(np.argmax(bad)) if bad.any() else len(ms)


class Alg1Circuit(HypercubeCircuit):
    """Algorithm 1's router chains (module docstring)."""

    spec_class = Alg1Spec
    destination_acknowledges = True
    permutations_only = False

    def __init__(self, spec: Alg1Spec):
        super().__init__(spec)
        k = self.k
        self.chain = RouterChain(k, self.order, {("rank", *key): value
                                                 for key, value in spec.stuck_links})
        self.arrival = 2 * k
        self.ack_latency = k
        self.cycle_length = self.arrival + max(self.payload_bits, self.ack_latency) + 1

    def params(self) -> dict:
        return {**super().params(), "stuck_links": [
            [r, x, w, value] for (_, r, x, w), value in sorted(self.stuck_wires.items())]}

    def encode(self, src: int, dst: int, payload: int) -> list[int]:
        """``1``, the relative address (bit ``r``: cross dimension ``order[r]``), the
        payload."""
        return self.chain.encode(src, dst, payload, self.payload_bits)

    def simulate_cycle(self, ms, injections: dict) -> CycleResult:
        messages = {m: (int(ms.src[m]), int(ms.dst[m]),
                        self.chain.channel(0, int(ms.src[m]))) for m in injections}
        return run_cycle(self.chain, self.cycle_length, messages, injections)


#: Algorithm 2's step numbers -> the sequencer's phase names.
_ALG2_PHASES = {1: "cross", 2: "enum2", 3: "pack3", 4: "enum4", 5: "pack5", 6: "rdv"}


class Alg2Circuit(HypercubeCircuit):
    """Algorithm 2's nodes and their sequencer (module docstring)."""

    spec_class = Alg2Spec

    def __init__(self, spec: Alg2Spec):
        super().__init__(spec)
        sched = schedule(self.k, self.M)
        #: the sequencer's program: (kind, iteration, bit-times), non-empty phases
        self.phases = ([("inject", -1, self.M + 1)]
                       + [(_ALG2_PHASES[st.number], st.iteration, st.length)
                          for st in sched.steps if st.length]
                       + [("deliver", -1, self.M + 1)])
        self.schedule_start = self.M + 1
        self.arrival = self.M + 1 + sched.total    # the deliver phase's first bit-time
        self.ack_latency = 0
        self.cycle_length = self.arrival + self.M + 1

    def simulate_cycle(self, ms, injections: dict) -> CycleResult:
        """One delivery cycle of Algorithm 2: the messages shift in (bit-times 0 .. M),
        :func:`.bitserial.run_alg2` routes them bit by bit, and every node holding one
        drives it on ``recv`` from :attr:`arrival` on; ``send_ack`` rises then at every
        node that injected (nothing is lost: Theorem 3)."""
        idx = sorted(injections)
        src = np.array([int(ms.src[m]) for m in idx], dtype=np.int64)
        dst = np.array([int(ms.dst[m]) for m in idx], dtype=np.int64)
        data = [int(ms.payload[m]) for m in idx]
        run = run_alg2(self.k, src, dst, message_bits=self.M, data=data)
        return self.cycle_result(injections, src, dst, run.delivered)

    def cycle_result(self, injections: dict, src, dst, delivered) -> CycleResult:
        """The cycle's result from which of the messages ``sorted(injections)`` (from
        ``src`` to ``dst``) were delivered (both engines build it here)."""
        outcomes = {}
        for j, m in enumerate(sorted(injections)):
            o = self._port_outcome(m, int(src[j]), int(dst[j]), injections[m][1])
            if delivered[j]:
                o.status = "delivered"
                o.path.append(Occupancy(self.chain.channel(self.k, int(dst[j])), 0,
                                        self.arrival, 0))
                o.hop_registers = [0, 0]
                o.arrival = o.ack_time = self.arrival
            else:
                o.lost_at = ("node", "buffer", -1, "lost in Algorithm 2's cycle model")
            outcomes[m] = o
        return CycleResult(self.cycle_length, outcomes, dict(injections))


class StoreForwardCircuit(HypercubeCircuit):
    """The store-and-forward router's hardware, e-cube or Valiant (module docstring):
    link queues of :attr:`buffer` messages, :attr:`steps` steps per delivery cycle of
    :attr:`step_length` bit-times each."""

    spec_class: ClassVar[type[CircuitSpec]] = EcubeSpec
    #: :func:`.store_forward.route`'s queue options of the router beside the buffer.
    queue_options: ClassVar[dict] = {}

    def __init__(self, spec: EcubeSpec):
        super().__init__(spec)
        self.buffer, self.steps = int(spec.buffer), int(spec.steps)
        #: header bits: the destination, and Valiant's intermediate before it
        self.header_bits = (2 if self.via_intermediate else 1) * self.k
        self.word_bits = self.header_bits + self.payload_bits
        self.step_length = self.word_bits + 3
        self.arrival = self.word_bits + 2          # of a delivery in step 0
        self.ack_latency = 0
        self.cycle_length = self.steps * self.step_length + self.word_bits + 3 + max(
            self.M, 2)

    def params(self) -> dict:
        return {**super().params(), "buffer": self.buffer, "steps": self.steps}

    def arrival_of_step(self, step: int) -> int:
        """The bit-time a message delivered in ``step`` reaches recv."""
        return int(step) * self.step_length + self.word_bits + 2

    def _waits(self, dst: int, taken: set) -> bool:
        if dst in taken:
            return True
        taken.add(dst)
        return False

    def _route_options(self, injections: dict, idx: list) -> dict:
        """:func:`.store_forward.route`'s options beside the buffer and the steps."""
        return dict(self.queue_options)

    def deadlock(self) -> DeadlockVerdict:
        """The deadlock check of the router's configuration (:mod:`.deadlock`): its
        algorithm, its queues of :attr:`buffer` messages and :attr:`queue_options`."""
        return check_deadlock(self.k, self.algorithm, buffer=self.buffer,
                              **self.queue_options)

    def simulate_cycle(self, ms, injections: dict) -> CycleResult:
        """One delivery cycle: :func:`.store_forward.route` with the hardware's options
        (``buffer``, Valiant straight on from the intermediate node taken from the
        stream, ``max_steps = steps``) on its scalar engine (the specification; the
        batched cycles run on the batched one), on the hardware's clock (module
        docstring)."""
        idx = sorted(injections)
        k = self.k
        src = np.array([int(ms.src[m]) for m in idx], dtype=np.int64)
        dst = np.array([int(ms.dst[m]) for m in idx], dtype=np.int64)
        run = store_forward_route(k, src, dst, algorithm=self.algorithm, buffer=self.buffer,
                                  max_steps=self.steps, engine="scalar",
                                  **self._route_options(injections, idx))
        return self.cycle_result(injections, src, dst, run)

    def cycle_result(self, injections: dict, src, dst, run) -> CycleResult:
        """The cycle's result from the store-and-forward run of the messages
        ``sorted(injections)`` (from ``src`` to ``dst``): its ``stopped``, ``steps``,
        ``delivery_step``, ``deadlock`` and ``final`` (both engines build it here)."""
        k = self.k
        drained = run.stopped == "delivered"
        ack = (run.steps + 1) * self.step_length + 1 if drained else self.cycle_length
        offset = self.header_bits - k       # recv leaves Valiant's intermediate out
        outcomes = {}
        for j, m in enumerate(sorted(injections)):
            o = self._port_outcome(m, int(src[j]), int(dst[j]), injections[m][1])
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


class EcubeCircuit(StoreForwardCircuit):
    """The e-cube router: every message straight to its destination."""

    spec_class = EcubeSpec


class ValiantCircuit(StoreForwardCircuit):
    """Valiant's two phases on the e-cube router, through intermediate nodes drawn from
    :attr:`seed`."""

    spec_class = ValiantSpec
    via_intermediate = True
    #: straight on from the intermediate node, in the same queues
    queue_options = {"intermediate_buffer": False}

    def __init__(self, spec: ValiantSpec):
        super().__init__(spec)
        self.seed = spec.seed

    def params(self) -> dict:
        return {**super().params(), "seed": self.seed}

    def intermediates(self, ms) -> np.ndarray:
        """Message m's intermediate node, drawn uniformly from :attr:`seed` (one draw per
        message of the set, the same in every cycle it is sent in)."""
        return generator(self.seed, "intermediates").integers(0, self.nodes, size=len(ms),
                                                            dtype=np.int64)

    def encode_valiant(self, inter: int, dst: int, payload: int) -> list[int]:
        """Valiant's stream: ``1``, the intermediate node, the destination (MSB first
        each), the data."""
        return [1] + int_to_bits(int(inter), self.k) + self.encode(0, dst, payload)[1:]

    def _stream_maker(self, ms):
        inter = self.intermediates(ms)
        return lambda m: self.encode_valiant(int(inter[m]), int(ms.dst[m]),
                                             int(ms.payload[m]))

    def _route_options(self, injections: dict, idx: list) -> dict:
        """The intermediate nodes the streams carry, and straight on from them."""
        k = self.k
        return {"intermediate": np.array([bits_to_int(injections[m][1][1:1 + k])
                                          for m in idx], dtype=np.int64),
                **self.queue_options}


def check_buildable(net) -> None:
    """Refuse, in one line, a network that is not a hypercube circuit (every
    :class:`HypercubeCircuit` is buildable: its spec was checked when made)."""
    if not isinstance(net, HypercubeCircuit):
        raise ParameterError(f"the hypercube's hardware is built from a hypercube circuit "
                             f"(one algorithm's), got {net!r}")


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
        left = [int(m) for m in block]
        cycles: list[CycleResult] = []
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
