"""Message sets: named traffic patterns and message files.

A message set is a multiset of (source, destination) pairs over leaves 0..n-1 and the
external interface :data:`EXT` ("ext" in files), each with a
payload of ``payload_bits`` bits. Messages are identified by their index.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import MessageFileError, ParameterError

__all__ = ["EXT", "MessageSet", "PATTERNS", "make_pattern", "load_message_file",
           "read_message_file", "message_entries", "bit_reverse", "message_set_to_json", "endpoint_name"]

#: Endpoint index of a network's external interface (the fat-tree root's channel).
EXT = -1


def endpoint_name(e: int):
    return "ext" if e == EXT else int(e)


@dataclass
class MessageSet:
    """Sources, destinations and payloads, one entry per message."""

    src: np.ndarray
    dst: np.ndarray
    payload: list[int]

    def __len__(self) -> int:
        return len(self.src)

    def pairs(self, idx=None) -> list[list]:
        idx = range(len(self)) if idx is None else idx
        return [[endpoint_name(self.src[i]), endpoint_name(self.dst[i])] for i in idx]

    @classmethod
    def from_pairs(cls, src, dst, payload_bits: int, seed: int = 0,
                   payload=None) -> "MessageSet":
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        if payload is None:
            payload = random_payloads(len(src), payload_bits, seed)
        return cls(src, dst, [int(p) for p in payload])


def random_payloads(count: int, payload_bits: int, seed: int) -> list[int]:
    """Payloads drawn from their own stream of ``seed`` (so they never shift patterns)."""
    rng = np.random.default_rng([seed, 0x9A7])
    out = []
    for _ in range(count):
        v = 0
        for _chunk in range(0, payload_bits, 32):
            v = (v << 32) | int(rng.integers(0, 2 ** 32))
        out.append(v & ((1 << payload_bits) - 1))
    return out


def _rotate_left(x: np.ndarray, r: int, width: int) -> np.ndarray:
    mask = (1 << width) - 1
    r %= width
    return ((x << r) | (x >> (width - r))) & mask


def bit_reverse(x: np.ndarray, width: int) -> np.ndarray:
    """``x`` with its low ``width`` bits in reverse order (the bit-reversal pattern of
    every family)."""
    out = np.zeros_like(x)
    for b in range(width):
        out |= ((x >> b) & 1) << (width - 1 - b)
    return out


def _pattern(n: int, name: str, rng: np.random.Generator, hot_fraction: float):
    leaves = np.arange(n, dtype=np.int64)
    L = n.bit_length() - 1
    if name == "random-permutation":
        return leaves, rng.permutation(n).astype(np.int64)
    if name == "random-destinations":
        return leaves, rng.integers(0, n, size=n, dtype=np.int64)
    if name == "transpose":
        return leaves, _rotate_left(leaves, L // 2, L) if L > 1 else leaves ^ 1
    if name == "bit-reversal":
        return leaves, bit_reverse(leaves, L)
    if name == "bit-complement":
        return leaves, leaves ^ (n - 1)
    if name == "half-shift":
        return leaves, (leaves + n // 2) % n
    if name == "hot-spot":
        hot = rng.random(n) < hot_fraction
        dst = rng.permutation(n).astype(np.int64)
        dst[hot] = 0
        return leaves, dst
    if name == "to-ext":
        return leaves, np.full(n, EXT, dtype=np.int64)
    if name == "from-ext":
        return np.full(n, EXT, dtype=np.int64), leaves.copy()
    raise AssertionError(name)


#: Traffic patterns by name, with a one-line description each.
PATTERNS = {
    "random-permutation": "every leaf sends to a distinct random leaf (seeded)",
    "random-destinations": "every leaf sends to a uniformly random leaf (seeded)",
    "transpose": "leaf i sends to i with its address bits rotated by lg(n)/2",
    "bit-reversal": "leaf i sends to i with its address bits reversed",
    "bit-complement": "leaf i sends to n-1-i (every message crosses the root)",
    "half-shift": "leaf i sends to (i + n/2) mod n (every message crosses the root)",
    "hot-spot": "a seeded fraction of the leaves send to leaf 0, the rest a permutation",
    "to-ext": "every leaf sends to the external interface",
    "from-ext": "the external interface sends to every leaf",
}


def make_pattern(n: int, name: str, seed: int = 0, payload_bits: int = 8,
                 hot_fraction: float = 0.25) -> MessageSet:
    """The message set of a named pattern on ``n`` leaves."""
    if name not in PATTERNS:
        raise ParameterError(
            f"pattern must be one of {', '.join(PATTERNS)}, got {name!r}")
    if not 0.0 <= hot_fraction <= 1.0:
        raise ParameterError(f"hot-fraction must be in [0, 1], got {hot_fraction}")
    src, dst = _pattern(n, name, np.random.default_rng(seed), hot_fraction)
    return MessageSet.from_pairs(src, dst, payload_bits, seed)


def _parse_endpoint(value, n: int, where: str) -> int:
    if value == "ext":
        return EXT
    if isinstance(value, bool) or not isinstance(value, int):
        raise MessageFileError(
            f"{where}: endpoint must be a leaf index in [0, {n - 1}] or \"ext\", "
            f"got {json.dumps(value)}")
    if not 0 <= value < n:
        raise MessageFileError(
            f"{where}: leaf index must be in [0, {n - 1}], got {value}")
    return value


def message_entries(doc, name: str):
    """``(where, entry)`` of every entry of a decoded message document ``{"messages":
    [[src, dst(, payload)], ...]}``, its shape checked (one-line MessageFileErrors); each
    family checks the endpoints itself."""
    if not isinstance(doc, dict) or "messages" not in doc:
        raise MessageFileError(
            f"{name}: expected a JSON object with a \"messages\" list of [src, dst] pairs")
    entries = doc["messages"]
    if not isinstance(entries, list):
        raise MessageFileError(f"{name}: \"messages\" must be a list of [src, dst] pairs")
    if not entries:
        raise MessageFileError(f"{name}: \"messages\" is empty; give at least one [src, dst] pair")
    for i, e in enumerate(entries):
        where = f"{name}: messages[{i}]"
        if not isinstance(e, list) or len(e) not in (2, 3):
            raise MessageFileError(
                f"{where}: expected [src, dst] or [src, dst, payload], got {json.dumps(e)}")
        yield where, e


def parse_messages(doc, n: int, payload_bits: int, seed: int, name: str) -> MessageSet:
    """Validate a decoded message document ``{"messages": [[src, dst(, payload)], ...]}``."""
    src, dst, payload = [], [], []
    for where, e in message_entries(doc, name):
        s = _parse_endpoint(e[0], n, where)
        d = _parse_endpoint(e[1], n, where)
        if s == EXT and d == EXT:
            raise MessageFileError(f"{where}: a message cannot go from \"ext\" to \"ext\"")
        src.append(s)
        dst.append(d)
        if len(e) == 3:
            p = e[2]
            if isinstance(p, bool) or not isinstance(p, int) or not 0 <= p < 2 ** payload_bits:
                raise MessageFileError(
                    f"{where}: payload must be an integer in [0, 2^{payload_bits}-1], "
                    f"got {json.dumps(p)}")
            payload.append(p)
        else:
            payload.append(None)
    defaults = random_payloads(len(src), payload_bits, seed)
    payload = [d if p is None else p for p, d in zip(payload, defaults)]
    return MessageSet.from_pairs(src, dst, payload_bits, payload=payload)


def read_message_file(path):
    """The decoded JSON of a message file; a file that cannot be read or is not JSON is
    one line (MessageFileError)."""
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise MessageFileError(f"messages file {path}: cannot read ({e.strerror})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise MessageFileError(
            f"messages file {path}: not valid JSON (line {e.lineno}, column {e.colno}: "
            f"{e.msg})") from None


def load_message_file(path, n: int, payload_bits: int = 8, seed: int = 0) -> MessageSet:
    """Read and validate a JSON message file; errors are one-line MessageFileErrors."""
    return parse_messages(read_message_file(path), n, payload_bits, seed,
                          f"messages file {path}")


def message_set_to_json(ms: MessageSet) -> dict:
    return {"messages": [[endpoint_name(s), endpoint_name(d), p]
                         for s, d, p in zip(ms.src, ms.dst, ms.payload)]}
