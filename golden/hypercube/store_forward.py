"""The baselines: synchronous store-and-forward routing on the k-cube, e-cube and Valiant.

The network
-----------
The k-cube of :mod:`.cube`. Every directed link ``(x, i)`` (from node ``x`` across
dimension ``i`` to ``x ^ 2**i``; link id ``x * k + i``) has a FIFO *link queue* at its
tail ``x``, holding the messages at ``x`` that will cross it next. Every node also has a
*node buffer*, unbounded, holding the messages that are at the node but in no link queue:
its own messages before they enter a link queue and, for Valiant, messages at their
intermediate node (see below). A message is always in exactly one place: a link queue, a
node buffer (waiting for a given link), the barrier's hold at a node, or delivered.

Routes
------
* **e-cube**: a message at ``x`` bound for ``t`` crosses the lowest dimension in which
  ``x`` and ``t`` differ (``lowest set bit of x ^ t``) next; its route crosses the
  dimensions of ``src ^ dst`` in increasing order, one each, Hamming-distance many.
* **Valiant**: each message ``m`` gets an intermediate node ``inter[m]``, uniform over all
  ``2**k`` nodes (its source and destination included), drawn from the
  ``intermediates`` stream of ``seed`` (``integers(0, 2**k, size=messages)``) or given.
  Phase 1 is the e-cube route ``src -> inter``, phase 2 the e-cube route ``inter -> dst``.
  A message reaching ``inter`` in phase 1 is delivered at once if ``inter == dst``
  (phase 2 is empty). Otherwise:

  - ``barrier=True``: it is held at ``inter`` (the hold is unbounded and in no link
    queue) until every message has finished phase 1. At the end of the step in which the
    last message finishes phase 1 (step 0 if none has a phase-1 hop) every held message
    moves to its node buffer, in message-index order, and phase 2 runs from there: the
    first phase-2 crossings happen in the next step.
  - ``barrier=False``: it starts phase 2 at once. With ``intermediate_buffer=True``
    (default) it enters ``inter``'s node buffer, as if ``inter`` re-sent it, and joins a
    link queue at the end of the step like any waiting message. With
    ``intermediate_buffer=False`` it goes straight on, from the link it arrived by into
    its first phase-2 link queue, under the same admission rule as any crossing (this is
    the configuration that can deadlock, see below).

Steps, and the rules of one step
--------------------------------
Step 0: every message is at its source. Messages with ``src == dst`` (e-cube) or
``src == inter == dst`` are delivered at step 0; the others enter their source's node
buffer in message-index order (Valiant with ``src == inter`` already in phase 2), and the
buffers empty into the link queues by the *refill* rule below. Then steps 1, 2, ... each:

1. **Crossing.** Every non-empty link queue offers its head (FIFO: the message that
   entered it first). The head crosses the link in this step if, on the far side ``y``,
   it is delivered (``y`` is the destination of its last phase), or it goes to ``y``'s
   node buffer or hold (Valiant at ``inter``), or it is *admitted* to its next link queue
   ``(y, j)``. A head that is not admitted does not move, and its queue sends nothing in
   this step (head-of-line blocking). So a step moves at most one message across each
   directed link.
2. **Admission (bounded queues, ``buffer=B``).** A queue's room is ``B`` minus its
   occupancy at the start of the step (a message leaving the queue in this step frees
   its place only for the next step). The heads that want to enter one queue in this step
   are ranked by the dimension they arrive across, lowest first (at most one arrives
   across each dimension), and the first ``room`` of them are admitted. Unbounded queues
   (``buffer=None``) admit every head.
3. **Order in a queue.** The messages admitted to a queue in one step join its tail in
   the order of the dimension they arrived across, lowest first; then the step's refill
   (rule 5) appends after them.
4. **Barrier release** (Valiant, ``barrier=True``), at the end of the step in which the
   last phase-1 message finished: held messages move to their node buffers in
   message-index order.
5. **Refill.** A node buffer is one FIFO per outgoing link: the messages waiting for link
   ``(x, j)`` enter its queue, first come first served (step 0: message index; later:
   the order they reached the buffer, ties by the dimension they arrived across, then
   message index for a barrier's release), while the queue has room, its room now being
   ``B`` minus its occupancy after this step's crossings and admissions. Unbounded:
   all enter.

A message that arrives at a node in step ``s`` can cross its next link in step ``s + 1``
at the earliest, so a message alone takes exactly its Hamming distance (e-cube) or
``hamming(src, inter) + hamming(inter, dst)`` steps (Valiant, without a barrier).
A message's **latency** is the step at which it is delivered (all start at step 0);
**completion** is the step of the last delivery (0 when every message is delivered at
step 0 or there is no message), so ``completion == max(latency)``.

Deadlock
--------
*Bounded e-cube cannot deadlock* (``B >= 1``): a head in a queue of dimension ``i``
either is delivered or wants a queue of a dimension ``j > i``. Take the highest
dimension ``i`` with a non-empty link queue: every queue of a higher dimension is empty
at the start of the step, so at least one head of a dimension-``i`` queue moves (rule 2
admits the first-ranked candidate into an empty queue). Hence every step with a message
in a link queue moves one, and node buffers refill whenever a queue drains, so the run
ends after at most the total number of hops steps. The same argument covers Valiant with
a barrier (two e-cube runs) and Valiant with ``intermediate_buffer=True`` (the unbounded
node buffer at ``inter`` breaks the dependency from phase 1's high dimensions back to
phase 2's low ones). Valiant with ``barrier=False, intermediate_buffer=False`` and
bounded queues *can* deadlock (a cycle of full queues, each head wanting the next).
The simulator detects a deadlock rather than looping: a step in which no message crosses
and nothing is released leaves the state unchanged, so it would repeat for ever. It
stops there and reports ``deadlock=True``; the undelivered messages are reported lost
(``delivery_step == -1``), with where each is (``final``). ``max_steps`` stops a run
early the same way (``stopped == "max_steps"``). Messages are never dropped silently:
``delivered + lost == messages`` always.

Bit-time costs (``bit_times``)
------------------------------
A message on a wire is ``L = M + h`` bits: ``M`` message (payload) bits and an
``h``-bit header: by default the destination address (``k`` bits) for e-cube, the
intermediate and the destination (``2k`` bits) for Valiant.

* **Store-and-forward**: each hop forwards the whole message and a step lasts ``L``
  bit-times: completion ``steps * L``; a message delivered at step ``s`` took ``s * L``.
* **Cut-through** (virtual cut-through on the same run): the run's routes and the order
  of messages on each link are kept; a message's head goes on across its next link
  ``r`` bit-times (``hop_delay``, default 1: a registered router reading its header)
  after it began crossing the previous one, as soon as that link has finished sending its
  previous message (a link sends one whole message in ``L`` bit-times). With ``t(c)`` the
  bit-time a crossing ``c`` of message ``m`` over link ``l`` begins,
  ``t(c) = max(ready(m), free(l))``, then ``ready(m) = t(c) + r`` and
  ``free(l) = t(c) + L``; ``ready = 0`` at the source; delivery is at ``t(last) + L``.
  At a Valiant intermediate node buffer or hold the message is received whole
  (``ready = t + L``), and with a barrier no phase-2 crossing begins before every
  phase-1 message has been received whole. A message alone: ``(d - 1) * r + L`` for
  ``d >= 1`` hops, against ``d * L`` store-and-forward. Buffer bounds are not re-checked
  under cut-through (the figure is the cost of the same routing decisions).

Engines
-------
Two engines run these rules and give the same run (``engine``, as every family's):

* ``"batched"`` (default): every link queue and every node buffer (one FIFO per
  outgoing link) is a linked list of its messages (a head, a tail and a length per list,
  the next message per message), over the links some message's route crosses (the
  routes are known from the start). A step reads the queue heads, moves the heads that
  cross (a pop and an append per list) and splices each node buffer's first messages
  onto its queue: its work follows the links and the messages that move, not the
  messages waiting. 100,000 random messages on the 4-cube (e-cube 3,234 steps, Valiant
  6,456) take about 0.3 s and 0.8 s of CPU in :func:`route`.
* ``"scalar"``: the reference. Every message has its queue or buffer and the order it
  joined it in; each step sorts the queued messages by (queue, order) to find the heads,
  and the admissions and refills by (queue, rank): the same 100,000 messages take about
  9 s and 38 s, a random permutation of the 16-cube (65,536 messages, 17 steps) 0.12 s for
  e-cube (0.16 s on the batched engine) and 0.26 s for Valiant (0.39 s).

``tests/hypercube/test_hc_store_forward_engines.py`` compares them field by field.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..checks import is_integer
from ..errors import ParameterError
from ..runner import check_engine
from .cube import check_dimension, check_routing
from ..seeds import generator

__all__ = ["ALGORITHMS", "StoreForwardRun", "BitTimes", "route", "ecube", "valiant",
           "next_dimension", "queue_of", "next_queues", "default_header_bits",
           "check_buffer", "MAX_BUFFER"]

#: Algorithm names (the command line's ``--algorithm`` choices for the baselines).
ALGORITHMS = ("ecube", "valiant")

QUEUED, WAITING, HELD, DONE = 0, 1, 2, 3
#: Largest queue bound accepted (``buffer``).
MAX_BUFFER = 1 << 30


def next_dimension(node, target):
    """e-cube's next dimension: the lowest in which ``node`` and ``target`` differ
    (arrays or ints; undefined where they are equal)."""
    r = np.asarray(np.bitwise_xor(node, target), dtype=np.int64)
    low = r & -r
    out = np.zeros(r.shape, dtype=np.int64)
    for i in range(63):
        if not low.any():
            break
        out[(low >> i) == 1] = i
    return out if out.ndim else int(out)


def _lowdim(r: np.ndarray) -> np.ndarray:
    """Lowest set bit index of positive int64 values (exact: powers of two <= 2**20)."""
    return np.log2(r & -r).astype(np.int64)


def queue_of(k: int, node: np.ndarray, target: np.ndarray) -> np.ndarray:
    """The link queue (id ``node * k + dimension``) a message at ``node`` bound for
    ``target`` (its current phase's, not ``node``) enters or waits for next: the link
    of e-cube's lowest differing dimension. The simulator's one choice of a queue (rules
    1 and 5) and the channel-dependence graph's (:mod:`.deadlock`)."""
    return node * k + _lowdim(node ^ target)


def next_queues(k: int, links, target, dst, *, barrier: bool = False,
                intermediate_buffer: bool = True) -> _Hops:
    """What a head of each of the link queues ``links`` does when it crosses (rule 1),
    bound for ``target`` (its current phase's) and ``dst``: the simulator's own rule
    (the ``_Hops`` of every step), for heads given rather than a run's.

    Returns the crossing's record: per head ``y`` (where it arrives), ``done``
    (delivered there), ``switch`` (Valiant: reached its intermediate node, not its
    destination), ``to_buffer`` (waits in that node's buffer or hold), ``transit``
    (needs room in queue ``next_q``: the only case in which it waits for a queue).
    """
    links = np.asarray(links, dtype=np.int64).reshape(-1)
    return _Hops(int(k), np.arange(links.size), links, links // k,
                 np.asarray(target, dtype=np.int64).reshape(-1),
                 np.asarray(dst, dtype=np.int64).reshape(-1),
                 bool(barrier) or bool(intermediate_buffer))


def default_header_bits(k: int, algorithm: str) -> int:
    """Header bits on the wire: ``k`` (destination) for e-cube, ``2k`` (intermediate and
    destination) for Valiant."""
    return int(k) * (2 if algorithm == "valiant" else 1)


@dataclass(frozen=True)
class BitTimes:
    """Bit-time costs of one run at ``message_bits`` (module docstring)."""

    message_bits: int
    header_bits: int
    hop_delay: int
    store_forward: int            # completion, store-and-forward: steps * (M + h)
    cut_through: int              # completion, cut-through (the recurrence)
    per_message_store_forward: np.ndarray   # -1 where not delivered
    per_message_cut_through: np.ndarray     # -1 where not delivered

    @property
    def wire_bits(self) -> int:
        return self.message_bits + self.header_bits


@dataclass
class StoreForwardRun:
    """The outcome of one store-and-forward run.

    Attributes
    ----------
    steps : int
        Completion: the step of the last delivery (0 if none after step 0).
    delivery_step : (messages,) int64
        Each message's latency (the step it was delivered), -1 if it was not.
    final : (messages,) int64
        The node where each message is at the end (its destination when delivered).
    hops : (messages,) int64
        Links each message crossed.
    max_queue : int
        The largest link-queue occupancy at any time.
    max_node_buffer : int
        The most messages in one node's buffer and hold at once.
    max_messages_per_node : int
        The most undelivered messages at one node at once (its link queues, buffer and
        hold).
    deadlock : bool
        The run stopped at a step where nothing could move (module docstring).
    stopped : str
        ``"delivered"``, ``"deadlock"`` or ``"max_steps"``.
    steps_run : int
        Steps simulated (``== steps`` unless the run stopped early).
    phase1_steps : int or None
        Valiant with a barrier: the step the last message finished phase 1.
    crossings : dict of arrays
        Every crossing in order: ``step``, ``message``, ``link`` (``x * k + i``),
        ``phase`` (1 or 2; e-cube: 2) and ``ends_phase1`` (reached its intermediate).
    """

    k: int
    algorithm: str
    buffer: int | None
    barrier: bool
    intermediate_buffer: bool
    src: np.ndarray
    dst: np.ndarray
    intermediate: np.ndarray | None
    delivery_step: np.ndarray
    final: np.ndarray
    hops: np.ndarray
    steps: int
    steps_run: int
    max_queue: int
    max_node_buffer: int
    max_messages_per_node: int
    stopped: str
    phase1_steps: int | None
    crossings: dict = field(repr=False)

    @property
    def messages(self) -> int:
        return int(self.src.size)

    @property
    def delivered(self) -> int:
        return int((self.delivery_step >= 0).sum())

    @property
    def lost(self) -> np.ndarray:
        """Indices of the messages not delivered (deadlock or ``max_steps``)."""
        return np.flatnonzero(self.delivery_step < 0)

    @property
    def deadlock(self) -> bool:
        return self.stopped == "deadlock"

    @property
    def latency(self) -> np.ndarray:
        """Latencies (steps) of the delivered messages, in message order."""
        return self.delivery_step[self.delivery_step >= 0]

    def latency_histogram(self) -> np.ndarray:
        """``h[s]`` = messages delivered at step ``s``."""
        return np.bincount(self.latency, minlength=self.steps + 1)

    def latency_summary(self) -> dict:
        """min, mean, median, 90th and 99th percentile and max latency (steps)."""
        lat = self.latency
        if lat.size == 0:
            return {"min": None, "mean": None, "median": None, "p90": None, "p99": None,
                    "max": None}
        return {"min": int(lat.min()), "mean": float(lat.mean()),
                "median": float(np.median(lat)), "p90": float(np.percentile(lat, 90)),
                "p99": float(np.percentile(lat, 99)), "max": int(lat.max())}

    def bit_times(self, message_bits: int, header_bits: int | None = None,
                  hop_delay: int = 1) -> BitTimes:
        """Store-and-forward and cut-through costs at ``message_bits`` (module
        docstring); ``header_bits`` defaults to :func:`default_header_bits`."""
        if not is_integer(message_bits) \
                or message_bits < 1:
            raise ParameterError(f"message_bits must be an integer >= 1, got {message_bits!r}")
        if header_bits is None:
            header_bits = default_header_bits(self.k, self.algorithm)
        if not is_integer(header_bits) \
                or header_bits < 0:
            raise ParameterError(f"header_bits must be an integer >= 0, got {header_bits!r}")
        wire = int(message_bits) + int(header_bits)
        if not is_integer(hop_delay) or not (
                1 <= hop_delay <= wire):
            raise ParameterError(f"hop_delay must be an integer in [1, {wire}] "
                                 f"(the message and header bits), got {hop_delay!r}")
        r = int(hop_delay)
        ok = self.delivery_step >= 0
        saf = np.where(ok, self.delivery_step * wire, -1)
        ready = np.zeros(self.messages, dtype=np.int64)
        done_at = np.zeros(self.messages, dtype=np.int64)
        free = np.zeros(self.k << self.k, dtype=np.int64)
        barrier_bt = 0
        c = self.crossings
        bounds = np.flatnonzero(np.diff(c["step"])) + 1
        buffered = self.barrier or self.intermediate_buffer
        for sl in np.split(np.arange(c["step"].size), bounds):
            if sl.size == 0:
                continue
            msg, link = c["message"][sl], c["link"][sl]
            t = np.maximum(ready[msg], free[link])
            if self.barrier:
                t = np.where(c["phase"][sl] == 2, np.maximum(t, barrier_bt), t)
            free[link] = t + wire
            end1 = c["ends_phase1"][sl]
            ready[msg] = np.where(end1 & buffered, t + wire, t + r)
            done_at[msg] = t + wire
            if self.barrier and end1.any():
                barrier_bt = max(barrier_bt, int((t[end1] + wire).max()))
        ct = np.where(ok, np.where(self.hops > 0, done_at, 0), -1)
        return BitTimes(int(message_bits), int(header_bits), r,
                        int(self.steps * wire), int(ct.max(initial=0)), saf, ct)

    def summary(self) -> dict:
        """Plain data for ``--json`` (the command line's fields that apply here)."""
        return {"kind": "hypercube", "dimension": self.k, "algorithm": self.algorithm,
                "buffer": self.buffer, "phased": self.barrier,
                "messages": self.messages, "delivered": self.delivered,
                "lost": self.lost.tolist(), "stopped": self.stopped,
                "final": [[int(s), int(x)] for s, x in zip(self.src, self.final)],
                "steps": self.steps, "max_queue": self.max_queue,
                "max_messages_per_node": self.max_messages_per_node,
                "latency": self.latency_summary()}


def check_buffer(buffer, high: int = MAX_BUFFER) -> int:
    """``buffer``, messages per link queue, as an int in ``[1, high]``, or one line
    naming the parameter and the range: the one check of every ``buffer`` (the model's
    bound, ``high`` :data:`MAX_BUFFER`; the hardware's queues, a smaller ``high``)."""
    if not is_integer(buffer) or not (
            1 <= int(buffer) <= high):
        raise ParameterError(f"buffer must be an integer in [1, {high}], got {buffer!r}")
    return int(buffer)


def route(k, src, dst, *, algorithm: str = "ecube", buffer=None, barrier: bool = False,
          seed=0, intermediate=None, intermediate_buffer: bool = True,
          max_steps=None, engine: str = "batched") -> StoreForwardRun:
    """Route messages ``src[m] -> dst[m]`` (any map) on the ``k``-cube, store-and-forward.

    ``algorithm`` ``"ecube"`` or ``"valiant"``; ``buffer`` the link-queue bound ``B``
    (``None``: unbounded); Valiant: ``barrier``, ``intermediate_buffer`` and the
    intermediate nodes (``intermediate``, or drawn from ``seed``). ``max_steps`` (None:
    no limit) stops the run early. ``engine`` (:data:`~fatnet.golden.runner.ENGINES`):
    ``"batched"``, the link queues and node buffers as linked lists (a step's work
    follows the heads and the messages that move), or ``"scalar"``, the reference that
    sorts every queued message in every step; both give the same run. The rules are the
    module docstring's.
    """
    k = check_dimension(k)
    src, dst = check_routing(k, src, dst, injective=False)
    if algorithm not in ALGORITHMS:
        raise ParameterError(f"algorithm must be one of {', '.join(ALGORITHMS)}, "
                             f"got {algorithm!r}")
    B = None if buffer is None else check_buffer(buffer)
    if max_steps is not None and (not is_integer(max_steps) or max_steps < 0):
        raise ParameterError(f"max_steps must be an integer >= 0 (or None), got {max_steps!r}")
    valiant = algorithm == "valiant"
    if valiant:
        inter = _intermediates(k, src.size, seed, intermediate)
    elif intermediate is not None:
        raise ParameterError("intermediate is a Valiant parameter: algorithm must be valiant")
    else:
        inter = None
    check_engine(engine)
    engine_run = _QueueRun if engine == "batched" else _SortedRun
    run = engine_run(k, src, dst, inter, B, bool(barrier) and valiant, bool(intermediate_buffer))
    run.run(max_steps)
    return StoreForwardRun(k=k, algorithm=algorithm, buffer=B, barrier=run.barrier,
                           intermediate_buffer=run.inter_buf, src=src, dst=dst,
                           intermediate=inter, delivery_step=run.delivery,
                           final=run.pos.copy(),
                           hops=run.hops, steps=int(run.last_delivery),
                           steps_run=int(run.step), max_queue=run.max_queue,
                           max_node_buffer=run.max_buf,
                           max_messages_per_node=run.max_per_node, stopped=run.stopped,
                           phase1_steps=run.phase1_steps, crossings=run.crossings())


def _intermediates(k: int, m: int, seed, intermediate) -> np.ndarray:
    """Valiant's intermediate node of each of the ``m`` messages: ``intermediate``, or
    drawn from ``seed``."""
    n = 1 << k
    if intermediate is None:
        rng = generator(seed, "intermediates")
        return rng.integers(0, n, size=m, dtype=np.int64)
    inter = np.asarray(intermediate, dtype=np.int64).reshape(-1)
    if inter.size != m:
        raise ParameterError(f"intermediate must give one node per message: "
                             f"{m} messages, {inter.size} intermediates")
    bad = np.flatnonzero((inter < 0) | (inter >= n))
    if bad.size:
        raise ParameterError(f"message {int(bad[0])}: intermediate must be a node in "
                             f"[0, {n - 1}], got {int(inter[bad[0]])}")
    return inter


def _rank_in_groups(keys: np.ndarray) -> np.ndarray:
    """Each element's rank among the equal keys before it, ``keys`` sorted."""
    start = np.r_[0, np.flatnonzero(keys[1:] != keys[:-1]) + 1]
    return np.arange(keys.size) - np.repeat(start, np.diff(np.r_[start, keys.size]))


# (the steps' one-dimensional index arrays come from ``.nonzero()[0]``: the same as
# ``np.flatnonzero`` without its Python wrapper, thousands of times a run)


class _Run:
    """One store-and-forward run, step by step (the module docstring's rules): what both
    engines share. Every message's place ``pos``, its current ``target``, whether it has
    phase-1 hops left (``phase1``) and its ``state`` (``HELD`` at Valiant's barrier,
    ``DONE``; the engines keep the queues and buffers their own way)."""

    def __init__(self, k, src, dst, inter, B, barrier: bool, inter_buf: bool):
        m = src.size
        self.k, self.dst, self.B = k, dst, B
        self.barrier, self.inter_buf = barrier, inter_buf
        self.pos = src.copy()
        if inter is not None:
            self.phase1 = inter != src                  # has phase-1 hops still to make
            self.target = np.where(self.phase1, inter, dst)  # phase 1: inter; then dst
            done0 = ~self.phase1 & (dst == src)
        else:
            self.phase1 = np.zeros(m, dtype=bool)
            self.target = dst.copy()
            done0 = dst == src
        self.state = np.full(m, WAITING, dtype=np.int8)
        self.delivery = np.full(m, -1, dtype=np.int64)
        self.hops = np.zeros(m, dtype=np.int64)
        self.log: dict[str, list[np.ndarray]] = {"step": [], "message": [], "link": [], "phase": [],
                                                 "ends_phase1": []}
        self.released = not barrier
        self.phase1_steps: int | None = None
        self.step, self.last_delivery, self.stopped = 0, 0, "delivered"
        self.max_queue = self.max_per_node = self.max_buf = 0
        self._setup(src, inter, done0)
        self._start(done0)

    def _setup(self, src: np.ndarray, inter, done0: np.ndarray) -> None:
        """The engine's own state (its queues and buffers, empty)."""
        raise NotImplementedError

    def _start(self, done0: np.ndarray) -> None:
        """Step 0: at the sources (delivered, held at the barrier, or waiting for their
        first link), then the first refill."""
        self.state[done0] = DONE
        self.delivery[done0] = 0
        self._delivered(np.flatnonzero(done0))
        if self.barrier:
            self._hold(np.flatnonzero(~done0 & ~self.phase1))
        self._wait(np.flatnonzero(self.state == WAITING), self.target)
        if self.barrier and self._release():
            self.phase1_steps = 0
        self._refill()
        self._record()

    def _release(self) -> bool:
        """Rule 4: once no message has phase-1 hops left, the held messages wait for
        their phase-2 links, in message order; whether it happened now."""
        if self.released or self._in_phase1():
            return False
        self.released = True
        self._wait(np.flatnonzero(self.state == HELD), self.dst)
        return True

    def run(self, max_steps) -> None:
        """Steps until every message is delivered, a deadlock, or ``max_steps``."""
        while self._undelivered():
            if max_steps is not None and self.step >= max_steps:
                self.stopped = "max_steps"
                return
            self.step += 1
            moved = self._cross()
            released = self.barrier and not self.released and self._release()
            if released:
                self.phase1_steps = self.step
            if not moved and not released:
                self.stopped = "deadlock"
                self.step -= 1          # nothing happened in this step
                return
            self._refill()
            self._record()

    def _cross(self) -> bool:
        """Rules 1-3: the queue heads that may cross do; whether any did."""
        heads, links = self._heads()
        if not heads.size:
            return False
        hop = _Hops(self.k, heads, links, self.pos[heads], self.target[heads],
                    self.dst[heads], self.barrier or self.inter_buf)
        mv = self._admitted(hop).nonzero()[0]
        if not mv.size:
            return False
        self._move(hop, mv)
        return True

    def _admitted(self, hop: _Hops) -> np.ndarray:
        """Rule 2: which heads cross (delivered, to a buffer, or admitted to their next
        queue, lowest arrival dimension first, into the room at the step's start)."""
        moves = ~hop.transit
        ti = hop.transit.nonzero()[0]
        if self.B is None:
            moves[ti] = True
        elif ti.size:
            oo = ti[np.argsort(hop.next_q[ti] * self.k + hop.dim[ti], kind="stable")]
            tqo = hop.next_q[oo]
            moves[oo[_rank_in_groups(tqo) < self.B - self._occupancy(tqo)]] = True
        return moves

    def _move(self, hop: _Hops, mv: np.ndarray) -> None:
        """The heads ``mv`` cross: logged, delivered, switched to phase 2, into a buffer
        or hold, or into their next queue (rule 3: lowest arrival dimension first)."""
        hm = hop.heads[mv]
        self._leave(hop, mv)
        self.pos[hm] = hop.y[mv]
        self.hops[hm] += 1
        self._log(hop, mv, hm)
        dm = hm[hop.done[mv]]
        self.state[dm] = DONE
        self.delivery[dm] = self.step
        self._delivered(dm)
        self.phase1[dm] = False
        if dm.size:
            self.last_delivery = self.step
        sm = hm[hop.switch[mv]]                  # phase change (Valiant)
        self._phase2(sm)
        self.phase1[sm] = False
        self.target[sm] = self.dst[sm]
        self._place(hop, mv[np.argsort(hop.dim[mv], kind="stable")])

    def _place(self, hop: _Hops, order: np.ndarray) -> None:
        """The heads ``order`` (by arrival dimension) that were not delivered go to their
        node buffers or holds, or into their next queues."""
        bm = order[hop.to_buffer[order]]
        if bm.size:
            if self.barrier:
                self._hold(hop.heads[bm])
            else:
                self._wait(hop.heads[bm], self.dst)
        tm = order[hop.transit[order]]
        if tm.size:
            self._enter(hop.heads[tm], hop.next_q[tm])

    def _log(self, hop: _Hops, mv: np.ndarray, hm: np.ndarray) -> None:
        log = self.log
        log["step"].append(np.full(mv.size, self.step, dtype=np.int64))
        log["message"].append(hm)
        log["link"].append(hop.links[mv])
        log["phase"].append(np.where(self.phase1[hm], 1, 2).astype(np.int8))
        log["ends_phase1"].append(hop.switch[mv] | (hop.done[mv] & self.phase1[hm]))

    def crossings(self) -> dict:
        """Every crossing in order (:class:`StoreForwardRun`'s ``crossings``)."""
        empty = {"phase": np.int8, "ends_phase1": bool}
        return {key: (np.concatenate(v) if v else
                      np.zeros(0, dtype=empty.get(key, np.int64)))
                for key, v in self.log.items()}

    # The engine's hooks: its queues, buffers and counts.
    def _undelivered(self) -> bool:
        """Whether some message is not delivered yet."""
        raise NotImplementedError

    def _in_phase1(self) -> bool:
        """Whether some message has phase-1 hops left."""
        raise NotImplementedError

    def _delivered(self, idx: np.ndarray) -> None:
        """Messages ``idx`` were just delivered."""

    def _phase2(self, idx: np.ndarray) -> None:
        """Messages ``idx`` just reached their intermediate nodes (phase 1 over)."""

    def _hold(self, idx: np.ndarray) -> None:
        """Messages ``idx`` wait at Valiant's barrier."""
        self.state[idx] = HELD

    def _wait(self, idx: np.ndarray, toward: np.ndarray) -> None:
        """Messages ``idx`` join their node buffers, in this order, for the link of the
        lowest dimension in which their node and ``toward`` differ."""
        raise NotImplementedError

    def _refill(self) -> None:
        """Rule 5: the waiting messages enter their link queues while there is room."""
        raise NotImplementedError

    def _record(self) -> None:
        """The largest queue, and the most undelivered messages at one node and in one
        node's buffer and hold, so far."""
        raise NotImplementedError

    def _heads(self) -> tuple[np.ndarray, np.ndarray]:
        """The head message of every non-empty link queue and its link, by link."""
        raise NotImplementedError

    def _occupancy(self, links: np.ndarray) -> np.ndarray:
        """The messages in each of the link queues ``links`` now."""
        raise NotImplementedError

    def _leave(self, hop: _Hops, mv: np.ndarray) -> None:
        """The heads ``mv`` leave their queues for their next nodes."""
        raise NotImplementedError

    def _enter(self, idx: np.ndarray, links: np.ndarray) -> None:
        """Messages ``idx`` join the tails of queues ``links``, in this order."""
        raise NotImplementedError


class _SortedRun(_Run):
    """The reference engine (``engine="scalar"``): every message in a link queue or a
    node buffer has its queue ``q`` and the order ``seq`` it joined it in; each step
    sorts the queued messages by ``(q, seq)`` to find the heads, the refill sorts the
    waiting ones."""

    def _setup(self, src: np.ndarray, inter, done0: np.ndarray) -> None:
        m = src.size
        self.q = np.zeros(m, dtype=np.int64)
        self.seq = np.zeros(m, dtype=np.int64)
        self.occ = np.zeros(self.k << self.k, dtype=np.int64)
        self.counter = 0

    def _undelivered(self) -> bool:
        return bool((self.state != DONE).any())

    def _in_phase1(self) -> bool:
        return bool(self.phase1.any())

    def _wait(self, idx: np.ndarray, toward: np.ndarray) -> None:
        """Messages ``idx`` wait in their node buffers, in this order, for the link of
        the lowest dimension in which their node and ``toward`` differ."""
        pos = self.pos[idx]
        self.state[idx] = WAITING
        self.q[idx] = queue_of(self.k, pos, toward[idx])
        self._queue_order(idx)

    def _queue_order(self, idx: np.ndarray) -> None:
        """Messages ``idx`` join their queue or buffer now, in this order."""
        self.seq[idx] = self.counter + np.arange(idx.size)
        self.counter += idx.size

    def _refill(self) -> None:
        """Rule 5: the waiting messages enter their link queues while there is room."""
        w = np.flatnonzero(self.state == WAITING)
        if w.size == 0:
            return
        if self.B is not None:
            o = w[np.lexsort((self.seq[w], self.q[w]))]
            qo = self.q[o]
            w = o[_rank_in_groups(qo) < self.B - self.occ[qo]]
        w = w[np.argsort(self.seq[w], kind="stable")]
        self.state[w] = QUEUED
        self._queue_order(w)
        self.occ[:] += np.bincount(self.q[w], minlength=self.occ.size)

    def _record(self) -> None:
        """The largest queue, and the most undelivered messages at one node and in one
        node's buffer and hold, so far."""
        self.max_queue = max(self.max_queue, int(self.occ.max(initial=0)))
        und = self.state != DONE
        per_node = int(np.bincount(self.pos[und], minlength=1).max(initial=0)) \
            if und.any() else 0
        buf = (self.state == WAITING) | (self.state == HELD)
        per_buf = int(np.bincount(self.pos[buf], minlength=1).max(initial=0)) \
            if buf.any() else 0
        self.max_per_node = max(self.max_per_node, per_node)
        self.max_buf = max(self.max_buf, per_buf)

    def _heads(self) -> tuple[np.ndarray, np.ndarray]:
        active = np.flatnonzero(self.state == QUEUED)
        o = active[np.lexsort((self.seq[active], self.q[active]))]
        qo = self.q[o]
        first = np.ones(o.size, dtype=bool)
        first[1:] = qo[1:] != qo[:-1]
        return o[first], qo[first]

    def _occupancy(self, links: np.ndarray) -> np.ndarray:
        return self.occ[links]

    def _leave(self, hop: _Hops, mv: np.ndarray) -> None:
        self.occ[hop.links[mv]] -= 1

    def _enter(self, idx: np.ndarray, links: np.ndarray) -> None:
        self.q[idx] = links
        self._queue_order(idx)
        self.occ[:] += np.bincount(links, minlength=self.occ.size)


class _QueueRun(_Run):
    """The batched engine (``engine="batched"``): every link queue and every node
    buffer (one FIFO per outgoing link) is a linked list of its messages, so a step
    touches the queue heads and the messages that move, never the others. Only the
    links some message's route crosses have lists (``links``, sorted; list ``c =
    link_id[link]`` is link ``links[c]``'s queue, list ``L + c`` its node buffer), and
    only their tails have counts (``node_id``): a run's lists follow its messages; the
    two numberings are an int32 per link and per node of the cube."""

    def _setup(self, src: np.ndarray, inter, done0: np.ndarray) -> None:
        k, m = self.k, src.size
        legs = [(src, self.dst)] if inter is None else [(src, inter), (inter, self.dst)]
        used = np.zeros((1 << k, k), dtype=bool)      # (node, dimension): a route's link
        for a, b in legs:
            _mark_routes(used, a, b)
        self.links = np.flatnonzero(used)
        self.link_id = _numbering(used.reshape(-1))
        at_node = np.asarray(used.any(axis=1))
        self.node_id = _numbering(at_node)
        self.link_node = self.node_id[self.links // k]
        nodes = int(at_node.sum())
        self.fifo = _Fifos(2 * self.links.size, m)
        self.und = np.zeros(nodes, dtype=np.int64)    # undelivered per node
        self.buf = np.zeros(nodes, dtype=np.int64)    # buffer and hold per node
        self.left = m                   # undelivered
        self.phase1_left = int(self.phase1.sum())
        _tally(self.und, self._node(src[~done0]))

    def _node(self, x: np.ndarray) -> np.ndarray:
        return self.node_id[x]

    def _undelivered(self) -> bool:
        return self.left > 0

    def _in_phase1(self) -> bool:
        return self.phase1_left > 0

    def _delivered(self, idx: np.ndarray) -> None:
        self.left -= idx.size
        self.phase1_left -= int(self.phase1[idx].sum())

    def _phase2(self, idx: np.ndarray) -> None:
        self.phase1_left -= idx.size

    def _hold(self, idx: np.ndarray) -> None:
        self.state[idx] = HELD
        _tally(self.buf, self._node(self.pos[idx]))

    def _wait(self, idx: np.ndarray, toward: np.ndarray) -> None:
        """Messages ``idx`` join their node buffers, in this order (the held ones were
        counted there already)."""
        pos = self.pos[idx]
        fresh = self.state[idx] != HELD
        self.state[idx] = WAITING
        c = self.link_id.take(queue_of(self.k, pos, toward[idx]))
        self.fifo.append(c + self.links.size, idx)
        _tally(self.buf, self.link_node[c[fresh]])

    def _refill(self) -> None:
        """Rule 5: each node buffer's first messages (all, or the room) enter its
        link's queue."""
        L = self.links.size
        size = self.fifo.size
        c = size[L:].nonzero()[0]
        if not c.size:
            return
        counts = size[L + c]
        if self.B is not None:
            counts = np.minimum(counts, self.B - size[c])
            c, counts = c[counts > 0], counts[counts > 0]
        self.fifo.splice(c + L, c, counts)
        _tally(self.buf, self.link_node[c], -counts)

    def _record(self) -> None:
        self.max_queue = max(self.max_queue, int(self.fifo.size[:self.links.size].max(initial=0)))
        self.max_per_node = max(self.max_per_node, int(self.und.max(initial=0)))
        self.max_buf = max(self.max_buf, int(self.buf.max(initial=0)))

    def _heads(self) -> tuple[np.ndarray, np.ndarray]:
        c = self.fifo.size[:self.links.size].nonzero()[0]
        return self.fifo.heads(c), self.links[c]

    def _occupancy(self, links: np.ndarray) -> np.ndarray:
        return self.fifo.size[self.link_id.take(links)]

    def _leave(self, hop: _Hops, mv: np.ndarray) -> None:
        c = self.link_id.take(hop.links[mv])
        self.fifo.pop(c)
        _tally(self.und, self.link_node[c], -1)
        on = mv[~hop.done[mv]]
        _tally(self.und, self._node(hop.y[on]))

    def _enter(self, idx: np.ndarray, links: np.ndarray) -> None:
        self.fifo.append(self.link_id.take(links), idx)

    def _place(self, hop: _Hops, order: np.ndarray) -> None:
        """Without a barrier, one append: the buffers' lists and the queues' are apart,
        and a head that waits at its intermediate node waits for ``next_q``."""
        if self.barrier:
            super()._place(hop, order)
            return
        go = order[~hop.done[order]]
        if go.size:
            c = self.link_id.take(hop.next_q[go])
            waits = hop.to_buffer[go]
            self.fifo.append(c + self.links.size * waits, hop.heads[go])
            _tally(self.buf, self.link_node[c[waits]])


def _tally(counts: np.ndarray, ids: np.ndarray, by=1) -> None:
    """``counts[ids[j]] += by`` (``by`` an int or per entry), ids repeating: a loop
    over few ids (``ufunc.at``), a ``bincount`` over many."""
    if ids.size < 1024:
        np.add.at(counts, ids, by)
        return
    # (weights are float64: exact for counts below 2**53)
    weights = None if np.isscalar(by) and by == 1 else np.broadcast_to(by, ids.shape)
    counts += np.bincount(ids, weights=weights, minlength=counts.size).astype(np.int64)


def _mark_routes(used: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
    """Mark ``used[x, i]`` for every link ``(x, i)`` of the e-cube routes
    ``a[m] -> b[m]``."""
    x, diff = a.copy(), a ^ b
    for i in range(used.shape[1]):
        sel = np.flatnonzero((diff >> i) & 1)
        used[x[sel], i] = True
        x[sel] ^= 1 << i


def _numbering(used: np.ndarray) -> np.ndarray:
    """Each used entry's rank among the used ones (-1 elsewhere): the lists' and the
    counts' ids, int32 (the cube's links and nodes number fewer than 2**31)."""
    out = np.full(used.size, -1, dtype=np.int32)
    out[used] = np.arange(int(used.sum()), dtype=np.int32)
    return out


class _Fifos:
    """FIFO lists of messages, each message in at most one: ``nxt`` holds the next
    message of every message's list (the last one's is unset) and, at ``messages +
    list``, each list's first message, so that an empty list's ``tail`` is that entry
    and joining a tail is one assignment whether the list is empty or not; ``size`` per
    list."""

    def __init__(self, lists: int, messages: int):
        self.base = messages
        self.nxt = np.full(messages + lists, -1, dtype=np.int64)
        self.tail = messages + np.arange(lists, dtype=np.int64)
        self.size = np.zeros(lists, dtype=np.int64)

    def heads(self, lists: np.ndarray) -> np.ndarray:
        """The first message of each of ``lists`` (non-empty)."""
        return self.nxt[self.base + lists]

    def append(self, lists: np.ndarray, items: np.ndarray) -> None:
        """``items[j]`` joins the tail of list ``lists[j]``, in the order given."""
        if not items.size:
            return
        o = np.argsort(lists, kind="stable")
        ls, it = lists[o], items[o]
        cuts = (ls[1:] != ls[:-1]).nonzero()[0] + 1
        starts = np.concatenate(([0], cuts))
        ends = np.concatenate((cuts, [it.size]))
        self.nxt[it[:-1]] = it[1:]
        self._attach(ls[starts], it[starts], it[ends - 1], ends - starts)

    def _attach(self, lists: np.ndarray, first: np.ndarray, last: np.ndarray,
                counts: np.ndarray) -> None:
        """Chains ``first .. last`` (``counts`` long, distinct lists) join the tails."""
        self.nxt[self.tail[lists]] = first
        self.tail[lists] = last
        self.size[lists] += counts

    def _emptied(self, lists: np.ndarray) -> None:
        """Of ``lists``, the empty ones' tails back at their own entries."""
        empty = lists[self.size.take(lists) == 0]
        self.tail[empty] = self.base + empty

    def pop(self, lists: np.ndarray) -> None:
        """The heads of ``lists`` (distinct, non-empty) leave them."""
        at = self.base + lists
        self.nxt[at] = self.nxt[self.nxt[at]]
        self.size[lists] -= 1
        self._emptied(lists)

    def splice(self, src: np.ndarray, dst: np.ndarray, counts: np.ndarray) -> None:
        """The first ``counts[j]`` (>= 1) items of list ``src[j]`` move to the tail of
        list ``dst[j]``, in order (lists distinct)."""
        first = self.heads(src)
        cut = self.tail[src]
        part = (counts < self.size[src]).nonzero()[0]
        if part.size:
            at, need = first[part], counts[part]
            for j in range(1, int(need.max())):
                go = need > j
                at[go] = self.nxt[at[go]]
            cut[part] = at
        self.nxt[self.base + src] = self.nxt[cut]
        self.size[src] -= counts
        self._emptied(src)
        self._attach(dst, first, cut, counts)


class _Hops:
    """What each queue head of one step would do if it crossed: where it arrives
    (``y``), whether it is delivered (``done``), reaches Valiant's intermediate node
    (``switch``) and waits there (``to_buffer``, if ``buffered``: a barrier or the
    intermediate node buffer) or goes on (``transit``) into queue ``next_q``. The heads'
    places ``pos``, current targets ``target`` and destinations ``dst`` are given per
    head."""

    def __init__(self, k: int, heads: np.ndarray, links: np.ndarray, pos: np.ndarray,
                 target: np.ndarray, dst: np.ndarray, buffered: bool):
        self.heads, self.links = heads, links
        self.dim = links % k
        self.y = pos ^ (np.int64(1) << self.dim)
        reached = self.y == target
        self.done = reached & (target == dst)
        self.switch = reached & ~self.done            # Valiant: reached inter != dst
        ntarget = np.where(self.switch, dst, target)
        self.to_buffer = self.switch & buffered
        self.transit = ~self.done & ~self.to_buffer
        # the next link: of the queue a transit head enters, of the buffer one waits in
        self.next_q = np.zeros(heads.size, dtype=np.int64)
        t = ~self.done
        self.next_q[t] = queue_of(k, self.y[t], ntarget[t])


def ecube(k, src, dst, *, buffer=None, max_steps=None) -> StoreForwardRun:
    """e-cube routing (lowest differing dimension first); see :func:`route`."""
    return route(k, src, dst, algorithm="ecube", buffer=buffer, max_steps=max_steps)


def valiant(k, src, dst, *, seed=0, barrier: bool = False, buffer=None, intermediate=None,
            intermediate_buffer: bool = True, max_steps=None) -> StoreForwardRun:
    """Valiant's two phases through random intermediate nodes; see :func:`route`."""
    return route(k, src, dst, algorithm="valiant", buffer=buffer, barrier=barrier, seed=seed,
                 intermediate=intermediate, intermediate_buffer=intermediate_buffer,
                 max_steps=max_steps)
