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

Vectorisation
-------------
The state is per message (node, state, link or buffer entry, order key); a step sorts
the messages in link queues by (link, order) to find the heads, and the admissions and
refills by (queue, rank). e-cube on a random permutation of the 16-cube (65,536
messages, 16 steps) takes about 0.3 s in :func:`route` (1.0 s for the whole command,
imports included, on 2 cores); Valiant about 0.9 s.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import ParameterError
from .cube import check_dimension, check_routing
from ..seeds import generator

__all__ = ["ALGORITHMS", "StoreForwardRun", "BitTimes", "route", "ecube", "valiant",
           "next_dimension", "default_header_bits"]

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
        if isinstance(message_bits, bool) or not isinstance(message_bits, (int, np.integer)) \
                or message_bits < 1:
            raise ParameterError(f"message_bits must be an integer >= 1, got {message_bits!r}")
        if header_bits is None:
            header_bits = default_header_bits(self.k, self.algorithm)
        if isinstance(header_bits, bool) or not isinstance(header_bits, (int, np.integer)) \
                or header_bits < 0:
            raise ParameterError(f"header_bits must be an integer >= 0, got {header_bits!r}")
        wire = int(message_bits) + int(header_bits)
        if isinstance(hop_delay, bool) or not isinstance(hop_delay, (int, np.integer)) or not (
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


def _check_buffer(buffer):
    if buffer is None:
        return None
    if isinstance(buffer, bool) or not isinstance(buffer, (int, np.integer)) or not (
            1 <= int(buffer) <= MAX_BUFFER):
        raise ParameterError(f"buffer must be an integer in [1, {MAX_BUFFER}] "
                             f"(or None: unbounded), got {buffer!r}")
    return int(buffer)


def route(k, src, dst, *, algorithm: str = "ecube", buffer=None, barrier: bool = False,
          seed=0, intermediate=None, intermediate_buffer: bool = True,
          max_steps=None) -> StoreForwardRun:
    """Route messages ``src[m] -> dst[m]`` (any map) on the ``k``-cube, store-and-forward.

    ``algorithm`` ``"ecube"`` or ``"valiant"``; ``buffer`` the link-queue bound ``B``
    (``None``: unbounded); Valiant: ``barrier``, ``intermediate_buffer`` and the
    intermediate nodes (``intermediate``, or drawn from ``seed``). ``max_steps`` (None:
    no limit) stops the run early. The rules are the module docstring's.
    """
    k = check_dimension(k)
    src, dst = check_routing(k, src, dst, injective=False)
    if algorithm not in ALGORITHMS:
        raise ParameterError(f"algorithm must be one of {', '.join(ALGORITHMS)}, "
                             f"got {algorithm!r}")
    B = _check_buffer(buffer)
    if max_steps is not None and (isinstance(max_steps, bool) or not isinstance(
            max_steps, (int, np.integer)) or max_steps < 0):
        raise ParameterError(f"max_steps must be an integer >= 0 (or None), got {max_steps!r}")
    n, m = 1 << k, src.size
    valiant = algorithm == "valiant"
    barrier = bool(barrier) and valiant
    inter = None
    if valiant:
        if intermediate is None:
            rng = generator(seed, "intermediates")
            inter = rng.integers(0, n, size=m, dtype=np.int64)
        else:
            inter = np.asarray(intermediate, dtype=np.int64).reshape(-1)
            if inter.size != m:
                raise ParameterError(f"intermediate must give one node per message: "
                                     f"{m} messages, {inter.size} intermediates")
            bad = np.flatnonzero((inter < 0) | (inter >= n))
            if bad.size:
                raise ParameterError(f"message {int(bad[0])}: intermediate must be a node in "
                                     f"[0, {n - 1}], got {int(inter[bad[0]])}")
        target = inter.copy()
    elif intermediate is not None:
        raise ParameterError("intermediate is a Valiant parameter: algorithm must be valiant")
    else:
        target = dst.copy()
    inter_buf = bool(intermediate_buffer)

    pos = src.copy()
    if valiant:
        phase1 = inter != src                  # has phase-1 hops still to make
        target = np.where(phase1, inter, dst)  # phase 1: inter; phase 2: dst
        done0 = ~phase1 & (dst == src)
    else:
        phase1 = np.zeros(m, dtype=bool)
        done0 = dst == src
    state = np.full(m, WAITING, dtype=np.int8)
    q = np.zeros(m, dtype=np.int64)
    seq = np.zeros(m, dtype=np.int64)
    delivery = np.full(m, -1, dtype=np.int64)
    hops = np.zeros(m, dtype=np.int64)
    occ = np.zeros(n * k, dtype=np.int64)
    log = {"step": [], "message": [], "link": [], "phase": [], "ends_phase1": []}

    # Step 0: at the sources.
    state[done0] = DONE
    delivery[done0] = 0
    if barrier:
        hold0 = ~done0 & ~phase1
        state[hold0] = HELD
    w = np.flatnonzero(state == WAITING)
    q[w] = pos[w] * k + _lowdim(pos[w] ^ target[w])
    seq[w] = np.arange(w.size)
    counter = w.size
    released = not barrier
    phase1_steps = None

    def release(step):
        nonlocal counter, released
        if released or phase1.any():
            return False
        released = True
        h = np.flatnonzero(state == HELD)
        state[h] = WAITING
        q[h] = pos[h] * k + _lowdim(pos[h] ^ dst[h])
        seq[h] = counter + np.arange(h.size)
        counter += h.size
        return True

    def refill():
        nonlocal counter
        w = np.flatnonzero(state == WAITING)
        if w.size == 0:
            return
        if B is not None:
            o = w[np.lexsort((seq[w], q[w]))]
            qo = q[o]
            start = np.r_[0, np.flatnonzero(qo[1:] != qo[:-1]) + 1]
            rank = np.arange(o.size) - np.repeat(start, np.diff(np.r_[start, o.size]))
            w = o[rank < B - occ[qo]]
            w = w[np.argsort(seq[w], kind="stable")]
        else:
            w = w[np.argsort(seq[w], kind="stable")]
        state[w] = QUEUED
        seq[w] = counter + np.arange(w.size)
        counter += w.size
        occ[:] += np.bincount(q[w], minlength=occ.size)

    if barrier and release(0):
        phase1_steps = 0
    refill()
    max_queue = int(occ.max(initial=0))

    def node_stats():
        und = state != DONE
        per_node = int(np.bincount(pos[und], minlength=1).max(initial=0)) if und.any() else 0
        buf = (state == WAITING) | (state == HELD)
        per_buf = int(np.bincount(pos[buf], minlength=1).max(initial=0)) if buf.any() else 0
        return per_node, per_buf

    max_per_node, max_buf = node_stats()
    step = 0
    stopped = "delivered"
    last_delivery = 0
    while (state != DONE).any():
        if max_steps is not None and step >= max_steps:
            stopped = "max_steps"
            break
        step += 1
        active = np.flatnonzero(state == QUEUED)
        moved_any = False
        if active.size:
            o = active[np.lexsort((seq[active], q[active]))]
            qo = q[o]
            first = np.ones(o.size, dtype=bool)
            first[1:] = qo[1:] != qo[:-1]
            heads, hl = o[first], qo[first]
            dim = hl % k
            y = pos[heads] ^ (np.int64(1) << dim)
            tgt = target[heads]
            reached = y == tgt
            done = reached & (tgt == dst[heads])
            switch = reached & ~done            # Valiant: reached inter != dst
            ntarget = np.where(switch, dst[heads], tgt)
            to_buffer = switch & (barrier | inter_buf)
            transit = ~done & ~to_buffer
            tq = np.zeros(heads.size, dtype=np.int64)
            tq[transit] = y[transit] * k + _lowdim(y[transit] ^ ntarget[transit])
            moves = ~transit
            ti = np.flatnonzero(transit)
            if B is None:
                moves[ti] = True
            elif ti.size:
                oo = ti[np.argsort(tq[ti] * k + dim[ti], kind="stable")]
                tqo = tq[oo]
                start = np.r_[0, np.flatnonzero(tqo[1:] != tqo[:-1]) + 1]
                rank = np.arange(oo.size) - np.repeat(start, np.diff(np.r_[start, oo.size]))
                moves[oo[rank < B - occ[tqo]]] = True
            mv = np.flatnonzero(moves)
            if mv.size:
                moved_any = True
                hm = heads[mv]
                occ[hl[mv]] -= 1
                pos[hm] = y[mv]
                hops[hm] += 1
                log["step"].append(np.full(mv.size, step, dtype=np.int64))
                log["message"].append(hm)
                log["link"].append(hl[mv])
                log["phase"].append(np.where(phase1[hm], 1, 2).astype(np.int8))
                log["ends_phase1"].append(switch[mv] | (done[mv] & phase1[hm]))
                # Delivered.
                dm = hm[done[mv]]
                state[dm] = DONE
                delivery[dm] = step
                phase1[dm] = False
                if dm.size:
                    last_delivery = step
                # Phase change (Valiant).
                sm = hm[switch[mv]]
                phase1[sm] = False
                target[sm] = dst[sm]
                # Order of arrivals: the dimension they crossed, lowest first.
                order = mv[np.argsort(dim[mv], kind="stable")]
                bm = order[to_buffer[order]]
                if bm.size:
                    bmsg = heads[bm]
                    if barrier:
                        state[bmsg] = HELD
                    else:
                        state[bmsg] = WAITING
                        q[bmsg] = pos[bmsg] * k + _lowdim(pos[bmsg] ^ dst[bmsg])
                        seq[bmsg] = counter + np.arange(bm.size)
                        counter += bm.size
                tm = order[transit[order]]
                if tm.size:
                    tmsg = heads[tm]
                    q[tmsg] = tq[tm]
                    seq[tmsg] = counter + np.arange(tm.size)
                    counter += tm.size
                    occ[:] += np.bincount(tq[tm], minlength=occ.size)
        rel = False
        if barrier and not released:
            rel = release(step)
            if rel:
                phase1_steps = step
        if not moved_any and not rel:
            stopped = "deadlock"
            step -= 1          # nothing happened in this step
            break
        refill()
        max_queue = max(max_queue, int(occ.max(initial=0)))
        a, b = node_stats()
        max_per_node, max_buf = max(max_per_node, a), max(max_buf, b)

    crossings = {key: (np.concatenate(v) if v else
                       np.zeros(0, dtype=np.int8 if key == "phase" else
                                bool if key == "ends_phase1" else np.int64))
                 for key, v in log.items()}
    final = pos.copy()
    return StoreForwardRun(k=k, algorithm=algorithm, buffer=B, barrier=barrier,
                           intermediate_buffer=inter_buf, src=src, dst=dst,
                           intermediate=inter, delivery_step=delivery, final=final,
                           hops=hops, steps=int(last_delivery), steps_run=int(step),
                           max_queue=max_queue, max_node_buffer=max_buf,
                           max_messages_per_node=max_per_node, stopped=stopped,
                           phase1_steps=phase1_steps, crossings=crossings)


def ecube(k, src, dst, *, buffer=None, max_steps=None) -> StoreForwardRun:
    """e-cube routing (lowest differing dimension first); see :func:`route`."""
    return route(k, src, dst, algorithm="ecube", buffer=buffer, max_steps=max_steps)


def valiant(k, src, dst, *, seed=0, barrier: bool = False, buffer=None, intermediate=None,
            intermediate_buffer: bool = True, max_steps=None) -> StoreForwardRun:
    """Valiant's two phases through random intermediate nodes; see :func:`route`."""
    return route(k, src, dst, algorithm="valiant", buffer=buffer, barrier=barrier, seed=seed,
                 intermediate=intermediate, intermediate_buffer=intermediate_buffer,
                 max_steps=max_steps)
