"""``fatnet demo``: a small network of each family, routed, generated, co-simulated.

The demo's co-simulation of every family runs once, as a user runs it first: from the
installed wheel (tests/test_wheel_install.py, ``test_installed_demo``, which checks its
steps, files and waves); the tests here run the model's part."""

from fatnet.cli.main import main
from fatnet.api.registry import demo_kinds, families, get_family


def test_every_family_with_hardware_has_one_demo_kind():
    with_hardware = {f.name for f in families() if f.has_hardware}
    shown = [get_family(k).name for k in demo_kinds()]
    assert sorted(shown) == sorted(with_hardware)


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
