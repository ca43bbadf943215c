"""Algorithm 2 (Kuszmaul 1990, Sec. III, Theorem 3): any partial permutation of the
k-cube, step by step (a functional model: which node holds which message after every
step; the bit-times are the cycle-exact model's).

Iteration ``i`` (``i = 0 .. k - 1``) runs six steps:

1. **cross**: every message that must cross dimension ``i`` does so.
2. **enumerate** the nodes holding two messages, within each subcube (0-based ranks).
3. **pack**: each such node sends one of its two messages to its subcube's node of that
   rank (the *relay*), by Algorithm 1 (a packing: collision-free, Theorem 1).
4. **enumerate** the holes (nodes holding no message after Step 1), within each subcube.
5. **pack** the holes' own addresses to the relays of the same ranks, by Algorithm 1.
6. **rendezvous**: Step 5's routing run backwards (dimensions in descending order, along
   the same links) carries each relay's Step-3 message to the hole whose address it got.

Which subcube Steps 2-6 work in is the crux. The paper's Definition 5 calls an
*i-subcube* the nodes that agree in bits ``0 .. i - 1``; Theorem 2's enumeration merges
*low* dimensions, so its subcubes are intervals (nodes agreeing in the *high* bits); and
Algorithm 2 needs, after crossing dimension ``i``, a subcube that never changes bits
``0 .. i`` (the bits already routed). The readings (``reading=``):

``"corrected"`` (the default; the one under which the algorithm is correct)
    iteration ``i`` works in the subcubes whose nodes agree in bits ``0 .. i`` (Definition
    5's *(i + 1)*-subcubes: ``2**(i+1)`` of them, each spanned by dimensions
    ``i + 1 .. k - 1``), and the rank-``r`` node of the subcube of ``x`` is
    ``l_x + r * 2**(i + 1)`` (``l_x = x & (2**(i+1) - 1)``, its lowest node; ``r`` from 0).
``"literal"``
    the text as printed: Definition 5's *i*-subcube (bits ``0 .. i - 1`` agree), Definition
    4's ranks from 1, and the relay ``l_{x,i} + E(x)`` as an integer sum.
``"strided"``
    Definition 5's *i*-subcube, but relays addressed as that subcube's rank-``r`` node
    (``l + r * 2**i``, ranks from 0): the subcube index alone, without the arithmetic slip.
``"interval"``
    Theorem 2's subcubes: the nodes agreeing in the top ``i`` bits (an interval of
    ``2**(k-i)`` nodes), relay ``l + r``.

Every reading is run to the end with the same rules, so that a reading's failure is a
fact about it, not a crash: a node holding two or more messages after Step 1 sends one of
them (the one that arrived across dimension ``i``, else the lowest message index); the
Step-3 message is paired with the hole of the same subcube and rank (what the text means
even where relays coincide); a relay whose message has no hole keeps it. Each routing
reports what broke (:data:`VIOLATIONS`) and whether every message reached its
destination.

Conventions are :mod:`.cube`'s. Plain numpy, vectorised over nodes and over a batch of
routings (the exhaustive 3-cube check runs the 40,320 permutations as one batch).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from ..checks import is_integer
from ..errors import ParameterError
from .cube import check_dimension, check_routing

__all__ = ["READINGS", "VIOLATIONS", "STEP_KINDS", "Subcubes", "subcubes", "Step",
           "ENUMERATORS", "Alg2Result", "BatchResult", "route", "route_batch", "failures",
           "all_permutations", "check_message_bits"]

#: The selectable readings of Definition 5 / Algorithm 2 (see the module docstring).
READINGS = ("corrected", "literal", "strided", "interval")

#: What a routing can break (``BatchResult.violations`` keys):
#: ``overfull1``  a node holds more than two messages after Step 1;
#: ``overfull6``  a node holds more than one message after Step 6;
#: ``collision``  Step 3, 5 or 6 is not collision-free under Algorithm 1 (two packets in
#:                one node, so also two wanting one link, at some dimension step);
#: ``outside``    a relay address outside the cube (that packet is not sent);
#: ``unpaired``   a Step-3 message whose subcube has no hole of its rank;
#: ``misrouted``  after iteration ``i`` a message whose bits ``0 .. i`` differ from its
#:                destination's (the dimensions are never crossed again);
#: ``undelivered`` a message not at its destination at the end.
VIOLATIONS = ("overfull1", "overfull6", "collision", "outside", "unpaired", "misrouted",
              "undelivered")

#: Step number (1..6) -> operation kind.
STEP_KINDS = {1: "cross", 2: "enumerate", 3: "pack", 4: "enumerate", 5: "pack",
              6: "rendezvous"}

_PICKS = ("arrived", "stayed")

#: How Steps 2 and 4 compute ranks: ``"recurrences"``, the paper's t/o recurrences
#: (:func:`.enumeration.offsets_within`, what the hardware computes), or ``"direct"``,
#: counting with numpy (a cumulative sum per subcube).
ENUMERATORS = ("recurrences", "direct")


# --------------------------------------------------------------------------- subcubes

@dataclass(frozen=True)
class Subcubes:
    """A partition of the k-cube into subcubes spanned by the dimensions ``lo .. hi - 1``
    (the *free* bits); the other bits name the subcube.

    * ``lowest(x)``: the subcube's lowest node (``x`` with its free bits cleared);
    * ``index(x)``: ``x``'s position among its subcube's nodes in increasing order;
    * ``ident(x)``: the subcube's number, ``0 .. count - 1`` (the fixed bits, packed);
    * ``node(l, r)``: the subcube's rank-``r`` node (``l`` its lowest).
    """

    k: int
    lo: int
    hi: int

    @property
    def size(self) -> int:
        return 1 << (self.hi - self.lo)

    @property
    def count(self) -> int:
        return 1 << (self.k - (self.hi - self.lo))

    @property
    def free_mask(self) -> int:
        return (self.size - 1) << self.lo

    def lowest(self, x):
        return x & ~self.free_mask & ((1 << self.k) - 1)

    def index(self, x):
        return (x >> self.lo) & (self.size - 1)

    def ident(self, x):
        return (x & ((1 << self.lo) - 1)) | ((x >> self.hi) << self.lo)

    def node(self, lowest, r):
        return lowest | (r << self.lo)

    def table(self) -> np.ndarray:
        """``T[s, j]``: the node of subcube ``s`` at position ``j`` (shape count x size)."""
        x = np.arange(1 << self.k, dtype=np.int64)
        t = np.empty((self.count, self.size), dtype=np.int64)
        t[self.ident(x), self.index(x)] = x
        return t


def subcubes(k: int, i: int, reading: str = "corrected") -> Subcubes:
    """The subcubes iteration ``i``'s Steps 2-6 work in, under ``reading``."""
    k = check_dimension(k)
    reading = _check_reading(reading)
    if not (isinstance(i, (int, np.integer)) and 0 <= i < k):
        raise ParameterError(f"iteration must be an integer in [0, {k - 1}], got {i!r}")
    if reading == "corrected":
        return Subcubes(k, i + 1, k)
    if reading in ("literal", "strided"):
        return Subcubes(k, i, k)
    return Subcubes(k, 0, k - i)                       # interval: top i bits fixed


def _relay(reading: str, sc: Subcubes, x, rank):
    """Relay address of rank ``rank`` (0-based) in ``x``'s subcube."""
    low = sc.lowest(x)
    if reading == "literal":
        return low + rank + 1                          # l_{x,i} + E(x), E from 1
    return sc.node(low, rank)


def _ranks_direct(flag: np.ndarray, sc: Subcubes, table: np.ndarray) -> np.ndarray:
    """Direct enumeration: for a (B, N) boolean array, each node's 0-based rank among the
    flagged nodes of its subcube (the count of flagged nodes before it)."""
    f = flag[:, table].astype(np.int64)                # (B, count, size)
    rank = np.empty(flag.shape, dtype=np.int64)
    rank[:, table] = np.cumsum(f, axis=2) - f
    return rank


def _ranks_recurrences(flag: np.ndarray, sc: Subcubes) -> np.ndarray:
    """The same ranks by the paper's t/o recurrences (:mod:`.enumeration`), the batch
    laid out as one larger cube whose extra high address bits (the routing's number) are
    fixed bits of every subcube. Non-members get their offset (unused)."""
    from .enumeration import offsets_within
    B, N = flag.shape
    extra = max(B - 1, 0).bit_length()
    members = np.zeros((1 << extra) * N, dtype=bool)
    members[:B * N] = flag.reshape(-1)
    fixed = (((1 << sc.k) - 1) & ~sc.free_mask) | (((1 << extra) - 1) << sc.k)
    return offsets_within(sc.k + extra, members, fixed)[:B * N].reshape(B, N)


def _ranks(flag, sc, table, enumerator):
    if enumerator == "direct":
        return _ranks_direct(flag, sc, table)
    return _ranks_recurrences(flag, sc)


# --------------------------------------------------------------------------- results

@dataclass
class Step:
    """One step of one iteration (a batch of one: the public :func:`route`).

    ``positions``: every message's node after the step. ``sources``/``targets``: what
    the step moves (Step 1: the crossing messages; 3: movers -> relays; 5: holes ->
    relays; 6: relays -> holes; 2 and 4: the enumerated nodes, ``targets`` their ranks).
    ``messages``: the indices of the messages moved (Steps 1, 3, 6). ``dimensions``: the
    order Algorithm 1 visits dimensions in (a cycle-exact model replays it).
    ``max_messages``/``max_bits``: the most any node holds at once during the step
    (resident messages, packets in transit with their k-bit headers, ranks and hole
    addresses held). ``held_after``: the most messages any node holds once the step is
    over. ``crossings``: link traversals.
    """

    iteration: int
    number: int
    kind: str
    positions: np.ndarray
    sources: np.ndarray
    targets: np.ndarray
    messages: np.ndarray
    dimensions: tuple
    max_messages: int
    max_bits: int
    held_after: int
    crossings: int


@dataclass
class Alg2Result:
    """Algorithm 2 on one routing."""

    k: int
    reading: str
    message_bits: int
    src: np.ndarray
    dst: np.ndarray
    final: np.ndarray                   # where each message ended
    delivered: np.ndarray               # bool per message
    violations: dict                    # kind -> bool
    steps: list = field(default_factory=list)
    operations: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return bool(self.delivered.all()) and not any(self.violations.values())

    @property
    def max_messages(self) -> int:
        return max((s.max_messages for s in self.steps), default=0)

    @property
    def max_bits(self) -> int:
        return max((s.max_bits for s in self.steps), default=0)

    def trace(self) -> list:
        """``[(iteration, step, kind, positions)]``: where every message is after every
        step."""
        return [(s.iteration, s.number, s.kind, s.positions) for s in self.steps]


@dataclass
class BatchResult:
    """Algorithm 2 on a batch of B routings of m messages each."""

    k: int
    reading: str
    final: np.ndarray                   # (B, m)
    delivered: np.ndarray               # (B, m)
    violations: dict                    # kind -> (B,) bool
    max_messages: np.ndarray            # (B, k, 6): most messages any node holds
    max_bits: np.ndarray                # (B, k, 6)
    held_after: np.ndarray              # (B, k, 6): most messages in a node after the step

    @property
    def ok(self) -> np.ndarray:
        bad = np.asarray(~self.delivered.all(axis=1))
        for v in self.violations.values():
            bad = bad | v
        return ~bad


# --------------------------------------------------------------------------- the model

def _check_reading(reading) -> str:
    if reading not in READINGS:
        raise ParameterError(f"reading must be one of {', '.join(READINGS)}, got {reading!r}")
    return reading


def _per_batch_max(values: np.ndarray, B: int, N: int) -> np.ndarray:
    return values.reshape(B, N).max(axis=1)


class _Run:
    """The batched state: flat arrays over B routings x m messages; node arrays over
    B x N (global node id ``b * N + x``)."""

    def __init__(self, k, src, dst, reading, pick, message_bits, record, enumerator):
        self.k, self.N = k, 1 << k
        self.enumerator = enumerator
        self.B, self.m = src.shape
        self.reading, self.pick, self.M = reading, pick, message_bits
        self.record = record
        self.batch = np.repeat(np.arange(self.B, dtype=np.int64), self.m)
        self.msg = np.tile(np.arange(self.m, dtype=np.int64), self.B)
        self.pos = src.reshape(-1).astype(np.int64).copy()
        self.dst = dst.reshape(-1).astype(np.int64)
        self.viol = {v: np.zeros(self.B, dtype=bool) for v in VIOLATIONS}
        self.max_messages = np.zeros((self.B, k, 6), dtype=np.int64)
        self.max_bits = np.zeros((self.B, k, 6), dtype=np.int64)
        self.held_after = np.zeros((self.B, k, 6), dtype=np.int64)
        self.steps: list[Step] = []

    # ---- helpers
    def g(self, batch, x):
        return batch * self.N + x

    def count(self, batch, x, weights=None):
        return np.bincount(self.g(batch, x), weights=weights,
                           minlength=self.B * self.N).astype(np.int64)

    def flag(self, name, batch_ids):
        if batch_ids.size:
            self.viol[name][np.unique(batch_ids)] = True

    def note(self, i, number, msgs, bits):
        self.max_messages[:, i, number - 1] = np.maximum(self.max_messages[:, i, number - 1],
                                                         _per_batch_max(msgs, self.B, self.N))
        self.max_bits[:, i, number - 1] = np.maximum(self.max_bits[:, i, number - 1],
                                                     _per_batch_max(bits, self.B, self.N))

    def emit(self, i, number, sources, targets, messages, dims, crossings):
        held = self.count(self.batch, self.pos)
        self.held_after[:, i, number - 1] = _per_batch_max(held, self.B, self.N)
        if self.record:
            self.steps.append(Step(
                iteration=i, number=number, kind=STEP_KINDS[number],
                positions=self.pos.copy(), sources=np.asarray(sources, dtype=np.int64),
                targets=np.asarray(targets, dtype=np.int64),
                messages=np.asarray(messages, dtype=np.int64), dimensions=tuple(dims),
                max_messages=int(self.max_messages[0, i, number - 1]),
                max_bits=int(self.max_bits[0, i, number - 1]),
                held_after=int(self.held_after[0, i, number - 1]), crossings=int(crossings)))

    def alg1(self, i, number, batch, start, target, dims, resident_msgs, resident_bits,
             payload_bits, messages):
        """Route packets ``start -> target`` by Algorithm 1 visiting ``dims`` in order,
        one dimension per step, checking that no two packets are ever in one node (which
        is also no two wanting one link) and noting what every node holds meanwhile.
        Returns the link traversals."""
        p = start.copy()
        crossings = 0
        for step_index, d in enumerate((None, *dims)):
            if d is not None:
                want = ((p ^ target) >> d) & 1
                if not want.any():
                    continue
                crossings += int(want.sum())
                p = p ^ (want << d)
            gid = self.g(batch, p)
            if gid.size:
                s = np.sort(gid)
                dup = s[1:][s[1:] == s[:-1]]
                self.flag("collision", dup // self.N)
            transit = self.count(batch, p)
            self.note(i, number, resident_msgs + (transit if messages else 0),
                      resident_bits + transit * (payload_bits + self.k))
        assert np.array_equal(p, target)
        return crossings

    # ---- one iteration
    def iteration(self, i):
        k, N, B, M = self.k, self.N, self.B, self.M
        reading = self.reading
        sc = subcubes(k, i, reading)
        table = sc.table()

        # Step 1: cross dimension i.
        want = ((self.pos ^ self.dst) >> i) & 1
        before = self.pos.copy()
        self.pos = self.pos ^ (want << i)
        arrived = want.astype(bool)
        cnt = self.count(self.batch, self.pos)
        self.note(i, 1, cnt, cnt * M)
        self.flag("overfull1", np.flatnonzero(cnt > 2) // N)
        mv = np.flatnonzero(arrived)
        self.emit(i, 1, before[mv], self.pos[mv], self.msg[mv], (i,), mv.size)

        # Step 2: enumerate the nodes holding two (or more) messages.
        doubles = (cnt >= 2).reshape(B, N)
        rank_d = _ranks(doubles, sc, table, self.enumerator)
        rank_d = rank_d.reshape(-1)
        held_rank = doubles.reshape(-1).astype(np.int64)
        self.note(i, 2, cnt, cnt * M + held_rank * k)
        if self.record:
            nd = np.flatnonzero(doubles[0])
            self.emit(i, 2, nd, rank_d[nd], [], (), 0)

        # Step 3: each such node sends one message to its relay (pack, Algorithm 1).
        gid = self.g(self.batch, self.pos)
        first_pref = arrived if self.pick == "arrived" else ~arrived
        order = np.lexsort((self.msg, ~first_pref, gid))
        gs = gid[order]
        head = np.ones(gs.size, dtype=bool)
        head[1:] = gs[1:] != gs[:-1]
        movers = order[head]
        movers = movers[cnt[gid[movers]] >= 2]
        movers = movers[np.argsort(gid[movers], kind="stable")]
        mb, mfrom = self.batch[movers], self.pos[movers]
        mrank = rank_d[self.g(mb, mfrom)]
        relay = _relay(reading, sc, mfrom, mrank)
        bad = relay >= N
        self.flag("outside", mb[bad])
        movers, mb, mfrom, mrank, relay = (a[~bad] for a in (movers, mb, mfrom, mrank, relay))
        stay = np.ones(self.pos.size, dtype=bool)
        stay[movers] = False
        resident = self.count(self.batch[stay], self.pos[stay])
        dims_up = tuple(range(k))
        c3 = self.alg1(i, 3, mb, mfrom, relay, dims_up, resident, resident * M, M, True)
        self.pos[movers] = relay
        after3 = self.count(self.batch, self.pos)
        self.note(i, 3, after3, after3 * M)
        self.emit(i, 3, mfrom, relay, self.msg[movers], dims_up, c3)

        # Step 4: enumerate the holes (no message after Step 1).
        holes = (cnt == 0).reshape(B, N)
        rank_h = _ranks(holes, sc, table, self.enumerator)
        rank_h = rank_h.reshape(-1)
        hg = np.flatnonzero(holes.reshape(-1))
        self.note(i, 4, after3, after3 * M + holes.reshape(-1).astype(np.int64) * k)
        if self.record:
            nh = np.flatnonzero(holes[0])
            self.emit(i, 4, nh, rank_h[nh], [], (), 0)

        # Step 5: every hole sends its own address to the relay of its rank.
        hb, hx = hg // N, hg % N
        hrank = rank_h[hg]
        hrelay = _relay(reading, sc, hx, hrank)
        ok = hrelay < N
        self.flag("outside", hb[~ok])
        hb, hx, hrank, hrelay = hb[ok], hx[ok], hrank[ok], hrelay[ok]
        c5 = self.alg1(i, 5, hb, hx, hrelay, dims_up, after3, after3 * M, k, False)
        addr = self.count(hb, hrelay)
        self.note(i, 5, after3, after3 * M + addr * k)
        self.emit(i, 5, hx, hrelay, [], dims_up, c5)

        # Step 6: rendezvous: Step 5's routing backwards, relay -> hole.
        hole_at = np.full((B, sc.count, sc.size), -1, dtype=np.int64)
        hole_at[hb, sc.ident(hx), hrank] = hx
        dest = hole_at[mb, sc.ident(mfrom), mrank]
        paired = dest >= 0
        self.flag("unpaired", mb[~paired])
        pm, pb, prelay, phole = movers[paired], mb[paired], relay[paired], dest[paired]
        if reading == "corrected":
            assert paired.all()
        stay = np.ones(self.pos.size, dtype=bool)
        stay[pm] = False
        resident = self.count(self.batch[stay], self.pos[stay])
        dims_down = tuple(range(k - 1, -1, -1))
        c6 = self.alg1(i, 6, pb, prelay, phole, dims_down, resident, resident * M, M, True)
        self.pos[pm] = phole
        after6 = self.count(self.batch, self.pos)
        self.note(i, 6, after6, after6 * M)
        self.flag("overfull6", np.flatnonzero(after6 > 1) // N)
        self.emit(i, 6, prelay, phole, self.msg[pm], dims_down, c6)

        # The invariant: every message agrees with its destination in bits 0..i.
        low = (1 << (i + 1)) - 1
        self.flag("misrouted", self.batch[((self.pos ^ self.dst) & low) != 0])


def _run(k, src, dst, reading, pick, message_bits, record, enumerator) -> _Run:
    run = _Run(k, src, dst, reading, pick, message_bits, record, enumerator)
    for i in range(k):
        run.iteration(i)
    undelivered = run.pos != run.dst
    run.flag("undelivered", run.batch[undelivered])
    return run


def _check_common(k, reading, pick, message_bits, enumerator):
    k = check_dimension(k)
    if enumerator not in ENUMERATORS:
        raise ParameterError(f"enumerator must be one of {', '.join(ENUMERATORS)}, "
                             f"got {enumerator!r}")
    reading = _check_reading(reading)
    if pick not in _PICKS:
        raise ParameterError(f"pick must be one of {', '.join(_PICKS)}, got {pick!r}")
    return k, reading, check_message_bits(k, message_bits)


def check_message_bits(k: int, message_bits) -> int:
    """M for Algorithm 2 (None: ``2k``): an integer in ``[k, 2**20]``, the k-bit
    destination and the data (the step-level and the cycle-exact model take the same)."""
    if message_bits is None:
        return 2 * k
    if not is_integer(message_bits) \
            or not (k <= int(message_bits) <= 1 << 20):
        raise ParameterError(f"message_bits must be an integer in [{k}, {1 << 20}] "
                             f"(at least the k-bit destination), got {message_bits!r}")
    return int(message_bits)


def route(k, src, dst, *, reading: str = "corrected", pick: str = "arrived",
          message_bits=None, enumerator: str = "recurrences") -> Alg2Result:
    """Algorithm 2 on the partial permutation ``src[j] -> dst[j]`` of the k-cube, with
    the trace of every step. ``pick``: which of a node's two messages Step 3 sends (the
    one that ``"arrived"`` across dimension i, or the one that ``"stayed"``).
    ``message_bits`` (M, default 2k): a message's length, for the storage figures.
    ``enumerator``: :data:`ENUMERATORS`."""
    k, reading, M = _check_common(k, reading, pick, message_bits, enumerator)
    src, dst = check_routing(k, src, dst, injective=True)
    run = _run(k, src[None, :], dst[None, :], reading, pick, M, True, enumerator)
    final = run.pos.copy()
    ops = {"cross": k, "enumerate": 2 * k, "pack": 2 * k, "rendezvous": k}
    return Alg2Result(k=k, reading=reading, message_bits=M, src=src, dst=dst, final=final,
                      delivered=final == dst,
                      violations={v: bool(a[0]) for v, a in run.viol.items()},
                      steps=run.steps, operations=ops)


def route_batch(k, src, dst, *, reading: str = "corrected", pick: str = "arrived",
                message_bits=None, enumerator: str = "direct") -> BatchResult:
    """Algorithm 2 on B routings at once (``src``, ``dst``: (B, m) arrays, each row a
    partial permutation; rows are not checked beyond shape and range), without traces."""
    k, reading, M = _check_common(k, reading, pick, message_bits, enumerator)
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    if src.ndim != 2 or src.shape != dst.shape:
        raise ParameterError(f"src and dst must be (B, m) arrays of one shape, got "
                             f"{src.shape} and {dst.shape}")
    n = 1 << k
    if src.size and (src.min() < 0 or dst.min() < 0 or src.max() >= n or dst.max() >= n):
        raise ParameterError(f"nodes must be in [0, {n - 1}]")
    run = _run(k, src, dst, reading, pick, M, False, enumerator)
    final = run.pos.reshape(src.shape)
    return BatchResult(k=k, reading=reading, final=final, delivered=final == dst,
                       violations=run.viol, max_messages=run.max_messages,
                       max_bits=run.max_bits, held_after=run.held_after)


def all_permutations(k: int) -> np.ndarray:
    """Every permutation of the k-cube's nodes, one per row ((2**k)! x 2**k; k <= 3)."""
    k = check_dimension(k)
    if k > 3:
        raise ParameterError(f"dimension must be an integer in [1, 3] for the exhaustive "
                             f"census, got {k}")
    return np.array(list(itertools.permutations(range(1 << k))), dtype=np.int64)


def failures(k: int, reading: str, *, pick: str = "arrived",
             enumerator: str = "direct") -> dict:
    """Run ``reading`` on every permutation of the k-cube (k <= 3; message j from node j
    to ``perm[j]``): ``{"permutations": P, "failed": F, <violation>: count, ...}``, a
    permutation failing when a message is not delivered or any invariant breaks."""
    perms = all_permutations(k)
    src = np.broadcast_to(np.arange(1 << k, dtype=np.int64), perms.shape)
    res = route_batch(k, src, perms, reading=reading, pick=pick, enumerator=enumerator)
    out = {"permutations": int(perms.shape[0]), "failed": int((~res.ok).sum())}
    out.update({v: int(a.sum()) for v, a in res.violations.items()})
    return out
