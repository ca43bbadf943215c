"""Routing problems for the butterfly family: one destination per input, per problem.

A *problem* is an integer array ``dest`` of length ``N``: the message that starts at
input ``i`` goes to output ``dest[i]``. Several problems routed at once ("10 random
problems", "10 transposes" in the paper's Table II) are an array of shape ``(P, N)``;
input ``i`` then starts with ``P`` messages, problem 0's first.

Addresses are ``n = log2 N``-bit numbers, bit 0 the most significant (the paper's
convention, Sec. I). The paper's *transpose* rotates the origin's binary representation
by ``n / 2`` positions (Sec. IV); for odd ``n`` we rotate by ``n // 2`` (a choice of ours:
the paper only uses ``n = 10``). A rotation by exactly half the bits is its own inverse
up to direction, so the direction (left or right) does not change any count for even
``n``; we rotate left (the high half moves to the low half).
"""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError
from ..seeds import generator
from ..messages import bit_reverse

__all__ = [
    "PATTERNS",
    "address_bits",
    "transpose",
    "bit_reversal",
    "bit_complement",
    "random_destinations",
    "random_permutation",
    "hot_spot",
    "make_problems",
]

#: Pattern names accepted by :func:`make_problems` (the CLI's ``--pattern`` choices).
PATTERNS = (
    "random-destinations",
    "random-permutation",
    "transpose",
    "bit-reversal",
    "bit-complement",
    "hot-spot",
)


def address_bits(inputs: int) -> int:
    """``n = log2(inputs)``; ``inputs`` must be a power of two >= 2."""
    if inputs < 2 or inputs & (inputs - 1):
        raise ParameterError(f"inputs must be a power of two >= 2, got {inputs}")
    return inputs.bit_length() - 1


def transpose(inputs: int) -> np.ndarray:
    """Rotate every address left by ``n // 2`` bits (the paper's transpose)."""
    n = address_bits(inputs)
    shift = n // 2
    rows = np.arange(inputs, dtype=np.int64)
    return ((rows << shift) | (rows >> (n - shift))) & (inputs - 1)


def bit_reversal(inputs: int) -> np.ndarray:
    """Reverse the ``n`` address bits."""
    return bit_reverse(np.arange(inputs, dtype=np.int64), address_bits(inputs))


def bit_complement(inputs: int) -> np.ndarray:
    """Complement every address bit."""
    address_bits(inputs)
    return (inputs - 1) - np.arange(inputs, dtype=np.int64)


def random_destinations(inputs: int, rng: np.random.Generator) -> np.ndarray:
    """Every input picks an output uniformly and independently (the paper's "random")."""
    return rng.integers(0, inputs, size=inputs, dtype=np.int64)


def random_permutation(inputs: int, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random permutation."""
    return rng.permutation(inputs).astype(np.int64)


def hot_spot(inputs: int, rng: np.random.Generator, hot_fraction: float = 0.1,
             hot_output: int = 0) -> np.ndarray:
    """Each input sends to ``hot_output`` with probability ``hot_fraction``, else uniformly."""
    if not 0.0 <= hot_fraction <= 1.0:
        raise ParameterError(f"hot_fraction must be in [0, 1], got {hot_fraction}")
    if not 0 <= hot_output < inputs:
        raise ParameterError(f"hot_output must be in [0, {inputs - 1}], got {hot_output}")
    dest = rng.integers(0, inputs, size=inputs, dtype=np.int64)
    dest[rng.random(inputs) < hot_fraction] = hot_output
    return dest


def make_problems(pattern: str, inputs: int, problems: int = 1,
                  rng: np.random.Generator | None = None, seed: int = 0,
                  hot_fraction: float = 0.1) -> np.ndarray:
    """``problems`` routing problems of one pattern, shape ``(problems, inputs)``.

    Random patterns draw each problem independently from ``rng`` (or from
    ``np.random.default_rng(seed)``); the deterministic ones repeat the same problem
    (the paper's "10 transposes").

    Raises
    ------
    ParameterError
        Unknown pattern, ``problems < 1``, or ``inputs`` not a power of two.
    """
    address_bits(inputs)
    if problems < 1:
        raise ParameterError(f"problems must be >= 1, got {problems}")
    if pattern not in PATTERNS:
        raise ParameterError(f"pattern must be one of {', '.join(PATTERNS)}, got {pattern!r}")
    if rng is None:
        rng = generator(seed, "traffic")
    fixed = {"transpose": transpose, "bit-reversal": bit_reversal,
             "bit-complement": bit_complement}
    if pattern in fixed:
        return np.tile(fixed[pattern](inputs), (problems, 1))
    out = np.empty((problems, inputs), dtype=np.int64)
    for p in range(problems):
        if pattern == "random-destinations":
            out[p] = random_destinations(inputs, rng)
        elif pattern == "random-permutation":
            out[p] = random_permutation(inputs, rng)
        else:
            out[p] = hot_spot(inputs, rng, hot_fraction)
    return out
