"""``fatnet route|info hypercube`` and ``fatnet experiment kuszmaul`` through
``fatnet.cli.main.main``: the --json fields against the models called directly, message
files, exit statuses, one-line errors."""

import json

import numpy as np
import pytest

from fatnet.cli.main import main
from fatnet.api.registry import demo_kinds, get_family
from fatnet.golden.hypercube import alg1, alg2, bitserial
from fatnet.golden.hypercube import store_forward as sf
from fatnet.golden.hypercube.cube import Hypercube
from fatnet.golden.hypercube.deadlock import MAX_DEADLOCK_DIMENSION, check_deadlock
from fatnet.golden.hypercube.enumeration import enumeration_timing
from fatnet.golden.hypercube.patterns import PATTERNS, make_pattern

PERMUTATIONS = ("random-permutation", "transpose", "bit-reversal", "complement")
COMMON = {"kind", "dimension", "algorithm", "messages", "delivered", "final", "bit_times",
          "steps", "max_messages_per_node", "collisions", "lost", "message_bits"}


def _status(argv) -> int:
    """main's exit status; argparse's own errors exit (SystemExit) with status 2."""
    try:
        return main(argv)
    except SystemExit as e:
        return e.code


def _json(capsys, argv, status=0):
    assert main(argv) == status
    out = capsys.readouterr().out
    return json.loads(out)


def _route(capsys, k, algorithm, *extra, status=0):
    return _json(capsys, ["route", "hypercube", "--dimension", str(k), "--algorithm",
                          algorithm, *extra, "--json"], status)


def test_registered_with_algorithm_1_hardware_and_a_demo():
    fam = get_family("hypercube")
    assert fam.name == "hypercube" and fam.has_hardware
    assert fam.hardware.__name__ == "fatnet.hdl.hypercube"
    assert fam.testbench.__name__ == "fatnet.sim.hypercube"
    assert "hypercube" in demo_kinds()
    net = fam.commands.network_from_args("hypercube", type("A", (), {"dimension": 5}))
    assert net == Hypercube(5) and net.algorithm == "alg1" and net.cycle_length == 2 * 5 + 5 + 1
    assert Hypercube(5).family == "hypercube" and Hypercube(5).nodes == 32


@pytest.mark.parametrize("pattern", PERMUTATIONS)
@pytest.mark.parametrize("k", [1, 3, 6])
def test_alg2_json_matches_the_model(capsys, k, pattern):
    doc = _route(capsys, k, "alg2", "--pattern", pattern, "--seed", "3")
    src, dst = make_pattern(k, pattern, 3)
    res = alg2.route(k, src, dst)
    assert COMMON | {"operations", "violations", "per_step"} <= set(doc)
    assert doc["kind"] == "hypercube" and doc["dimension"] == k and doc["algorithm"] == "alg2"
    assert doc["messages"] == src.size == doc["delivered"] and doc["lost"] == []
    assert doc["final"] == [[int(s), int(x)] for s, x in zip(src, res.final)]
    assert [x for _, x in doc["final"]] == dst.tolist()
    M = doc["message_bits"]
    assert doc["bit_times"] == bitserial.schedule(k, M).total == 5 * k * k + (3 * M + 1) * k \
        - 2 * M - 5
    assert sum(doc["bit_times_per_iteration"]) == doc["bit_times"]
    # per iteration i: one crossing and three passes over its k - 1 - i free dimensions
    assert doc["steps"] == sum(1 + 3 * (k - 1 - i) for i in range(k))
    assert doc["max_messages_per_node"] == res.max_messages <= 2
    assert doc["max_bits"] == res.max_bits <= 2 * M + 2 * k
    assert doc["operations"] == {"cross": k, "enumerate": 2 * (k - 1), "pack": 2 * (k - 1),
                                 "rendezvous": k - 1}
    assert doc["cycle_model"] == {"delivered": src.size, "same_positions": True}
    assert not any(doc["violations"].values()) and len(doc["per_step"]) == 6 * k
    starts = [s["start"] for s in doc["per_step"]]
    ends = [s["start"] + s["bit_times"] for s in doc["per_step"]]
    assert starts[0] == 0 and starts[1:] == ends[:-1] and ends[-1] == doc["bit_times"]


@pytest.mark.parametrize("pattern", ["random-destinations", "hot-spot"])
@pytest.mark.parametrize("algorithm", ["alg1", "alg2"])
def test_kernels_refuse_a_map_that_is_not_a_partial_permutation(capsys, algorithm,
                                                                pattern):
    assert main(["route", "hypercube", "--dimension", "5", "--algorithm", algorithm,
                 "--pattern", pattern, "--json"]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err.count("\n") == 1
    assert "partial permutation: destination" in cap.err and "repeats" in cap.err


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("algorithm", ["ecube", "valiant"])
def test_baselines_json_match_the_model(capsys, algorithm, pattern):
    k = 5
    doc = _route(capsys, k, algorithm, "--pattern", pattern, "--seed", "2")
    src, dst = make_pattern(k, pattern, 2)
    run = sf.route(k, src, dst, algorithm=algorithm, seed=2)
    bt = run.bit_times(2 * k)
    assert COMMON | {"store_forward_bit_times", "cut_through_bit_times", "max_queue"} <= set(doc)
    assert doc["messages"] == run.messages and doc["delivered"] == run.delivered == run.messages
    assert doc["final"] == [[int(s), int(x)] for s, x in zip(src, run.final)]
    assert doc["steps"] == run.steps and doc["bit_times"] is None
    assert doc["store_forward_bit_times"] == bt.store_forward
    assert doc["cut_through_bit_times"] == bt.cut_through
    assert doc["max_messages_per_node"] == run.max_messages_per_node
    assert doc["collisions"] is None


def test_valiant_phased_and_bounded(capsys):
    doc = _route(capsys, 6, "valiant", "--pattern", "transpose", "--phased", "--buffer", "1",
                 "--problems", "2", "--seed", "4")
    src, dst = make_pattern(6, "transpose", 4, problems=2)
    run = sf.route(6, src, dst, algorithm="valiant", barrier=True, buffer=1, seed=4)
    assert doc["phased"] is True and doc["buffer"] == 1 and doc["max_queue"] <= 1
    assert doc["messages"] == 128 and doc["steps"] == run.steps
    assert doc["source"] == {"pattern": "transpose", "seed": 4, "problems": 2}


@pytest.mark.parametrize("pattern", PERMUTATIONS)
def test_alg1_json_matches_the_model(capsys, pattern):
    k = 4
    res = alg1.route(k, *make_pattern(k, pattern, 1))
    status = 0 if res.ok else 1
    doc = _route(capsys, k, "alg1", "--pattern", pattern, "--seed", "1", status=status)
    assert doc["bit_times"] == alg1.pipeline_timing(k, 2 * k).total == 3 * k + 1
    assert doc["steps"] == k
    assert doc["delivered"] == int(res.delivered.sum())
    assert doc["lost"] == np.flatnonzero(~res.delivered).tolist()
    assert doc["final"] == [[int(s), int(x)] for s, x in zip(res.src, res.final)]
    assert [(c["kind"], c["step"], c["node"], c["dimension"], tuple(c["messages"]))
            for c in doc["collisions"]] == [(c.kind, c.step, c.node, c.dimension, c.messages)
                                            for c in res.collisions]


def test_alg1_collision_exits_1_unless_allow_loss(capsys, tmp_path):
    # 0 -> 1 and 1 -> 0 on the 1-cube are fine; 0 -> 1, 1 -> 3 on the 2-cube collide
    # in node 1 after dimension 0 (message 0 arrives, message 1 stays)
    f = tmp_path / "m.json"
    f.write_text(json.dumps({"messages": [[0, 1], [1, 3]]}))
    doc = _route(capsys, 2, "alg1", "--messages", str(f), status=1)
    assert doc["delivered"] == 0 and doc["lost"] == [0, 1]
    assert doc["collisions"][0] == {"kind": "buffer", "step": 0, "node": 1,
                                    "dimension": 0, "messages": [0, 1]}
    assert doc["final"] == [[0, 1], [1, 3]]
    doc = _route(capsys, 2, "alg1", "--messages", str(f), "--allow-loss")
    assert doc["delivered"] == 0
    # the same map by Algorithm 2: delivered
    doc = _route(capsys, 2, "alg2", "--messages", str(f))
    assert doc["delivered"] == 2 and doc["final"] == [[0, 1], [1, 3]]


def test_message_file_with_payloads(capsys, tmp_path):
    f = tmp_path / "m.json"
    f.write_text(json.dumps({"messages": [[0, 7], [5, 2, 123456789], [7, 0]]}))
    for algorithm in ("alg1", "alg2", "ecube", "valiant"):
        doc = _route(capsys, 3, algorithm, "--messages", str(f), "--allow-loss")
        assert doc["messages"] == 3 and doc["source"] == str(f)
        if algorithm != "alg1":
            assert doc["delivered"] == 3 and doc["final"] == [[0, 7], [5, 2], [7, 0]]


def test_human_readable_route_and_info(capsys):
    assert main(["route", "hypercube", "--dimension", "6", "--algorithm", "alg2",
                 "--pattern", "transpose"]) == 0
    out = capsys.readouterr().out
    assert "Algorithm 2" in out and "delivered 64/64" in out and "rendezvous 5" in out
    assert f"bit-times (cycle-exact schedule): {bitserial.schedule(6).total} " in out
    assert main(["route", "hypercube", "--dimension", "6", "--algorithm", "ecube",
                 "--pattern", "bit-reversal"]) == 0
    assert "store-and-forward" in capsys.readouterr().out
    assert main(["info", "hypercube", "--dimension", "6"]) == 0
    out = capsys.readouterr().out
    assert "64 nodes, 192 links" in out and "enumeration 13" in out


def test_info_json(capsys):
    k = 7
    doc = _json(capsys, ["info", "hypercube", "--dimension", str(k), "--message-bits", "20",
                         "--json"])
    assert doc["nodes"] == 128 and doc["links"] == 7 * 64 and doc["directed_links"] == 7 * 128
    assert doc["per_node"]["dimension_routers"] == k
    assert doc["per_node"]["enumeration_serial_adders"] == enumeration_timing(k) \
        .serial_adders_per_node == 2 * k
    assert doc["per_node"]["alg2_buffer_bits"] == 2 * 20 + 2 * k
    assert doc["bit_times"]["alg1_pipeline"] == 20 + k + 1
    assert doc["bit_times"]["enumeration"] == 2 * k + 1
    assert doc["bit_times"]["alg2"] == bitserial.schedule(k, 20).total
    assert doc["bit_times"]["alg2_batches_period"] == bitserial.schedule(k, 20) \
        .iteration_lengths()[0]


@pytest.mark.parametrize("options, model, free", [
    (["--algorithm", "ecube", "--buffer", "1"], {"algorithm": "ecube", "buffer": 1}, True),
    (["--algorithm", "valiant", "--buffer", "2"], {"algorithm": "valiant", "buffer": 2},
     True),
    (["--algorithm", "valiant", "--buffer", "1", "--phased"],
     {"algorithm": "valiant", "buffer": 1, "barrier": True}, True),
    (["--algorithm", "valiant", "--buffer", "1", "--straight-on"],
     {"algorithm": "valiant", "buffer": 1, "intermediate_buffer": False}, False),
    (["--algorithm", "valiant", "--straight-on"],
     {"algorithm": "valiant", "intermediate_buffer": False}, True),
])
def test_info_prints_the_deadlock_verdict(capsys, options, model, free):
    """One line, the model's verdict (called directly), and the same in --json."""
    argv = ["info", "hypercube", "--dimension", "4", *options]
    assert main(argv) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    doc = _json(capsys, argv + ["--json"])["deadlock"]
    verdict = check_deadlock(4, **model)
    assert last == doc["verdict"] == verdict.line()
    assert last.startswith("deadlock: free (" if free else "deadlock: possible: cycle ")
    assert doc["free"] is free and doc["acyclic"] is verdict.acyclic
    assert doc["queues"] == 4 * 16 and doc["dependences"] == verdict.dependences
    assert (doc["cycle"] is None) == verdict.acyclic


def test_info_without_an_algorithm_checks_no_deadlock(capsys):
    assert main(["info", "hypercube", "--dimension", "3"]) == 0
    assert "deadlock" not in capsys.readouterr().out
    assert _json(capsys, ["info", "hypercube", "--dimension", "3", "--json"])["deadlock"] \
        is None


@pytest.mark.parametrize("argv, words", [
    (["info", "hypercube", "--dimension", str(MAX_DEADLOCK_DIMENSION + 1), "--algorithm",
      "ecube"], f"dimension must be an integer in [1, {MAX_DEADLOCK_DIMENSION}] for the "
                f"deadlock check"),
    (["info", "hypercube", "--dimension", "3", "--algorithm", "alg1"],
     "argument --algorithm: invalid choice: 'alg1'"),
    (["info", "hypercube", "--dimension", "3", "--buffer", "2"],
     "buffer needs algorithm ecube or valiant"),
    (["info", "hypercube", "--dimension", "3", "--straight-on"],
     "--straight-on needs algorithm valiant"),
    (["info", "hypercube", "--dimension", "3", "--algorithm", "ecube", "--phased"],
     "phased must be left out for ecube (a Valiant option)"),
    (["info", "hypercube", "--dimension", "3", "--algorithm", "ecube", "--straight-on"],
     "--straight-on must be left out for ecube (a Valiant option)"),
    (["info", "hypercube", "--dimension", "3", "--algorithm", "valiant", "--phased",
      "--straight-on"], "--straight-on must be left out with phased"),
    (["info", "hypercube", "--dimension", "3", "--algorithm", "ecube", "--buffer", "0"],
     "buffer must be an integer in [1, "),
    (["route", "hypercube", "--dimension", "0", "--pattern", "transpose"],
     "dimension must be an integer in [1, 20], got 0"),
    (["route", "hypercube", "--dimension", "21", "--pattern", "transpose"],
     "dimension must be an integer in [1, 20], got 21"),
    (["info", "hypercube", "--dimension", "25"], "dimension must be an integer in [1, 20]"),
    (["route", "hypercube", "--dimension", "3", "--pattern", "nope"],
     "pattern must be one of random-permutation"),
    (["route", "hypercube", "--dimension", "3", "--pattern", "transpose", "--algorithm",
      "alg3"], "argument --algorithm: invalid choice: 'alg3'"),
    (["route", "hypercube", "--dimension", "3", "--pattern", "transpose", "--algorithm",
      "alg2", "--message-bits", "2"], "message-bits must be an integer in [3, "),
    (["route", "hypercube", "--dimension", "3", "--message-bits", "3"],
     "message-bits must be an integer in [4, 1048576] for alg1, got 3"),
    (["route", "hypercube", "--dimension", "3", "--pattern", "transpose", "--algorithm",
      "alg1", "--buffer", "2"], "buffer must be left out for alg1"),
    (["route", "hypercube", "--dimension", "3", "--pattern", "transpose", "--algorithm",
      "ecube", "--buffer", "0"], "buffer must be an integer in [1, "),
    (["route", "hypercube", "--dimension", "3", "--pattern", "transpose", "--algorithm",
      "alg1", "--order", "0,0,1"], "order must be a permutation of the dimensions 0..2"),
    (["route", "hypercube", "--dimension", "3", "--pattern", "transpose", "--algorithm",
      "ecube", "--order", "0,1,2"], "order must be left out for ecube (an alg1 option)"),
    (["route", "hypercube", "--dimension", "3", "--pattern", "transpose", "--algorithm",
      "alg1", "--reading", "literal"], "reading must be left out for alg1 (an alg2 option)"),
    (["route", "hypercube", "--dimension", "3", "--pattern", "transpose", "--algorithm",
      "ecube", "--phased"], "phased must be left out for ecube (a Valiant option)"),
    (["route", "hypercube", "--dimension", "3", "--pattern", "transpose", "--seed", "-1"],
     "argument --seed: seed must be an integer in [0, 2^63-1], got -1"),
    (["route", "hypercube", "--dimension", "3", "--pattern", "random-permutation",
      "--problems", "2"], "partial permutation: source 0 repeats"),
    (["experiment", "kuszmaul", "--dimensions", "1..40"], "argument --dimensions: "
     "dimensions must be integers in [1, 16]"),
    (["experiment", "kuszmaul", "--dimensions", "2", "--compare", "x"],
     "argument --compare: compare must be integers"),
    (["experiment", "kuszmaul", "--dimensions", "2", "--compare", "2", "--trials", "0"],
     "trials must be an integer in [1, "),
])
def test_bad_input_is_one_line_exit_2(capsys, tmp_path, argv, words):
    assert _status(argv) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err.count("\n") == 1 and words in cap.err, cap.err


@pytest.mark.parametrize("doc, words", [
    ({"messages": [[0, 8]]}, "messages[0]: node must be an integer in [0, 7], got 8"),
    ({"messages": [[-1, 2]]}, "node must be an integer in [0, 7], got -1"),
    ({"messages": [[0, "ext"]]}, 'node must be an integer in [0, 7], got "ext"'),
    ({"messages": [[0, 1], [2, 1]]}, "destination 1 repeats (messages 0 and 1)"),
    ({"messages": []}, '"messages" is empty'),
    ({"msgs": []}, 'expected a JSON object with a "messages" list'),
    ({"messages": [[0]]}, "expected [src, dst] or [src, dst, payload]"),
])
def test_bad_message_file_is_one_line_exit_2(capsys, tmp_path, doc, words):
    f = tmp_path / "m.json"
    f.write_text(json.dumps(doc))
    assert main(["route", "hypercube", "--dimension", "3", "--messages", str(f)]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err.count("\n") == 1 and words in cap.err, cap.err


def test_unreadable_message_file(capsys, tmp_path):
    assert main(["route", "hypercube", "--dimension", "3", "--messages",
                 str(tmp_path / "none.json")]) == 2
    assert "cannot read" in capsys.readouterr().err
    f = tmp_path / "m.json"
    f.write_text("{")
    assert main(["route", "hypercube", "--dimension", "3", "--messages", str(f)]) == 2
    assert "not valid JSON" in capsys.readouterr().err


def test_experiment_kuszmaul_json_and_plot(capsys, tmp_path):
    plot = tmp_path / "k.png"
    doc = _json(capsys, ["experiment", "kuszmaul", "--dimensions", "1..2,4", "--compare",
                         "3,4", "--sweep", "2..3", "--trials", "2", "--seed", "1", "--json",
                         "--plot", str(plot)])
    assert plot.stat().st_size > 0
    assert doc["dimensions"] == [1, 2, 4] and doc["compare_dimensions"] == [3, 4]
    (c1, c2) = doc["census"]
    assert c2 == alg1.census(2)
    assert c1["semi_contractions_collision_free"] == c1["semi_contractions"] == 7
    assert {(r["k"], r["reading"]): r["failed"] for r in doc["readings"]} == {
        (2, "corrected"): 0, (2, "literal"): 8, (2, "strided"): 8, (2, "interval"): 8}
    assert all(r["packing"] == r["semi_contraction"] == 1.0 for r in doc["alg1_classes"])
    assert [b["enumeration"] for b in doc["bit_times"]] == [3, 5, 9]
    assert [b["alg1_pipeline_2k"] for b in doc["bit_times"]] == [4, 7, 13]
    assert [b["alg2"] for b in doc["bit_times"]] == [bitserial.schedule(k).total
                                                     for k in (1, 2, 4)]
    # the closed form at M = 2k is 11 k^2 - 3 k - 5, at M = 4k 17 k^2 - 7 k - 5
    fits = {f["message_bits"]: (f["a"], f["b"], f["c"]) for f in doc["alg2_fit"]}
    assert np.allclose(fits["2k"], (11, -3, -5)) and np.allclose(fits["4k"], (17, -7, -5))
    assert all(a["cycle_checked"] == a["trials"] for a in doc["alg2"])
    for b, k in zip(doc["batches"], (1, 2, 4)):
        sched = bitserial.schedule(k)
        assert b["delivered"] == b["batches"] and b["latency"] == sched.total
        assert b["period"] == max(sched.iteration_lengths())
    sweep = {(r["k"], r["pattern"], r["algorithm"]): r for r in doc["sweep"]}
    assert sweep[(3, "transpose", "alg2")]["bit_times"] == bitserial.schedule(3).total
    assert sweep[(3, "transpose", "ecube")]["store_forward_bit_times"] == sf.route(
        3, *make_pattern(3, "transpose", 1)).bit_times(6).store_forward
    assert all(a["delivered"] == a["trials"] == 2 and a["max_messages"] <= 2
               for a in doc["alg2"])
    cells = {(r["k"], r["pattern"], r["algorithm"]): r for r in doc["compare"]}
    assert len(cells) == 2 * len(PATTERNS) * 4
    assert not cells[(4, "hot-spot", "alg2")]["routed"]
    a2 = cells[(4, "transpose", "alg2")]
    assert a2["delivered"] == 1.0 and a2["steps_mean"] == 4 + 3 * (3 + 2 + 1)
    assert a2["bit_times"] == bitserial.schedule(4).total
    e = cells[(4, "transpose", "ecube")]
    src, dst = make_pattern(4, "transpose")
    run = sf.route(4, src, dst)
    assert e["steps_max"] == run.steps and e["trials"] == 1
    assert e["store_forward_bit_times"] == run.bit_times(8).store_forward
    assert {(w["k"], w["pattern"]) for w in doc["wins"]} == {
        (k, p) for k in (3, 4) for p in PATTERNS}


def test_experiment_kuszmaul_tables(capsys):
    assert main(["experiment", "kuszmaul", "--dimensions", "2", "--compare", "3",
                 "--trials", "1"]) == 0
    out = capsys.readouterr().out
    for title in ("Algorithm 1 census", "Algorithm 2 under each reading",
                  "Algorithm 1 on random routings", "Bit-times",
                  "Algorithm 2 against e-cube and Valiant", "Where each wins"):
        assert title in out


def test_each_algorithm_is_a_frozen_checked_spec_that_routes():
    from dataclasses import FrozenInstanceError

    from fatnet.golden.errors import ParameterError
    from fatnet.golden.hypercube.api import ALGORITHMS, Ecube, Valiant, algorithm, route_report
    src, dst = make_pattern(4, "transpose", 0)
    for name, cls in ALGORITHMS.items():
        made = algorithm(4, name)
        assert type(made) is cls and made.name == name == cls.circuit.spec_class.algorithm
        with pytest.raises(FrozenInstanceError):
            made.message_bits = 9
        assert made.report(src, dst) == route_report(4, src, dst, name)
    assert algorithm(4, "valiant", buffer=2, phased=True, seed=3) == Valiant(
        4, 8, buffer=2, phased=True, seed=3)
    with pytest.raises(ParameterError,
                       match=r"buffer must be an integer in \[1, 1073741824\]"):
        Ecube(4, 8, buffer=0)
    with pytest.raises(ParameterError, match="algorithm must be one of alg1, alg2"):
        algorithm(4, "bogus")


# ------------------------------------------------------------------ --stuck-link
BAD_STUCK_LINKS = [
    (["--stuck-link", "0:2:0:1"], "--stuck-link rank must be in [1, 2] (the link into a "
                                  "node's rank-r router from its rank-(r - 1) router), got 0"),
    (["--stuck-link", "3:2:0:1"], "--stuck-link rank must be in [1, 2]"),
    (["--stuck-link", "1:8:0:1"], "--stuck-link node must be an integer in [0, 7], got 8"),
    (["--stuck-link", "1:2:1:1"], "--stuck-link wire must be 0 (a node's link has one "
                                  "wire), got 1"),
    (["--stuck-link", "1:2:0:2"], "--stuck-link value must be 0 or 1, got 2"),
    (["--stuck-link", "1:2:0"], "argument --stuck-link: stuck-link must be "
                                "RANK:NODE:WIRE:0|1 (non-negative integers), got '1:2:0'"),
    (["--stuck-link", "1:2:0:0", "--stuck-link", "1:2:0:1"],
     "stuck-link names one wire twice, at 0 and at 1: (1, 2, 0)"),
    (["--algorithm", "alg2", "--stuck-link", "1:2:0:1"],
     "--stuck-link must be left out for alg2: a link stuck inside the network is built "
     "into Algorithm 1's router chains only (--algorithm alg1)"),
    (["--algorithm", "ecube", "--stuck-link", "1:2:0:1"],
     "--stuck-link must be left out for ecube"),
]


@pytest.mark.parametrize("verb, extra, words",
                         [("gen", *case) for case in BAD_STUCK_LINKS]
                         + [(verb, *BAD_STUCK_LINKS[i]) for verb in ("sim", "board")
                            for i in (1, 7)])
def test_a_bad_stuck_link_is_one_line_exit_2_and_nothing_written(capsys, tmp_path, verb,
                                                                  extra, words):
    """Every bad --stuck-link on gen; sim and board, which build the network from the
    same options, a range and an algorithm's refusal each."""
    argv = [verb, "hypercube", "--dimension", "3", *extra]
    argv += {"gen": ["-o", str(tmp_path / "out")], "sim": ["--build-dir", str(tmp_path / "b")],
             "board": ["--board", "icebreaker", "-o", str(tmp_path / "out")]}[verb]
    assert _status(argv) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err.count("\n") == 1 and words in cap.err, cap.err
    assert cap.err.startswith(f"fatnet {verb}: error: "), cap.err
    assert list(tmp_path.iterdir()) == []


def test_the_1_cube_has_no_link_to_stick(capsys, tmp_path):
    assert _status(["gen", "hypercube", "--dimension", "1", "--stuck-link", "1:0:0:1",
                    "-o", str(tmp_path / "out")]) == 2
    assert "--stuck-link needs a link between two routers: the 1-cube has none " \
           "(dimension >= 2)" in capsys.readouterr().err


def test_a_stuck_link_reaches_the_manifest_and_holds_the_routers_input(tmp_path):
    """gen: the manifest's spec names the links sorted, and the Verilog ties the rank's
    router input to the value (the link's driver is left unread there)."""
    out = tmp_path / "out"
    assert main(["gen", "hypercube", "--dimension", "3", "--stuck-link", "2:5:0:1",
                 "--stuck-link", "1:2:0:0", "-o", str(out)]) == 0
    doc = json.loads((out / "hypercube.json").read_text())
    assert doc["spec"]["stuck_links"] == [[1, 2, 0, 0], [2, 5, 0, 1]]
    assert "spec.stuck_links" in doc["fields"]
    verilog = (out / "hypercube.v").read_text()
    for name, value in (("rt_1_2", "1'h0"), ("rt_2_5", "1'h1")):
        inst = verilog.split(f" {name} (", 1)[1].split(");", 1)[0]
        assert f".i__data({value})" in inst, inst
    plain = verilog.split(" rt_1_3 (", 1)[1].split(");", 1)[0]
    assert ".i__data(1'h" not in plain, plain
