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
(``np.minimum.at``), looks up the available edges of those front messages only, and
moves them. Full tables (N = 1024, 500/2000 trials) take about 8 minutes on 2 cores.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import ParameterError
from ..seeds import generator
from .topology import SplitterNetwork

__all__ = ["Rules", "StoreForwardResult", "route_store_forward", "stack_networks"]

QUEUES = ("fifo", "lifo", "random")
EDGE_CHOICES = ("first", "random", "least-loaded")
TIES = ("in-edge", "random")

_TIE_BITS = 16          # tie-break field of a message's priority
_MAX_STEPS_DEFAULT = 1 << 20
_NO_PRIO = np.iinfo(np.int64).max


@dataclass(frozen=True)
class Rules:
    """Open rules of the greedy store-and-forward algorithm (module docstring)."""

    threshold: int = 4
    queue: str = "fifo"
    edge_choice: str = "first"
    tie: str = "in-edge"

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
    waits_by_level: np.ndarray | None = None

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


def route_store_forward(networks, problems, rules: Rules | None = None,
                        seed: int = 0, max_steps: int = _MAX_STEPS_DEFAULT
                        ) -> StoreForwardResult:
    """Route problems through networks with the greedy store-and-forward algorithm.

    Parameters
    ----------
    networks : SplitterNetwork or sequence of them (one shape)
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

    Returns
    -------
    StoreForwardResult
    """
    rules = rules or Rules()
    if isinstance(networks, SplitterNetwork):
        networks = [networks]
    arrays = stack_networks(networks)
    heads, blocked, in_rank = arrays["heads"], arrays["blocked"], arrays["in_rank"]
    trials, depth, inputs, _ = heads.shape
    levels = depth + 1
    prob = np.asarray(problems, dtype=np.int64)
    prob = prob.reshape((1,) * (3 - prob.ndim) + prob.shape)
    if trials == 1 and prob.shape[0] > 1:  # one network, many problem sets
        trials = prob.shape[0]
        heads = np.broadcast_to(heads, (trials,) + heads.shape[1:])
        blocked = np.broadcast_to(blocked, (trials,) + blocked.shape[1:])
        in_rank = np.broadcast_to(in_rank, (trials,) + in_rank.shape[1:])
    prob = _problems_array(prob, trials, inputs)
    n_problems = prob.shape[1]
    rng = generator(seed, "arbitration")
    shift = arrays["group_shift"]
    mask = arrays["group_mask"]
    per_group = arrays["edges_per_group"]
    d_max = int(per_group.max())
    n_groups = int(mask.max()) + 1

    # Message state, one entry per (trial, problem, input), compacted as messages finish.
    t_idx, p_idx, src = np.meshgrid(np.arange(trials), np.arange(n_problems),
                                    np.arange(inputs), indexing="ij")
    present = prob >= 0
    if blocked[:, 0, :].any():
        bad = (blocked[:, 0, :][:, None, :] & present)
        if bad.any():
            raise ParameterError("a message starts at a faulty or declared-faulty input")
    msg_id = np.flatnonzero(present.ravel())
    m_trial = t_idx.ravel()[msg_id]
    m_dest = prob.ravel()[msg_id]
    m_level = np.zeros(msg_id.size, dtype=np.int64)
    m_row = src.ravel()[msg_id]
    m_prio = p_idx.ravel()[msg_id].astype(np.int64)   # arrival step 0, tie = problem
    m_clean = np.ones(msg_id.size, dtype=bool)          # never delayed so far
    delivery = np.zeros(prob.size, dtype=np.int64)
    undelayed_flat = np.zeros(prob.size, dtype=bool)
    counts = np.bincount((m_trial * levels + m_level) * inputs + m_row,
                         minlength=trials * levels * inputs)
    blocked_flat = np.ascontiguousarray(blocked).reshape(-1)
    prio_step = np.int64(1) << _TIE_BITS
    step = 0
    waits = np.zeros(levels, dtype=np.int64)
    queue_space = trials * levels * inputs * n_groups
    qmin = np.full(queue_space, _NO_PRIO, dtype=np.int64)
    n_slots = heads.shape[3]
    heads_flat = np.ascontiguousarray(heads).reshape(-1)
    while msg_id.size:
        step += 1
        if step > max_steps:
            raise RuntimeError(f"store-and-forward routing did not finish in {max_steps} steps")
        group = (m_dest >> shift[m_level]) & mask[m_level]
        d_here = per_group[m_level]
        queue_id = ((m_trial * levels + m_level) * inputs + m_row) * n_groups + group
        if rules.queue == "random":
            prio = rng.permutation(msg_id.size).astype(np.int64)
        elif rules.queue == "lifo":
            prio = -(m_prio >> _TIE_BITS) * prio_step + (m_prio & (prio_step - 1))
        else:
            prio = m_prio
        # Only the first d messages of a queue can move: find them by repeated per-queue
        # minima (priorities are unique within a switch: one arrival per in-edge and
        # step, one initial message per problem), which is much cheaper than sorting
        # every waiting message. rank = d_max marks "not at the front".
        rank = np.full(msg_id.size, d_max, dtype=np.int64)
        candidate = np.ones(msg_id.size, dtype=bool)
        for r in range(d_max):
            cand = np.flatnonzero(candidate & (d_here > r))
            if cand.size == 0:
                break
            q_c, p_c = queue_id[cand], prio[cand]
            np.minimum.at(qmin, q_c, p_c)
            first = cand[p_c == qmin[q_c]]
            qmin[q_c] = _NO_PRIO          # reset only what was touched
            rank[first] = r
            candidate[first] = False
        front = np.flatnonzero(rank < d_here)

        f_trial, f_level, f_row = m_trial[front], m_level[front], m_row[front]
        f_d, f_group, f_rank = d_here[front], group[front], rank[front]
        base = ((f_trial * depth + f_level) * inputs + f_row) * n_slots
        head_base = (f_trial * levels + f_level + 1) * inputs
        last_hop = f_level + 1 == depth
        # One pass per slot offset j (arrays of length F, not (F, d): numpy is slow on
        # tiny inner axes). A slot past the group's last is masked; the clip keeps it
        # in range.
        head = np.empty((d_max, front.size), dtype=np.int64)
        slot = np.empty((d_max, front.size), dtype=np.int64)
        avail = np.empty((d_max, front.size), dtype=bool)
        for j in range(d_max):
            slot[j] = np.minimum(f_group * f_d + j, n_slots - 1)
            head[j] = heads_flat[base + slot[j]]
            flat = head_base + np.maximum(head[j], 0)
            avail[j] = ((f_d > j) & (head[j] >= 0) & ~blocked_flat[flat]
                        & (last_hop | (counts[flat] <= rules.threshold)))
        moves = f_rank < avail.sum(0)

        # Edge preference, identical for every message of one queue.
        if rules.edge_choice == "first":
            # The r-th available slot in slot order: where the running count hits r + 1.
            chosen = np.zeros(front.size, dtype=np.int64)
            running = np.zeros(front.size, dtype=np.int64)
            for j in range(d_max):
                running += avail[j]
                chosen[avail[j] & (running == f_rank + 1)] = j
        else:
            if rules.edge_choice == "random":
                # One random order per queue: key the draw by the queue's id.
                _, inverse = np.unique(queue_id[front], return_inverse=True)
                pref = rng.random((inverse.max() + 1, d_max))[inverse]
            else:
                flat = head_base[None, :] + np.maximum(head, 0)
                pref = (counts[flat] * d_max + np.arange(d_max)[:, None]).T.astype(float)
            pref = np.where(avail.T, pref, np.inf)
            by_pref = np.argsort(pref, axis=1, kind="stable")
            chosen = by_pref[np.arange(front.size), np.minimum(f_rank, d_max - 1)]

        is_moving = np.zeros(msg_id.size, dtype=bool)
        mv_f = np.flatnonzero(moves)
        mv = front[mv_f]
        is_moving[mv] = True
        stay = np.flatnonzero(~is_moving)
        m_clean[stay] = False
        waits += np.bincount(m_level[stay], minlength=levels)
        take = chosen[mv_f]
        lvl_mv = m_level[mv]
        new_row = head[take, mv_f]
        used_slot = slot[take, mv_f]
        tie = (in_rank[m_trial[mv], lvl_mv, m_row[mv], used_slot].astype(np.int64)
               if rules.tie == "in-edge" else rng.integers(0, 1 << 8, size=mv.size))
        m_prio[mv] = step * prio_step + tie
        m_row[mv] = new_row
        m_level[mv] = lvl_mv + 1

        done = m_level == depth
        if done.any():
            fin = np.flatnonzero(done)
            delivery[msg_id[fin]] = step
            undelayed_flat[msg_id[fin]] = m_clean[fin]
            keep = ~done
            msg_id, m_trial, m_dest, m_level, m_row, m_prio, m_clean = (
                a[keep] for a in (msg_id, m_trial, m_dest, m_level, m_row, m_prio, m_clean))
        counts = np.bincount((m_trial * levels + m_level) * inputs + m_row,
                             minlength=trials * levels * inputs)
    delivery = delivery.reshape(prob.shape)
    present_count = present.reshape(trials, -1).sum(1)
    delivered = ((delivery > 0) & present).reshape(trials, -1).sum(1)
    return StoreForwardResult(
        steps=delivery.reshape(trials, -1).max(1, initial=0),
        messages=present_count, delivered=delivered,
        undelayed=undelayed_flat.reshape(trials, -1).sum(1),
        delivery_step=np.where(present, delivery, -1), rules=rules, waits_by_level=waits)
