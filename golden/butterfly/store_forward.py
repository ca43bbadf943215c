"""Store-and-forward greedy routing, exactly as the paper's Sec. IV, vectorised.

The paper's rule
----------------
"At each time step, a switch was allowed to send a message along an edge provided that
at the end of the previous step the number of messages in the switch at the end of the
edge was at most 4." Messages are indivisible; every edge carries at most one message
per step; outputs absorb what they receive. The completion time is the step at which the
last message reaches its output (steps are numbered from 1, so a message that is never
held up arrives at step ``depth``). A message is *delayed* when it starts a step at a
non-output switch and does not move in that step; Table III's circuit-switching figure
is the fraction of messages never delayed.

Rules the paper leaves open (our choices, each selectable in :class:`Rules`)
---------------------------------------------------------------------------
* **One hop per step.** A message that arrives at a switch in step ``s`` may leave in
  step ``s + 1`` at the earliest.
* **Which messages a switch sends** (``queue``). A switch serves each group (up / down /
  a matching's only group / a complete stage's output) separately: in every step it
  sends, for each group, as many messages as that group has *available* edges (edges
  whose head held at most ``threshold`` messages at the end of the previous step, and is
  neither faulty nor declared faulty; edges into outputs are always available), taking
  its messages for that group in priority order. ``"fifo"`` (default): earliest arrival
  at this switch first; messages that arrived in the same step are ordered by the
  incoming edge they came on (the hardware's input-wire order, ``(source row, slot)``),
  and messages that start at an input by problem index. ``"lifo"``: latest arrival
  first (same tie-breaks). ``"random"``: a fresh random order every step.
* **Which edge** (``edge_choice``) the ``r``-th message of a group takes among the
  available edges: ``"first"`` (default): the ``r``-th available in slot order;
  ``"random"``: a random order of the group's slots, drawn per switch and step;
  ``"least-loaded"``: available edges sorted by their head's count at the end of the
  previous step (slot order among equals).
* **Ties** (``tie``) among messages that arrived in the same step: ``"in-edge"``
  (default, see above) or ``"random"``.
* Several problems at once (Table II's "10" and "10T") all start at time 0, input ``i``
  holding one message per problem.

There is no arbitration between switches: two switches may send to one head in the
same step (the threshold looks at the previous step's count), so a head can momentarily
hold ``threshold`` plus its in-degree messages.

Vectorisation
-------------
Many trials (networks of one shape, each with its own wiring, faults and problems) are
simulated at once as one disjoint union. Every step finds the first ``d`` messages of
every queue (switch, group) by repeated per-queue minima of their priorities
(``np.minimum.at``), looks up the available edges of every message's group (most
messages are at the front of their queue; one behind it never moves), and moves the
front messages that have an edge, by selections over every message (``np.where``)
rather than scatters to the movers. The occupancy counts are counted afresh every
step (one ``np.bincount``, cheaper than updating them at every mover's two switches).

Streaming
---------
At an input no message ever arrives, so each input queue's order is fixed from the
start and only its first ``d`` messages can move. Those alone take part in a step; each
one that leaves is replaced by the next of its queue (:class:`_InputQueues`). A step's
work is then proportional to the messages inside the network, not to the problems
waiting at the inputs (``--problems 100000`` on 8 inputs: a few hundred messages a
step, not 800,000). The results are those of routing every message in every step
(``stream_inputs=False``; tested on random networks, faults, problems and rules).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..allocator import keep_freed_memory
from ..errors import ParameterError
from ..seeds import generator
from .topology import SplitterNetwork

__all__ = ["Rules", "StoreForwardResult", "prepare_networks", "route_store_forward",
           "stack_networks"]

QUEUES = ("fifo", "lifo", "random")
EDGE_CHOICES = ("first", "random", "least-loaded")
TIES = ("in-edge", "random")

_TIE_BITS = 16          # tie-break field of a message's priority
_MAX_STEPS_DEFAULT = 1 << 20
_NO_PRIO = np.iinfo(np.int64).max
#: Steps between two reports to a progress callback.
PROGRESS_STEPS = 1024


@dataclass(frozen=True)
class Rules:
    """Open rules of the greedy store-and-forward algorithm (module docstring)."""

    threshold: int = 4
    queue: str = "fifo"
    edge_choice: str = "first"
    tie: str = "in-edge"

    @property
    def draws(self) -> bool:
        """Whether routing under these rules draws random numbers (from one stream per
        call of :func:`route_store_forward`)."""
        return "random" in (self.queue, self.edge_choice, self.tie)

    def __post_init__(self):
        if self.threshold < 0:
            raise ParameterError(f"threshold must be >= 0, got {self.threshold}")
        for name, value, allowed in (("queue", self.queue, QUEUES),
                                     ("edge_choice", self.edge_choice, EDGE_CHOICES),
                                     ("tie", self.tie, TIES)):
            if value not in allowed:
                raise ParameterError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")


@dataclass
class StoreForwardResult:
    """Outcome of routing ``trials`` problem sets.

    Attributes
    ----------
    steps : (trials,) int array
        Completion time of each trial (step of its last delivery; 0 if it had no message).
    messages, delivered, undelayed : (trials,) int arrays
        Messages injected, delivered (always all of them: every message is delivered
        exactly once; a message that cannot move for ``max_steps`` steps raises), and
        never delayed.
    delivery_step : (trials, problems, N) int array
        Step at which each message reached its output (-1: no message).
    waits_by_level : (levels,) int array
        Message-steps spent waiting at each internal level, summed over trials (where
        the congestion is).
    """

    steps: np.ndarray
    messages: np.ndarray
    delivered: np.ndarray
    undelayed: np.ndarray
    delivery_step: np.ndarray
    rules: Rules = field(default_factory=Rules)
    waits_by_level: np.ndarray = field(kw_only=True)

    @property
    def undelayed_fraction(self) -> np.ndarray:
        """Per trial: fraction of messages that were never delayed (Table III)."""
        return self.undelayed / np.maximum(self.messages, 1)


def stack_networks(networks) -> dict:
    """Stack networks of one shape into the arrays the simulators use.

    Returns a dict with ``heads (T, L, N, K)``, ``blocked (T, L + 1, N)``,
    ``in_rank (T, L, N, K)`` and the shared per-level arrays.
    """
    if isinstance(networks, SplitterNetwork):
        networks = [networks]
    first = networks[0]
    for net in networks[1:]:
        if (net.heads.shape != first.heads.shape or net.level_kind != first.level_kind
                or not np.array_equal(net.edges_per_group, first.edges_per_group)):
            raise ParameterError("networks must all have the same kind, inputs and multiplicity")
    return {
        "heads": np.stack([net.heads for net in networks]),
        "blocked": np.stack([net.blocked() for net in networks]),
        "in_rank": np.stack([net.in_edge_rank() for net in networks]),
        "group_shift": first.group_shift, "group_mask": first.group_mask,
        "edges_per_group": first.edges_per_group, "inputs": first.inputs,
    }


def _problems_array(problems, trials: int, inputs: int) -> np.ndarray:
    arr = np.asarray(problems, dtype=np.int64)
    if arr.ndim != 3:
        raise ParameterError(f"problems must have 1, 2 or 3 dimensions, got {arr.ndim}")
    if arr.shape[0] == 1 and trials > 1:
        arr = np.broadcast_to(arr, (trials,) + arr.shape[1:])
    if arr.shape[0] != trials or arr.shape[2] != inputs:
        raise ParameterError(
            f"problems must have shape (trials={trials}, P, inputs={inputs}), got {arr.shape}")
    if arr.size and (arr.min() < -1 or arr.max() >= inputs):
        raise ParameterError(f"destinations must be in [0, {inputs - 1}] (or -1: no message)")
    return arr


@dataclass
class _Fabric:
    """The stacked networks' arrays the routing reads, one network per trial."""

    trials: int
    depth: int
    inputs: int
    #: the position of the head of (trial, level, row, slot), levels 0 .. depth (a
    #: switch's position is its flat (trial, level, row); no edge: :attr:`nowhere`),
    #: with that edge's in-edge order (:meth:`edge_head`, :meth:`edge_rank`)
    edges: np.ndarray
    rank_bits: int              #: the low bits of :attr:`edges` holding the in-edge order
    blocked_flat: np.ndarray    #: per position, faulty or declared faulty (nowhere: True)
    output_flat: np.ndarray     #: per position, an output (the last level)
    shift: np.ndarray           #: per level, the destination's group bits' shift
    mask: np.ndarray            #: per level, their mask
    per_group: np.ndarray       #: per level, the edges of a group (d)
    n_slots: int

    @property
    def levels(self) -> int:
        return self.depth + 1

    def edge_head(self, edge: np.ndarray) -> np.ndarray:
        """The head positions of entries of :attr:`edges` (one lookup gives both the head
        and the in-edge order a mover's priority needs)."""
        return edge >> self.rank_bits

    def edge_rank(self, edge: np.ndarray) -> np.ndarray:
        """The in-edge orders of entries of :attr:`edges`."""
        return edge & ((1 << self.rank_bits) - 1)

    @property
    def nowhere(self) -> int:
        """The position past the last switch: the head of a slot without an edge, never
        enterable (the per-position arrays have it as their last entry)."""
        return self.trials * self.levels * self.inputs

    def input_index(self, pos: np.ndarray) -> np.ndarray:
        """``trial * inputs + row`` of positions at level 0."""
        trial = pos // (self.levels * self.inputs)
        return pos - trial * (self.depth * self.inputs)

    @property
    def d_max(self) -> int:
        return int(self.per_group.max())

    @property
    def n_groups(self) -> int:
        return int(self.mask.max()) + 1


_MESSAGE_FIELDS = ("msg_id", "dest", "level", "pos", "prio", "clean")


@dataclass
class _Messages:
    """The messages in flight, one entry per (trial, problem, input) with a message,
    compacted as messages finish."""

    msg_id: np.ndarray      #: index into the flat problems array
    dest: np.ndarray
    level: np.ndarray
    pos: np.ndarray         #: the switch's position, flat (trial, level, row)
    prio: np.ndarray        #: arrival step << _TIE_BITS | tie-break
    clean: np.ndarray       #: never delayed so far

    def occupancy(self, fabric: _Fabric) -> np.ndarray:
        """Messages per position (:attr:`_Fabric.nowhere` included)."""
        return np.bincount(self.pos, minlength=fabric.nowhere + 1)

    def keep(self, keep: np.ndarray) -> None:
        """Keep the messages at the indices ``keep``, in that order (``take``: a
        boolean mask as an index is several times slower)."""
        for name in _MESSAGE_FIELDS:
            setattr(self, name, getattr(self, name).take(keep))

    def keep_where(self, mask: np.ndarray) -> None:
        """Keep the messages where ``mask`` is True, in their order (``compress``: no
        index array)."""
        for name in _MESSAGE_FIELDS:
            setattr(self, name, getattr(self, name).compress(mask))


def prepare_networks(networks, trials: int = 1) -> _Fabric:
    """The arrays :func:`route_store_forward` reads of ``networks`` (one per trial; a
    single network is repeated ``trials`` times), for routing several problem sets
    through the same networks without stacking them again."""
    if isinstance(networks, SplitterNetwork):
        networks = [networks]
    arrays = stack_networks(networks)
    heads, blocked, in_rank = arrays["heads"], arrays["blocked"], arrays["in_rank"]
    if heads.shape[0] == 1 and trials > 1:  # one network, many problem sets
        heads = np.broadcast_to(heads, (trials,) + heads.shape[1:])
        blocked = np.broadcast_to(blocked, (trials,) + blocked.shape[1:])
        in_rank = np.broadcast_to(in_rank, (trials,) + in_rank.shape[1:])
    trials, depth, inputs, _ = heads.shape
    nowhere = trials * (depth + 1) * inputs
    edges, rank_bits = _edge_entries(heads, in_rank, nowhere)
    return _Fabric(
        trials=trials, depth=depth, inputs=inputs, edges=edges, rank_bits=rank_bits,
        blocked_flat=np.append(blocked.reshape(-1), True),
        output_flat=np.append(np.broadcast_to(np.arange(depth + 1)[None, :, None] == depth,
                                              blocked.shape).reshape(-1), False),
        shift=arrays["group_shift"], mask=arrays["group_mask"],
        per_group=arrays["edges_per_group"], n_slots=heads.shape[3])


def _fabric_and_problems(networks, problems) -> tuple[_Fabric, np.ndarray]:
    """The networks stacked (or as :func:`prepare_networks` stacked them) and the
    problems as ``(trials, P, inputs)``; one network is broadcast to every problem
    set."""
    prob = np.asarray(problems, dtype=np.int64)
    # the new shape as separate ints: for a tuple argument numpy's stubs (Python 3.10)
    # pick the overload of shape ()
    prob = prob.reshape(*(1,) * (3 - prob.ndim), *prob.shape)
    fabric = (networks if isinstance(networks, _Fabric)
              else prepare_networks(networks, prob.shape[0]))
    prob = _problems_array(prob, fabric.trials, fabric.inputs)
    blocked_inputs = fabric.blocked_flat[:-1].reshape(fabric.trials, fabric.levels, -1)[:, 0]
    if (blocked_inputs[:, None, :] & (prob >= 0)).any():
        raise ParameterError("a message starts at a faulty or declared-faulty input")
    return fabric, prob


def _edge_entries(heads: np.ndarray, in_rank: np.ndarray, nowhere: int) -> tuple[np.ndarray, int]:
    """Every edge as ``head << rank_bits | in-edge order`` and ``rank_bits``: ``head``
    the flat position (trial, level + 1, row) of its head, ``nowhere`` (order 0) for a
    slot without an edge, a last level (the outputs') of such slots added: a switch's
    slot ``k`` is entry ``position * slots + k``."""
    trials, depth, inputs, slots = heads.shape
    rank_bits = max(int(in_rank.max(initial=0)).bit_length(), 1)
    # half the memory where it fits
    dtype = np.int32 if (nowhere + 1) << rank_bits <= 2 ** 31 else np.int64
    level_base = ((np.arange(trials)[:, None] * (depth + 1) + np.arange(1, depth + 1)[None, :])
                  * inputs).astype(dtype)
    out = np.full((trials, depth + 1, inputs, slots), nowhere << rank_bits, dtype=dtype)
    out[:, :depth] = np.where(heads >= 0, ((heads + level_base[:, :, None, None]) << rank_bits)
                              + np.maximum(in_rank, 0), nowhere << rank_bits)
    return out.reshape(-1), rank_bits


def _initial_messages(fabric: _Fabric, prob: np.ndarray) -> _Messages:
    """Every message at its input (level 0), arrival step 0, ties by problem."""
    t_idx, p_idx, src = np.meshgrid(np.arange(fabric.trials), np.arange(prob.shape[1]),
                                    np.arange(fabric.inputs), indexing="ij")
    msg_id = np.flatnonzero((prob >= 0).ravel())
    pos = t_idx.ravel()[msg_id] * (fabric.levels * fabric.inputs) + src.ravel()[msg_id]
    return _Messages(msg_id=msg_id, dest=prob.ravel()[msg_id],
                     level=np.zeros(msg_id.size, dtype=np.int64), pos=pos,
                     prio=p_idx.ravel()[msg_id].astype(np.int64),
                     clean=np.ones(msg_id.size, dtype=bool))


class _InputQueues:
    """The messages waiting at the inputs, in their queues' order, streamed in.

    At an input (level 0) no message ever arrives, so the order of each queue (input,
    group) is fixed from the start: its first ``d`` messages are the ones that may
    move, and a message behind them cannot move before one of them has left. Only
    those first ``d`` are *active* (in :class:`_Messages`); each one that leaves is
    replaced by the next of its queue. A message still waiting here after step 1 has
    been delayed, and each step every message still held back counts as a wait at
    level 0: the results are those of routing every message in every step.
    """

    def __init__(self, fabric: _Fabric, msgs: _Messages, rules: Rules):
        self.d = int(fabric.per_group[0])
        self.n_groups = fabric.n_groups
        group = (msgs.dest >> fabric.shift[0]) & fabric.mask[0]
        queue = self.queue_of(fabric, msgs.pos, group)
        key = _priorities(rules, msgs, None)   # fifo or lifo: no draw
        self.order = np.lexsort((key, queue))
        sizes = np.bincount(queue, minlength=fabric.trials * fabric.inputs * self.n_groups)
        self.start = np.r_[0, np.cumsum(sizes)[:-1]]
        self.end = self.start + sizes
        self.next = self.start + np.minimum(sizes, self.d)
        self.pending = int(msgs.msg_id.size - (self.next - self.start).sum())
        self.all = msgs

    def queue_of(self, fabric: _Fabric, pos, group) -> np.ndarray:
        """The id of an input queue: (trial, input row, group), from the position."""
        return fabric.input_index(pos) * self.n_groups + group

    def _take(self, positions: np.ndarray, clean: bool) -> _Messages:
        """The messages at these positions of the queues' order, activated."""
        idx = self.order[positions]
        return _Messages(msg_id=self.all.msg_id[idx], dest=self.all.dest[idx],
                         level=self.all.level[idx], pos=self.all.pos[idx],
                         prio=self.all.prio[idx], clean=np.full(idx.size, clean))

    def first_window(self) -> _Messages:
        """The first ``d`` messages of every queue (the rest wait in the queues)."""
        offset = np.arange(self.order.size) - np.repeat(self.start, self.end - self.start)
        first = np.flatnonzero(offset < self.d)
        active = self._take(first, True)
        return self._sorted(active)

    @staticmethod
    def _sorted(msgs: _Messages) -> _Messages:
        """In message order (the order the random tie-break draws in)."""
        msgs.keep(np.argsort(msgs.msg_id, kind="stable"))
        return msgs

    def refill(self, msgs: _Messages, left: np.ndarray, left_rank: np.ndarray,
               in_order: bool) -> _Messages:
        """Replace each message that ``left`` its queue by the queue's next one;
        ``left_rank``: the leavers' ranks in their queues (a queue's leavers are its
        first ``k``, ranks ``0 .. k - 1``, and the ``r``-th is replaced by the queue's
        ``r``-th next message: no sort to group them); ``in_order``: keep the active
        messages in message order."""
        if left.size == 0 or self.pending == 0:
            return msgs
        positions = self.next.take(left) + left_rank
        inside = positions < self.end.take(left)
        if not inside.any():
            return msgs
        positions = positions[inside]
        np.add.at(self.next, left[inside], 1)
        self.pending -= positions.size
        new = self._take(positions, False)   # held back at step 1: delayed
        for name in _MESSAGE_FIELDS:
            setattr(msgs, name, np.concatenate([getattr(msgs, name), getattr(new, name)]))
        return self._sorted(msgs) if in_order else msgs


def route_store_forward(networks, problems, rules: Rules | None = None,
                        seed: int = 0, max_steps: int = _MAX_STEPS_DEFAULT,
                        stream_inputs: bool = True, progress=None) -> StoreForwardResult:
    """Route problems through networks with the greedy store-and-forward algorithm.

    Parameters
    ----------
    networks : SplitterNetwork, sequence of them (one shape), or prepare_networks' arrays
        One network per trial (a single network is used for every trial).
    problems : array, shape (N,), (P, N) or (trials, P, N)
        ``problems[t, p, i]`` is the destination of problem ``p``'s message from input
        ``i`` in trial ``t``; ``-1`` means input ``i`` has no message in problem ``p``.
    rules : Rules
        The open rules; default :class:`Rules()`.
    seed : int
        Seeds the random rule variants (unused by the deterministic defaults).
    max_steps : int
        Safety bound; exceeding it raises ``RuntimeError`` (it cannot happen in a
        network whose faults were propagated: outputs always absorb).
    stream_inputs : bool
        Keep the messages that wait at an input behind the first ``d`` of their queue
        out of every step's work and stream them in as the queue moves (module
        docstring, "Streaming"); the results are the same either way (``False`` is
        the reference the tests compare with). A ``"random"`` queue needs every
        message in every step's draw and never streams.
    progress : callable(done, total, what), optional
        Told the messages delivered of all, every :data:`PROGRESS_STEPS` steps.

    Returns
    -------
    StoreForwardResult
    """
    rules = rules or Rules()
    keep_freed_memory()   # every step's temporaries reuse the last step's memory
    fabric, prob = _fabric_and_problems(networks, problems)
    trials = fabric.trials
    rng = generator(seed, "arbitration")
    msgs = _initial_messages(fabric, prob)
    inputs = (_InputQueues(fabric, msgs, rules)
              if stream_inputs and rules.queue != "random" else None)
    if inputs is not None:
        msgs = inputs.first_window()
    # messages absorbed per output: an output's count, which the least-loaded edge
    # choice compares (the messages are gone from ``msgs``)
    absorbed = np.zeros(fabric.nowhere + 1, dtype=np.int64)
    present = prob >= 0
    delivery: np.ndarray = np.zeros(prob.size, dtype=np.int64)
    undelayed_flat = np.zeros(prob.size, dtype=bool)
    waits = np.zeros(fabric.levels, dtype=np.int64)
    qmin = np.full(trials * fabric.levels * fabric.inputs * fabric.n_groups, _NO_PRIO,
                   dtype=np.int64)
    step = finished = 0
    total = int(present.sum())
    while msgs.msg_id.size:
        step += 1
        if step > max_steps:
            raise RuntimeError(f"store-and-forward routing did not finish in {max_steps} steps")
        left, left_rank = _route_step(fabric, msgs, rules, rng, step, qmin, waits, absorbed)
        done = msgs.level == fabric.depth
        if done.any():
            fin = np.flatnonzero(done)
            finished_ids = msgs.msg_id.take(fin)
            delivery[finished_ids] = step
            undelayed_flat[finished_ids] = msgs.clean.take(fin)
            np.add.at(absorbed, msgs.pos.take(fin), 1)
            msgs.keep_where(~done)
            finished += fin.size
        if progress is not None and step % PROGRESS_STEPS == 0:
            progress(finished, total, "store-and-forward")
        if inputs is not None:
            waits[0] += inputs.pending
            msgs = inputs.refill(msgs, left, left_rank, rules.tie == "random")
    delivery = delivery.reshape(prob.shape)
    present_count = present.reshape(trials, -1).sum(1)
    delivered = ((delivery > 0) & present).reshape(trials, -1).sum(1)
    return StoreForwardResult(
        steps=delivery.reshape(trials, -1).max(1, initial=0),
        messages=present_count, delivered=delivered,
        undelayed=undelayed_flat.reshape(trials, -1).sum(1),
        delivery_step=np.where(present, delivery, -1), rules=rules, waits_by_level=waits)


def _route_step(fabric: _Fabric, msgs: _Messages, rules: Rules, rng, step: int,
                qmin: np.ndarray, waits: np.ndarray,
                absorbed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One step: every queue's front messages move along the edges available to them
    (``msgs`` updated in place, ``waits`` counts the messages that stay, per level;
    ``absorbed``: the messages each output has absorbed).

    Every message's edges are looked at, not only the front messages' (most messages
    are at the front of their queue, and one selection of them cost more than the
    lookups it saved): a message behind the front has rank ``d_max``, which no count
    of available edges reaches, so it stays.

    Returns the input queue (:meth:`_InputQueues.queue_of`) of every message that
    left an input in this step, and its rank in that queue.
    """
    d_max, n_groups = fabric.d_max, fabric.n_groups
    counts = msgs.occupancy(fabric)          # (at the inputs: the active ones alone,
    if rules.edge_choice == "least-loaded":  # which no edge enters)
        counts += absorbed
    group = (msgs.dest >> fabric.shift.take(msgs.level)) & fabric.mask.take(msgs.level)
    d_here = fabric.per_group.take(msgs.level)
    queue_id = msgs.pos * n_groups + group
    rank = _queue_ranks(queue_id, _priorities(rules, msgs, rng), d_here, d_max, qmin)
    edge, avail, rows = _group_edges(fabric, msgs, group, d_here, counts, rules.threshold)
    chosen, n_avail = _choose_edges(rules, rng, fabric, avail, rows, rank, queue_id, edge,
                                    counts, d_max)
    moves = rank < n_avail
    msgs.clean &= moves                     # who stays has been delayed
    # the messages that stay, per level
    waits += np.bincount(msgs.level.compress(~moves), minlength=fabric.levels)
    leaving = moves & (msgs.level == 0)
    left = fabric.input_index(msgs.pos.compress(leaving)) * n_groups
    left += group.compress(leaving)
    _move(fabric, msgs, moves, _taken_edges(edge, chosen, d_max), rules, rng, step)
    return left, rank.compress(leaving)


def _taken_edges(edge: np.ndarray, chosen: np.ndarray, d_max: int) -> np.ndarray:
    """Each message's edge at its chosen slot offset (meaningful where it moves): one
    selection per offset, sequential passes rather than a gather."""
    used = edge[0]
    for j in range(1, d_max):
        used = np.where(chosen == j, edge[j], used)
    return used


def _move(fabric: _Fabric, msgs: _Messages, moves, used, rules: Rules, rng,
          step: int) -> None:
    """Move the messages where ``moves`` along their ``used`` edges: selections over
    every message (sequential passes, cheaper than scattering to the movers' indices;
    ``np.where`` is also about twice as fast as ``np.copyto(..., where=)``)."""
    new_pos = fabric.edge_head(used)
    if rules.tie == "in-edge":
        tie = fabric.edge_rank(used)
    else:                                   # one draw per mover, in message order
        tie = np.zeros(used.size, dtype=np.int64)
        tie[moves] = rng.integers(0, 1 << 8, size=np.count_nonzero(moves))
    tie += np.int64(step << _TIE_BITS)
    msgs.prio = np.where(moves, tie, msgs.prio)
    msgs.pos = np.where(moves, new_pos, msgs.pos)
    msgs.level += moves


def _priorities(rules: Rules, msgs: _Messages, rng) -> np.ndarray:
    """The order of the messages in their queues this step (lowest first)."""
    prio_step = np.int64(1) << _TIE_BITS
    if rules.queue == "random":
        return rng.permutation(msgs.msg_id.size).astype(np.int64)
    if rules.queue == "lifo":
        return -(msgs.prio >> _TIE_BITS) * prio_step + (msgs.prio & (prio_step - 1))
    return msgs.prio


def _queue_ranks(queue_id, prio, d_here, d_max: int, qmin: np.ndarray) -> np.ndarray:
    """Each message's place among the first d of its queue, ``d_max`` when it is not.

    Only the first d messages of a queue can move: find them by repeated per-queue
    minima (priorities are unique within a switch: one arrival per in-edge and step,
    one initial message per problem), which is much cheaper than sorting every waiting
    message. ``qmin`` (every entry ``_NO_PRIO``) is scratch space, left as it was.
    """
    # round 0: every message a candidate (no gather, no index of the candidates)
    np.minimum.at(qmin, queue_id, prio)
    is_first = prio == qmin.take(queue_id)
    qmin[queue_id] = _NO_PRIO             # reset only what was touched
    # one byte a rank (d_max, a group's edges, is at most the multiplicity, 64): the
    # passes over ranks move less
    rank = (~is_first).view(np.int8) * np.int8(d_max)    # 0 or d_max
    is_first |= d_here <= 1
    cand = np.flatnonzero(~is_first)      # the candidates of round 1
    for r in range(1, d_max):
        if cand.size == 0:
            break
        q_c, p_c = queue_id.take(cand), prio.take(cand)
        np.minimum.at(qmin, q_c, p_c)
        is_first = p_c == qmin.take(q_c)
        qmin[q_c] = _NO_PRIO
        rank[cand.compress(is_first)] = r
        cand = cand.compress(~is_first)
        cand = cand.compress(d_here.take(cand) > r + 1)
    return rank


def _group_edges(fabric: _Fabric, msgs: _Messages, group, d_here, counts, threshold: int):
    """The edges of every message's group: ``(edge, avail, rows)``, the first two
    ``(d_max, M)`` (the entry of :attr:`_Fabric.edges`, whether the edge is available),
    ``rows[j]`` None where every message's slot offset j was looked at, else the
    messages whose group has a slot j, the only ones looked at (``edge`` is unset
    elsewhere in that row, ``avail`` False).

    One pass per slot offset j (arrays of length M, not (M, d): numpy is slow on tiny
    inner axes); where most messages have a slot j, every message (past a group's last
    slot an edge is unavailable), else those alone (the 4 matchings of "*"'s level -1).
    """
    n_slots, d_max = fabric.n_slots, fabric.d_max
    # whether a message may enter each switch: not blocked, and an output or holding
    # at most ``threshold`` (one pass over the switches, not one per edge; nowhere is
    # blocked)
    enterable = (counts <= threshold) | fabric.output_flat
    enterable &= ~fabric.blocked_flat
    first = msgs.pos * n_slots
    first += group * d_here               # the flat (trial, level, row, group's slot 0)
    edge = np.empty((d_max, first.size), dtype=fabric.edges.dtype)   # (no cast in take)
    avail = np.zeros((d_max, first.size), dtype=bool)
    fabric.edges.take(first, out=edge[0])   # every group has a slot 0
    avail[0] = enterable.take(fabric.edge_head(edge[0]))
    rows: list = [None]
    at = None
    for j in range(1, d_max):
        if at is None:
            has = d_here > j
            if 2 * np.count_nonzero(has) > has.size:
                # past a group's last slot: another group's or the next switch's
                # (no message is at an output, the last positions), masked below
                fabric.edges.take(first + j, out=edge[j])
                avail[j] = enterable.take(fabric.edge_head(edge[j]))
                avail[j] &= has
                rows.append(None)
                continue
            at = np.flatnonzero(has)
        else:                             # a group with a slot j has every slot before
            at = at.compress(d_here.take(at) > j)
        e = fabric.edges.take(first.take(at) + j)
        edge[j, at] = e
        avail[j, at] = enterable.take(fabric.edge_head(e))
        rows.append(at)
    return edge, avail, rows


def _choose_edges(rules: Rules, rng, fabric: _Fabric, avail, rows, rank, queue_id, edge,
                  counts, d_max: int) -> tuple[np.ndarray, np.ndarray]:
    """The slot offset each message takes (meaningful where it moves): the ``rank``-th
    available edge in the rule's preference, identical for every message of one queue;
    and the available edges of each message's group (``rows``: as
    :func:`_group_edges` returns them)."""
    if rules.edge_choice != "first":
        return (_preferred_edges(rules, rng, avail, rank, queue_id,
                                 fabric.edge_head(edge), counts, d_max), avail.sum(0))
    # The r-th available slot in slot order: where the running count hits r + 1.
    # (one j hits it where the message moves: the sum of j over hits is that j)
    # (one byte each, as the ranks)
    chosen = np.zeros(rank.size, dtype=np.int8)
    running = avail[0].astype(np.int8)
    target = rank + 1
    for j in range(1, d_max):
        at = rows[j]
        if at is None:
            running += avail[j]
            chosen += (avail[j] & (running == target)) * np.int8(j)
            continue
        now = running.take(at) + avail[j].take(at)
        running[at] = now
        chosen[at] += (avail[j].take(at) & (now == target.take(at))) * np.int8(j)
    return chosen, running


def _preferred_edges(rules: Rules, rng, avail, rank, queue_id, head, counts,
                     d_max: int) -> np.ndarray:
    """:func:`_choose_edges` under the ``"random"`` and ``"least-loaded"`` edge choices."""
    if rules.edge_choice == "random":
        # One random order per queue: key the draw by the queue's id.
        # (every queue with a message has a front message: the queues of the fronts')
        _, inverse = np.unique(queue_id, return_inverse=True)
        pref = rng.random((inverse.max() + 1, d_max))[inverse]
    else:                                  # (a head unset where no edge is available)
        pref = (counts[np.where(avail, head, 0)] * d_max
                + np.arange(d_max)[:, None]).T.astype(float)
    pref = np.where(avail.T, pref, np.inf)
    by_pref = np.argsort(pref, axis=1, kind="stable")
    return by_pref[np.arange(rank.size), np.minimum(rank, d_max - 1)]
