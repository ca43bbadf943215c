"""Algorithm 1 of Kuszmaul 1990 (Theorem 1): oblivious routing across the dimensions in
a fixed order, one dimension per step, and the routings it routes without collision.

**The algorithm** (:func:`route`). Step ``s = 0 .. k-1`` handles dimension ``order[s]``
(default ``order = (0, 1, .., k-1)``, the paper's). In step ``s`` every message whose
relative address has bit ``order[s]`` set crosses that dimension; the others stay. Each
node has one link per dimension (per direction) and a one-message buffer. Two kinds of
collision are *detected*, not resolved:

* ``"link"``: in step ``s``, two or more messages at one node want dimension
  ``order[s]``'s link out of it (node = where they are before the step);
* ``"buffer"``: after step ``s``, two or more messages are in one node's buffer (node =
  where they are after the step; dimension = ``order[s]``, the one just handled).

Every collision is reported as a :class:`Collision` ``(kind, step, node, dimension,
messages)`` with ``messages`` the indices (into ``src``/``dst``) in increasing order. The
model then carries on as if the link and buffer had room (every message keeps moving, so
every message ends at its destination); the messages that were in any collision are
flagged (``collided``) and count as *not delivered*: real hardware would have lost or
garbled them. For injective inputs a link collision implies a buffer collision at the
previous step (the two messages shared a node), since no two messages start together.

**Classes** (Definitions 2, 3; maps given as ``src``, ``dst``): a *packing* is monotone
onto an interval (sorted by source, the destinations are consecutive increasing
integers); a *semi-contraction* has ``|f(x) - f(y)| <= |x - y|`` for all sources ``x, y``
(integer distances; checking consecutive sources suffices, by the triangle inequality).
The empty map is both. Every packing is a semi-contraction; Theorem 1: Algorithm 1 in
the order ``0 .. k-1`` routes every semi-contraction without collision.

**The pipelined version** (Section II, :func:`pipeline_timing`): every node has one
router per dimension, chained in the routing order; router ``s`` handles dimension
``order[s]``, consumes the first bit it receives (the message's address bit for that
dimension), strips it, and passes the rest on through one register. The full bit-time
model is in :func:`pipeline_timing`'s docstring; in short, an ``M``-bit message (``k``
address bits, then ``M - k`` payload bits) behind its M bit is delivered in ``M + k + 1``
bit-times.

Pure Python + numpy, vectorised over messages; :func:`collision_free_batch` and the
``*_batch`` classifiers are vectorised over many routings at once (the census).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from ..checks import is_integer
from ..errors import ParameterError
from ..seeds import generator
from .cube import check_dimension, check_routing

__all__ = ["Collision", "Alg1Result", "check_order", "route", "is_packing",
           "is_semi_contraction", "maps_to_routing", "routing_to_map", "collision_free_batch",
           "is_packing_batch", "is_semi_contraction_batch", "all_partial_permutations",
           "census", "random_packing", "random_semi_contraction", "random_partial_permutation",
           "PipelineTiming", "pipeline_timing"]


@dataclass(frozen=True)
class Collision:
    """One collision: ``kind`` is ``"link"`` or ``"buffer"`` (module docstring)."""

    kind: str
    step: int
    node: int
    dimension: int
    messages: tuple[int, ...]


@dataclass
class Alg1Result:
    """What :func:`route` found.

    ``positions``: shape ``(k + 1, m)``, where each message is before step 0 (row 0) and
    after each step; ``final`` its last row. ``collided``: per message, whether it was in
    any collision; ``delivered``: at its destination and never in a collision.
    ``max_messages_per_node``: the most messages in one node at once (1 when
    collision-free)."""

    k: int
    order: tuple[int, ...]
    src: np.ndarray
    dst: np.ndarray
    positions: np.ndarray
    collisions: list[Collision] = field(default_factory=list)
    collided: np.ndarray = field(kw_only=True)  # required: what delivered reads
    max_messages_per_node: int = 0

    @property
    def final(self) -> np.ndarray:
        return self.positions[-1]

    @property
    def delivered(self) -> np.ndarray:
        return (self.final == self.dst) & ~self.collided

    @property
    def ok(self) -> bool:
        """No collision (so every message delivered)."""
        return not self.collisions

    @property
    def steps(self) -> int:
        """Dimension crossings in sequence: ``k``."""
        return self.k


def check_order(k: int, order) -> tuple[int, ...]:
    """``order`` (None: ``0 .. k-1``) as a tuple, checked to be a permutation of the
    dimensions."""
    k = check_dimension(k)
    if order is None:
        return tuple(range(k))
    try:
        out = tuple(int(d) for d in order)
    except (TypeError, ValueError):
        out = None
    if out is None or sorted(out) != list(range(k)):
        raise ParameterError(f"order must be a permutation of the dimensions 0..{k - 1}, "
                             f"got {order!r}")
    return out


def _groups(keys: np.ndarray, idx: np.ndarray):
    """Yield ``(key, members)`` for every key shared by two or more of ``idx``."""
    if idx.size < 2:
        return
    k = keys[idx]
    order = np.argsort(k, kind="stable")
    ks, ids = k[order], idx[order]
    starts = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
    ends = np.r_[starts[1:], ks.size]
    for a, b in zip(starts, ends):
        if b - a >= 2:
            yield int(ks[a]), tuple(sorted(int(m) for m in ids[a:b]))


def route(k: int, src, dst, *, order=None) -> Alg1Result:
    """Route the partial permutation ``src -> dst`` by Algorithm 1 in ``order`` (module
    docstring), detecting every link and buffer collision. ``src``, ``dst``: equal-length
    integer sequences of nodes, no source and no destination twice."""
    k = check_dimension(k)
    src, dst = check_routing(k, src, dst, injective=True)
    order = check_order(k, order)
    m = src.size
    pos = src.copy()
    positions = np.empty((k + 1, m), dtype=np.int64)
    positions[0] = pos
    collisions: list[Collision] = []
    collided = np.zeros(m, dtype=bool)
    everyone = np.arange(m)
    most = 1 if m else 0
    for s, d in enumerate(order):
        want = np.flatnonzero(((pos ^ dst) >> d) & 1)
        for node, msgs in _groups(pos, want):
            collisions.append(Collision("link", s, node, d, msgs))
            collided[list(msgs)] = True
        pos = pos ^ np.where(((pos ^ dst) >> d) & 1 == 1, 1 << d, 0)
        positions[s + 1] = pos
        for node, msgs in _groups(pos, everyone):
            collisions.append(Collision("buffer", s, node, d, msgs))
            collided[list(msgs)] = True
            most = max(most, len(msgs))
    return Alg1Result(k=k, order=order, src=src, dst=dst, positions=positions,
                      collisions=collisions, collided=collided, max_messages_per_node=most)


def _sorted_by_source(k, src, dst):
    src, dst = check_routing(k, src, dst, injective=True)
    o = np.argsort(src)
    return src[o], dst[o]


def is_packing(k: int, src, dst) -> bool:
    """Definition 2: monotone onto an interval (sorted by source, the destinations are
    ``i, i + 1, .., j``)."""
    s, d = _sorted_by_source(k, src, dst)
    return bool((np.diff(d) == 1).all())


def is_semi_contraction(k: int, src, dst) -> bool:
    """Definition 3: ``|f(x) - f(y)| <= |x - y|`` for every two sources (consecutive
    sources suffice)."""
    s, d = _sorted_by_source(k, src, dst)
    return bool((np.abs(np.diff(d)) <= np.diff(s)).all())


# ---- many routings at once: maps (B, 2**k), entry x the destination of x's message or -1


def routing_to_map(k: int, src, dst) -> np.ndarray:
    """The routing as a map array of length ``2**k`` (``-1``: the node sends nothing)."""
    src, dst = check_routing(k, src, dst, injective=True)
    f = np.full(1 << k, -1, dtype=np.int64)
    f[src] = dst
    return f


def maps_to_routing(f) -> tuple[np.ndarray, np.ndarray]:
    """``(src, dst)`` of one map array."""
    f = np.asarray(f, dtype=np.int64)
    src = np.flatnonzero(f >= 0)
    return src, f[src]


def _check_maps(k: int, maps) -> np.ndarray:
    k = check_dimension(k)
    f = np.asarray(maps, dtype=np.int64)
    if f.ndim != 2 or f.shape[1] != (1 << k):
        raise ParameterError(f"maps must have shape (B, 2**k = {1 << k}), got {f.shape}")
    if ((f < -1) | (f >= (1 << k))).any():
        raise ParameterError(f"maps entries must be -1 or a node in [0, {(1 << k) - 1}]")
    return f


def collision_free_batch(k: int, maps, *, order=None) -> np.ndarray:
    """Per map (row of ``maps``, assumed injective): whether Algorithm 1 routes it without
    any collision. Uses: with distinct sources, a collision happens iff after some step two
    messages share a node (a link collision needs two messages at one node, which, as they
    did not start together, is a buffer collision one step earlier); after step ``s`` a
    message is at its destination's bits on ``order[0..s]`` and its source's elsewhere."""
    f = _check_maps(k, maps)
    order = check_order(k, order)
    n = 1 << k
    x = np.arange(n, dtype=np.int64)
    defined = f >= 0
    sentinel = n + x                      # unique stand-ins for the nodes that send nothing
    ok = np.ones(f.shape[0], dtype=bool)
    mask = 0
    for d in order[:-1] if k > 1 else ():  # after the last step everyone is at dst: distinct
        mask |= 1 << d
        pos = np.where(defined, (f & mask) | (x & ~mask), sentinel)
        pos.sort(axis=1)
        ok &= ~(pos[:, 1:] == pos[:, :-1]).any(axis=1)
    return ok


def is_packing_batch(k: int, maps) -> np.ndarray:
    """:func:`is_packing` per row (sorted by source = the defined entries in order)."""
    f = _check_maps(k, maps)
    big = 1 << 40
    # defined destinations in source order, consecutive: compare each defined entry with
    # the previous defined one
    out = np.ones(f.shape[0], dtype=bool)
    prev = np.full(f.shape[0], -big, dtype=np.int64)
    for x in range(f.shape[1]):
        d = f[:, x]
        has = d >= 0
        out &= ~has | (prev == -big) | (d == prev + 1)
        prev = np.where(has, d, prev)
    return out


def is_semi_contraction_batch(k: int, maps) -> np.ndarray:
    """:func:`is_semi_contraction` per row (all pairs)."""
    f = _check_maps(k, maps)
    n = f.shape[1]
    x = np.arange(n)
    both = (f[:, :, None] >= 0) & (f[:, None, :] >= 0)
    far = np.abs(f[:, :, None] - f[:, None, :]) > np.abs(x[:, None] - x[None, :])
    return ~(both & far).any(axis=(1, 2))


def all_partial_permutations(k: int):
    """Yield arrays of maps (B, 2**k) that together hold every partial permutation of the
    k-cube exactly once (k <= 3: the 3-cube has 1,441,729 = sum over m of C(8, m)**2 m!)."""
    k = check_dimension(k)
    if k > 3:
        raise ParameterError(f"dimension must be in [1, 3] for an exhaustive enumeration of "
                             f"partial permutations, got {k}")
    n = 1 << k
    for m in range(n + 1):
        perms = list(itertools.permutations(range(n), m))
        images = np.array(perms, dtype=np.int64).reshape(len(perms), m)
        for sources in itertools.combinations(range(n), m):
            f = np.full((images.shape[0], n), -1, dtype=np.int64)
            f[:, list(sources)] = images
            yield f


def census(k: int, *, order=None) -> dict:
    """Every partial permutation of the k-cube (k <= 3) routed by Algorithm 1: how many
    there are, how many are packings / semi-contractions, how many route without collision
    in each class, and how many that are not semi-contractions also do. Theorem 1 says
    ``semi_contractions_collision_free == semi_contractions`` (for the default order)."""
    order = check_order(k, order)
    c: dict = dict.fromkeys(("partial_permutations", "packings", "semi_contractions",
                       "collision_free", "packings_collision_free",
                       "semi_contractions_collision_free", "other_collision_free",
                       "permutations", "permutations_collision_free"), 0)
    n = 1 << k
    for f in all_partial_permutations(k):
        free = collision_free_batch(k, f, order=order)
        pack = is_packing_batch(k, f)
        semi = is_semi_contraction_batch(k, f)
        full = (f >= 0).all(axis=1)
        c["partial_permutations"] += f.shape[0]
        c["packings"] += int(pack.sum())
        c["semi_contractions"] += int(semi.sum())
        c["collision_free"] += int(free.sum())
        c["packings_collision_free"] += int((pack & free).sum())
        c["semi_contractions_collision_free"] += int((semi & free).sum())
        c["other_collision_free"] += int((~semi & free).sum())
        c["permutations"] += int(full.sum())
        c["permutations_collision_free"] += int((full & free).sum())
    c["k"], c["nodes"], c["order"] = k, n, list(order)
    return c


# ---- random routings of each class (every draw from the caller's seed or Generator)


def _rng(seed):
    return seed if isinstance(seed, np.random.Generator) else generator(seed, "traffic")


def _check_m(k, m):
    n = 1 << k
    if not is_integer(m) or not 0 <= m <= n:
        raise ParameterError(f"messages must be an integer in [0, {n}], got {m!r}")
    return int(m)


def random_packing(k: int, m: int, seed) -> tuple[np.ndarray, np.ndarray]:
    """``m`` random sources packed, in order, onto a random interval of ``m`` nodes."""
    k = check_dimension(k)
    m = _check_m(k, m)
    rng = _rng(seed)
    n = 1 << k
    src = np.sort(rng.choice(n, size=m, replace=False)).astype(np.int64)
    start = int(rng.integers(0, n - m + 1))
    return src, start + np.arange(m, dtype=np.int64)


def random_semi_contraction(k: int, m: int, seed, *, tries: int = 2):
    """A random semi-contraction with ``m`` messages: sources at random; destinations a
    walk whose step between consecutive sources is at most their distance (monotone up,
    monotone down, or a random-sign walk, replaced by a monotone one if it revisits a
    node), shifted at random into
    the cube (its spread is at most the sources' spread, so it fits)."""
    k = check_dimension(k)
    m = _check_m(k, m)
    rng = _rng(seed)
    n = 1 << k
    src = np.sort(rng.choice(n, size=m, replace=False)).astype(np.int64)
    if m == 0:
        return src, src.copy()
    gaps = np.diff(src)
    mode = int(rng.integers(0, 3))
    for _ in range(tries):
        steps = rng.integers(1, gaps + 1) if m > 1 else np.zeros(0, dtype=np.int64)
        if mode == 1:
            steps = -steps
        elif mode == 2:
            steps = steps * rng.choice((-1, 1), size=steps.size)
        walk = np.r_[0, np.cumsum(steps)].astype(np.int64)
        if np.unique(walk).size == m:
            walk -= walk.min()
            return src, walk + int(rng.integers(0, n - int(walk.max(initial=0))))
        mode = int(rng.integers(0, 2))   # fall back to a monotone walk
    raise ParameterError("random_semi_contraction: no injective walk found")  # pragma: no cover


def random_partial_permutation(k: int, m: int, seed) -> tuple[np.ndarray, np.ndarray]:
    """``m`` random distinct sources to ``m`` random distinct destinations."""
    k = check_dimension(k)
    m = _check_m(k, m)
    rng = _rng(seed)
    n = 1 << k
    return (rng.choice(n, size=m, replace=False).astype(np.int64),
            rng.choice(n, size=m, replace=False).astype(np.int64))


# ---- the pipelined version's bit-times


@dataclass(frozen=True)
class PipelineTiming:
    """Bit-times of one message through the pipelined Algorithm 1 (see
    :func:`pipeline_timing`). Lists are indexed by router ``s`` (dimension ``order[s]``)."""

    k: int
    message_bits: int
    payload_bits: int
    router_first_in: tuple[int, ...]
    router_reads: tuple[int, ...]
    router_last_in: tuple[int, ...]
    wire_busy: tuple[tuple[int, int], ...]
    delivery_first: int
    delivery_last: int
    total: int
    register_bits_per_node: int

    def bit_time(self, router: int, bit: int) -> int:
        """The bit-time during which stream index ``bit`` (0 the M bit, then the address
        bits, then the payload) is at router ``router``'s input (``router = k``: delivered
        to the destination node); indices below ``router`` have been consumed, and index
        ``router`` is the M bit the previous router put in its address bit's slot."""
        if not (0 <= router <= self.k and router <= bit <= self.message_bits):
            raise ParameterError(f"router must be in [0, {self.k}] and bit in "
                                 f"[router, {self.message_bits}], got router {router}, "
                                 f"bit {bit}")
        return bit + router


def pipeline_timing(k: int, message_bits: int) -> PipelineTiming:
    """The pipelined Algorithm 1's bit-times for an ``M``-bit message through ``k``
    dimensions, in the shared framing (:mod:`fatnet.golden.bitstream`) and the cycle
    engine's timing (:mod:`fatnet.golden.cycle`); :mod:`.bitserial` runs it.

    A message is ``M = message_bits`` bits: ``k`` relative-address bits, the one for
    dimension ``order[s]`` at position ``s``, then ``M - k >= 1`` payload bits. The
    source drives the stream ``1`` (the M bit: a message is present), the address bits,
    the payload: stream index ``p`` (``p = 0 .. M``) during bit-time ``p``. Each node has
    ``k`` routers chained in the routing order; router ``s`` handles dimension
    ``order[s]`` and has one one-bit register and a direction flip-flop; wires (across
    a dimension, or on to the node's next router) are combinational. Bit-time by
    bit-time:

    * router ``s`` receives stream index ``p`` (``p >= s``) during bit-time ``p + s``:
      its M bit (index ``s``, the slot of the address bit router ``s - 1`` consumed)
      during ``2s``, its address bit (index ``s + 1``) during ``2s + 1``;
    * reading the address bit it sets the direction flip-flop (cross dimension
      ``order[s]`` if 1, else stay) and puts a fresh M bit in that slot; every index
      ``p >= s + 1`` is latched at the end of bit-time ``p + s`` and driven during
      ``p + s + 1`` across dimension ``order[s]``'s wire or on to the node's own next
      router (a crossing message holds that wire during bit-times ``2s + 2 .. M + s + 1``);
    * two messages reaching one router in one bit-time is a collision (:mod:`.bitserial`
      keeps one and reports the other lost);
    * the destination gets the M bit during ``2k`` and payload bit ``j`` (``j = 0 .. M -
      k - 1``) during ``2k + 1 + j``, the last during ``M + k``.

    So the message takes ``M + k + 1`` bit-times (``0 .. M + k``): its stream's ``M + 1``
    bits and one per router; a node holds ``k`` bits of messages in flight.
    """
    k = check_dimension(k)
    if not is_integer(message_bits) or \
            message_bits < k + 1:
        raise ParameterError(f"message_bits must be an integer >= k + 1 = {k + 1} "
                             f"(k address bits and a payload), got {message_bits!r}")
    m = int(message_bits)
    return PipelineTiming(
        k=k, message_bits=m, payload_bits=m - k,
        router_first_in=tuple(2 * s for s in range(k)),
        router_reads=tuple(2 * s + 1 for s in range(k)),
        router_last_in=tuple(m + s for s in range(k)),
        wire_busy=tuple((2 * s + 2, m + s + 1) for s in range(k)),
        delivery_first=2 * k, delivery_last=m + k, total=m + k + 1,
        register_bits_per_node=k)
