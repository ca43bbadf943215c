"""fatnet uses only Amaranth's public API (issue 14): no private module, no private or
name-mangled attribute, so that a patch release of Amaranth cannot break it; and the
components that are made but deliberately never elaborated here (refused constructions,
the parent's copies of modules converted in forked workers) leave no
``UnusedElaboratable`` warning, while a really unused one still gets it."""

import gc
import inspect
import multiprocessing
import re
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest
from amaranth import Module
from amaranth.back import rtlil
from amaranth.hdl import Fragment, UnusedElaboratable
from amaranth.lib.wiring import In, Signature

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("golden", "hdl", "sim", "cli", "tests")

#: What reaching into Amaranth looks like (pattern, why it is private).
PRIVATE = [
    (r"_MustUse", "the unused-elaboratable machinery (amaranth._unused)"),
    (r"_convert_rtlil", "amaranth.back.verilog's internal Yosys driver"),
    (r"\bamaranth(\.\w+)*\._\w", "a private Amaranth module (amaranth.hdl._ast, ._ir, "
                                 "amaranth._toolchain, ...)"),
    (r"\bfrom amaranth[\w.]* import\s[^\n]*\b_\w", "a private name imported from Amaranth"),
    (r"\._[A-Za-z]\w*__\w", "a name-mangled attribute of another class"),
    (r"\._[lr]hs_signals\b", "Amaranth values' internal signal walks"),
]


def _sources():
    for layer in LAYERS:
        for path in sorted((ROOT / layer).rglob("*.py")):
            if path.name != Path(__file__).name and "__pycache__" not in path.parts:
                yield path


def test_no_private_amaranth_names():
    hits = []
    for path in _sources():
        for n, line in enumerate(path.read_text().splitlines(), 1):
            for pattern, why in PRIVATE:
                if re.search(pattern, line):
                    hits.append(f"{path.relative_to(ROOT)}:{n}: {why}: {line.strip()}")
    assert not hits, "\n".join(hits)


def test_the_patterns_catch_what_they_name():
    for line in ("x._MustUse__silence = True", "verilog._convert_rtlil_text(t)",
                 "from amaranth.hdl._ast import Assign", "import amaranth._toolchain.yosys",
                 "from amaranth.hdl import _ir", "s.lhs._lhs_signals()", "o._Foo__bar"):
        assert any(re.search(p, line) for p, _ in PRIVATE), line
    for line in ("from amaranth.hdl import Fragment, UnusedElaboratable",
                 "self.__init__()", "self._core", "from amaranth.back.verilog import YosysError"):
        assert not any(re.search(p, line) for p, _ in PRIVATE), line


def _unused_warnings(make):
    """The UnusedElaboratable warnings while ``make()`` runs and its garbage goes."""
    Fragment.get(Module(), None)  # Amaranth warns only once something was elaborated
    gc.collect()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make()
        gc.collect()
    return [w for w in caught if issubclass(w.category, UnusedElaboratable)]


def _stage(inputs, outputs, adjacency):
    return SimpleNamespace(inputs=inputs, outputs=outputs, adjacency=adjacency,
                           decision_width=1)


def _refusals():
    from fatnet.golden.butterfly.cyclemodel import CircuitNetwork
    from fatnet.golden.butterfly.topology import make_network
    from fatnet.hdl.butterfly.network import ButterflyNetworkHW, SplitterSwitch
    from fatnet.hdl.modules import ModuleInstance
    from fatnet.hdl.switches import Selector, StageSwitch
    modified = CircuitNetwork(make_network("multibutterfly", 16, 2, modified=True, seed=0), 4)
    return {
        "StageSwitch": lambda: StageSwitch(_stage(2, 2, ((0, 1), (0, 5))), online=False),
        "StageSwitch empty": lambda: StageSwitch(_stage(0, 2, ()), online=True),
        "Selector": lambda: Selector(0),
        "SplitterSwitch": lambda: SplitterSwitch(2, 0),
        "ButterflyNetworkHW": lambda: ButterflyNetworkHW(modified),
        "ModuleInstance": lambda: ModuleInstance(Signature({"a": In(1)}), ""),
    }


@pytest.mark.parametrize("what", sorted(_refusals()))
def test_refused_constructions_leave_no_unused_warning(what):
    make = _refusals()[what]

    def refuse():
        with pytest.raises(ValueError):
            make()
    assert _unused_warnings(refuse) == []


def test_an_unused_component_is_still_reported_at_the_line_that_made_it():
    from fatnet.hdl.switches import Selector
    line = []

    def make():
        line.append(inspect.currentframe().f_lineno + 1)
        Selector(2)
    [w] = _unused_warnings(make)
    assert Path(w.filename) == Path(__file__) and w.lineno == line[0]


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                    reason="no fork: the library converts in-process")
def test_modules_converted_in_forked_workers_leave_no_unused_warning():
    from fatnet.golden.fattree.network import FatTreeNetwork
    from fatnet.golden.fattree.spec import FatTreeSpec
    from fatnet.hdl.fattree import FatTreeNetworkHW
    from fatnet.hdl.modules import ModuleLibrary

    def convert():
        library = ModuleLibrary("fattree")
        top = FatTreeNetworkHW(FatTreeNetwork(FatTreeSpec.universal(16, 8)), library=library)
        rtlil.convert(top, name="fattree", emit_src=False)
        assert len(library.modules) > 1
        library.rtlil(jobs=2)
    assert _unused_warnings(convert) == []
