"""Bad input to `fatnet gen|route|info` for the splitter kinds: one line on stderr naming
the parameter and the accepted range, exit status 2, no traceback, nothing written."""

import subprocess
import sys

import pytest

from fatnet.cli.main import main

KINDS = ("butterfly", "dilated-butterfly", "multibutterfly")

# (kind-independent options, what the one line must say)
BAD_NETWORK = [
    (["--inputs", "12"], "inputs must be a power of two in [4, 65536], got 12"),
    (["--inputs", "2"], "inputs must be a power of two in [4, 65536], got 2"),
    (["--inputs", "16", "--multiplicity", "0"],
     "multiplicity must be an integer in [1, 64], got 0"),
    (["--inputs", "16", "--multiplicity", "-3"],
     "multiplicity must be an integer in [1, 64], got -3"),
    (["--inputs", "16", "--faults", "49"],
     "faults must be in [0, 48] (the interior switches of a 16-input network), got 49"),
    (["--inputs", "8", "--faults", "1000"],
     "faults must be in [0, 16] (the interior switches of a 8-input network), got 1000"),
]

# multiplicity wrong for the kind
BAD_FOR_KIND = [
    ("butterfly", ["--inputs", "16", "--multiplicity", "2"],
     "multiplicity must be 1 for kind butterfly"),
    ("dilated-butterfly", ["--inputs", "16", "--multiplicity", "1"],
     "multiplicity must be in [2, 64] for kind dilated-butterfly, got 1"),
]


def _one_line(capsys, needle):
    cap = capsys.readouterr()
    err = cap.err
    assert needle in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err + cap.out
    return err


def _run(verb, kind, argv, tmp_path):
    extra = ["-o", str(tmp_path / "out")] if verb == "gen" else []
    return main([verb, kind, *argv, *extra])


@pytest.mark.parametrize("verb", ["gen", "route", "info"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("argv, needle", BAD_NETWORK, ids=lambda x: " ".join(x)
                         if isinstance(x, list) else None)
def test_bad_network_parameters(verb, kind, argv, needle, tmp_path, capsys):
    assert _run(verb, kind, argv, tmp_path) == 2
    err = _one_line(capsys, needle)
    assert err.startswith(f"fatnet {verb}: error: ")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


@pytest.mark.parametrize("verb", ["gen", "route", "info"])
@pytest.mark.parametrize("kind, argv, needle", BAD_FOR_KIND)
def test_multiplicity_wrong_for_the_kind(verb, kind, argv, needle, tmp_path, capsys):
    assert _run(verb, kind, argv, tmp_path) == 2
    _one_line(capsys, needle)


@pytest.mark.parametrize("kind", ["butterfly", "dilated-butterfly"])
def test_faults_where_every_switch_is_on_an_only_route(kind, tmp_path, capsys):
    # every interior switch of a (dilated) butterfly is on some input's only route: the
    # golden model finds no placement that keeps every input connected
    assert _run("gen", kind, ["--inputs", "8", "--faults", "1"], tmp_path) == 2
    _one_line(capsys, "faults must be fewer")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


@pytest.mark.parametrize("kind", KINDS)
def test_unknown_pattern(kind, tmp_path, capsys):
    assert _run("route", kind, ["--inputs", "8", "--pattern", "nosuch"], tmp_path) == 2
    _one_line(capsys, "pattern must be one of random-destinations, random-permutation")


@pytest.mark.parametrize("kind", KINDS)
def test_gen_refuses_the_modified_network(kind, tmp_path, capsys):
    assert _run("gen", kind, ["--inputs", "16", "--modified"], tmp_path) == 2
    err = _one_line(capsys, "modified must be off for gen")
    assert "without --modified" in err
    assert not any((tmp_path / "out").iterdir())


def test_modified_network_is_fine_for_the_model(capsys):
    assert main(["info", "multibutterfly", "--inputs", "16", "--modified"]) == 0
    assert "delivery cycle" in capsys.readouterr().out


def test_bad_input_from_the_command_line_exits_2_without_traceback(tmp_path):
    # the real entry point, as a user runs it
    p = subprocess.run([sys.executable, "-c", "import sys; from fatnet.cli.main import "
                        "main; sys.exit(main())", "gen", "multibutterfly", "--inputs", "16",
                        "--modified", "-o", str(tmp_path / "out")],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [
        p.stderr.strip()] and "modified must be off for gen" in p.stderr
    assert "Traceback" not in p.stderr


def test_gen_writes_the_files(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["gen", "dilated-butterfly", "--inputs", "8", "--multiplicity", "2",
                 "-o", str(out)]) == 0
    assert {p.name for p in out.iterdir()} == {"butterfly.v", "butterfly_harness.v",
                                                "lint.vlt", "butterfly.json"}
    assert "delivery cycle" in capsys.readouterr().out
