"""Network instance descriptions: kind, parameters and seed, validated once.

A spec is what both the golden model and the hardware generator are built from, so a
parameter that cannot be built is rejected here, in one place, with one clear line.
"""

from __future__ import annotations


from dataclasses import dataclass, field

from ..checks import check_int
from ..cycle import MAX_LINK_STAGES, MAX_START_STAGES, checked_stuck_links
from ..errors import ParameterError
from ..seeds import check_seed

__all__ = [
    "FatTreeSpec",
    "CONCENTRATORS",
    "MODES",
    "universal_capacities",
    "is_power_of_two",
    "min_universal_root",
]

#: Concentrator switch implementations a node can be built with.
CONCENTRATORS = ("pippenger", "crossbar")
#: Switch-setting modes: settings carried in the message (off-line) or arbitrated in hardware.
MODES = ("offline", "online")

#: Channel directions: a heap's channel to its parent (UP) and from it (DOWN).
UP, DOWN = 0, 1

MAX_LEAVES = 1 << 16
MAX_PAYLOAD_BITS = 1024
#: Most wires per channel: every leaves count up to MAX_LEAVES has a universal tree
#: (65536^(2/3) = 1626), and a concentrator of twice as many inputs still builds in
#: about a minute; more ran for many minutes and asked for GiBs.
MAX_CAPACITY = 2048


def is_power_of_two(n: int) -> bool:
    return n >= 1 and (n & (n - 1)) == 0


def _ceil_div_pow2_two_thirds(w: int, k: int) -> int:
    """ceil(w / 2^(2k/3)) in exact integer arithmetic.

    The smallest integer c with c >= w * 2^(-2k/3), i.e. c^3 * 4^k >= w^3; floating
    point gets this wrong whenever w / 2^(2k/3) is an integer (k a multiple of 3).
    """
    target = w ** 3
    scale = 4 ** k
    c = max(1, int(w / 2 ** (2 * k / 3)) - 1)
    while c ** 3 * scale < target:
        c += 1
    while c > 1 and (c - 1) ** 3 * scale >= target:
        c -= 1
    return c


def universal_capacities(leaves: int, root_capacity: int) -> tuple[int, ...]:
    """Channel capacities of Leiserson's universal fat-tree, levels 0 (root) to lg n.

    cap(k) = min(ceil(n / 2^k), ceil(w / 2^(2k/3))) (paper, Section IV).
    """
    levels = leaves.bit_length() - 1
    return tuple(
        min(-(-leaves // 2 ** k), _ceil_div_pow2_two_thirds(root_capacity, k))
        for k in range(levels + 1)
    )


@dataclass(frozen=True)
class FatTreeSpec:
    """A fat-tree instance: leaf count, capacity per level, switch options and seed.

    Build one with :meth:`universal`, :meth:`constant` or :meth:`explicit`; the
    constructor validates everything, so a spec that exists can be built.

    Parameters
    ----------
    leaves : int
        Number of processors n, a power of two >= 2.
    capacities : tuple of int
        Wires per channel at levels 0 (the root's external channel) to lg n (the
        processors' own channels); every entry >= 1.
    profile : str
        How the capacities were chosen: ``universal``, ``constant`` or ``explicit``.
    root_capacity : int or None
        w for the universal profile.
    concentrator : str
        ``pippenger`` (cascaded random partial concentrators) or ``crossbar``.
    mode : str
        ``offline`` (switch settings carried as decision bits) or ``online``
        (hardware arbitration).
    payload_bits : int
        Data bits carried by every message.
    link_stages : int
        Registers on every node-to-node link, each way (0 .. 8; the processors' and the
        external channel's wires are not pipelined): the hardware's clock for large
        trees, paid in latency (:mod:`fatnet.golden.fattree.cyclemodel`).
    start_stages : int
        Register stages of the start strobe's tree to the nodes (0 .. 4): bit-time 0 is
        the clock ``1 + start_stages`` after the strobe
        (:func:`fatnet.golden.cycle.start_latency`); the bit-times do not change.
    stuck_links : tuple of ((direction, heap, wire), value)
        Wires inside the tree held at ``value`` (0 or 1) whatever drives them, a fault
        no node knows of (``--stuck-link up|down:HEAP:WIRE:0|1``): wire ``wire`` of heap
        ``heap``'s UP or DOWN channel, heap 1 .. n - 2 (a link between two nodes).
        Messages routed onto one are lost there; one stuck at 1 feeds its node a
        phantom stream of ones (:mod:`fatnet.golden.cycle`).
    seed : int
        Seed for every random choice made when the instance is built.
    """

    leaves: int
    capacities: tuple[int, ...]
    profile: str = "explicit"
    root_capacity: int | None = None
    concentrator: str = "pippenger"
    mode: str = "offline"
    payload_bits: int = 8
    seed: int = 0
    link_stages: int = 0
    start_stages: int = 0
    stuck_links: tuple = ()
    kind: str = field(default="fat-tree", init=False)

    def __post_init__(self):
        n = check_int("leaves", self.leaves, 2, MAX_LEAVES,
                      f"a power of two in [2, {MAX_LEAVES}]", numpy=False)
        if not is_power_of_two(n):
            raise ParameterError(
                f"leaves must be a power of two in [2, {MAX_LEAVES}], got {n}")
        caps = tuple(self.capacities)
        object.__setattr__(self, "capacities", caps)
        levels = n.bit_length() - 1
        if len(caps) != levels + 1:
            raise ParameterError(
                f"capacities must list {levels + 1} values (levels 0..{levels} for "
                f"{n} leaves), got {len(caps)}")
        for k, c in enumerate(caps):
            check_int(f"capacities[{k}]", c, 1, MAX_CAPACITY, numpy=False)
        if self.concentrator not in CONCENTRATORS:
            raise ParameterError(
                f"concentrator must be one of {', '.join(CONCENTRATORS)}, "
                f"got {self.concentrator!r}")
        if self.mode not in MODES:
            raise ParameterError(
                f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        check_int("payload_bits", self.payload_bits, 0, MAX_PAYLOAD_BITS, numpy=False)
        check_seed(self.seed)
        check_int("link_stages", self.link_stages, 0, MAX_LINK_STAGES, numpy=False)
        check_int("start_stages", self.start_stages, 0, MAX_START_STAGES, numpy=False)
        object.__setattr__(self, "stuck_links",
                           checked_stuck_links(self.stuck_links, self._check_stuck_link))

    def _check_stuck_link(self, direction, heap, wire, value) -> tuple:
        """``((direction, heap, wire), value)`` of a stuck link, checked; one line else."""
        n = self.leaves
        if n < 4:
            raise ParameterError(f"stuck_links needs a link between two nodes: a tree of "
                                 f"{n} leaves has none (leaves >= 4)")
        if direction not in (UP, DOWN):
            raise ParameterError(f"stuck_links direction must be up or down, got "
                                 f"{direction!r}")
        check_int("stuck_links heap", heap, 1, n - 2,
                  f"in [1, {n - 2}] (a link between two nodes)", numpy=False)
        width = self.capacities[int(heap + 1).bit_length() - 1]
        check_int("stuck_links wire", wire, 0, width - 1,
                  f"in [0, {width - 1}] (heap {heap}'s channel has {width} wires)",
                  numpy=False)
        if value not in (0, 1):
            raise ParameterError(f"stuck_links value must be 0 or 1, got {value!r}")
        return (int(direction), int(heap), int(wire)), int(value)

    @property
    def levels(self) -> int:
        """lg n: the processors sit at this level, the root at level 0."""
        return self.leaves.bit_length() - 1

    @classmethod
    def universal(cls, leaves: int, root_capacity: int, **options) -> "FatTreeSpec":
        """Universal fat-tree with root capacity w, n^(2/3) <= w <= n."""
        n = check_int("leaves", leaves, 2, MAX_LEAVES,
                      f"a power of two in [2, {MAX_LEAVES}]", numpy=False)
        if not is_power_of_two(n):
            raise ParameterError(
                f"leaves must be a power of two in [2, {MAX_LEAVES}], got {n}")
        low = min_universal_root(n)
        high = min(n, MAX_CAPACITY)
        w = check_int("root_capacity", root_capacity, low, high,
                      f"in [n^(2/3), {'n' if high == n else MAX_CAPACITY}] = [{low}, "
                      f"{high}] for {n} leaves", numpy=False)
        return cls(leaves=n, capacities=universal_capacities(n, w), profile="universal",
                   root_capacity=w, **options)

    @classmethod
    def constant(cls, leaves: int, capacity: int, **options) -> "FatTreeSpec":
        """Every channel, the processors' own included, has ``capacity`` wires."""
        n = check_int("leaves", leaves, 2, MAX_LEAVES,
                      f"a power of two in [2, {MAX_LEAVES}]", numpy=False)
        if not is_power_of_two(n):
            raise ParameterError(
                f"leaves must be a power of two in [2, {MAX_LEAVES}], got {n}")
        c = check_int("capacity", capacity, 1, MAX_CAPACITY, numpy=False)
        return cls(leaves=n, capacities=(c,) * (n.bit_length()), profile="constant",
                   **options)

    @classmethod
    def explicit(cls, leaves: int, capacities, **options) -> "FatTreeSpec":
        """Capacities given per level, root (level 0) first."""
        return cls(leaves=leaves, capacities=tuple(capacities), profile="explicit",
                   **options)

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "leaves": self.leaves,
            "capacities": list(self.capacities),
            "profile": self.profile,
            "root_capacity": self.root_capacity,
            "concentrator": self.concentrator,
            "mode": self.mode,
            "payload_bits": self.payload_bits,
            "seed": self.seed,
            "link_stages": self.link_stages,
            "start_stages": self.start_stages,
            "stuck_links": [[DIRECTION_NAMES[d], h, w, v]
                            for (d, h, w), v in self.stuck_links],
        }


#: The directions of a stuck link by name, as the spec's dict and the manifest write them.
DIRECTION_NAMES = {UP: "up", DOWN: "down"}


def min_universal_root(n: int) -> int:
    """Smallest integer w with w >= n^(2/3), exactly (w^3 >= n^2)."""
    w = max(1, int(round(n ** (2 / 3))) - 1)
    while w ** 3 < n * n:
        w += 1
    while w > 1 and (w - 1) ** 3 >= n * n:
        w -= 1
    return w
