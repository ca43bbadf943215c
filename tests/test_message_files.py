"""Message files: the column-at-a-time reading of plain ``[src, dst]`` files gives the
message set the entry-by-entry reading gives, and leaves every other file to it."""

import json

import numpy as np
import pytest

from fatnet.golden.errors import MessageFileError
from fatnet.golden.messages import load_message_file


def _entry_by_entry(path, n, payload_bits, seed, monkeypatch):
    import fatnet.golden.messages as messages
    monkeypatch.setattr(messages, "_plain_pairs", lambda doc, n: None)
    return load_message_file(path, n, payload_bits, seed)


@pytest.mark.parametrize("seed", [0, 3])
def test_plain_files_read_as_one_entry_after_another(tmp_path, monkeypatch, seed):
    rng = np.random.default_rng(seed)
    pairs = [["ext" if s < 0 else int(s), "ext" if d < 0 else int(d)]
             for s, d in zip(rng.integers(-1, 8, 500), rng.integers(0, 8, 500))]
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"messages": pairs}))
    fast = load_message_file(path, 8, 12, seed)
    slow = _entry_by_entry(path, 8, 12, seed, monkeypatch)
    assert fast.src.tolist() == slow.src.tolist() and fast.dst.tolist() == slow.dst.tolist()
    assert fast.payload == slow.payload


@pytest.mark.parametrize("entries, words", [
    ([[0, 1], [1, 8]], "leaf index must be in [0, 7], got 8"),
    ([[0, 1], ["ext", "ext"]], "cannot go from \"ext\" to \"ext\""),
    ([[0, True]], "endpoint must be a leaf index"),
    ([[0, 1.0]], "endpoint must be a leaf index"),
    ([[0, "EXT"]], "endpoint must be a leaf index"),
    ([[0, -1]], "leaf index must be in [0, 7], got -1"),
])
def test_files_with_a_bad_entry_are_named_by_the_entry_reading(tmp_path, entries, words):
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"messages": entries}))
    with pytest.raises(MessageFileError, match="messages\\[1\\]|messages\\[0\\]") as err:
        load_message_file(path, 8, 8, 0)
    assert words in str(err.value)


def test_a_payload_column_is_read_entry_by_entry(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"messages": [[0, 1, 5], [2, "ext"]]}))
    ms = load_message_file(path, 8, 8, 0)
    assert ms.payload[0] == 5 and ms.src.tolist() == [0, 2] and ms.dst.tolist() == [1, -1]


def test_the_speed_benchmarks_file_is_seeded_and_valid(tmp_path):
    """bench/fattree_model_speed.py's file: the same seed writes the same file, which
    routes (every endpoint a leaf or ext, never ext to ext)."""
    from bench_scripts import bench_script
    write = bench_script("fattree_model_speed").write_message_file
    a, b, c = (tmp_path / name for name in ("a.json", "b.json", "c.json"))
    write(a, 4, 300, 1)
    write(b, 4, 300, 1)
    write(c, 4, 300, 2)
    assert a.read_text() == b.read_text() != c.read_text()
    ms = load_message_file(a, 4, 8, 0)
    assert len(ms) == 300 and set(ms.src.tolist()) == {-1, 0, 1, 2, 3}
