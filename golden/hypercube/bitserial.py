"""Cycle-exact bit-serial model of Algorithms 1 and 2 (Kuszmaul 1990, Secs. II-IV): what
the hypercube hardware does, bit-time for bit-time, on the shared cycle engine
(:mod:`fatnet.golden.cycle`) and framing (:mod:`fatnet.golden.bitstream`).

**The router chain** (:class:`RouterChain`). Every node has one router per dimension of
a pass, chained in the pass's dimension order ``dims``; router ``r`` of node ``x``
handles dimension ``dims[r]``: it reads one address bit (cross or stay), strips it, and
drives the rest of the stream, registered, across that dimension's wire or on to the
node's own next router. For the engine the two routers of nodes ``x`` and
``x ^ 2**dims[r]`` at rank ``r`` are one switch ``(r, low)`` with two inputs and two
registered outputs (the rank-``r + 1`` inputs of the two nodes, ports ``bit0`` and
``bit1`` by the node's bit ``dims[r]``): a *collision* (two messages for one node's
router, i.e. for its one-message buffer) is two claims of one output in one bit-time;
the message from the node with bit ``dims[r]`` = 0 keeps it, the other is lost there.
Channel ``("rank", r, x)`` is the input of node ``x``'s router ``r`` (``r = 0``: the node
injects; ``r = len(dims)``: it is delivered to the node).

Timing (the engine's; :func:`fatnet.golden.hypercube.alg1.pipeline_timing` states it for
``k`` ranks): the node drives ``1`` (the M bit), one relative-address bit per rank
(``dims`` order), then the payload, stream index ``p`` during bit-time ``p``; router
``r`` sees its M bit during ``2r`` and its address bit during ``2r + 1``; the destination
sees M during ``2f`` (``f = len(dims)``) and the last payload bit during ``2f + P``. A
pass of ``P`` payload bits takes ``2f + P + 1`` bit-times. The circuit a pass claims is
held to the end of the step after it (Step 6 uses Step 5's).

**Algorithm 1** (:func:`run_alg1`): one pass over ``order`` (default ``0 .. k-1``) with
``M - k`` payload bits: ``M + k + 1`` bit-times.

**Algorithm 2** (:func:`run_alg2`, the corrected reading of :mod:`.alg2`): a message is
``M`` bits, its destination (``k`` bits, MSB first) then ``M - k`` data bits; a node has
two ``M``-bit message buffers. A global sequencer runs a fixed schedule
(:func:`schedule`; it depends on ``k`` and ``M`` only, every node knows when each step
starts). Iteration ``i`` works in the subcubes spanned by the ``f = k - 1 - i`` free
dimensions ``i + 1 .. k - 1`` (in that order); step by step, bit-times from the step's
start:

1. **cross** (``M + 1``): every node whose message has destination bit ``i`` different
   from its own drives ``1`` and the message's ``M`` bits on dimension ``i``'s wire,
   bit ``p`` during bit-time ``p``; the neighbour shifts it into its second buffer.
   The nodes left with no message latch a *hole* flag, the nodes with two a *double*
   flag.
2. **enumerate the doubles** (``2f + 1``): the bit-serial t/o adders of
   :func:`.enumeration.enumerate_bitserial` over the free dimensions only (``f + 1``
   ranks of ``f + 1`` bits; bit ``l`` of rank ``j`` during bit-time ``j + l``); a
   double's offset ``o`` is its rank ``r`` (from 0).
3. **pack** (``2f + M + 1``): each double sends the message that arrived across
   dimension ``i`` through the router chain over the free dimensions to its subcube's
   rank-``r`` node (the *relay*), payload the message's ``M`` bits.
4. **enumerate the holes** (``2f + 1``), as Step 2.
5. **pack the holes' addresses** (``3f + 1``): each hole sends its index in its subcube
   (``f`` bits, MSB first) to the relay of its rank. Routers keep these circuits.
6. **rendezvous** (``f + M + 1``): each relay holding a Step-3 message drives ``1`` and
   its ``M`` bits back along its Step-5 circuit, on the reverse wire of every channel of
   it, each router adding one register: the stream is on the reverse wire of the circuit's
   channel at rank ``q`` from bit-time ``f - q``, and the hole gets it from bit-time
   ``f``.

Iteration ``k - 1`` has no free dimension (every subcube is one node, every message is
at its destination after Step 1), so its Steps 2-6 take 0 bit-times. Per iteration with
``f >= 1``: ``3M + 10f + 6`` bit-times; in all ``5k^2 + (3M + 1)k - 2M - 5``.

Conservation: every message is in exactly one place after every step: a node's buffer,
or reported lost (:attr:`Alg2Cycle.lost`: message, iteration, step; the step's
:attr:`StepRecord.collisions` give the rank and node). :attr:`Alg2Cycle.steps` gives
every message's node after every step, and what each step drove on which wire.

**Second formulation** (Sec. IV, :func:`pipelined_batches`): the quadratic hypercube
(``d + 1`` wires across dimension ``d``: iteration ``i`` uses copy ``i`` of dimensions
``i .. k - 1``) with a copy of the buffers, routers and adders per iteration, so
iteration ``i`` of batch ``b`` runs while iteration ``i + 1`` runs batch ``b - 1``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..bitstream import bits_to_int, frame, int_to_bits
from ..checks import is_integer
from ..cycle import CycleResult, Fabric, run_cycle
from ..errors import ParameterError
from .alg1 import check_order, pipeline_timing
from .alg2 import check_message_bits, subcubes
from .alg2 import route as route_functional
from .cube import check_dimension, check_routing
from .enumeration import enumerate_bitserial

__all__ = ["RouterChain", "ChainCollision", "Alg1Cycle", "run_alg1", "STEP_KINDS",
           "StepTiming", "Schedule", "schedule", "StepRecord", "Alg2Cycle", "run_alg2",
           "cross_check", "PipelinedBatches", "pipelined_batches"]


class _Register:
    """The one stage of a router pair's output: both inputs reach the one register."""

    adjacency = ((0,), (0,))
    decision_width = 0


_REGISTER = _Register()


class RouterChain(Fabric):
    """Algorithm 1's router chain on the k-cube over ``dims`` (in order), as a fabric of
    the cycle engine (module docstring).

    Parameters
    ----------
    k : int
        The cube's dimension.
    dims : sequence of int
        The dimensions the pass handles, one rank each, in order.
    stuck_wires : dict, optional
        ``("rank", r, x, 0)`` -> 0 or 1: node ``x``'s rank-``r`` input (``r`` in ``1 ..
        len(dims) - 1``, the register of its rank-``r - 1`` router) held at that value
        (:class:`~fatnet.golden.cycle.Fabric`; Algorithm 1's ``--stuck-link``, checked
        by :class:`.circuit.Alg1Spec`).
    """

    online = False

    def __init__(self, k: int, dims, stuck_wires=None):
        self.k = check_dimension(k)
        self.dims = tuple(int(d) for d in dims)
        if len(set(self.dims)) != len(self.dims) or any(not 0 <= d < k for d in self.dims):
            raise ParameterError(f"dims must be distinct dimensions in [0, {k - 1}], "
                                 f"got {self.dims!r}")
        self.stuck_wires = dict(stuck_wires or {})

    @property
    def ranks(self) -> int:
        return len(self.dims)

    def length(self, payload_bits: int) -> int:
        """Bit-times of a pass carrying ``payload_bits`` after the address bits."""
        return 2 * self.ranks + payload_bits + 1

    # ---- streams
    def fields(self, src: int, dst: int) -> list[list[int]]:
        """Per rank, the relative-address bit (1: cross)."""
        return [[((int(src) ^ int(dst)) >> d) & 1] for d in self.dims]

    def encode(self, src: int, dst: int, payload: int, payload_bits: int) -> list[int]:
        return frame(self.fields(src, dst), payload, payload_bits)

    # ---- the fabric interface of fatnet.golden.cycle
    @staticmethod
    def channel(rank: int, node: int) -> tuple:
        return ("rank", int(rank), int(node))

    def head(self, channel, wire):
        _, r, x = channel
        if r == self.ranks:
            return None
        d = self.dims[r]
        return (r, x & ~(1 << d)), (x >> d) & 1

    def field_width(self, switch, in_port) -> int:
        return 1

    def branch(self, switch, in_port, value) -> int:
        return in_port ^ value

    def stages(self, switch, out_port):
        return (_REGISTER,)

    def stage_input(self, switch, out_port, in_port, wire) -> int:
        return in_port

    def out_wire(self, switch, out_port, output):
        r, low = switch
        return self.channel(r + 1, low | (out_port << self.dims[r])), 0

    def registers(self, switch, out_port) -> int:
        return 1

    def port_name(self, out_port) -> str:
        return ("bit0", "bit1")[out_port]

    def run(self, sources, targets, payloads, payload_bits: int, ids=None) -> CycleResult:
        """One pass: message ``ids[j]`` from ``sources[j]`` to ``targets[j]`` carrying
        ``payloads[j]``."""
        ids = range(len(sources)) if ids is None else ids
        messages, injections = {}, {}
        for m, s, t, p in zip(ids, sources, targets, payloads):
            s, t, m = int(s), int(t), int(m)
            messages[m] = (s, t, self.channel(0, s))
            injections[m] = (0, self.encode(s, t, int(p), payload_bits))
        return run_cycle(self, self.length(payload_bits), messages, injections)

    def collisions(self, result: CycleResult) -> list:
        """The collisions of a pass: per (rank, node), the message that kept the router
        and those lost there."""
        holder = {}
        for o in result.outcomes.values():
            for occ in o.path[1:]:
                holder[occ.channel] = o.message
        lost: dict[tuple[int, int], list[int]] = {}
        for o in result.outcomes.values():
            if o.status != "lost":
                continue
            (r, low), port, _, _ = o.lost_at
            node = low | (("bit0", "bit1").index(port) << self.dims[r])
            lost.setdefault((r, node), []).append(o.message)
        return [ChainCollision(rank=r, dimension=self.dims[r], node=node,
                               bit_time=2 * r + 1,
                               kept=holder[self.channel(r + 1, node)],
                               lost=tuple(sorted(ms)))
                for (r, node), ms in sorted(lost.items())]


@dataclass(frozen=True)
class ChainCollision:
    """Two or more messages for node ``node``'s rank-``rank + 1`` router (its buffer) at
    once: claimed during ``bit_time`` by rank ``rank`` (dimension ``dimension``);
    ``kept`` goes on, ``lost`` are lost there."""

    rank: int
    dimension: int
    node: int
    bit_time: int
    kept: int
    lost: tuple


def _check_payloads(payloads, n: int, bits: int, default, name: str = "payloads") -> list[int]:
    if payloads is None:
        return [int(p) & ((1 << bits) - 1) for p in default]
    p = np.asarray(payloads, dtype=object).reshape(-1)
    if p.size != n or any(not is_integer(v)
                          or not 0 <= int(v) < (1 << bits) for v in p):
        raise ParameterError(f"{name} must be {n} integers in [0, 2^{bits} - 1], one per "
                             f"message")
    return [int(v) for v in p]


# --------------------------------------------------------------------------- Algorithm 1

@dataclass
class Alg1Cycle:
    """Algorithm 1 run bit-serially: the pass's :class:`CycleResult` (``cycle``), the
    collisions, and per message whether it was delivered intact."""

    k: int
    order: tuple
    message_bits: int
    src: np.ndarray
    dst: np.ndarray
    payloads: list
    cycle: CycleResult
    collisions: list
    delivered: np.ndarray

    @property
    def bit_times(self) -> int:
        return self.cycle.length


def run_alg1(k: int, src, dst, *, order=None, message_bits=None,
             payloads=None) -> Alg1Cycle:
    """Algorithm 1 on the router chain over ``order``: ``M`` (``message_bits``, default
    ``2k``) counts the ``k`` address bits; ``payloads`` (default: each source's low
    ``M - k`` bits) are the data bits."""
    k = check_dimension(k)
    order = check_order(k, order)
    src, dst = check_routing(k, src, dst, injective=True)
    M = 2 * k if message_bits is None else message_bits
    timing = pipeline_timing(k, M)
    P = timing.payload_bits
    payloads = _check_payloads(payloads, src.size, P, src)
    chain = RouterChain(k, order)
    result = chain.run(src, dst, payloads, P)
    assert result.length == timing.total
    delivered = np.zeros(src.size, dtype=bool)
    for m, o in result.outcomes.items():
        if o.status == "delivered":
            assert o.path[-1].channel == chain.channel(k, int(dst[m]))
            delivered[m] = o.delivered_payload == payloads[m]
    return Alg1Cycle(k=k, order=order, message_bits=int(M), src=src, dst=dst,
                     payloads=payloads, cycle=result, collisions=chain.collisions(result),
                     delivered=delivered)


# --------------------------------------------------------------------------- schedule

#: Step number -> what it does.
STEP_KINDS = {1: "cross", 2: "enumerate doubles", 3: "pack", 4: "enumerate holes",
              5: "pack hole addresses", 6: "rendezvous"}


@dataclass(frozen=True)
class StepTiming:
    """One step of the fixed schedule: bit-times ``start .. start + length - 1`` of the
    routing; ``free`` the iteration's free dimensions."""

    iteration: int
    number: int
    kind: str
    free: int
    start: int
    length: int


@dataclass(frozen=True)
class Schedule:
    """Algorithm 2's fixed schedule on the k-cube with ``M``-bit messages."""

    k: int
    message_bits: int
    steps: tuple

    @property
    def total(self) -> int:
        return sum(s.length for s in self.steps)

    def iteration_lengths(self) -> list[int]:
        out = [0] * self.k
        for s in self.steps:
            out[s.iteration] += s.length
        return out

    def step(self, iteration: int, number: int) -> StepTiming:
        return self.steps[6 * iteration + number - 1]


def step_lengths(free: int, message_bits: int) -> tuple:
    """Bit-times of Steps 1..6 of an iteration with ``free`` free dimensions."""
    M, f = message_bits, free
    if f == 0:
        return (M + 1, 0, 0, 0, 0, 0)
    return (M + 1, 2 * f + 1, 2 * f + M + 1, 2 * f + 1, 3 * f + 1, f + M + 1)


def schedule(k: int, message_bits=None) -> Schedule:
    """The sequencer's fixed schedule (module docstring): every step's start and length."""
    k = check_dimension(k)
    M = check_message_bits(k, message_bits)
    steps, t = [], 0
    for i in range(k):
        f = k - 1 - i
        for number, length in enumerate(step_lengths(f, M), start=1):
            steps.append(StepTiming(i, number, STEP_KINDS[number], f, t, length))
            t += length
    return Schedule(k, M, tuple(steps))


# --------------------------------------------------------------------------- Algorithm 2

@dataclass
class StepRecord:
    """What one step did. ``positions``: every message's node after it (-1: lost).
    ``moved``: (message or hole node, from, to) per transfer. ``cycle``: the pass
    (Steps 3, 5); ``enumeration``: the adders' run (Steps 2, 4: ``t``, ``o`` per rank and
    the bit-times observed); ``waves``: the wires it drove, name -> bits per bit-time
    of the step (Step 1: ``("dim", i, x)``, x's wire across dimension i; Step 6:
    ``("reverse", "rank", r, x)``, the reverse wire of the Step-5 channel)."""

    timing: StepTiming
    positions: np.ndarray
    moved: list = field(default_factory=list)
    cycle: CycleResult | None = None
    enumeration: dict | None = None
    waves: dict | None = None
    collisions: list = field(default_factory=list)

    @property
    def iteration(self) -> int:
        return self.timing.iteration

    @property
    def number(self) -> int:
        return self.timing.number

    def wire_waves(self) -> dict:
        """Every wire the step drove: Steps 1 and 6 their own, Steps 3 and 5 the pass's
        forward waveforms."""
        if self.cycle is not None:
            return self.cycle.waveforms()
        return dict(self.waves or {})


@dataclass
class Alg2Cycle:
    """Algorithm 2 run bit-serially (:func:`run_alg2`)."""

    k: int
    message_bits: int
    src: np.ndarray
    dst: np.ndarray
    data: list
    schedule: Schedule
    steps: list
    final: np.ndarray
    intact: np.ndarray          # every message's bits unchanged where it ended
    lost: list                  # (message, iteration, step)

    @property
    def bit_times(self) -> int:
        return self.schedule.total

    @property
    def delivered(self) -> np.ndarray:
        return (self.final == self.dst) & self.intact

    @property
    def ok(self) -> bool:
        return bool(self.delivered.all()) and not self.lost

    def trace(self) -> list:
        """``[(iteration, step, kind, positions)]``, as :meth:`.alg2.Alg2Result.trace`
        (the kinds are :data:`STEP_KINDS`, which name the two enumerations and the two
        packs apart)."""
        return [(s.iteration, s.number, s.timing.kind, s.positions) for s in self.steps]


class _Alg2State:
    def __init__(self, k, src, dst, M, data):
        self.k, self.N, self.M = k, 1 << k, M
        self.pos = src.copy()
        self.bits = [int_to_bits(int(d), k) + int_to_bits(int(x), M - k)
                     for d, x in zip(dst, data)]
        self.lost: list = []
        self.alive = np.ones(src.size, dtype=bool)

    def destination(self, m: int) -> int:
        """What a node reads from a buffered message: its destination field."""
        return bits_to_int(self.bits[m][:self.k])

    def held(self):
        return np.bincount(self.pos[self.alive], minlength=self.N)


def run_alg2(k: int, src, dst, *, message_bits=None, data=None) -> Alg2Cycle:
    """Algorithm 2 (corrected reading) on the partial permutation ``src -> dst``,
    bit-serially (module docstring). ``data``: each message's ``M - k`` data bits
    (default: its source's low bits)."""
    k = check_dimension(k)
    M = check_message_bits(k, message_bits)
    src, dst = check_routing(k, src, dst, injective=True)
    data = _check_payloads(data, src.size, M - k, src, "data")
    sched = schedule(k, M)
    st = _Alg2State(k, src, dst, M, data)
    steps: list[StepRecord] = []
    for i in range(k):
        steps.extend(_iteration(st, sched, i))
    intact = np.array([bits_to_int(st.bits[m]) == bits_to_int(
        int_to_bits(int(dst[m]), k) + int_to_bits(data[m], M - k)) for m in range(src.size)],
        dtype=bool)
    final = np.where(st.alive, st.pos, -1)
    return Alg2Cycle(k=k, message_bits=M, src=src, dst=dst, data=data, schedule=sched,
                     steps=steps, final=final, intact=intact, lost=st.lost)


def _iteration(st: _Alg2State, sched: Schedule, i: int) -> list:
    """Iteration ``i``'s six steps on ``st``: one :class:`StepRecord` per step."""
    k = st.k
    step1, arrived, held = _cross(st, sched, i)
    out = [step1]
    free = tuple(range(i + 1, k))
    if not free:                      # every subcube is one node: Steps 2-6 are empty
        for number in range(2, 7):
            out.append(StepRecord(sched.step(i, number), np.where(st.alive, st.pos, -1)))
        return out
    sc = subcubes(k, i)
    chain = RouterChain(k, free)
    doubles = held == 2
    holes = held == 0

    # Step 2: enumerate the doubles over the free dimensions.
    en2 = enumerate_bitserial(k, doubles, dims=free)
    assert en2["total"] == sched.step(i, 2).length
    out.append(StepRecord(sched.step(i, 2), np.where(st.alive, st.pos, -1),
                          enumeration=en2))
    step3, relay_message = _relay(st, sched, i, sc, chain, doubles, arrived, en2["o"][-1])
    out.append(step3)

    # Step 4: enumerate the holes (flagged after Step 1).
    en4 = enumerate_bitserial(k, holes, dims=free)
    assert en4["total"] == sched.step(i, 4).length
    out.append(StepRecord(sched.step(i, 4), np.where(st.alive, st.pos, -1),
                          enumeration=en4))
    step5, circuit = _hole_addresses(st, sched, i, sc, chain, holes, en4["o"][-1])
    out.append(step5)
    out.append(_rendezvous(st, sched, i, len(free), relay_message, circuit))
    return out


def _cross(st: _Alg2State, sched: Schedule, i: int):
    """Step 1: cross dimension i (every node reads its message's destination bit i).
    Its record, the messages that crossed, and the messages each node holds."""
    M = st.M
    alive = np.flatnonzero(st.alive)
    movers = [int(m) for m in alive if ((st.destination(int(m)) ^ int(st.pos[m])) >> i) & 1]
    length = sched.step(i, 1).length
    waves, moved = {}, []
    for m in movers:
        x = int(st.pos[m])
        wave = np.zeros(length, dtype=np.uint8)
        wave[:M + 1] = [1] + st.bits[m]
        waves[("dim", i, x)] = wave
        moved.append((m, x, x ^ (1 << i)))
        st.pos[m] = x ^ (1 << i)
    held = st.held()
    if held.max(initial=0) > 2:
        raise AssertionError(f"a node holds {held.max()} messages after Step 1 of "
                             f"iteration {i}: the routing was not a partial permutation")
    return (StepRecord(sched.step(i, 1), st.pos.copy(), moved, waves=waves), set(movers),
            held)


def _relay(st: _Alg2State, sched: Schedule, i: int, sc, chain, doubles, arrived: set,
           rank_d):
    """Step 3: each double sends the message that arrived across dimension i to its
    relay (the node of its rank among the doubles). Its record, and relay -> message."""
    M = st.M
    senders = sorted(int(m) for m in np.flatnonzero(st.alive)
                     if doubles[st.pos[m]] and int(m) in arrived)
    relays = [int(sc.node(sc.lowest(int(st.pos[m])), int(rank_d[st.pos[m]])))
              for m in senders]
    froms = [int(st.pos[m]) for m in senders]
    c3 = chain.run(froms, relays, [bits_to_int(st.bits[m]) for m in senders], M, senders)
    assert c3.length == sched.step(i, 3).length
    relay_message = {}
    moved = []
    for m, x, r in zip(senders, froms, relays):
        o = c3.outcomes[m]
        if o.status != "delivered":
            st.alive[m] = False
            st.lost.append((m, i, 3))
            continue
        st.bits[m] = [int(b) for b in o.stream[o.path[-1].offset + 1:]]
        st.pos[m] = r
        relay_message[r] = m
        moved.append((m, x, r))
    return (StepRecord(sched.step(i, 3), np.where(st.alive, st.pos, -1), moved,
                       cycle=c3, collisions=chain.collisions(c3)), relay_message)


def _hole_addresses(st: _Alg2State, sched: Schedule, i: int, sc, chain, holes, rank_h):
    """Step 5: every hole sends its index in its subcube to the relay of its rank. Its
    record, and relay -> (the hole address it decoded, its Step-5 outcome)."""
    f = chain.ranks
    hole_nodes = [int(h) for h in np.flatnonzero(holes)]
    hole_relays = [int(sc.node(sc.lowest(h), int(rank_h[h]))) for h in hole_nodes]
    c5 = chain.run(hole_nodes, hole_relays, [int(sc.index(h)) for h in hole_nodes], f,
                   hole_nodes)
    assert c5.length == sched.step(i, 5).length
    circuit = {}
    for h, r in zip(hole_nodes, hole_relays):
        o = c5.outcomes[h]
        if o.status == "delivered":
            circuit[r] = (int(sc.node(sc.lowest(r), o.delivered_payload)), o)
    return (StepRecord(sched.step(i, 5), np.where(st.alive, st.pos, -1),
                       [(h, h, r) for h, r in zip(hole_nodes, hole_relays)],
                       cycle=c5, collisions=chain.collisions(c5)), circuit)


def _rendezvous(st: _Alg2State, sched: Schedule, i: int, f: int, relay_message: dict,
                circuit: dict) -> StepRecord:
    """Step 6: each relay sends its Step-3 message back along its Step-5 circuit."""
    M = st.M
    length = sched.step(i, 6).length
    waves, moved = {}, []
    for r, m in sorted(relay_message.items()):
        if r not in circuit:          # no hole reached this relay: the message stays
            st.lost.append((m, i, 6))
            st.alive[m] = False
            continue
        hole, o = circuit[r]
        stream = [1] + st.bits[m]
        for q, occ in enumerate(o.path):
            wave = np.zeros(length, dtype=np.uint8)
            start = sum(o.hop_registers[q:])
            wave[start:start + len(stream)] = stream
            waves[("reverse", *occ.channel)] = wave
        arrived_at = o.path[0].channel[2]
        if arrived_at != hole:
            raise AssertionError(f"Step 6 of iteration {i}: relay {r}'s circuit ends at "
                                 f"{arrived_at}, but it decoded hole {hole}")
        st.bits[m] = [int(b) for b in waves[("reverse", *o.path[0].channel)][
            f + 1:f + 1 + M]]
        st.pos[m] = hole
        moved.append((m, r, hole))
    if st.held().max(initial=0) > 1:
        raise AssertionError(f"a node holds two messages after Step 6 of iteration {i}")
    return StepRecord(sched.step(i, 6), np.where(st.alive, st.pos, -1), moved, waves=waves)


def cross_check(k: int, src, dst, message_bits, step_level) -> tuple:
    """Run ``src -> dst`` bit by bit and compare it with the step-level model's run of the
    same routing (:func:`.alg2.route`): ``(messages delivered intact, whether every
    message is at the same node after every step)``."""
    run = run_alg2(k, src, dst, message_bits=message_bits)
    same = all(np.array_equal(a[3], b[3]) for a, b in zip(run.trace(), step_level.trace()))
    return int(np.count_nonzero(run.delivered)), same


# --------------------------------------------------------------------------- Section IV

@dataclass
class PipelinedBatches:
    """Several batches in flight (Sec. IV). ``starts[b, i]``: the bit-time iteration
    ``i`` of batch ``b`` starts; ``finish[b]``: its last bit-time + 1. ``period``: the
    bit-times between two batches' completions in steady state (the throughput's
    inverse); ``latency``: one batch's bit-times from its start; ``buffer_bits``: the
    message buffers per node (two ``M``-bit buffers per iteration stage);
    ``wires_per_node``: dimension wires out of a node (``d + 1`` across dimension
    ``d``); ``delivered``: per batch, whether every message arrived."""

    k: int
    message_bits: int
    starts: np.ndarray
    finish: np.ndarray
    period: float
    latency: int
    buffer_bits: int
    wires_per_node: int
    delivered: np.ndarray

    @property
    def batches(self) -> int:
        return int(self.finish.size)


def pipelined_batches(k: int, routings, *, message_bits=None,
                      cycle_exact: bool = True) -> PipelinedBatches:
    """Route ``routings`` (a list of ``(src, dst)`` partial permutations) as batches in
    flight: batch ``b``'s iteration ``i`` starts when its iteration ``i - 1`` is over and
    the iteration-``i`` stage has finished batch ``b - 1``. Each batch is routed by
    :func:`run_alg2` (``cycle_exact``) or by the step-level :func:`.alg2.route`; the
    stages share no wire or buffer (the check below), so a batch's routing is the same as
    alone."""
    k = check_dimension(k)
    M = check_message_bits(k, message_bits)
    if not routings:
        raise ParameterError("routings must hold at least one (src, dst) batch")
    lengths = schedule(k, M).iteration_lengths()
    B = len(routings)
    starts = np.zeros((B, k), dtype=np.int64)
    ends = np.zeros((B, k), dtype=np.int64)
    for b in range(B):
        for i in range(k):
            ready = ends[b, i - 1] if i else 0
            free_at = ends[b - 1, i] if b else 0
            starts[b, i] = max(ready, free_at)
            ends[b, i] = starts[b, i] + lengths[i]
    # Each stage works on one batch at a time, and stage i alone uses wire copy i.
    for i in range(k):
        assert (starts[1:, i] >= ends[:-1, i]).all()
    delivered = np.zeros(B, dtype=bool)
    for b, (src, dst) in enumerate(routings):
        run = run_alg2(k, src, dst, message_bits=M) if cycle_exact else \
            route_functional(k, src, dst, message_bits=M)
        delivered[b] = run.ok
    finish = ends[:, -1]
    period = float((finish[-1] - finish[0]) / (B - 1)) if B > 1 else float(max(lengths))
    return PipelinedBatches(k=k, message_bits=M, starts=starts, finish=finish,
                            period=period, latency=int(sum(lengths)),
                            buffer_bits=2 * M * k, wires_per_node=k * (k + 1) // 2,
                            delivered=delivered)
