"""The toy family end to end through the plug-in interface: registered with
``register()``, checked against the layer protocols, routed, generated and co-simulated
through ``fatnet``'s own command line, and run on Amaranth's simulator."""

import json
import shutil

import pytest

from fatnet.cli.main import main
from fatnet.api.registry import get_family, register
from fatnet.golden.messages import MessageSet, make_pattern
from fatnet.sim.amaranth_bench import run_cycles_amaranth, run_cycles_harness_amaranth
from fatnet.sim.family import SimFamily
from test_families import LAYERS
from test_families import test_every_family_implements_each_layers_interface as check_layer

from . import golden
from .commands import FAMILY

NET = ["--terminals", "4", "--recv-wires", "2", "--payload-bits", "4"]


@pytest.fixture
def toy():
    with register(FAMILY) as fam:
        yield fam


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def messages(tmp_path, pairs):
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"messages": pairs}))
    return str(path)


# three inputs to output 0, which has two wires: one is lost and retried
CONTENDED = [[1, 0], [2, 0], [3, 0], [0, 3]]


@pytest.mark.parametrize("layer, protocol, optional", LAYERS, ids=[n for n, *_ in LAYERS])
def test_the_toy_implements_each_layers_interface(toy, layer, protocol, optional):
    assert get_family("toy") is toy and isinstance(toy, SimFamily)
    check_layer(toy, layer, protocol, optional)


def test_the_toy_has_no_runtime_faults_and_the_engines_see_it(toy):
    """Run-time faults are a capability the toy does not have: no mask or status hook,
    and the planner refuses a mask for it in one line (no stub answers for it); nor has
    its network a start tree."""
    from fatnet.golden.cycle import Network, StartTree
    from fatnet.golden.errors import FatnetInputError
    from fatnet.sim.family import RuntimeFaults, SelfTest, Waves, runtime_faults
    from fatnet.sim.plan import plans
    assert not isinstance(toy.testbench, RuntimeFaults) and runtime_faults(toy) is None
    assert isinstance(toy.testbench, Waves) and isinstance(toy.testbench, SelfTest)
    net = golden.Crossbar(2, payload_bits=2)
    assert isinstance(net, Network) and not isinstance(net, StartTree)
    ms = MessageSet.from_pairs([0, 1], [1, 0], 2, payload=[1, 2])
    with pytest.raises(FatnetInputError, match="no run-time fault mask"):
        plans(net, ms, [[0, 1]], masks=[1], family=toy)
    (plan,) = plans(net, ms, [[0, 1]], family=toy)
    assert plan.mask is None and plan.mask_width == 0 and plan.expect_status is None


def test_the_model_delivers_every_payload_and_retries_a_lost_message():
    net = golden.Crossbar(4, recv_wires=2, payload_bits=4)
    ms = MessageSet.from_pairs([1, 2, 3, 0], [0, 0, 0, 3], 4, seed=3)
    report = golden.run(net, ms, keep_results=True)
    first = report.results[0]
    (m,) = first.lost  # three claims for output 0's two wires: the highest input loses
    assert ms.src[m] == 3 and first.outcomes[m].lost_at[0] == "X"
    assert report.delivered == 4 and not report.lost and report.cycles == 2
    for res in report.results:
        for m in res.with_status("delivered"):
            o = res.outcomes[m]
            assert o.delivered_payload == ms.payload[m]
            assert o.path[-1].channel == ("out", int(ms.dst[m]))
            assert (o.arrival, o.ack_time) == (net.arrival, net.arrival + 1)


def test_route_and_info(toy, tmp_path, capsys):
    code, out, _ = run_cli(capsys, "route", "toy", *NET, "--pattern", "bit-reversal",
                           "--json")
    doc = json.loads(out)
    assert code == 0 and doc["delivered"] == doc["messages"] == 4 and doc["cycles"] == 1
    code, out, _ = run_cli(capsys, "route", "toy", *NET, "--messages",
                           messages(tmp_path, CONTENDED), "--json")
    doc = json.loads(out)
    assert code == 0 and doc["delivered"] == 4 and doc["retries"] == 1
    code, out, _ = run_cli(capsys, "info", "toy", *NET)
    assert code == 0 and json.loads(out)["terminals"] == 4


def test_bad_input_is_one_line_and_status_2(toy, tmp_path, capsys):
    code, _, err = run_cli(capsys, "route", "toy", "--terminals", "6", "--pattern",
                           "transpose")
    assert code == 2 and "power of two" in err and len(err.splitlines()) == 1
    code, _, err = run_cli(capsys, "sim", "toy", *NET, "--messages",
                           messages(tmp_path, [[0, "ext"]]))
    assert code == 2 and "ext" in err


def test_gen_writes_verilog_a_harness_and_a_manifest(toy, tmp_path, capsys,
                                                     manifest_ports_declared,
                                                     verilator_lint, icarus_clean):
    code, out, _ = run_cli(capsys, "gen", "toy", *NET, "-o", str(tmp_path))
    assert code == 0 and "toy.v" in out
    doc = json.loads((tmp_path / "toy.json").read_text())
    assert doc["family"] == "toy"
    assert doc["cycle_length_bits"] == golden.Crossbar(4, 2, 4).cycle_length
    assert set(doc["fields"]) >= set(doc) - {"fields"}  # every key documented
    manifest_ports_declared(doc, (tmp_path / "toy.v").read_text())
    verilator_lint([tmp_path / "lint.vlt", tmp_path / "toy.v"])
    icarus_clean("toy_harness", [tmp_path / f for f in doc["harness"]["sources"]])


def test_sim_on_icarus_passes_with_waves(toy, tmp_path, capsys, gtkw_paths_exist):
    if shutil.which("iverilog") is None:
        pytest.skip("iverilog is not installed")
    waves = tmp_path / "waves"
    code, out, err = run_cli(capsys, "sim", "toy", *NET, "--messages",
                             messages(tmp_path, CONTENDED), "--sim", "icarus",
                             "--waves", str(waves), "--build-dir", str(tmp_path / "b"))
    assert code == 0, out + err
    assert "icarus: PASS" in out and "1 lost" not in out  # the loss was retried
    gtkw = (waves / "toy.gtkw").read_text()
    signals = "\n".join(ln for ln in gtkw.splitlines()
                        if "__msg_w" not in ln and "__phase_w" not in ln)  # decoded traces
    build = next((tmp_path / "b" / "icarus").iterdir())
    verilog = (build / "toy_harness.v").read_text() + (build / "toy.v").read_text()
    assert gtkw_paths_exist(signals, "toy_harness", verilog)  # the design's signals
    vcd = (waves / "toy_harness.vcd").read_text()  # and the messages decoded beside them
    assert "toy_harness.toy.term__0__recv__msg_w1" in gtkw and "term__0__recv__msg_w1" in vcd


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_amaranth_simulator_equals_the_model(seed):
    net = golden.Crossbar(4, recv_wires=seed % 2 + 1, payload_bits=3)
    ms = make_pattern(4, "random-destinations", seed, net.payload_bits)
    cycles = golden.run(net, ms, keep_results=True).results
    for bench in (run_cycles_amaranth, run_cycles_harness_amaranth):
        results = bench(net, ms, cycles, family=FAMILY)
        assert len(results) == len(cycles)
        for plan, mismatches in results:
            assert mismatches == []
            assert any(a.any() for a in plan.expect_recv.values())  # not vacuous


def test_the_amaranth_bench_catches_a_wrong_expectation():
    net = golden.Crossbar(2, payload_bits=2)
    ms = MessageSet.from_pairs([0, 1], [1, 0], 2, payload=[1, 2])
    cycles = golden.run(net, ms, keep_results=True).results
    (cycle,) = cycles
    del cycle.injections[1]  # input 1 stays silent, the model still expects its message
    (_, mismatches), = run_cycles_amaranth(net, ms, cycles, family=FAMILY)
    assert {mm.wire.split("[")[0] for mm in mismatches} == {"term__0.recv",
                                                            "term__1.send_ack"}
