"""Checks of a manifest entry against the Verilog it describes, shared by the tests of
the packed and the checking harness (importable as ``manifest_checks``: pytest puts
tests/ on the path for its conftest.py)."""

import re


def module_matches_entry(entry: dict, text: str) -> None:
    """The manifest entry's ports (``entry["ports"]``) are the header of its module
    ``entry["top"]`` in ``text``, each declared with its width, and its memories are
    declared with the entry's rows and row width."""
    header = re.search(rf"^module {entry['top']}\((.*?)\);", text, re.S | re.M).group(1)
    assert {p.strip() for p in header.split(",")} == {p["name"] for p in entry["ports"]}
    for p in entry["ports"]:
        decl = re.search(rf"^\s*(input|output)\s*(\[(\d+):0\])?\s*{p['name']};", text, re.M)
        assert decl and (int(decl.group(3)) + 1 if decl.group(2) else 1) == p["width"], p
    for mem in entry["memories"]:
        assert re.search(rf"^\s*reg \[{mem['row_bits'] - 1}:0\] {mem['name']} "
                         rf"\[{mem['rows'] - 1}:0\];", text, re.M), mem
