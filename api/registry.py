"""The family registry: the network families fatnet builds, as plug-ins.

A family is one :class:`Family` object. It names the family (the ``family`` attribute of
its golden networks), its kinds (the names on the command line, ``fat-tree``,
``multibutterfly``, ...) and the package that holds it in each layer:

``golden``
    the model (pure Python); its networks carry ``family`` and ``cycle_length``.
``commands``
    the command line and the plain-parameter hooks behind it
    (:class:`fatnet.cli.family.CommandFamily`: options, model verbs, experiments, the
    golden network and traffic of plain parameters, which :mod:`fatnet.api` calls).
``hardware`` (optional)
    the hardware hooks, :class:`fatnet.hdl.family.HardwareFamily`.
``testbench`` (with ``hardware``)
    the testbench hooks, :class:`fatnet.sim.family.TestbenchFamily`.

This module sits in no layer: it imports nothing from ``cli``, ``hdl`` or ``sim``
(a family's layer packages are imported by name on first use), so the Python API
(:mod:`fatnet.api`), the command line, the benchmarks and the tests all look families up
here. The engines never look a family up: the API (and the tests) hand them the
family object, a :class:`fatnet.sim.family.SimFamily` (its ``hardware`` and
``testbench`` are the layer packages, imported on first use, so a model-only command
never loads Amaranth or cocotb). A family without hardware says so (``hardware=None``);
a layer package that is named but cannot be imported is an error, never a silent "no
hardware".

Families are registered through the entry-point group ``fatnet.families`` (this
package's own in ``pyproject.toml``; another installed package adds a family the same
way), or in-process with :func:`register` (a context manager that removes it again on
exit, for tests). Compare ``cocotb_tools.runner.get_runner``.
"""

from __future__ import annotations

import importlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from types import ModuleType
from typing import Any, Protocol, runtime_checkable

from ..golden.errors import ParameterError

__all__ = ["ENTRY_POINT_GROUP", "Demo", "Kind", "Family", "ExperimentCommands",
           "OfflineSchedule", "families", "register", "get_family", "family_of", "kinds",
           "demo_kinds", "experiments_of"]

#: The entry-point group a family registers in.
ENTRY_POINT_GROUP = "fatnet.families"


@dataclass(frozen=True)
class Demo:
    """A small network of a kind and its traffic, for ``fatnet demo``: the parameters of
    :func:`fatnet.api.network` and of :func:`fatnet.api.messages` (its ``seed`` is the
    network's, as the command line's one ``--seed``)."""

    network: dict
    traffic: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Kind:
    """One network kind of a family.

    Parameters
    ----------
    name : str
        The name on the command line (``fat-tree``, ``multibutterfly``, ...).
    summary : str
        One line for ``fatnet --help``.
    demo : Demo, optional
        A small network of this kind and its traffic, for ``fatnet demo``: the kind that
        shows the family (one per family with hardware).
    """

    name: str
    summary: str
    demo: Demo | None = None


@runtime_checkable
class ExperimentCommands(Protocol):
    """Optional, of a family's ``commands``: its experiments (``fatnet experiment
    <name>``, :func:`fatnet.api.experiment`). Detected by type (``isinstance``)."""

    #: Experiments by name (unique over the registered families): the
    #: :class:`fatnet.cli.family.Experiment` records.
    EXPERIMENTS: dict[str, Any]


@runtime_checkable
class OfflineSchedule(Protocol):
    """Optional, of a family's ``commands``: an off-line schedule of a message set
    (``fatnet schedule``, :func:`fatnet.api.schedule`). Detected by type
    (``isinstance``)."""

    def schedule_messages(self, net, ms) -> dict:
        """The schedule of ``ms`` on ``net`` (keyword-only parameters as the options,
        ``method``, ...): ``load_factor``, ``lower_bound`` and ``cycles`` (each a list of
        ``(src, dst)`` pairs)."""
        ...


def experiments_of(commands) -> dict[str, Any]:
    """A family's experiments (none for a family without :class:`ExperimentCommands`)."""
    return commands.EXPERIMENTS if isinstance(commands, ExperimentCommands) else {}


class Family:
    """A network family as a plug-in: its kinds and the package of each layer.

    Parameters
    ----------
    name : str
        The family's name, the ``family`` attribute of its golden networks (also the
        default name of its Verilog top).
    kinds : sequence of Kind
    golden, commands : str
        Dotted names of the model package and of the command-line module.
    hardware, testbench : str, optional
        Dotted names of the hardware and testbench packages (a family without hardware
        leaves both out).
    """

    def __init__(self, name: str, kinds, *, golden: str, commands: str,
                 hardware: str | None = None, testbench: str | None = None):
        if (hardware is None) != (testbench is None):
            raise ValueError(f"family {name!r}: hardware and testbench go together")
        self.name = name
        self.kinds = {k.name: k for k in kinds}
        self._paths = {"golden": golden, "commands": commands, "hardware": hardware,
                       "testbench": testbench}
        self._loaded: dict[str, ModuleType] = {}

    def __repr__(self):
        return f"Family({self.name!r}, kinds={sorted(self.kinds)})"

    def _layer(self, which: str) -> Any:
        path = self._paths[which]
        if path is None:
            return None
        if which not in self._loaded:
            self._loaded[which] = importlib.import_module(path)
        return self._loaded[which]

    @property
    def golden(self) -> ModuleType:
        """The model package."""
        return self._layer("golden")

    @property
    def commands(self) -> ModuleType:
        """The command-line module (:class:`fatnet.cli.family.CommandFamily`)."""
        return self._layer("commands")

    # Any, not ModuleType: the module stands for the layer's protocol (the engines are
    # annotated with fatnet.sim.family.SimFamily), which a type checker cannot see
    @property
    def hardware(self) -> Any:
        """The hardware hooks (:class:`fatnet.hdl.family.HardwareFamily`), or None."""
        return self._layer("hardware")

    @property
    def testbench(self) -> Any:
        """The testbench hooks (:class:`fatnet.sim.family.TestbenchFamily`), or None."""
        return self._layer("testbench")

    @property
    def has_hardware(self) -> bool:
        """Whether the family has hardware (without importing it)."""
        return self._paths["hardware"] is not None


_registered: dict[str, Family] | None = None


def _families() -> dict[str, Family]:
    global _registered
    if _registered is None:
        found = {}
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            fam = ep.load()  # a broken or missing family is an error here, not skipped
            if not isinstance(fam, Family) or fam.name != ep.name:
                raise RuntimeError(f"entry point {ep.name} = {ep.value} in group "
                                   f"{ENTRY_POINT_GROUP} is not the Family named {ep.name!r}")
            found[fam.name] = fam
        _check_kinds(found.values())
        _registered = found
    return _registered


def _check_kinds(fams) -> None:
    seen: dict[str, str] = {}
    for fam in fams:
        for kind in fam.kinds:
            if kind in seen:
                raise RuntimeError(f"kind {kind!r} is registered by families "
                                   f"{seen[kind]!r} and {fam.name!r}")
            seen[kind] = fam.name


def families() -> list[Family]:
    """Every registered family, by name."""
    return [f for _, f in sorted(_families().items())]


@contextmanager
def register(family: Family):
    """Register ``family`` in this process for the ``with`` block (a family that is not
    installed as a package: tests, notebooks)."""
    fams = _families()
    if family.name in fams:
        raise RuntimeError(f"a family named {family.name!r} is registered already")
    _check_kinds([*fams.values(), family])
    fams[family.name] = family
    try:
        yield family
    finally:
        del fams[family.name]


def kinds() -> list[str]:
    """Every registered kind, sorted."""
    return sorted(k for f in _families().values() for k in f.kinds)


def get_family(kind: str) -> Family:
    """The family of a kind; an unknown kind is one line naming the accepted ones."""
    for fam in _families().values():
        if kind in fam.kinds:
            return fam
    raise ParameterError(f"kind must be one of {', '.join(kinds())}, got {kind!r}")


def family_of(net) -> Family:
    """The registered family of a golden network (by its ``family`` attribute)."""
    try:
        return _families()[net.family]
    except KeyError:
        raise ParameterError(f"no registered family {net.family!r}: registered are "
                             f"{', '.join(sorted(_families()))}") from None


def demo_kinds() -> list[str]:
    """The kinds ``fatnet demo`` shows: one per family with hardware, by family name."""
    return [k.name for f in families() for k in f.kinds.values() if k.demo is not None]
