"""Upfal's wave algorithm (Sec. II-A), its edge colouring, and Theorem 2.1's bound.

Edge colouring
--------------
Every hop of a splitter network is a regular bipartite multigraph: each switch has
``K`` out-edges (``2d`` in a splitter, 4 in the matchings and the complete stage of "*")
and each switch of the next level ``K`` in-edges. By König's theorem it has a proper
``K``-edge-colouring; :func:`edge_colouring` finds one by taking ``K`` perfect matchings
in turn (a regular bipartite multigraph always has one, on its simple support; scipy's
Hopcroft-Karp finds it), removing one copy of each matched edge each time. Colour ``c``
of hop ``i`` is then a perfect matching from level ``i`` to level ``i + 1``.

The algorithm
-------------
Packets of problem ``p`` with destination ``D`` are in wave ``p * L + (D mod L)``. Each
stage is an even phase then an odd phase, and each phase is one step per colour: in an
even phase the hops leaving even levels are active (the paper's level labels; the extra
front levels are ``-1, -2, ...``), in an odd phase those leaving odd levels. In the step
of colour ``c`` every active edge ``(u, v)`` of colour ``c`` whose tail ``u`` holds a
packet that wants the edge's direction moves it to ``v`` if ``v`` is empty (outputs
absorb, so they are always empty), or swaps it with ``v``'s packet if that one is in a
later wave. Every switch holds at most one packet. With ``P`` problems the network gets
``P - 1`` extra front levels, copies of level 0's hop (problem ``p`` starts at level
``-p``); a copy of the first splitter sends a packet up or down by its destination's
first bit, so it reaches level 0 in the right half, and level 0 is a single block.

Steps are counted one per colour step (so a stage is ``2 * colours`` steps; the paper
counts ``4d`` per stage for ``d`` up and ``d`` down edges) until the last packet is
absorbed.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ParameterError
from .topology import SplitterNetwork

__all__ = ["edge_colouring", "route_upfal", "theorem_2_1_bound"]


def _colour_hop(heads: np.ndarray) -> np.ndarray:
    """Proper colouring of one regular hop: ``colour[row, slot]`` in ``[0, K)``."""
    # imported here: scipy.sparse takes most of a second to import, and only Upfal's
    # algorithm needs it (every command of the family imports this module)
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_bipartite_matching
    n, k = heads.shape
    remaining = np.ones((n, k), dtype=bool)
    colour = np.full((n, k), -1, dtype=np.int64)
    rows = np.repeat(np.arange(n), k).reshape(n, k)
    for c in range(k):
        r, s = np.nonzero(remaining)
        graph = csr_matrix((np.ones(r.size), (r, heads[r, s])), shape=(n, n))
        graph.data[:] = 1
        match = maximum_bipartite_matching(graph, perm_type="column")
        if (match < 0).any():
            raise RuntimeError("hop is not a regular bipartite multigraph")
        # One remaining slot of each row whose head is its matched partner.
        want = match[rows] == heads
        cand = want & remaining
        first = np.argmax(cand, axis=1)
        colour[np.arange(n), first] = c
        remaining[np.arange(n), first] = False
    return colour


def edge_colouring(net: SplitterNetwork) -> np.ndarray:
    """``colour[i, row, slot]``: a proper edge colouring of every hop (``-1`` padding).

    At every switch each colour of hop ``i`` appears on exactly one out-edge and on
    exactly one in-edge (so colour ``c`` of hop ``i`` is a perfect matching).
    """
    colours = np.full(net.heads.shape, -1, dtype=np.int64)
    for i in range(net.depth):
        k = int((net.heads[i, 0] >= 0).sum())
        colours[i, :, :k] = _colour_hop(net.heads[i, :, :k])
    return colours


def theorem_2_1_bound(inputs: int, d: int, alpha: float, beta: float, L: int,
                      problems: int = 1, nu: float = 0.5, w: float | None = None) -> dict:
    """Theorem 2.1's bound on the steps of the wave algorithm, as printed.

    ``w`` defaults to ``sqrt(1 / sigma - 1)`` (the paper's choice, which needs
    ``sigma > 1/2``). Returns ``{"steps", "sigma", "rho", "w", "valid"}``; ``valid`` is
    False (and ``steps`` inf) when the theorem's conditions (``L >= 1 / (2 alpha)``,
    ``beta > 1``, ``rho < 1``, ``nu^L / w < 1``) fail. (The paper's worked example,
    4273 log N for d = 11, is what the formula gives with ``log(1/w)`` in place of
    ``log(2/w)``; as printed it gives about 4531 log N.)
    """
    sigma = beta * (1 - nu) / (1 + beta * (1 - nu))
    if w is None:
        w = math.sqrt(1 / sigma - 1) if sigma > 0.5 else 1.0
    rho = (sigma * w + (1 - sigma) / w) ** 2
    valid = (L >= 1 / (2 * alpha) and beta > 1 and 0 < rho < 1 and 0 < nu < 1
             and nu ** L / w < 1)
    if not valid:
        return {"steps": math.inf, "sigma": sigma, "rho": rho, "w": w, "valid": False}
    log_n = math.log2(inputs)
    lr = math.log(1 / rho)
    steps = (4 * d * math.log(2 / w) / lr * log_n
             + 4 * d * math.log(1 / nu) / lr * problems * L
             + 4 * d * math.log(nu / (L * (1 - nu) * (1 - nu ** L / w))) / lr)
    return {"steps": steps, "sigma": sigma, "rho": rho, "w": w, "valid": True}


def route_upfal(net: SplitterNetwork, problems, L: int = 1, max_steps: int = 1 << 16) -> dict:
    """Route permutations with Upfal's wave algorithm.

    Parameters
    ----------
    net : SplitterNetwork (without faults)
    problems : array (N,) or (P, N)
        One permutation per problem.
    L : int
        Waves: destinations congruent mod ``L`` share a wave (a power of two).

    Returns
    -------
    dict: ``steps`` (last absorption), ``delivery_step`` (P, N), ``delivered``,
    ``packets``, ``stages``.
    """
    if net.faults is not None and net.faults.unusable().any():
        raise ParameterError("the wave algorithm is defined for networks without faults")
    if L < 1 or L & (L - 1):
        raise ParameterError(f"L must be a power of two >= 1, got {L}")
    probs = np.atleast_2d(np.asarray(problems, dtype=np.int64))
    n_problems, n = probs.shape
    if n != net.inputs or any(sorted(p) != list(range(n)) for p in probs):
        raise ParameterError("problems must be permutations of the network's outputs")
    colours = edge_colouring(net)
    extra = n_problems - 1
    # Hops in order, front copies first: (heads, colours, shift, mask, per_group, label).
    hops = []
    for k in range(extra, 0, -1):
        hops.append((net.heads[0], colours[0], 0, net.first_level - k))
    for i in range(net.depth):
        hops.append((net.heads[i], colours[i], i, net.level_label(i)))
    depth = len(hops)
    n_colours = int(net.heads.shape[2])
    occupant = np.full((depth + 1, n), -1, dtype=np.int64)   # packet id per switch
    dest = probs.ravel()
    wave = np.repeat(np.arange(n_problems), n) * L + dest % L
    for p in range(n_problems):
        occupant[extra - p, :] = p * n + np.arange(n)
    delivery = np.zeros(dest.size, dtype=np.int64)
    remaining = dest.size
    step = 0
    stages = 0
    while remaining:
        stages += 1
        for parity in (0, 1):
            for c in range(n_colours):
                step += 1
                if step > max_steps:
                    raise RuntimeError(f"wave routing did not finish in {max_steps} steps")
                for h, (heads, col, src_level, label) in enumerate(hops):
                    if label % 2 != parity:
                        continue
                    slot = np.argmax(col == c, axis=1)
                    has = (col == c).any(axis=1)
                    tails = np.flatnonzero(has & (occupant[h] >= 0))
                    if tails.size == 0:
                        continue
                    pk = occupant[h, tails]
                    i = src_level
                    group = (dest[pk] >> int(net.group_shift[i])) & int(net.group_mask[i])
                    s = slot[tails]
                    edge_group = net.slot_group[i, s]
                    go = group == edge_group
                    tails, pk, s = tails[go], pk[go], s[go]
                    head_rows = heads[tails, s]
                    if h == depth - 1:                      # outputs absorb
                        occupant[h, tails] = -1
                        delivery[pk] = step
                        remaining -= pk.size
                        continue
                    there = occupant[h + 1, head_rows]
                    move = there < 0
                    swap = ~move & (wave[np.maximum(there, 0)] > wave[pk])
                    occupant[h + 1, head_rows[move]] = pk[move]
                    occupant[h, tails[move]] = -1
                    occupant[h + 1, head_rows[swap]] = pk[swap]
                    occupant[h, tails[swap]] = there[swap]
    return {"steps": int(delivery.max(initial=0)), "delivery_step": delivery.reshape(probs.shape),
            "delivered": int((delivery > 0).sum()), "packets": int(dest.size),
            "stages": stages, "colours": n_colours}
