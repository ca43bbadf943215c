"""Every registered family implements the typed interface of every layer.

A family is one :class:`fatnet.api.registry.Family`, registered by an entry point of the
``fatnet.families`` group; its layer packages must provide the members of
:class:`~fatnet.cli.family.CommandFamily`, :class:`~fatnet.hdl.family.HardwareFamily` and
:class:`~fatnet.sim.family.TestbenchFamily`, with the protocols' parameters.
"""

import inspect
from importlib.metadata import entry_points

import pytest

from fatnet.cli.family import CommandFamily
from fatnet.api.registry import (ENTRY_POINT_GROUP, Family, Kind, families, get_family,
                                 kinds, register)
from fatnet.golden.errors import ParameterError
from fatnet.hdl.family import HardwareFamily
from fatnet.sim.family import SimFamily
from fatnet.sim.family import TestbenchFamily as BenchProtocol  # not a test class

LAYERS = [("commands", CommandFamily), ("hardware", HardwareFamily),
          ("testbench", BenchProtocol)]


def _members(protocol):
    return {name: value for name, value in vars(protocol).items()
            if not name.startswith("_") and callable(value)}


def test_the_registry_holds_what_the_entry_points_name():
    names = sorted(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))
    assert names == [f.name for f in families()]
    assert {"fattree", "butterfly"} <= set(names)
    assert "fat-tree" in kinds() and "multibutterfly" in kinds()


@pytest.mark.parametrize("fam", families(), ids=lambda f: f.name)
@pytest.mark.parametrize("layer, protocol", LAYERS, ids=[n for n, _ in LAYERS])
def test_every_family_implements_each_layers_interface(fam, layer, protocol):
    hooks = getattr(fam, layer)
    if hooks is None:
        assert not fam.has_hardware and layer != "commands"
        return
    assert isinstance(hooks, protocol), f"{fam.name} {layer}: not a {protocol.__name__}"
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    for name, method in _members(protocol).items():
        # the engines call the hooks positionally, as the protocol lists the parameters
        want = list(inspect.signature(method).parameters.values())[1:]  # without self
        got = list(inspect.signature(getattr(hooks, name)).parameters.values())
        where = f"{fam.name} {layer}.{name}{tuple(p.name for p in got)}"
        assert len(got) >= len(want) and all(p.kind in positional for p in got[:len(want)]), \
            f"{where}: takes {[p.name for p in want]} positionally"
        assert all(p.default is not inspect.Parameter.empty
                   for p, q in zip(got, want) if q.default is not inspect.Parameter.empty), \
            f"{where}: required where the protocol's is optional"
        # a keyword-only parameter is the API user's to name (build_network's leaves)
        assert all(p.default is not inspect.Parameter.empty
                   or p.kind in (p.VAR_KEYWORD, p.KEYWORD_ONLY)
                   for p in got[len(want):]), f"{where}: a required parameter too many"


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
