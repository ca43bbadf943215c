"""Bad input to `fatnet gen|route|info` for the splitter kinds: one line on stderr naming
the parameter and the accepted range, exit status 2, no traceback, nothing written."""

import json
import shutil
import subprocess
import sys

import pytest

from fatnet.cli.main import main
from fatnet.api.registry import get_family
from simulators import SIMS

KINDS = sorted(get_family("butterfly").kinds)

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
    (["--inputs", "8", "--link-stages", "9"], "link-stages must be an integer in [0, 8], got 9"),
    (["--inputs", "8", "--link-stages", "-1"],
     "link-stages must be an integer in [0, 8], got -1"),
    (["--inputs", "8", "--stuck-link", "3:0:0:0"], "stuck-link level must be in [1, 2], got 3"),
    (["--inputs", "8", "--stuck-link", "1:8:0:0"], "stuck-link row must be in [0, 7], got 8"),
    (["--inputs", "8", "--stuck-link", "1:0:0:2"], "stuck-link value must be 0 or 1, got 2"),
    (["--inputs", "8", "--stuck-link", "1:0:0"],
     "stuck-link must be LEVEL:ROW:WIRE:0|1 (non-negative integers), got '1:0:0'"),
    (["--inputs", "8", "--stuck-link", "1:0:0:0", "--stuck-link", "1:0:0:1"],
     "stuck-link names one wire twice, at 0 and at 1: (1, 0, 0)"),
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
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("verb", ["gen", "sim"])
def test_hardware_refuses_another_fault_rule_with_faults(verb, tmp_path, capsys, monkeypatch):
    # the status registers propagate by Sec. IV's "all" rule: a fault map propagated by
    # "half" would declare other switches faulty than the hardware does
    monkeypatch.setattr("fatnet.sim.cocotb_runner.run", None)  # never reached
    extra = ["-o", str(tmp_path / "out")] if verb == "gen" else ["--build-dir",
                                                                 str(tmp_path / "b")]
    assert main([verb, "multibutterfly", "--inputs", "64", "--multiplicity", "4", "--faults",
                 "2", "--fault-rule", "half", *extra]) == 2
    _one_line(capsys, "fault-rule must be all for gen and sim")
    assert not any(tmp_path.iterdir())


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


def test_gen_records_the_link_stages_and_their_timing(tmp_path, capsys):
    """--link-stages reaches the manifest: the spec, the longer arrival and cycle, and
    the timing text that states them."""
    docs = {}
    for s in (0, 2):
        out = tmp_path / f"s{s}"
        assert main(["gen", "butterfly", "--inputs", "16", "--link-stages", str(s),
                     "-o", str(out)]) == 0
        docs[s] = json.loads((out / "butterfly.json").read_text())
    assert docs[2]["spec"]["link_stages"] == 2 and docs[0]["spec"]["link_stages"] == 0
    assert docs[2]["arrival_bit_time"] == docs[0]["arrival_bit_time"] + 2 * 3
    assert docs[2]["ack_latency"] == docs[0]["ack_latency"] + 2 * 3
    assert docs[2]["cycle_length_bits"] > docs[0]["cycle_length_bits"]
    assert "s = 2 registers each way" in docs[2]["timing"]
    assert "link" not in docs[0]["timing"]


def test_start_stages_reach_the_manifest_the_verilog_and_the_co_simulation(tmp_path, capsys):
    """--start-stages: the manifest states the latency, the Verilog has the tree's
    registers (kept), the bit-times do not move, and `fatnet sim` co-simulates it
    (Icarus) against the model as it stands."""
    docs = {}
    for d in (0, 2):
        out = tmp_path / f"d{d}"
        assert main(["gen", "butterfly", "--inputs", "16", "--start-stages", str(d),
                     "-o", str(out)]) == 0
        docs[d] = json.loads((out / "butterfly.json").read_text())
        verilog = (out / "butterfly.v").read_text()
        assert ("start_s2_0" in verilog) == (d == 2)
        assert ("(* keep = 32'd1 *)" in verilog) == (d == 2)
    assert (docs[2]["start_latency_clocks"], docs[0]["start_latency_clocks"]) == (2, 0)
    for key in ("arrival_bit_time", "ack_latency", "cycle_length_bits"):
        assert docs[2][key] == docs[0][key]
    if "icarus" not in SIMS:
        pytest.skip("Icarus is not among the simulators")
    capsys.readouterr()
    assert main(["sim", "butterfly", "--inputs", "8", "--start-stages", "3", "--pattern",
                 "random-destinations", "--sim", "icarus",
                 "--build-dir", str(tmp_path / "b")]) == 0
    assert "icarus: PASS" in capsys.readouterr().out


def test_a_stuck_link_reaches_the_report_the_manifest_and_the_co_simulation(tmp_path,
                                                                           capsys):
    """--stuck-link: route reports the message it loses on every retry (exit 1, 0 with
    --allow-loss), the manifest records the link, and `fatnet sim` co-simulates the
    stuck network (Icarus) against the model, at 0 and at 1."""
    link = ["--inputs", "8", "--stuck-link", "1:0:1:0", "--max-cycles", "5"]
    assert main(["route", "butterfly", *link]) == 1
    out = capsys.readouterr().out
    assert "stuck links 1:0:1:0" in out and "1 lost" in out, out
    assert main(["route", "butterfly", *link, "--allow-loss"]) == 0
    assert main(["gen", "butterfly", "--inputs", "8", "--stuck-link", "2:3:0:1",
                 "-o", str(tmp_path / "g")]) == 0
    doc = json.loads((tmp_path / "g" / "butterfly.json").read_text())
    assert doc["spec"]["stuck_links"] == [[2, 3, 0, 1]]
    if "icarus" not in SIMS:
        pytest.skip("Icarus is not among the simulators")
    for value in (0, 1):
        capsys.readouterr()
        assert main(["sim", "butterfly", "--inputs", "8", "--stuck-link", f"1:0:1:{value}",
                     "--max-cycles", "3", "--sim", "icarus",
                     "--build-dir", str(tmp_path / f"b{value}")]) == 0
        assert "icarus: PASS" in capsys.readouterr().out


# ------------------------------------------------------------------ run-time fault masks
MASK_RANGE = ("must be level:row switches with level in [1, 2] and row in [0, 7] (e.g. "
              "1:3,2:7), or 0x<hex> / 0b<bits> of the 16-bit fault_mask (bit (level - 1) "
              "* 8 + row)")

BAD_MASKS = [
    (["--fault-mask", "3:0"], "fault-mask " + MASK_RANGE + "; got switch 3:0"),
    (["--fault-mask", "0:1"], "fault-mask " + MASK_RANGE + "; got switch 0:1"),
    (["--fault-mask", "1:8"], "fault-mask " + MASK_RANGE + "; got switch 1:8"),
    (["--fault-mask", "0x10000"], "fault-mask " + MASK_RANGE + "; got '0x10000', wider"),
    (["--fault-mask", "0b" + "0" * 17], "fault-mask " + MASK_RANGE + "; got 17 bits"),
    (["--fault-mask", "1-3"], "fault-mask " + MASK_RANGE + "; got '1-3'"),
    (["--fault-mask", "0xzz"], "fault-mask " + MASK_RANGE + "; got '0xzz'"),
]


def _no_simulation(monkeypatch):
    import fatnet.sim.cocotb_runner as runner

    def refuse(*a, **k):
        raise AssertionError("the simulation ran despite a bad mask")
    monkeypatch.setattr(runner, "run", refuse)


@pytest.mark.parametrize("argv, needle", BAD_MASKS, ids=lambda x: " ".join(x)
                         if isinstance(x, list) else None)
def test_a_bad_fault_mask_is_one_line_and_nothing_runs(argv, needle, tmp_path, capsys,
                                                       monkeypatch):
    _no_simulation(monkeypatch)
    assert main(["sim", "butterfly", "--inputs", "8", *argv,
                 "--build-dir", str(tmp_path / "b")]) == 2
    err = _one_line(capsys, needle)
    assert err.startswith("fatnet sim: error: ")
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize("content, needle", [
    ('[null, "1:0", "2:9"]', "fault-masks entry 2 " + MASK_RANGE + "; got switch 2:9"),
    ('[[[1, 0], [5, 5]]]', "fault-masks entry 0 " + MASK_RANGE + "; got switch 5:5"),
    ('[[1, 0]]', "fault-masks entry 0 " + MASK_RANGE + "; got the entry 1"),
    ('{"masks": []}', "fault-masks must be a JSON list of one or more masks"),
    ('[]', "fault-masks must be a JSON list of one or more masks"),
    ('[1, ', "not valid JSON"),
])
def test_a_bad_fault_mask_file_is_one_line_and_nothing_runs(content, needle, tmp_path,
                                                            capsys, monkeypatch):
    _no_simulation(monkeypatch)
    f = tmp_path / "masks.json"
    f.write_text(content)
    assert main(["sim", "butterfly", "--inputs", "8", "--fault-masks", str(f),
                 "--build-dir", str(tmp_path / "b")]) == 2
    _one_line(capsys, needle)
    assert not (tmp_path / "b").exists()


def test_fault_mask_options_belong_to_sim_only(tmp_path, capsys):
    # argparse: one line, exit 2
    assert main(["route", "butterfly", "--inputs", "8", "--fault-mask", "1:0"]) == 2
    _one_line(capsys, "unrecognized arguments: '--fault-mask'")


def test_the_three_mask_syntaxes_name_the_same_switches():
    from fatnet.cli import butterfly as bfc
    from fatnet.golden.butterfly.api import spec_from_options
    c = bfc.build(spec_from_options("butterfly", 8), 4)
    a = bfc.parse_fault_mask("1:0,2:5", c)
    assert a.shape == (2, 8) and a.sum() == 2 and a[0, 0] and a[1, 5]
    value = (1 << 0) | (1 << (8 + 5))
    assert (bfc.parse_fault_mask(hex(value), c) == a).all()
    assert (bfc.parse_fault_mask(bin(value), c) == a).all()
    assert (bfc.parse_fault_mask([[1, 0], [2, 5]], c) == a).all()
    assert not bfc.parse_fault_mask("", c).any() and not bfc.parse_fault_mask(None, c).any()


def _model_under(argv):
    """The golden run `fatnet sim` makes: (lost with the masks, lost without)."""
    from types import SimpleNamespace

    from fatnet.cli import butterfly as bfc
    from fatnet.golden.butterfly.cyclemodel import run_circuit
    args = SimpleNamespace(kind="butterfly", inputs=8, multiplicity=None, faults=None,
                           fault_rate=None, adversary=None, fault_rule="all",
                           modified=False, wiring="uniform", expansion=None,
                           payload_bits=8, link_stages=0, start_stages=0, stuck_link=[], seed=0,
                           pattern="random-permutation", problems=1, hot_fraction=0.1,
                           max_cycles=3, **argv)
    c = bfc.network_from_args("butterfly", args)
    ms = bfc.messages_from_args(args, c)
    rep = bfc.run_model(c, ms, args)
    assert len(rep.masks) == rep.cycles
    return len(rep.lost), len(run_circuit(c, ms, max_cycles=3).lost)


@pytest.mark.skipif(shutil.which("iverilog") is None, reason="icarus is not installed")
@pytest.mark.parametrize("how", ["mask", "file"])
def test_sim_under_a_fault_mask_passes_and_the_model_loses_what_the_fault_cuts_off(
        how, tmp_path, capsys):
    pytest.importorskip("cocotb_tools")
    if how == "mask":
        opt, argv = ["--fault-mask", "1:0,1:1"], {"fault_mask": "1:0,1:1", "fault_masks": None}
    else:
        f = tmp_path / "masks.json"
        f.write_text('["1:0", "1:0,1:1"]')  # cycle 0 under 1:0, later ones both
        opt, argv = ["--fault-masks", str(f)], {"fault_mask": None, "fault_masks": str(f)}
    lost, lost_unmasked = _model_under(argv)
    assert lost > 0 == lost_unmasked  # the faults cut some inputs off some outputs
    assert main(["sim", "butterfly", "--inputs", "8", "--pattern", "random-permutation",
                 "--max-cycles", "3", *opt, "--sim", "icarus",
                 "--build-dir", str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert f", {lost} lost, " in out and "icarus: PASS" in out
