"""The command line: JSON schedule output, route and info reports, and bad input."""

import json
import subprocess
import sys

import numpy as np
import pytest

from fatnet.cli.main import main
from fatnet.golden.fattree.topology import FatTree
from fatnet.golden.fattree.schedule import validate_schedule
from fatnet.golden.fattree.spec import FatTreeSpec


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path, doc, name="m.json"):
    p = tmp_path / name
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return str(p)


def test_schedule_prints_a_valid_schedule(tmp_path, capsys):
    rng = np.random.default_rng(7)
    pairs = [[int(s), int(d)] for s, d in zip(range(64), rng.permutation(64))]
    pairs += [[3, "ext"], ["ext", 5]]
    code, out, _ = run_cli(capsys, "schedule", "fat-tree", "--leaves", "64",
                           "--root-capacity", "16", "--messages",
                           write(tmp_path, {"messages": pairs}))
    assert code == 0
    doc = json.loads(out)
    assert set(doc) == {"leaves", "capacities", "load_factor", "lower_bound", "cycles"}
    spec = FatTreeSpec.universal(64, 16)
    assert doc["leaves"] == 64 and doc["capacities"] == list(spec.capacities)
    flat = [tuple(p) for c in doc["cycles"] for p in c]
    assert sorted(flat, key=str) == sorted(map(tuple, pairs), key=str)
    # rebuild index arrays and validate independently
    tree = FatTree(spec)
    def conv(e):
        return -1 if e == "ext" else e
    src = np.array([conv(s) for s, _ in flat])
    dst = np.array([conv(d) for _, d in flat])
    cycles, i = [], 0
    for c in doc["cycles"]:
        cycles.append(np.arange(i, i + len(c)))
        i += len(c)
    assert validate_schedule(tree, src, dst, cycles) == []
    assert len(doc["cycles"]) >= doc["lower_bound"] >= doc["load_factor"] - 1e-9


def test_schedule_with_explicit_capacities(tmp_path, capsys):
    code, out, _ = run_cli(capsys, "schedule", "fat-tree", "--leaves", "4", "--capacities",
                           "1,1,1", "--messages",
                           write(tmp_path, {"messages": [[1, 0], [2, 0], [3, 0]]}))
    doc = json.loads(out)
    assert code == 0 and doc["capacities"] == [1, 1, 1]
    assert doc["lower_bound"] == 3 and len(doc["cycles"]) == 3


@pytest.mark.parametrize("argv, needle", [
    (["schedule", "fat-tree", "--leaves", "12", "--root-capacity", "8"],
     "leaves must be a power of two"),
    (["schedule", "fat-tree", "--leaves", "16", "--root-capacity", "3"],
     "root-capacity must be in [n^(2/3), n] = [7, 16]"),
    (["schedule", "fat-tree", "--leaves", "16", "--root-capacity", "17"], "root-capacity"),
    (["schedule", "fat-tree", "--leaves", "4", "--capacities", "2,0,1"],
     "capacities[1] must be an integer in [1, 2048], got 0"),
    (["schedule", "fat-tree", "--leaves", "4", "--capacities", "2,x"], "comma-separated integers"),
    (["route", "fat-tree", "--leaves", "16", "--root-capacity", "8", "--pattern", "zigzag"],
     "pattern must be one of"),
    (["route", "fat-tree", "--leaves", "16", "--root-capacity", "8", "--pattern", "hot-spot",
      "--hot-fraction", "2"],
     "hot-fraction"),
    (["info", "fat-tree", "--leaves", "16", "--root-capacity", "8", "--concentrator", "magic"],
     "invalid choice"),
    (["info", "fat-tree", "--leaves", "16", "--root-capacity", "8", "--link-stages", "9"],
     "link-stages must be an integer in [0, 8], got 9"),
    (["info", "fat-tree", "--leaves", "16", "--root-capacity", "8", "--stuck-link", "up:15:0:0"],
     "stuck-link heap must be in [1, 14] (a link between two nodes), got 15"),
    (["info", "fat-tree", "--leaves", "16", "--root-capacity", "8", "--stuck-link", "up:1:6:0"],
     "stuck-link wire must be in [0, 5] (heap 1's channel has 6 wires), got 6"),
    (["info", "fat-tree", "--leaves", "16", "--root-capacity", "8", "--stuck-link", "left:1:0:0"],
     "stuck-link must be up|down:HEAP:WIRE:0|1 (non-negative integers), got 'left:1:0:0'"),
    (["info", "fat-tree", "--leaves", "16", "--root-capacity", "8", "--stuck-link", "up:1:0:2"],
     "stuck-link value must be 0 or 1, got 2"),
    (["info", "fat-tree", "--leaves", "2", "--capacity", "1", "--stuck-link", "up:1:0:0"],
     "stuck-link needs a link between two nodes: a tree of 2 leaves has none"),
    (["frobnicate"], "invalid choice"),
    (["route", "hypertorus", "--leaves", "4"], "invalid choice"),
])
def test_bad_parameters_one_line_exit_2(tmp_path, capsys, argv, needle):
    msgs = write(tmp_path, {"messages": [[0, 1]]})
    if argv[0] == "schedule":
        argv = argv + ["--messages", msgs]
    with pytest.raises(SystemExit) as e:
        code = main(argv)
        raise SystemExit(code)
    out, err = capsys.readouterr()
    assert e.value.code == 2
    assert needle in err and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err


@pytest.mark.parametrize("content, needle", [
    ("{not json", "not valid JSON"),
    ('{"messages": []}', "is empty"),
    ('{"msgs": [[0, 1]]}', '"messages" list'),
    ('{"messages": [[0]]}', "messages[0]: expected [src, dst]"),
    ('{"messages": [[0, 16]]}', "leaf index must be in [0, 15]"),
    ('{"messages": [[-3, 1]]}', "leaf index must be in [0, 15]"),
    ('{"messages": [["ext", "ext"]]}', "cannot go from"),
    ('{"messages": [[0, 1.5]]}', "endpoint must be a leaf index"),
])
def test_malformed_message_files(tmp_path, capsys, content, needle):
    code, out, err = run_cli(capsys, "schedule", "fat-tree", "--leaves", "16",
                             "--root-capacity", "8", "--messages", write(tmp_path, content))
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, err
    code, out, err = run_cli(capsys, "schedule", "fat-tree", "--leaves", "16",
                             "--root-capacity", "8", "--messages", str(tmp_path / "missing.json"))
    assert code == 2 and "cannot read" in err


def test_route_reports_everything_delivered(capsys):
    code, out, _ = run_cli(capsys, "route", "fat-tree", "--leaves", "64", "--root-capacity", "16",
                           "--pattern", "random-permutation", "--seed", "4", "--json")
    doc = json.loads(out)
    assert code == 0
    assert doc["delivered"] + doc["delivered_locally"] == doc["messages"] == 64
    assert doc["lost"] == [] and doc["cycles"] >= doc["lower_bound"]
    assert len(doc["utilisation_per_level"]) == 7


def test_route_online_hot_spot_reports_retries(capsys):
    code, out, _ = run_cli(capsys, "route", "fat-tree", "--leaves", "16", "--root-capacity", "8",
                           "--mode", "online", "--pattern", "hot-spot", "--seed", "2",
                           "--hot-fraction", "0.5", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["retries"] > 0
    assert doc["delivered"] + doc["delivered_locally"] == doc["messages"]


def test_info_lists_levels_and_concentrators(capsys):
    code, out, _ = run_cli(capsys, "info", "fat-tree", "--leaves", "64", "--root-capacity",
                           "16", "--seed", "5", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["spec"]["seed"] == 5
    assert doc["capacities"] == list(FatTreeSpec.universal(64, 16).capacities)
    assert all(e <= c for e, c in zip(doc["effective_capacities"], doc["capacities"]))
    assert doc["components"]["total"] > 0 and doc["concentrators"]
    code, out, _ = run_cli(capsys, "info", "fat-tree", "--leaves", "16", "--capacity", "2")
    assert code == 0 and "level" in out


def test_console_script_demo_and_error_have_no_traceback():
    exe = [sys.executable, "-m", "fatnet.cli"]
    ok = subprocess.run(exe + ["demo", "fat-tree", "--model-only"], capture_output=True,
                        text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr
    assert "lost: 0" in ok.stdout and "$ fatnet route fat-tree" in ok.stdout
    bad = subprocess.run(exe + ["route", "fat-tree", "--leaves", "6", "--capacity", "1",
                                "--pattern", "transpose"],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.strip().count("\n") == 0 and "leaves" in bad.stderr
