"""Every registered family implements the typed interface of every layer.

A family is one :class:`fatnet.api.registry.Family`, registered by an entry point of the
``fatnet.families`` group; its layer packages must provide the members of the required
protocols (:class:`~fatnet.cli.family.CommandFamily`,
:class:`~fatnet.hdl.family.HardwareFamily`, :class:`~fatnet.sim.family.TestbenchFamily`)
with the protocols' parameters, and of each optional capability (run-time faults, waves,
self-test, experiments, board commands) either every member or none: the engines detect a
capability by its type, so half of one would be taken for none.
"""

import inspect
from importlib.metadata import entry_points

import pytest

from fatnet.cli.family import OPTIONAL as COMMAND_OPTIONAL
from fatnet.cli.family import BenchCommands, CommandFamily, bench_families
from fatnet.api.registry import (ENTRY_POINT_GROUP, Family, Kind, demo_kinds, families,
                                 get_family, kinds, register)
from fatnet.golden.errors import ParameterError
from fatnet.hdl.family import HardwareFamily
from fatnet.sim.family import OPTIONAL as BENCH_OPTIONAL
from fatnet.sim.family import SimFamily
from fatnet.sim.family import TestbenchFamily as BenchProtocol  # not a test class

#: layer -> (its required protocol, its optional capabilities by name)
LAYERS = [("commands", CommandFamily, COMMAND_OPTIONAL), ("hardware", HardwareFamily, {}),
          ("testbench", BenchProtocol, BENCH_OPTIONAL)]


def _members(protocol) -> dict:
    """Every member a protocol declares, its bases' included: name -> the declared
    function, or None for a data member."""
    out = {}
    for base in reversed(protocol.__mro__):
        if not base.__module__.startswith("fatnet."):
            continue   # object, typing.Protocol, typing.Generic
        out.update({name: None for name in vars(base).get("__annotations__", {})
                    if not name.startswith("_")})
        out.update({name: value for name, value in vars(base).items()
                    if not name.startswith("_") and callable(value)})
    return out


def _check_parameters(where: str, method, implemented) -> None:
    """The engines call the hooks positionally, as the protocol lists the parameters."""
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    want = list(inspect.signature(method).parameters.values())[1:]  # without self
    got = list(inspect.signature(implemented).parameters.values())
    where = f"{where}{tuple(p.name for p in got)}"
    assert len(got) >= len(want) and all(p.kind in positional for p in got[:len(want)]), \
        f"{where}: takes {[p.name for p in want]} positionally"
    assert all(p.default is not inspect.Parameter.empty
               for p, q in zip(got, want) if q.default is not inspect.Parameter.empty), \
        f"{where}: required where the protocol's is optional"
    # a keyword-only parameter is the API user's to name (build_network's leaves)
    assert all(p.default is not inspect.Parameter.empty
               or p.kind in (p.VAR_KEYWORD, p.KEYWORD_ONLY)
               for p in got[len(want):]), f"{where}: a required parameter too many"


def _check_protocol(where: str, hooks, protocol) -> None:
    assert isinstance(hooks, protocol), f"{where}: not a {protocol.__name__}"
    for name, method in _members(protocol).items():
        if method is not None:
            _check_parameters(f"{where}.{name}", method, getattr(hooks, name))


def test_the_registry_holds_what_the_entry_points_name():
    names = sorted(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))
    assert names == [f.name for f in families()]
    assert {"fattree", "butterfly"} <= set(names)
    assert "fat-tree" in kinds() and "multibutterfly" in kinds()


@pytest.mark.parametrize("fam", families(), ids=lambda f: f.name)
@pytest.mark.parametrize("layer, protocol, optional", LAYERS, ids=[n for n, *_ in LAYERS])
def test_every_family_implements_each_layers_interface(fam, layer, protocol, optional):
    hooks = getattr(fam, layer)
    if hooks is None:
        assert not fam.has_hardware and layer != "commands"
        return
    _check_protocol(f"{fam.name} {layer}", hooks, protocol)
    for capability, extra in optional.items():
        members = _members(extra)
        has = [name for name in members if hasattr(hooks, name)]
        assert len(has) in (0, len(members)), \
            f"{fam.name} {layer}: {capability} half implemented: {sorted(has)} of {sorted(members)}"
        if has:
            _check_protocol(f"{fam.name} {layer} ({capability})", hooks, extra)


def test_the_optional_capabilities_are_detected_by_type():
    """Run-time faults only where the hardware has a fault mask, no stub elsewhere."""
    from fatnet.sim.family import RuntimeFaults, SelfTest, Waves
    with_faults = {f.name for f in families()
                   if f.has_hardware and isinstance(f.testbench, RuntimeFaults)}
    assert with_faults == {"butterfly"}
    assert all(isinstance(f.testbench, Waves) and isinstance(f.testbench, SelfTest)
               for f in families() if f.has_hardware)
    # the benchmarks of bench/ measure every installed family with hardware
    assert all(isinstance(f.commands, BenchCommands) for f in families() if f.has_hardware)


@pytest.mark.parametrize("kind", sorted(bench_families()))
def test_the_benchmarks_sizes_build_through_the_api(kind):
    """The benchmarks' record of a family: a ladder of growing sizes whose smallest's
    board options and the soak's workload each build a network of the family through
    the API, and the workload's traffic runs on the soak's network with every cycle's
    result kept (the golden model alone: no hardware is generated)."""
    import numpy as np

    from fatnet import api
    bench = bench_families()[kind]
    assert bench.kind == kind and get_family(kind).commands.BENCH is bench
    assert len(bench.ladder) > 1 and list(bench.ladder) == sorted(set(bench.ladder))
    for params in (bench.options(bench.ladder[0]), bench.workload(bench.soak_size)):
        net = api.network(kind, **params)
        assert net.family == get_family(kind).name
    ms, report = bench.traffic(net, np.random.default_rng(1))
    assert len(ms) > 0 and report.results
    delivered = {m for r in report.results for m in r.delivered}
    assert delivered <= set(range(len(ms))) and delivered
    # a size is the network's size: the next one's addresses, and cycles, are longer
    small, large = (api.network(kind, **bench.options(size)) for size in bench.ladder[:2])
    assert large.cycle_length > small.cycle_length


@pytest.mark.parametrize("kind", sorted(bench_families()))
def test_the_cosimulation_and_waves_benchmarks_networks_build_through_the_api(kind):
    """The co-simulation benchmark's sizes and the waves benchmark's network of a
    family's record: each builds a network of the family through the API (the golden
    model alone), the sizes grow, the waves network's traffic is a message set of it,
    and the acceptance line shows the runs' mean."""
    from fatnet import api
    bench = bench_families()[kind]
    sizes = [case.size for case in bench.cosim]
    assert sizes == sorted(set(sizes)) and bench.summary
    for case in bench.cosim:
        assert min(case.native_clocks, case.verilator_cycles, case.icarus_cycles) >= 1
        net = api.network(kind, **bench.workload(case.size))
        assert net.family == get_family(kind).name
    if bench.acceptance is not None:
        assert "0.5500" in bench.acceptance(sizes[0], [0.5, 0.6])
    if bench.waves is not None:
        net = api.network(kind, **bench.waves.network)
        assert net.family == get_family(kind).name
        assert len(api.messages(net, **bench.waves.traffic)) > 0


@pytest.mark.parametrize("kind", demo_kinds())
def test_every_golden_network_is_a_network(kind, tmp_path):
    """The demo's network of every family with hardware: ``family``, ``cycle_length`` and
    ``payload_bits``, which the engines read without asking the family."""
    from fatnet import api
    from fatnet.golden.cycle import Network
    fam = get_family(kind)
    net = api.network(kind, **fam.kinds[kind].demo.network)
    assert isinstance(net, Network) and net.family == fam.name
    assert net.cycle_length > net.payload_bits > 0


@pytest.mark.parametrize("fam", [f for f in families() if f.has_hardware],
                         ids=lambda f: f.name)
def test_a_family_with_hardware_is_what_the_engines_take(fam):
    assert isinstance(fam, SimFamily)


def test_a_missing_layer_package_is_an_error_not_no_hardware():
    broken = Family("broken", [Kind("broken-net", "a family whose hardware is missing")],
                    golden="fatnet.golden.fattree", commands="fatnet.cli.fattree",
                    hardware="fatnet.hdl.no_such_family",
                    testbench="fatnet.sim.no_such_family")
    assert broken.has_hardware
    with pytest.raises(ModuleNotFoundError):
        broken.hardware


def test_register_adds_a_family_for_the_block_only():
    extra = Family("extra", [Kind("extra-net", "a test family")],
                   golden="fatnet.golden.fattree", commands="fatnet.cli.fattree")
    with register(extra):
        assert get_family("extra-net") is extra and "extra-net" in kinds()
    with pytest.raises(ParameterError, match="kind must be one of"):
        get_family("extra-net")


def test_a_kind_registered_twice_is_refused():
    twin = Family("twin", [Kind("fat-tree", "a second fat-tree")],
                  golden="fatnet.golden.fattree", commands="fatnet.cli.fattree")
    with pytest.raises(RuntimeError, match="fat-tree"):
        with register(twin):
            pass
