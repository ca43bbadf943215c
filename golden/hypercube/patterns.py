"""Traffic patterns on the k-cube: routing problems as ``(src, dst)`` int64 arrays.

Every pattern is a function ``pattern(k, seed=0, ...)`` returning two int64 arrays of
equal length, message ``m`` going from node ``src[m]`` to node ``dst[m]`` (the cube's
conventions, :mod:`.cube`: nodes ``0 .. 2**k - 1``, address bit ``i`` is dimension
``i``, bit 0 the least significant). With one problem every node is the source of exactly
one message and ``src == arange(2**k)``. Every random choice is drawn from
the ``traffic`` stream of ``seed`` (:mod:`fatnet.golden.seeds`; a ``numpy.random.Generator``
is also accepted and drawn from as it is): the same ``(k, name, seed, options)`` always
gives the same messages; the deterministic patterns ignore ``seed``.

Patterns (``PATTERNS``)
-----------------------
``random-permutation``
    ``dst`` a uniformly random permutation of the nodes.
``random-destinations``
    every source picks its destination uniformly and independently (any map: a
    destination may receive several messages, or none; a message may go to its source).
``transpose``
    swap the high and the low ``k // 2`` address bits: with ``h = k // 2``,
    ``dst = (x >> (k - h)) | ((x & (2**h - 1)) << (k - h)) | (x & middle)``. For even
    ``k`` this is the classic transpose (the row and column halves of the address swap).
    For odd ``k`` the middle bit (bit ``h``) stays where it is and the ``h`` bits on
    either side of it swap; ``k = 1`` is the identity. Always an involution.
``bit-reversal``
    ``dst`` is ``x`` with its ``k`` address bits in reverse order (bit ``i`` moves to bit
    ``k - 1 - i``).
``complement``
    ``dst = x ^ (2**k - 1)``: every message crosses every dimension.
``hot-spot``
    exactly ``round(fraction * 2**k)`` sources, a uniformly random subset, send to the
    node ``node`` (options ``fraction`` in [0, 1], default 0.1, and ``node``, default 0);
    every other source picks its destination uniformly and independently among all the
    nodes (the hot node included), as in ``random-destinations``.

Several problems at once
------------------------
Option ``problems = H`` (default 1) routes ``H`` problems of one pattern together: every
node is the source of ``H`` messages (an H-relation for the permutations). The messages
are ordered problem by problem: message ``p * 2**k + x`` is problem ``p``'s message from
node ``x``. Random patterns draw each problem independently from the one generator
(problem 0 first); the deterministic ones repeat the same problem ``H`` times.
"""

from __future__ import annotations

import numpy as np

from ..checks import is_integer
from ..errors import ParameterError
from ..messages import bit_reverse
from ..seeds import check_seed, generator
from .cube import check_dimension

__all__ = ["PATTERNS", "MAX_PROBLEMS", "random_permutation", "random_destinations",
           "transpose", "bit_reversal", "complement", "hot_spot", "several",
           "make_pattern", "check_seed"]

#: Pattern names accepted by :func:`make_pattern` (the command line's ``--pattern``).
PATTERNS = ("random-permutation", "random-destinations", "transpose", "bit-reversal",
            "complement", "hot-spot")

#: The most problems routed at once (``problems`` option).
MAX_PROBLEMS = 1024


def _nodes(k) -> np.ndarray:
    return np.arange(1 << check_dimension(k), dtype=np.int64)


def _rng(seed) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):      # several(): one generator, H problems
        return seed
    return generator(seed, "traffic")


def random_permutation(k, seed=0) -> tuple[np.ndarray, np.ndarray]:
    """Every node sends one message; the destinations are a random permutation."""
    src = _nodes(k)
    return src, _rng(seed).permutation(src.size).astype(np.int64)


def random_destinations(k, seed=0) -> tuple[np.ndarray, np.ndarray]:
    """Every node sends one message to a uniformly random node (independent choices)."""
    src = _nodes(k)
    return src, _rng(seed).integers(0, src.size, size=src.size, dtype=np.int64)


def transpose(k, seed=0) -> tuple[np.ndarray, np.ndarray]:
    """Swap the high and low ``k // 2`` address bits (odd ``k``: the middle bit stays)."""
    src = _nodes(k)
    k = int(k)
    h = k // 2
    low = (1 << h) - 1
    middle = ((1 << (k - h)) - 1) & ~low        # bit h when k is odd, else nothing
    dst = (src >> (k - h)) | ((src & low) << (k - h)) | (src & middle)
    return src, dst


def bit_reversal(k, seed=0) -> tuple[np.ndarray, np.ndarray]:
    """Reverse the ``k`` address bits."""
    src = _nodes(k)
    return src, bit_reverse(src, int(k))


def complement(k, seed=0) -> tuple[np.ndarray, np.ndarray]:
    """Complement every address bit."""
    src = _nodes(k)
    return src, src ^ (src.size - 1)


def hot_spot(k, seed=0, fraction=0.1, node=0) -> tuple[np.ndarray, np.ndarray]:
    """``round(fraction * 2**k)`` random sources send to ``node``; the rest to uniformly
    random nodes."""
    src = _nodes(k)
    n = src.size
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float, np.integer,
                                                               np.floating)) or not (
            0.0 <= float(fraction) <= 1.0):
        raise ParameterError(f"fraction must be a number in [0, 1], got {fraction!r}")
    if not is_integer(node) or not (
            0 <= int(node) < n):
        raise ParameterError(f"node must be an integer in [0, {n - 1}], got {node!r}")
    rng = _rng(seed)
    dst = rng.integers(0, n, size=n, dtype=np.int64)
    hot = rng.permutation(n)[:int(round(float(fraction) * n))]
    dst[hot] = int(node)
    return src, dst


_FUNCTIONS = {"random-permutation": random_permutation,
              "random-destinations": random_destinations, "transpose": transpose,
              "bit-reversal": bit_reversal, "complement": complement, "hot-spot": hot_spot}
_RANDOM = {"random-permutation", "random-destinations", "hot-spot"}
_OPTIONS = {"hot-spot": ("fraction", "node")}


def several(k, name, seed=0, problems=1, **options) -> tuple[np.ndarray, np.ndarray]:
    """``problems`` problems of pattern ``name`` routed at once, problem 0's messages
    first (module docstring)."""
    k = check_dimension(k)
    if not is_integer(problems) or not (
            1 <= int(problems) <= MAX_PROBLEMS):
        raise ParameterError(f"problems must be an integer in [1, {MAX_PROBLEMS}], "
                             f"got {problems!r}")
    if name not in _FUNCTIONS:
        raise ParameterError(f"pattern must be one of {', '.join(PATTERNS)}, got {name!r}")
    fn = _FUNCTIONS[name]
    rng = generator(seed, "traffic")
    if name not in _RANDOM:
        src, dst = fn(k, **options)
        return np.tile(src, int(problems)), np.tile(dst, int(problems))
    # Independent problems drawn in turn from one generator: problem 0 of H problems is
    # the single problem of the same seed.
    parts = [fn(k, rng, **options) for _ in range(int(problems))]
    return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))


def make_pattern(k, name, seed=0, **options) -> tuple[np.ndarray, np.ndarray]:
    """The messages of pattern ``name`` on the ``k``-cube: ``(src, dst)``.

    Options: ``problems`` (every pattern; 1 .. ``MAX_PROBLEMS``), and for ``hot-spot``
    ``fraction`` and ``node``. An unknown name or option, or a value out of range, is a
    one-line :class:`~fatnet.golden.errors.ParameterError`.
    """
    k = check_dimension(k)
    if not isinstance(name, str) or name not in _FUNCTIONS:
        raise ParameterError(f"pattern must be one of {', '.join(PATTERNS)}, got {name!r}")
    accepted = ("problems",) + _OPTIONS.get(name, ())
    for option in options:
        if option not in accepted:
            raise ParameterError(f"option {option!r} is not accepted by pattern {name!r}: "
                                 f"accepted {', '.join(accepted)}")
    problems = options.pop("problems", 1)
    return several(k, name, seed, problems, **options)
