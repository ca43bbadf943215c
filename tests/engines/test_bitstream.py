"""Stream framing (fatnet.golden.bitstream) with random fields and payloads, seeded:
frame / FieldReader round trips, the framing checked bit by bit against a reference
built from format() strings, and every refusal. Failures print the seed."""

from __future__ import annotations


import numpy as np
import pytest

from fatnet.golden.bitstream import (FieldReader, StreamError, bits_to_int,
                                     decode_delivered, frame, int_to_bits)
from fatnet.golden.errors import FatnetInputError

SEEDS = range(4400, 4500)


def random_message(seed):
    rng = np.random.default_rng(seed)
    widths = rng.integers(0, 5, size=int(rng.integers(0, 7))).tolist()
    values = [int(rng.integers(0, 1 << w)) for w in widths]
    pb = int(rng.choice([0, 1, 7, 32, 33, 64, 100]))
    payload = int.from_bytes(rng.bytes(16), "big") & ((1 << pb) - 1)
    return widths, values, pb, payload


def reference(widths, values, pb, payload) -> list[int]:
    text = "1" + "".join(format(v, f"0{w}b") if w else "" for w, v in zip(widths, values))
    text += format(payload, f"0{pb}b") if pb else ""
    return [int(c) for c in text]


@pytest.mark.parametrize("seed", SEEDS)
def test_frame_matches_reference_and_reads_back(seed):
    widths, values, pb, payload = random_message(seed)
    where = f"seed {seed}: widths={widths} values={values} pb={pb}"
    fields = [[int(c) for c in format(v, f"0{w}b")] if w else []
              for w, v in zip(widths, values)]
    s = frame(fields, payload, pb)
    assert s == reference(widths, values, pb, payload), where
    rd = FieldReader(s)
    assert [rd.take(w) for w in widths] == values, where
    assert rd.payload(pb) == payload, where
    # as it arrives at a destination: M then the payload
    assert decode_delivered(pb, [1] + s[len(s) - pb:]) == payload, where


@pytest.mark.parametrize("seed", SEEDS[:30])
def test_int_bits_round_trip(seed):
    rng = np.random.default_rng(seed)
    for _ in range(50):
        w = int(rng.integers(0, 80))
        v = int.from_bytes(rng.bytes(10), "big") & ((1 << w) - 1)
        b = int_to_bits(v, w)
        assert len(b) == w and b == ([int(c) for c in format(v, f"0{w}b")] if w else [])
        assert bits_to_int(b) == v, f"seed {seed}: {v} in {w} bits"


def test_refusals():
    with pytest.raises(ValueError):
        int_to_bits(4, 2)
    with pytest.raises(ValueError):
        int_to_bits(-1, 3)
    with pytest.raises(ValueError):
        int_to_bits(1, 0)
    with pytest.raises(ValueError):  # payload wider than its bits
        frame([[1]], 8, 3)
    for bad in ([], [0, 1, 1]):
        with pytest.raises(StreamError):
            FieldReader(bad)
    rd = FieldReader([1, 0, 1])
    assert rd.take(1) == 0
    with pytest.raises(StreamError):  # only one bit left
        rd.take(2)
    with pytest.raises(StreamError):  # bits after the payload
        FieldReader([1, 1, 0, 1]).payload(2)
    with pytest.raises(StreamError):  # payload runs past the end
        FieldReader([1, 1]).payload(2)
    for bad in ([1, 0], [0, 1, 1], [1, 0, 1, 1]):
        with pytest.raises(StreamError):
            decode_delivered(2, bad)
    assert issubclass(StreamError, FatnetInputError)
