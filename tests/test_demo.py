"""``fatnet demo``: a small network of each family, routed, generated, co-simulated."""

import shutil

import pytest

from fatnet.cli.main import main
from fatnet.api.registry import demo_kinds, families, get_family


def test_every_family_with_hardware_has_one_demo_kind():
    with_hardware = {f.name for f in families() if f.has_hardware}
    shown = [get_family(k).name for k in demo_kinds()]
    assert sorted(shown) == sorted(with_hardware)


@pytest.mark.long
def test_demo_routes_generates_and_cosimulates_every_family(tmp_path, capsys, monkeypatch):
    if shutil.which("iverilog") is None:
        pytest.skip("iverilog is not installed (apt-get install iverilog)")
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--sim", "icarus", "-o", "out"]) == 0
    out = capsys.readouterr().out
    for kind in demo_kinds():
        for verb in ("route", "gen", "sim"):
            assert f"$ fatnet {verb} {kind}" in out
        assert list((tmp_path / "out" / kind).glob("*.v"))
        (gtkw,) = (tmp_path / "out" / kind / "waves").glob("*.gtkw")
        assert f"open the waves: gtkwave {gtkw.relative_to(tmp_path)}" in out
    assert out.count("PASS: RTL and model agree") == len(demo_kinds())


def test_demo_model_only_writes_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--model-only"]) == 0
    out = capsys.readouterr().out
    assert all(f"$ fatnet route {k}" in out for k in demo_kinds())
    assert "$ fatnet gen" not in out and not list(tmp_path.iterdir())


def test_demo_unknown_kind_is_one_line(capsys):
    assert main(["demo", "ring"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "fat-tree" in err


def test_demo_seed_reaches_every_step_once(capsys):
    """``fatnet demo --seed S`` runs each kind's steps with ``--seed S`` in place of the
    kind's own demo seed (one ``--seed`` per command, the given one)."""
    assert main(["demo", "--model-only", "--seed", "7"]) == 0
    commands = [line for line in capsys.readouterr().out.splitlines()
                if line.startswith("$ fatnet route")]
    assert len(commands) == len(demo_kinds())
    for line in commands:
        words = line.split()
        assert words.count("--seed") == 1
        assert words[words.index("--seed") + 1] == "7"
