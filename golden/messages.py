"""Message sets: named traffic patterns and message files.

A message set is a multiset of (source, destination) pairs over leaves 0..n-1 and the
external interface :data:`EXT` ("ext" in files), each with a
payload of ``payload_bits`` bits. Messages are identified by their index.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass

import numpy as np

from .checks import is_integer
from .errors import MessageFileError, ParameterError
from .seeds import generator

__all__ = ["EXT", "MessageSet", "PATTERNS", "MAX_INPUT_FILE_BYTES", "MAX_INTEGER_DIGITS",
           "make_pattern", "load_message_file", "read_json_file", "read_message_file",
           "read_message_entries", "message_entries", "json_excerpt", "bit_reverse",
           "message_set_to_json", "endpoint_name", "plain_node_pairs"]

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
    """Payloads drawn from the ``payloads`` stream of ``seed`` (so they never shift
    patterns): per message, ``ceil(payload_bits / 32)`` draws in [0, 2^32), the first
    the most significant, masked to ``payload_bits`` bits. The draws are taken as one
    array, which gives the values one draw after another would."""
    rng = generator(seed, "payloads")
    chunks = -(-payload_bits // 32)
    draws = rng.integers(0, 2 ** 32, size=(count, chunks), dtype=np.int64)
    mask = (1 << payload_bits) - 1
    if chunks <= 1:
        return (draws.sum(axis=1) & mask).tolist()   # one chunk, or none (0 bits)
    out = []
    for row in draws.tolist():
        v = 0
        for d in row:
            v = (v << 32) | d
        out.append(v & mask)
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
        raise ParameterError(f"hot_fraction must be in [0, 1], got {hot_fraction}")
    src, dst = _pattern(n, name, generator(seed, "traffic"), hot_fraction)
    return MessageSet.from_pairs(src, dst, payload_bits, seed)


def json_excerpt(value, limit: int = 60) -> str:
    """``value`` as JSON for an error line, cut to ``limit`` characters: an entry of a
    hostile file can be a list of a million items or nested a thousand deep."""
    try:
        text = json.dumps(value)
    except (RecursionError, ValueError):
        text = f"a {type(value).__name__}"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _parse_endpoint(value, n: int, where: str) -> int:
    if value == "ext":
        return EXT
    if not is_integer(value, numpy=False):
        raise MessageFileError(
            f"{where}: endpoint must be a leaf index in [0, {n - 1}] or \"ext\", "
            f"got {json_excerpt(value)}")
    if not 0 <= value < n:
        raise MessageFileError(
            f"{where}: leaf index must be in [0, {n - 1}], got {json_excerpt(value)}")
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
                f"{where}: expected [src, dst] or [src, dst, payload], got {json_excerpt(e)}")
        yield where, e


def _check_payload(value, payload_bits: int | None, where: str) -> int:
    """A file's payload column: an integer in ``[0, 2^payload_bits - 1]``, or any
    non-negative integer when ``payload_bits`` is None (a verb that ignores payloads
    takes every file a verb that sends them takes)."""
    top = "" if payload_bits is None else f" in [0, 2^{payload_bits}-1]"
    if (not is_integer(value, numpy=False) or value < 0
            or (payload_bits is not None and value >= 1 << payload_bits)):
        raise MessageFileError(
            f"{where}: payload must be a non-negative integer{top}, got "
            f"{json_excerpt(value)}")
    return value


def _plain_pairs(doc, n: int, ext: bool = True) -> tuple[np.ndarray, np.ndarray] | None:
    """(src, dst) of a document whose every entry is a valid ``[src, dst]`` pair (leaf
    indices in range or, if ``ext``, "ext", never "ext" to "ext"), read a column at a
    time; None for anything else, which the entry-by-entry reading then names."""
    entries = doc.get("messages") if isinstance(doc, dict) else None
    if (not isinstance(entries, list) or not entries
            or not all(type(e) is list and len(e) == 2 for e in entries)):
        return None
    flat = [x for e in entries for x in e]
    # type(x) is int: never a bool, never a float
    if not all(ext and x == "ext" if type(x) is str else type(x) is int and 0 <= x < n
               for x in flat):
        return None
    ends = np.asarray([EXT if type(x) is str else x for x in flat], dtype=np.int64)
    src, dst = ends[0::2], ends[1::2]
    if ((src == EXT) & (dst == EXT)).any():
        return None
    return src, dst


def plain_node_pairs(doc, n: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(src, dst) of a document whose every entry is a pair of nodes in ``[0, n - 1]``
    (no "ext": a network without an external interface), read a column at a time (a
    100,000-message file in a few tens of milliseconds); None for anything else."""
    return _plain_pairs(doc, n, ext=False)


def parse_messages(doc, n: int, payload_bits: int | None, seed: int,
                   name: str) -> MessageSet:
    """Validate a decoded message document ``{"messages": [[src, dst(, payload)], ...]}``;
    ``payload_bits`` None: payloads are checked for shape only and kept as given."""
    plain = _plain_pairs(doc, n)
    if plain is not None:
        return MessageSet.from_pairs(*plain, payload_bits or 0, payload=random_payloads(
            len(plain[0]), payload_bits or 0, seed))
    src, dst, payload = [], [], []
    for where, e in message_entries(doc, name):
        s = _parse_endpoint(e[0], n, where)
        d = _parse_endpoint(e[1], n, where)
        if s == EXT and d == EXT:
            raise MessageFileError(f"{where}: a message cannot go from \"ext\" to \"ext\"")
        src.append(s)
        dst.append(d)
        payload.append(_check_payload(e[2], payload_bits, where) if len(e) == 3 else None)
    defaults = random_payloads(len(src), payload_bits or 0, seed)
    payload = [d if p is None else p for p, d in zip(payload, defaults)]
    return MessageSet.from_pairs(src, dst, payload_bits or 0, payload=payload)


#: The most bytes an input file (``--messages``, ``--fault-masks``) may hold: a message
#: for every node of the largest hypercube (2^20), with payloads, fits twice over; a
#: larger file is refused before it is decoded.
MAX_INPUT_FILE_BYTES = 64 << 20

#: The most digits an integer in an input file may have: the widest payload (1024 bits)
#: has 309; Python refuses to convert more than 4,300 with a ValueError of its own.
MAX_INTEGER_DIGITS = 400

_FILE_TYPES = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
               (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
               (stat.S_ISSOCK, "a socket"))


def _file_type(mode: int) -> str:
    return next((name for test, name in _FILE_TYPES if test(mode)), "not a regular file")


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise MessageFileError(f"an integer of {len(text.lstrip('-'))} digits, more than "
                               f"{MAX_INTEGER_DIGITS}")
    return int(text)


def _refuse_irregular(mode: int, path, option: str) -> None:
    if not stat.S_ISREG(mode):
        raise MessageFileError(f"{option} must be a regular file, got "
                               f"{os.fspath(path)!r} ({_file_type(mode)})")


def _read_regular_file(path, option: str, shown: str) -> bytes:
    """At most :data:`MAX_INPUT_FILE_BYTES` of a regular file. Anything else is refused
    before it is opened for reading: a FIFO would block the open, a device could be
    endless, a directory cannot be read."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError) as e:    # ValueError: a NUL character in the path
        raise MessageFileError(f"{shown}: cannot read "
                               f"({getattr(e, 'strerror', None) or e})") from None
    _refuse_irregular(mode, path, option)
    try:
        # O_NONBLOCK: should the path have become a FIFO since the stat, the open still
        # returns, and the fstat below refuses it
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_BINARY", 0))
    except OSError as e:
        raise MessageFileError(f"{shown}: cannot read ({e.strerror})") from None
    with os.fdopen(fd, "rb") as f:
        _refuse_irregular(os.fstat(f.fileno()).st_mode, path, option)
        try:
            data = f.read(MAX_INPUT_FILE_BYTES + 1)
        except OSError as e:
            raise MessageFileError(f"{shown}: cannot read ({e.strerror})") from None
    if len(data) > MAX_INPUT_FILE_BYTES:
        raise MessageFileError(f"{shown}: larger than {MAX_INPUT_FILE_BYTES} bytes, the "
                               f"most an input file may hold")
    return data


def read_json_file(path, option: str = "messages"):
    """The decoded JSON of the input file of option ``option`` (``messages``,
    ``fault-masks``): a regular file of at most :data:`MAX_INPUT_FILE_BYTES` bytes,
    UTF-8 (a byte-order mark is skipped), integers of at most
    :data:`MAX_INTEGER_DIGITS` digits. Anything else is one line (MessageFileError)
    naming the file, quoted so that no character of its name can break the line."""
    shown = f"{option} file {os.fspath(path)!r}"
    data = _read_regular_file(path, option, shown)
    start = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    try:
        text = data[start:].decode("utf-8")
    except UnicodeDecodeError as e:
        offset = start + e.start
        raise MessageFileError(f"{shown}: not UTF-8 text (byte 0x{data[offset]:02x} at "
                               f"offset {offset})") from None
    try:
        return json.loads(text, parse_int=_bounded_int)
    except json.JSONDecodeError as e:
        why = f"line {e.lineno}, column {e.colno}: {e.msg}"
    except MessageFileError as e:    # from _bounded_int
        why = str(e)
    except RecursionError:
        why = "nested too deeply"
    except ValueError as e:    # anything else json refuses: one line, never a traceback
        why = str(e).splitlines()[0] if str(e) else type(e).__name__
    raise MessageFileError(f"{shown}: not valid JSON ({why})")


def read_message_file(path):
    """The decoded JSON of a message file (:func:`read_json_file`)."""
    return read_json_file(path, "messages")


def read_message_entries(path):
    """``(where, entry)`` of every entry of the message file at ``path``
    (:func:`message_entries`), the file read by :func:`read_message_file`."""
    return message_entries(read_message_file(path), f"messages file {os.fspath(path)!r}")


def load_message_file(path, n: int, payload_bits: int | None = 8,
                      seed: int = 0) -> MessageSet:
    """Read and validate a JSON message file; errors are one-line MessageFileErrors.

    Parameters
    ----------
    path : path-like
    n : int
        Leaves: endpoints are in ``[0, n - 1]`` or ``"ext"``.
    payload_bits : int or None
        A payload column is in ``[0, 2^payload_bits - 1]``; None (a verb that sends no
        payload, ``schedule``) accepts any non-negative integer there.
    seed : int
        Seed of the payloads the file leaves out.
    """
    return parse_messages(read_message_file(path), n, payload_bits, seed,
                          f"messages file {os.fspath(path)!r}")


def message_set_to_json(ms: MessageSet) -> dict:
    return {"messages": [[endpoint_name(s), endpoint_name(d), p]
                         for s, d, p in zip(ms.src, ms.dst, ms.payload)]}
