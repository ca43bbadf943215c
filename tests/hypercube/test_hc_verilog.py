"""Generated hypercube Verilog (`fatnet gen hypercube`, Algorithm 1's router chains):
lint-clean under `verilator --lint-only -Wall` with the waivers written beside it,
warning-free in Icarus (the top and the packed harness), a manifest whose ports are the
top's signature and whose timing is Algorithm 1's, exactly two router modules (one per
tie-break side) with every router an instance of the right one; and bad options to gen
and sim refused in one line before anything is written or built."""

import json
import re

import pytest

from fatnet.cli.main import main
from fatnet.golden.hypercube.api import ALGORITHMS, HARDWARE_ALGORITHMS, circuit
from fatnet.hdl.hypercube import network_signature
from fatnet.hdl.signatures import port_rows
from simulators import require as require_simulator

# (k, message bits M or None for the default 2k, order or None for 0 .. k-1)
GEN_CASES = [
    (1, None, None),              # P = 1 = k: one router per node
    (2, 3, (1, 0)),               # P = 1 < k: the acknowledgment sets T
    (3, None, None),              # P = k
    (4, 11, (3, 1, 0, 2)),        # P = 7 > k: the payload sets T
]


def _id(case):
    k, M, order = case
    return f"k{k}" + (f"-M{M}" if M else "") + (
        "-order" + "".join(map(str, order)) if order else "")


def _argv(k, M, order):
    argv = ["--dimension", str(k)]
    if M is not None:
        argv += ["--message-bits", str(M)]
    if order is not None:
        argv += ["--order", ",".join(map(str, order))]
    return argv


@pytest.fixture(scope="module", params=GEN_CASES, ids=_id)
def generated(request, tmp_path_factory):
    out = tmp_path_factory.mktemp("gen")
    assert main(["gen", "hypercube", *_argv(*request.param), "-o", str(out)]) == 0
    doc = json.loads((out / "hypercube.json").read_text())
    return out, request.param, doc


def test_gen_writes_the_four_files(generated):
    out, _, doc = generated
    assert {p.name for p in out.iterdir()} == {"hypercube.v", "hypercube_harness.v",
                                                "lint.vlt", "hypercube.json"}
    assert doc["top"] == "hypercube" and doc["harness"]["top"] == "hypercube_harness"


def test_verilator_lint_is_clean(generated, verilator_lint):
    require_simulator("verilator")
    out, _, _ = generated
    verilator_lint([out / "lint.vlt", out / "hypercube.v"])


def test_icarus_compiles_top_and_harness_without_warnings(generated, icarus_clean):
    out, _, doc = generated
    assert doc["harness"]["sources"][-1] == "hypercube_harness.v"
    for top, files in (("hypercube", ["hypercube.v"]),
                       ("hypercube_harness", doc["harness"]["sources"])):
        icarus_clean(top, [out / f for f in files])


def test_manifest_ports_spec_and_timing(generated, manifest_ports_declared):
    out, (k, M, order), doc = generated
    net = circuit(k, message_bits=M, order=order)
    rows = port_rows(network_signature(net))
    assert [p["name"] for p in doc["ports"][:2]] == ["clk", "rst"]
    assert [(p["name"], p["width"], p["dir"]) for p in doc["ports"][2:]] == \
        [(r["name"], r["width"], r["dir"]) for r in rows]
    ports = manifest_ports_declared(doc, (out / "hypercube.v").read_text())
    n = 1 << k
    for x in (0, n - 1):
        assert {f"node__{x}__{w}" for w in ("send", "send_ack", "recv", "recv_ack")} <= ports
    assert f"node__{n}__send" not in ports
    M = 2 * k if M is None else M
    order = list(range(k)) if order is None else list(order)
    assert doc["spec"] == {"kind": "hypercube", "dimension": k, "algorithm": "alg1",
                           "message_bits": M, "order": order, "stuck_links": []}
    # Algorithm 1's timing: M at the destination after two bit-times per rank, the
    # acknowledgment back one register per rank, T = 2k + max(P, k) + 1
    P = M - k
    T = 2 * k + max(P, k) + 1
    assert doc["payload_bits"] == P
    assert doc["arrival_bit_time"] == 2 * k
    assert doc["ack_latency"] == k
    assert doc["cycle_length_bits"] == T
    assert doc["bit_time"] == {"width": T.bit_length(), "saturates_at": T}
    assert next(p for p in doc["ports"] if p["name"] == "bit_time")["width"] == \
        T.bit_length()


def test_two_router_modules_and_every_router_an_instance_of_its_side(generated):
    """One router module per value of ``high`` (the node's bit of the rank's dimension,
    which side wins a tie), even for k = 1 (one router per node); node x's rank-r
    router rt_<r>_<x> is the module of high = bit order[r] of x."""
    out, (k, _, order), doc = generated
    order = list(range(k)) if order is None else list(order)
    text = (out / "hypercube.v").read_text()
    modules = re.findall(r"^module (\w+)\(", text, re.M)
    routers = [m for m in modules if m != "hypercube"]
    assert sorted(modules) == sorted(["hypercube", *routers]) and len(modules) == 3
    assert len(routers) == len(set(routers)) == 2
    by_high = {r["high"]: r["module"] for r in doc["router_modules"]}
    assert len(doc["router_modules"]) == 2 and set(by_high) == {False, True}
    assert sorted(by_high.values()) == sorted(routers)
    instances = re.findall(r"^\s*(\w+)\s+rt_(\d+)_(\d+)\s*\(", text, re.M)
    n = 1 << k
    assert sorted((int(r), int(x)) for _, r, x in instances) == \
        [(r, x) for r in range(k) for x in range(n)]
    for module, r, x in instances:
        high = bool((int(x) >> order[int(r)]) & 1)
        assert module == by_high[high], (r, x, module)


# ------------------------------------------------------------------ bad options
def _one_line(capsys, param):
    """Nothing on stdout, one line on stderr, naming the parameter."""
    cap = capsys.readouterr()
    assert cap.out == "", cap.out
    lines = cap.err.strip().splitlines()
    assert len(lines) == 1, cap.err
    assert re.search(rf"\b{re.escape(param)} must\b", lines[0]), lines[0]
    return lines[0]


def _no_simulation(monkeypatch):
    import fatnet.sim.cocotb_runner as runner

    def refuse(*a, **k):
        raise AssertionError("the simulation ran despite a bad option")
    monkeypatch.setattr(runner, "run", refuse)


NOT_BUILT = [a for a in ALGORITHMS if a not in HARDWARE_ALGORITHMS]
K = 3
BAD = [
    *[(["--dimension", str(K), "--algorithm", a], "algorithm") for a in NOT_BUILT],
    (["--dimension", str(K), "--message-bits", str(K)], "message-bits"),          # P = 0
    (["--dimension", str(K), "--message-bits", str(K + 1025)], "message-bits"),   # P = 1025
    (["--dimension", str(K), "--order", "0,0,1"], "order"),
    (["--dimension", "0"], "dimension"),
]


@pytest.mark.parametrize("verb", ["gen", "sim"])
@pytest.mark.parametrize("argv, param", BAD, ids=lambda x: " ".join(x)
                         if isinstance(x, list) else None)
def test_bad_option_is_one_line_exit_2_and_nothing_written(verb, argv, param, tmp_path,
                                                           capsys, monkeypatch):
    _no_simulation(monkeypatch)
    out = tmp_path / "fresh"
    assert not out.exists()
    extra = (["-o", str(out)] if verb == "gen" else
             ["--pattern", "random-permutation", "--build-dir", str(out)])
    assert main([verb, "hypercube", *argv, *extra]) == 2
    err = _one_line(capsys, param)
    # argparse's own checks name the option first ("argument --dimension: ..."); the
    # model's name a parameter, which the command line words as the option where the
    # names differ ("--message-bits must ..." for message_bits, "order must ...")
    assert err.startswith((f"fatnet {verb}: error: {param} must",
                           f"fatnet {verb}: error: --{param} must",
                           f"fatnet {verb}: error: argument --{param}: {param} must"))
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_the_limits_of_message_bits_are_accepted(tmp_path, capsys):
    """k + 1 and k + 1024, the ends of the range the refusals above fall outside."""
    for M in (K + 1, K + 1024):
        out = tmp_path / f"M{M}"
        assert main(["gen", "hypercube", "--dimension", str(K), "--message-bits", str(M),
                     "--no-harness", "-o", str(out)]) == 0
        doc = json.loads((out / "hypercube.json").read_text())
        assert doc["payload_bits"] == M - K
    assert capsys.readouterr().err == ""
