"""The family registry: which network kinds fatnet builds, and where each layer keeps them.

A family has one folder in every layer (``golden/<folder>``, ``hdl/<folder>``,
``sim/<folder>``) and one module ``cli/<folder>.py``, with the same hooks, so that the
command line, the generator and the testbenches reach every family the same way
(compare ``cocotb_tools.runner.get_runner``):

``cli/<folder>.py`` (the family's command line; ``golden/<folder>`` is its model)
    ``KINDS``; ``add_arguments(parser, verb, kind)``; ``spec_from_args(kind, args)``;
    ``network_from_args(kind, args)`` (the golden network); ``VERBS`` (model-only
    verbs: name -> (help, function(kind, args))); for ``sim``:
    ``messages_from_args(args, net)`` and ``run_model(net, ms, args)``; optionally
    ``EXPERIMENTS`` (name -> (help, add_arguments(parser), run(args))).
``hdl/<folder>``
    the hardware top of a golden network (only families with hardware).
``sim/<folder>``
    the testbench plan and waveform groups (only families with hardware).

Adding a family is those folders plus one line in :data:`FAMILIES`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from ..golden.errors import ParameterError

__all__ = ["Family", "FAMILIES", "get_family", "kinds"]


@dataclass(frozen=True)
class Family:
    """One network kind and the folder its layers keep it in.

    Parameters
    ----------
    kind : str
        The name on the command line (``fat-tree``, ``multibutterfly``, ...).
    folder : str
        The package name inside each layer; several kinds may share one folder.
    summary : str
        One line for ``fatnet --help``.
    demo : tuple of (network options, traffic options), optional
        A small network of the family and its traffic, for ``fatnet demo``: the kind that
        shows the family (one per family).
    """

    kind: str
    folder: str
    summary: str
    demo: tuple[tuple[str, ...], tuple[str, ...]] | None = None

    def layer(self, name: str) -> ModuleType | None:
        """The family's package in layer ``golden``, ``hdl`` or ``sim`` (None if the
        family has nothing in that layer yet). Imported on first use, so a model-only
        command never loads Amaranth or cocotb."""
        try:
            return importlib.import_module(f"..{name}.{self.folder}", __package__)
        except ModuleNotFoundError as e:
            if e.name != f"fatnet.{name}.{self.folder}":
                raise
            return None

    @property
    def golden(self) -> ModuleType:
        return self.layer("golden")

    @property
    def commands(self) -> ModuleType:
        """The family's command line, ``cli/<folder>.py``: its options, verbs and
        experiments (the hooks below :data:`FAMILIES`' docstring lists)."""
        return importlib.import_module(f".{self.folder}", __package__)

    @property
    def hdl(self) -> ModuleType | None:
        return self.layer("hdl")

    @property
    def sim(self) -> ModuleType | None:
        return self.layer("sim")


#: Every network kind, by its command-line name.
FAMILIES = {f.kind: f for f in (
    Family("fat-tree", "fattree", "Leiserson's fat-tree with concentrator switches",
           demo=(("--leaves", "16", "--root-capacity", "8", "--seed", "1"),
                 ("--pattern", "random-permutation"))),
    Family("butterfly", "butterfly", "the butterfly of 2x2 splitter switches"),
    Family("dilated-butterfly", "butterfly", "the d-dilated butterfly"),
    Family("multibutterfly", "butterfly", "randomly-wired splitter networks",
           demo=(("--inputs", "16", "--multiplicity", "2", "--seed", "1"),
                 ("--pattern", "random-permutation"))),
)}


def kinds() -> list[str]:
    return sorted(FAMILIES)


def get_family(kind: str) -> Family:
    """The family of a kind; an unknown kind is one line naming the accepted ones."""
    try:
        return FAMILIES[kind]
    except KeyError:
        raise ParameterError(f"kind must be one of {', '.join(kinds())}, got {kind!r}") from None
