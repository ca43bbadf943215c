"""Generated Verilog: lint-clean under `verilator --lint-only -Wall` (with the waivers
written beside it, each explained), warning-free in Icarus, readable stable port names,
a manifest that matches the ports, and the generator's bad-input errors."""

import json
import re

import pytest

from fatnet.cli.main import main
from fatnet.api.registry import family_of


def expected_layout(net):
    """The fat-tree's packing from its spec alone (an independent reference): ``leaf__0``
    .. ``leaf__{n-1}``, each the leaves' capacity wide, then ``ext``, the root's."""
    caps = net.spec.capacities
    leaves = [(f"leaf__{i}", i * caps[-1], caps[-1]) for i in range(net.n)]
    return leaves + [("ext", net.n * caps[-1], caps[0])]


GEN_CASES = [
    ["--leaves", "2", "--root-capacity", "2"],
    ["--leaves", "8", "--root-capacity", "4"],
    ["--leaves", "8", "--root-capacity", "4", "--mode", "online", "--concentrator", "crossbar"],
    ["--leaves", "16", "--capacities", "9,6,4,3,2", "--mode", "online"],
]


@pytest.fixture(scope="module", params=range(len(GEN_CASES)),
                ids=lambda i: "-".join(GEN_CASES[i][1::2]))
def generated(request, tmp_path_factory):
    out = tmp_path_factory.mktemp("gen")
    assert main(["gen", "fat-tree", *GEN_CASES[request.param], "-o", str(out)]) == 0
    return out


def test_verilator_lint_is_clean(generated, verilator_lint):
    verilator_lint([generated / "lint.vlt", generated / "fattree.v"])


def test_icarus_compiles_without_warnings(generated, icarus_clean):
    doc = json.loads((generated / "fattree.json").read_text())
    for top, files in (("fattree", ["fattree.v"]),
                       ("fattree_harness", doc["harness"]["sources"])):
        icarus_clean(top, [generated / f for f in files])


def test_manifest_lists_the_top_level_ports(generated, manifest_ports_declared):
    doc = json.loads((generated / "fattree.json").read_text())
    ports = manifest_ports_declared(doc, (generated / "fattree.v").read_text())
    spec = doc["spec"]
    assert f"leaf__{spec['leaves'] - 1}__send" in ports and "ext__recv" in ports
    assert doc["cycle_length_bits"] > 0 and doc["files"]


@pytest.mark.parametrize("argv, needle", [
    (["--leaves", "12", "--root-capacity", "8"], "leaves must be a power of two"),
    (["--leaves", "16", "--root-capacity", "99"], "root-capacity must be in"),
    (["--leaves", "4", "--capacities", "1,0,1"], "capacities[1]"),
])
def test_generator_rejects_what_the_model_rejects(tmp_path, capsys, argv, needle):
    assert main(["gen", "fat-tree", *argv, "-o", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1
    assert not any(tmp_path.iterdir())


def test_gtkw_names_signals_that_exist_in_the_design(tmp_path, gtkw_paths_exist):
    from fatnet.golden.fattree.network import FatTreeNetwork
    from fatnet.golden.fattree.spec import FatTreeSpec
    from fatnet.hdl.gen import generate
    from fatnet.sim.waves import write_gtkw
    net = FatTreeNetwork(FatTreeSpec.universal(8, 4))
    generate(net, tmp_path, hardware=family_of(net).hardware)
    verilog = (tmp_path / "fattree_harness.v").read_text() + (tmp_path / "fattree.v").read_text()
    gtkw = write_gtkw(net, tmp_path / "dump.fst", tmp_path / "f.gtkw",
                      family=family_of(net)).read_text()
    paths = gtkw_paths_exist(gtkw, "fattree_harness", verilog)
    assert len(paths) > 7 * 12  # every node's three ports, four signals each
    groups = [ln for ln in gtkw.splitlines() if ln.startswith("-node_")]
    assert len(groups) == 2 * 7  # each node's group opens and closes


# ------------------------------------------------------------------ manifest and size
def _path_times(doc, net, src, dst):
    """(M arrival, acknowledgment time) of a path, from the manifest's fields alone."""
    from fatnet.golden.fattree.topology import PORT_NAMES
    shapes = {s["index"]: s for s in doc["concentrator_shapes"]}
    arrival = ack = 0
    for hop in net.tree.hops(src, dst):
        shape = shapes[doc["node_outputs"][hop.node][PORT_NAMES[hop.out_port]]]
        regs = max(1, len(shape["stages"]))
        arrival += 1 + shape["decision_width"] + regs
        ack += regs
    return arrival, ack


@pytest.mark.parametrize("mode", ["online", "offline"])
@pytest.mark.parametrize("conc", ["crossbar", "pippenger"])
def test_manifest_timing_follows_from_its_shapes(tmp_path, mode, conc):
    """On-line shapes carry no decision bits; the cycle length the manifest states is
    what its own shapes and node outputs give (issue 8, section 5)."""
    from fatnet.golden.fattree.network import FatTreeNetwork
    assert main(["gen", "fat-tree", "--leaves", "4", "--root-capacity", "3", "--mode", mode,
                 "--concentrator", conc, "--seed", "0", "-o", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "fattree.json").read_text())
    from fatnet.golden.fattree.spec import FatTreeSpec
    net = FatTreeNetwork(FatTreeSpec.universal(4, 3, mode=mode, concentrator=conc))
    assert net.spec.to_dict() == doc["spec"]
    if mode == "online":
        assert all(s["decision_width"] == 0 and not any(s["stage_decision_widths"])
                   for s in doc["concentrator_shapes"])
    else:
        assert any(s["decision_width"] > 0 for s in doc["concentrator_shapes"])
    P = doc["spec"]["payload_bits"]
    ends = list(range(4)) + [-1]
    worst = 0
    for s in ends:
        for d in ends:
            if s != d and not (s == -1 and d == -1):
                arrival, ack = _path_times(doc, net, s, d)
                worst = max(worst, arrival + max(P, ack) + 1)
    T = doc["cycle_length_bits"]
    assert worst == T == net.cycle_length
    assert f"= {T} bit-times" in doc["timing"] and f"stays at {T}" in doc["timing"]
    assert doc["bit_time"] == {"width": T.bit_length(), "saturates_at": T}
    bt = next(p for p in doc["ports"] if p["name"] == "bit_time")
    assert f"saturates at {T}" in bt["meaning"]
    assert "recv_ack in the clock its M bit arrives" in doc["timing"]


def test_manifest_says_which_shape_sits_on_each_node_output(tmp_path):
    from fatnet.golden.fattree.network import FatTreeNetwork
    from fatnet.golden.fattree.spec import FatTreeSpec
    from fatnet.golden.fattree.topology import PORT_L, PORT_NAMES, PORT_R, PORT_U
    from fatnet.hdl.gen import generate
    net = FatTreeNetwork(FatTreeSpec.universal(16, 7))
    doc = generate(net, tmp_path, harness=False, hardware=family_of(net).hardware)
    shapes = doc["concentrator_shapes"]
    assert [s["index"] for s in shapes] == list(range(len(shapes)))
    assert len(doc["node_outputs"]) == net.n - 1
    for row in doc["node_outputs"]:
        for p in (PORT_U, PORT_L, PORT_R):
            shape = shapes[row[PORT_NAMES[p]]]
            assert (shape["inputs"], shape["outputs"]) == net.concentrator_shape(row["node"], p)
        assert row["level"] == (row["node"] + 1).bit_length() - 1
        assert row["module"] in doc["modules"]
    eff = doc["effective_capacities"]
    assert len(eff) == net.L + 1 and all(e <= c for e, c in zip(eff, doc["capacities"]))
    assert all(s["guarantee"] <= s["outputs"] or s["stages"] == [] for s in shapes)
    for key in ("concentrator_shapes", "node_outputs", "effective_capacities", "bit_time"):
        assert doc["fields"][key]


def test_each_distinct_node_is_emitted_once(tmp_path):
    """Nodes with the same widths and cascades are one module instantiated many times;
    the harness instantiates the top instead of repeating it."""
    from fatnet.golden.fattree.network import FatTreeNetwork
    from fatnet.golden.fattree.spec import FatTreeSpec
    from fatnet.hdl.fattree.network import node_key
    net = FatTreeNetwork(FatTreeSpec.universal(32, 11))
    from fatnet.hdl.gen import generate
    doc = generate(net, tmp_path, hardware=family_of(net).hardware)
    text = (tmp_path / "fattree.v").read_text()
    node_modules = re.findall(r"^module (fattree_node\d+)\(", text, re.M)
    distinct = {node_key(net, h) for h in range(net.n - 1)}
    assert len(node_modules) == len(distinct) < net.n - 1
    instances = re.findall(r"^\s*(fattree_node\d+) (node_\d+) \(", text, re.M)
    assert sorted(int(i[5:]) for _, i in instances) == list(range(net.n - 1))
    stages = re.findall(r"^module (fattree_stage\d+)\(", text, re.M)
    assert len(stages) == len(set(stages)) == sum(
        len(c.stages) for c in net.shapes.values())
    harness = (tmp_path / "fattree_harness.v").read_text()
    assert not re.search(r"^module fattree\(", harness, re.M)
    assert re.search(r"^\s*fattree fattree \(", harness, re.M)
    assert doc["harness"]["sources"] == ["fattree.v", "fattree_harness.v"]


def test_port_map_comes_from_the_signature():
    from fatnet.golden.fattree.network import FatTreeNetwork
    from fatnet.golden.fattree.spec import FatTreeSpec
    from fatnet.hdl.fattree.network import network_signature
    from fatnet.hdl.gen import manifest
    from fatnet.hdl.signatures import EndpointSignature, port_rows
    net = FatTreeNetwork(FatTreeSpec.universal(8, 4))
    doc = manifest(net, "fattree", hardware=family_of(net).hardware)
    rows = port_rows(network_signature(net))
    assert [p["name"] for p in doc["ports"]] == ["clk", "rst"] + [r["name"] for r in rows]
    assert [(p["port"], p["first_bit"], p["width"]) for p in doc["harness"]["packed"]] \
        == expected_layout(net)
    leaf3 = [r["name"] for r in rows if r["endpoint"] == "leaf__3"]
    assert leaf3 == ["leaf__3__send", "leaf__3__send_ack", "leaf__3__recv",
                     "leaf__3__recv_ack"]
    with pytest.raises(ValueError):
        EndpointSignature(0)
