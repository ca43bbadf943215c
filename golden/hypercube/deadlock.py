"""Deadlock-freedom of the store-and-forward configurations: the channel-dependence graph.

The rule
--------
A set of bounded queues deadlocks when every one of them is full and the head of each
waits for room in another of the set (Felperin et al. 1991, Sec. III: "a set of buffers
occupied by messages that have not yet arrived at their destinations such that all of
these messages need a buffer that belongs to the set"). Dally and Seitz's criterion: draw
a vertex per queue and an edge ``a -> b`` (a *dependence*) wherever a message at the head
of ``a`` can wait for room in ``b``; if this channel-dependence graph is acyclic no such
set exists, and the routing cannot deadlock. A cycle is a set of queues that can wait on
each other in a ring: filled (each with messages whose head wants the next), nothing in
it moves again.

The graph of :mod:`.store_forward`
----------------------------------
Its vertices are the ``k * 2**k`` link queues, ``(x, i)`` (:class:`LinkQueue`, link id
``x * k + i``). The node buffers and Valiant's holds are unbounded: a head never waits
for them, so they are no vertex. The edges come from the simulator's own rules, never
re-derived: every message that can be at the head of a queue (at node ``x``, bound for a
current target ``t != x``, for destination ``d``; e-cube ``t == d``, Valiant every ``t``
and ``d``, phase 1 and phase 2 alike) is placed in the queue the simulator puts it in
(:func:`.store_forward.queue_of`), and the simulator's crossing rule
(:func:`.store_forward.next_queues`) says what it does when it crosses: delivered, into
a node buffer or hold, or in transit into a next queue, the one case in which it waits.
Each transit is an edge; each edge keeps the first message found to make it (its
``target`` and ``destination``: a witness). Every such message is reachable: alone from
source ``x`` with intermediate node ``t`` (Valiant) it is in that queue at step 0. So the
graph has exactly the dependences the simulator can show, no more.

With unbounded queues (``buffer=None``) every head is admitted: there is no waiting, and
no deadlock whatever the graph (the verdict says so and still reports the graph).

The verdicts (``docs/hypercube.md``): e-cube, Valiant with a barrier and Valiant through
its intermediate node's buffer are acyclic for every k (every edge goes to a higher
dimension, or to a buffer); Valiant straight on from its intermediate node
(``intermediate_buffer=False``, the hardware's router) has cycles, the shortest two
queues long: ``q(0,0) -> q(1,0) -> q(0,0)``, two messages swapping nodes through each
other.

The head states number ``8**k`` for Valiant (``4**k`` for e-cube), taken one node's at a
time: :data:`MAX_DEADLOCK_DIMENSION` bounds k (at k = 8 about 3 s for Valiant, 0.6 s for
e-cube).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, NamedTuple

import numpy as np

from ..checks import is_integer
from ..errors import ParameterError
from . import store_forward as sf

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["MAX_DEADLOCK_DIMENSION", "LinkQueue", "Dependence", "DependenceCycle",
           "StoreForwardConfig", "DeadlockVerdict", "head_states", "dependence_graph",
           "find_cycle", "check_deadlock"]

#: The largest dimension the check enumerates (Valiant: ``8**k`` head states).
MAX_DEADLOCK_DIMENSION = 8


class LinkQueue(NamedTuple):
    """The queue of directed link ``(node, dimension)``, at its tail ``node``."""

    node: int
    dimension: int

    def __str__(self) -> str:
        return f"q({self.node},{self.dimension})"


class Dependence(NamedTuple):
    """A head of ``queue`` can wait for room in ``waits_for``: an edge of the graph,
    with a message that makes it (its current ``target`` and its ``destination``)."""

    queue: LinkQueue
    waits_for: LinkQueue
    target: int
    destination: int


@dataclass(frozen=True)
class DependenceCycle:
    """A cycle of the channel-dependence graph: its dependences in order, each one's
    ``waits_for`` the next one's ``queue``, the last one's the first one's."""

    dependences: tuple[Dependence, ...]

    @property
    def queues(self) -> tuple[LinkQueue, ...]:
        """The queues in order, each once."""
        return tuple(d.queue for d in self.dependences)

    def __len__(self) -> int:
        return len(self.dependences)

    def __str__(self) -> str:
        return " -> ".join(str(q) for q in self.queues + self.queues[:1])


@dataclass(frozen=True)
class StoreForwardConfig:
    """A store-and-forward configuration, as :func:`.store_forward.route` takes it,
    checked when made.

    Parameters
    ----------
    k : int
        The dimension, ``[1, MAX_DEADLOCK_DIMENSION]``.
    algorithm : str
        ``"ecube"`` or ``"valiant"``.
    buffer : int or None
        The link-queue bound B, ``[1, 2**30]``; None: unbounded.
    barrier : bool
        Valiant: a barrier between the phases.
    intermediate_buffer : bool
        Valiant: through the intermediate node's buffer (True) or straight on (False).
    """

    k: int
    algorithm: str = "ecube"
    buffer: int | None = None
    barrier: bool = False
    intermediate_buffer: bool = True

    def __post_init__(self):
        if not is_integer(self.k) or not 1 <= int(self.k) <= MAX_DEADLOCK_DIMENSION:
            raise ParameterError(
                f"dimension must be an integer in [1, {MAX_DEADLOCK_DIMENSION}] for the "
                f"deadlock check (its head states grow as 8^k), got {self.k!r}; leave the "
                f"algorithm out for the cube alone")
        if self.algorithm not in sf.ALGORITHMS:
            raise ParameterError(f"algorithm must be one of {', '.join(sf.ALGORITHMS)} "
                                 f"(store-and-forward), got {self.algorithm!r}")
        if self.buffer is not None:
            sf.check_buffer(self.buffer)
        for name, default in (("barrier", False), ("intermediate_buffer", True)):
            value = getattr(self, name)
            if not isinstance(value, (bool, np.bool_)):
                raise ParameterError(f"{name} must be True or False, got {value!r}")
            if self.algorithm != "valiant" and value != default:
                raise ParameterError(f"{name} must be left out for {self.algorithm} "
                                     f"(a Valiant option)")

    def route_options(self) -> dict:
        """:func:`.store_forward.route`'s keywords for this configuration."""
        return {"algorithm": self.algorithm, "buffer": self.buffer,
                "barrier": bool(self.barrier),
                "intermediate_buffer": bool(self.intermediate_buffer)}


def head_states(k: int, algorithm: str, node: int) -> tuple[np.ndarray, np.ndarray,
                                                             np.ndarray]:
    """Every message that can be at the head of a link queue of ``node``: ``(links,
    target, destination)``, its queue (:func:`.store_forward.queue_of`), its current
    target (every other node) and its destination (e-cube: the target; Valiant: every
    node, the target's phase 1 or, equal to it, phase 2)."""
    n = 1 << k
    target = np.delete(np.arange(n, dtype=np.int64), node)
    if algorithm == "ecube":
        dst = target
    else:
        target, dst = np.repeat(target, n), np.tile(np.arange(n, dtype=np.int64), n - 1)
    return sf.queue_of(k, np.full_like(target, node), target), target, dst


#: ``next_queues(k, links, target, dst, barrier=..., intermediate_buffer=...)``: the
#: crossing rule the graph is built from (:func:`.store_forward.next_queues`).
NextQueues = Callable[..., "sf._Hops"]


def dependence_graph(config: StoreForwardConfig,
                     next_queues: NextQueues = sf.next_queues) -> nx.DiGraph:
    """The channel-dependence graph of ``config`` (module docstring): a vertex per
    :class:`LinkQueue`, an edge per dependence with its witness (edge attributes
    ``target`` and ``destination``). ``next_queues`` is the crossing rule (the
    simulator's; a test passes a broken one)."""
    import networkx as nx

    k = config.k
    found: dict[tuple[int, int], tuple[int, int]] = {}
    for x in range(1 << k):
        links, target, dst = head_states(k, config.algorithm, x)
        hop = next_queues(k, links, target, dst, barrier=config.barrier,
                          intermediate_buffer=config.intermediate_buffer)
        w = np.flatnonzero(hop.transit)
        _, first = np.unique(links[w] * (k << k) + hop.next_q[w], return_index=True)
        for j in w[first]:
            found.setdefault((int(links[j]), int(hop.next_q[j])),
                             (int(target[j]), int(dst[j])))
    g = nx.DiGraph()
    g.add_nodes_from(LinkQueue(*divmod(link, k)) for link in range(k << k))
    for (a, b), (t, d) in sorted(found.items()):
        g.add_edge(LinkQueue(*divmod(a, k)), LinkQueue(*divmod(b, k)), target=t,
                   destination=d)
    return g


def find_cycle(g: nx.DiGraph) -> DependenceCycle | None:
    """None if ``g`` is acyclic, else a short cycle: networkx finds one, and the
    shortest cycle through one of its queues is returned, from its least queue."""
    import networkx as nx

    try:
        some = nx.find_cycle(g)
    except nx.NetworkXNoCycle:
        return None
    rev = g.reverse(copy=False)
    best: list | None = None
    for u in sorted({a for a, _ in some}):
        back = nx.single_source_shortest_path(rev, u)     # v -> [u, ..., v]: v ~> u in g
        for v in sorted(g.successors(u)):
            if v in back and (best is None or len(back[v]) < len(best) - 1):
                best = [u] + back[v][::-1]                # u -> v -> ... -> u
    assert best is not None                              # u's own cycle is one
    return DependenceCycle(tuple(Dependence(a, b, g.edges[a, b]["target"],
                                            g.edges[a, b]["destination"])
                                 for a, b in zip(best, best[1:])))


@dataclass(frozen=True)
class DeadlockVerdict:
    """The deadlock check of one configuration (:func:`check_deadlock`).

    Attributes
    ----------
    config : StoreForwardConfig
        What was checked.
    queues, dependences : int
        The channel-dependence graph's vertices and edges.
    cycle : DependenceCycle or None
        One cycle of the graph (the shortest through a queue of the first found), None
        if it is acyclic.
    """

    config: StoreForwardConfig
    queues: int
    dependences: int
    cycle: DependenceCycle | None

    @property
    def acyclic(self) -> bool:
        return self.cycle is None

    @property
    def deadlock_free(self) -> bool:
        """Acyclic, or unbounded queues (no head ever waits)."""
        return self.acyclic or self.config.buffer is None

    def line(self) -> str:
        """The verdict in one line (``fatnet info hypercube --algorithm``)."""
        size = f"{self.queues} queues, {self.dependences} dependences"
        if self.cycle is None:
            return f"deadlock: free (channel-dependence graph acyclic, {size})"
        if self.config.buffer is None:
            return (f"deadlock: free (unbounded link queues admit every head; the "
                    f"channel-dependence graph, {size}, has the cycle {self.cycle})")
        return (f"deadlock: possible: cycle {self.cycle} (link queues q(node,dimension) "
                f"of B = {self.config.buffer}; channel-dependence graph of {size})")

    def summary(self) -> dict:
        """Plain data for ``--json``."""
        c = self.config
        cycle = None if self.cycle is None else [
            {"node": d.queue.node, "dimension": d.queue.dimension, "target": d.target,
             "destination": d.destination} for d in self.cycle.dependences]
        return {"algorithm": c.algorithm, "buffer": c.buffer, "phased": bool(c.barrier),
                "intermediate_buffer": bool(c.intermediate_buffer),
                "free": self.deadlock_free, "acyclic": self.acyclic,
                "queues": self.queues, "dependences": self.dependences, "cycle": cycle,
                "verdict": self.line()}


def check_deadlock(k, algorithm: str = "ecube", *, buffer=None, barrier: bool = False,
                   intermediate_buffer: bool = True,
                   next_queues: NextQueues = sf.next_queues) -> DeadlockVerdict:
    """Build the channel-dependence graph of the configuration (the keywords of
    :func:`.store_forward.route`) and check it: acyclic, or one cycle. Bad input is a
    one-line ParameterError (:class:`StoreForwardConfig`)."""
    config = StoreForwardConfig(k, algorithm, buffer, barrier, intermediate_buffer)
    g = dependence_graph(config, next_queues)
    return DeadlockVerdict(config, g.number_of_nodes(), g.number_of_edges(),
                           find_cycle(g))
