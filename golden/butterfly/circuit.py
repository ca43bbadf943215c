"""One-cycle circuit switching (acceptance under load), Patel's recursion, load sweeps.

This is the *statistical* circuit-switched model: all messages set out together and
advance one level per step in lockstep (no buffers). At every switch the messages that
want one group (direction) share that group's available edges (edges into faulty or
declared-faulty switches are never taken); when there are more messages than edges the
winners are chosen by the arbitration rule and the others are lost (not retried in this
cycle). A head may receive as many messages as it has incoming edges: edges, not
switches, are the resource. The fraction of messages that reach their outputs is the
*acceptance*. With ``node_capacity=1`` (a butterfly switch is then the wire between two
2 x 2 crossbars, the "butterfly elements") and independent uniform destinations at full
load the butterfly's acceptance is Patel's recursion ``p_{k+1} = 1 - (1 - p_k / 2)^2``, ``p_0 = 1``
(0.359 at N = 64, 0.259 at N = 1024).

(The cycle-exact bit-serial model that the hardware follows is a separate model; this
one only counts who gets through.)

Arbitration (``arbitration``)
-----------------------------
``"random"`` (default, Patel's assumption): a uniformly random order of the messages
competing for a group; ``"wire"``: the order of the incoming edges the messages arrived
on (the hardware's input-wire order ``(source row, slot)``; at the inputs, by row).
Winners take the group's available edges in slot order.
"""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError
from ..seeds import generator
from .patterns import make_problems
from .store_forward import route_store_forward, stack_networks
from .experiments import Draw
from .topology import SplitterNetwork, make_network

__all__ = [
    "ARBITRATIONS",
    "patel_acceptance",
    "one_cycle_acceptance",
    "load_sweep",
]

ARBITRATIONS = ("random", "wire")


def patel_acceptance(stages: int, load: float = 1.0) -> float:
    """Patel's acceptance of a ``stages``-stage delta network of 2 x 2 crossbars.

    ``p_0 = load`` is the probability that an input has a request (uniform independent
    destinations); ``p_{k+1} = 1 - (1 - p_k / 2)^2``; returns ``p_stages / p_0``, the
    fraction of requests accepted.
    """
    if stages < 0:
        raise ParameterError(f"stages must be >= 0, got {stages}")
    if not 0 < load <= 1:
        raise ParameterError(f"load must be in (0, 1], got {load}")
    p = load
    for _ in range(stages):
        p = 1 - (1 - p / 2) ** 2
    return p / load


def _rank_within(group: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Each element's place (0, 1, ...) among the elements of its group, by ``key``."""
    order = np.lexsort((key, group))
    g = group[order]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    rank = np.empty(group.size, dtype=np.int64)
    rank[order] = np.arange(group.size) - np.repeat(starts, np.diff(np.r_[starts, group.size]))
    return rank


def one_cycle_acceptance(networks, problems, arbitration: str = "random",
                         seed: int = 0, node_capacity: int | None = None) -> dict:
    """Route one circuit-switched cycle; who gets through.

    Parameters
    ----------
    networks : SplitterNetwork or list of them (one per trial, one shape)
    problems : array (N,) or (trials, N)
        Destination per input, ``-1`` for an idle input.
    arbitration : "random" or "wire"
    seed : int
    node_capacity : int, optional
        At most this many messages may enter one switch in the cycle (the rest of those
        arriving there are lost, chosen by the same arbitration). ``None``: only edges
        are exclusive (Table III's circuit model). ``1`` on the butterfly makes every
        switch a wire between 2 x 2 crossbars: Patel's delta network (see
        :func:`patel_acceptance`).

    Returns
    -------
    dict with ``offered`` and ``delivered`` (per-trial int arrays), ``acceptance``
    (delivered / offered per trial), ``delivered_mask`` (trials, N) bool.
    """
    if arbitration not in ARBITRATIONS:
        raise ParameterError(
            f"arbitration must be one of {', '.join(ARBITRATIONS)}, got {arbitration!r}")
    if node_capacity is not None and node_capacity < 1:
        raise ParameterError(f"node_capacity must be >= 1, got {node_capacity}")
    if isinstance(networks, SplitterNetwork):
        networks = [networks]
    arrays = stack_networks(networks)
    heads, blocked, in_rank = arrays["heads"], arrays["blocked"], arrays["in_rank"]
    dest_all = np.asarray(problems, dtype=np.int64)
    if dest_all.ndim == 1:
        dest_all = dest_all[None, :]
    trials = dest_all.shape[0]
    if heads.shape[0] == 1 and trials > 1:
        heads = np.broadcast_to(heads, (trials,) + heads.shape[1:])
        blocked = np.broadcast_to(blocked, (trials,) + blocked.shape[1:])
        in_rank = np.broadcast_to(in_rank, (trials,) + in_rank.shape[1:])
    if heads.shape[0] != trials:
        raise ParameterError(f"problems must have one row per network ({heads.shape[0]}), "
                             f"got {trials}")
    _, depth, inputs, n_slots = heads.shape
    if dest_all.shape[1] != inputs or dest_all.min() < -1 or dest_all.max() >= inputs:
        raise ParameterError(f"destinations must be in [0, {inputs - 1}] (or -1: idle)")
    rng = generator(seed, "arbitration")
    shift, mask, per_group = arrays["group_shift"], arrays["group_mask"], arrays["edges_per_group"]
    n_groups = int(mask.max()) + 1
    t_idx, src = np.nonzero(dest_all >= 0)
    t_idx = t_idx.astype(np.int64)
    dest = dest_all[t_idx, src]
    row = src.astype(np.int64)
    prio = row.copy()                       # wire order at the inputs: by row
    alive = ~blocked[t_idx, 0, row]
    for i in range(depth):
        idx = np.flatnonzero(alive)
        if idx.size == 0:
            break
        t, r = t_idx[idx], row[idx]
        g = (dest[idx] >> shift[i]) & mask[i]
        d = int(per_group[i])
        queue = (t * inputs + r) * n_groups + g
        key = rng.permutation(idx.size) if arbitration == "random" else prio[idx]
        rank = _rank_within(queue, key)
        # Available edges of the group, in slot order; the k-th winner takes the k-th.
        chosen = np.full(idx.size, -1, dtype=np.int64)
        running = np.zeros(idx.size, dtype=np.int64)
        next_row = np.zeros(idx.size, dtype=np.int64)
        for j in range(d):
            slot = g * d + j
            h = heads[t, i, r, slot]
            ok = (h >= 0) & ~blocked[t, i + 1, np.maximum(h, 0)]
            running += ok
            hit = ok & (running == rank + 1)
            chosen[hit] = slot[hit]
            next_row[hit] = h[hit]
        win = chosen >= 0
        if node_capacity is not None:
            # Arrivals at one head beyond its capacity are lost (same arbitration).
            w = np.flatnonzero(win)
            target = t[w] * inputs + next_row[w]
            arrival_key = (rng.permutation(w.size) if arbitration == "random"
                           else in_rank[t[w], i, r[w], chosen[w]].astype(np.int64) * inputs + r[w])
            win[w[_rank_within(target, arrival_key) >= node_capacity]] = False
        lost = idx[~win]
        alive[lost] = False
        won = idx[win]
        prio[won] = in_rank[t[win], i, r[win], chosen[win]] + (r[win] << 8)
        row[won] = next_row[win]
    delivered_mask = np.zeros(dest_all.shape, dtype=bool)
    ok = alive & (row == dest)
    delivered_mask[t_idx[ok], src[ok]] = True
    offered = (dest_all >= 0).sum(1)
    delivered = delivered_mask.sum(1)
    return {"offered": offered, "delivered": delivered,
            "acceptance": delivered / np.maximum(offered, 1),
            "delivered_mask": delivered_mask}


def load_sweep(inputs: int = 256, loads=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
               trials: int = 20, seed: int = 0, multiplicity: int = 2,
               wiring: str = "butterfly-plus-maps", arbitration: str = "random",
               kinds=("butterfly", "dilated-butterfly", "multibutterfly"),
               node_capacity: str | int | None = "multiplicity",
               progress=None) -> list[dict]:
    """Throughput and latency against offered load, for the three networks side by side.

    At load ``x`` every input has a message with probability ``x`` (uniform destination).
    ``throughput`` is the delivered messages per input in one circuit-switched cycle
    (:func:`one_cycle_acceptance`); ``latency`` is the mean delivery step and
    ``completion`` the completion time of the same messages under store-and-forward
    routing. Each entry: ``kind``, ``load``, ``throughput``, ``acceptance``, ``latency``,
    ``completion`` (means over ``trials``), plus ``patel`` (the butterfly's prediction).
    ``node_capacity="multiplicity"`` (default) lets ``d`` messages enter a switch
    (``d = 1``: the butterfly is Patel's delta network); ``None`` only makes edges
    exclusive. ``progress(done, total, what)``, if given, is called before each
    (network, load) point.
    """
    if isinstance(node_capacity, str) and node_capacity != "multiplicity":
        raise ParameterError(f"node_capacity must be \"multiplicity\", an int >= 1 or None, "
                             f"got {node_capacity!r}")
    out: list[dict] = []
    n = inputs.bit_length() - 1
    for kind in kinds:
        d = 1 if kind == "butterfly" else multiplicity
        for k, load in enumerate(loads):
            if progress is not None:
                progress(len(out), len(kinds) * len(loads), f"{kind} at load {load:.2f}")
            if not 0 < load <= 1:
                raise ParameterError(f"loads must be in (0, 1], got {load}")
            rng = generator(seed, "trials", Draw.SWEEP_TRAFFIC, k)
            nets = [make_network(kind, inputs, d, seed=seed, wiring=wiring,
                                 rng=generator(seed, "trials", Draw.SWEEP_WIRING, t))
                    for t in range(trials)] \
                if kind == "multibutterfly" else make_network(kind, inputs, d)
            dest = np.stack([make_problems("random-destinations", inputs, 1, rng=rng)[0]
                             for _ in range(trials)])
            dest[rng.random(dest.shape) >= load] = -1
            cap = d if isinstance(node_capacity, str) else node_capacity
            acc = one_cycle_acceptance(nets, dest, arbitration, seed=seed, node_capacity=cap)
            sf = route_store_forward(nets, dest[:, None, :])
            steps = sf.delivery_step
            latency = [steps[t][steps[t] >= 0].mean() if (steps[t] >= 0).any() else 0.0
                       for t in range(trials)]
            out.append({"kind": kind, "inputs": inputs, "load": float(load),
                        "throughput": float((acc["delivered"] / inputs).mean()),
                        "acceptance": float(acc["acceptance"].mean()),
                        "latency": float(np.mean(latency)),
                        "completion": float(sf.steps.mean()),
                        "patel": patel_acceptance(n, load) if kind == "butterfly" else None})
    return out
