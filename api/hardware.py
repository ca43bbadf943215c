"""The hardware through the API: Verilog, harness and manifest into a directory, and
co-simulation of that Verilog against the model (cocotb on Icarus or Verilator).

Both take the golden network (:func:`fatnet.api.network`); its family's hardware and
testbench hooks come from the registry. Amaranth and cocotb are imported when a
function runs, not with this module.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..golden.errors import ParameterError
from .outputs import staged_dir
from .params import check_choice, check_identifier
from .registry import family_of

__all__ = ["Generated", "generate", "SIMULATORS", "Waves", "Cosimulation", "cosimulate"]

#: The simulators :func:`cosimulate` runs.
SIMULATORS = ("icarus", "verilator")


def _hardware_family(net):
    """The registered family of ``net``, refused in one line if it has no hardware."""
    fam = family_of(net)
    if not fam.has_hardware:
        raise ParameterError(f"the {fam.name} family has no hardware: generate and "
                             f"cosimulate take a network of a family that has")
    return fam


@dataclass(frozen=True)
class Generated:
    """What :func:`generate` wrote.

    Attributes
    ----------
    directory : Path
        Where the files are.
    top : str
        The network top's module name.
    files : list of str
        ``<top>.v``, ``<top>_harness.v`` (with the harness) and ``lint.vlt``, beside
        ``<top>.json``, the manifest.
    manifest : dict
        The manifest (``<top>.json``): ports, fields, timing, harness (docs/hardware.md).
    seconds : float
        The generation's wall time.
    """

    directory: Path
    top: str
    files: list
    manifest: dict
    seconds: float

    @property
    def cycle_length(self) -> int:
        """Bit-times of one delivery cycle (the manifest's ``cycle_length_bits``)."""
        return self.manifest["cycle_length_bits"]


def generate(net, output, *, top: str | None = None, harness: bool = True,
             progress=None) -> Generated:
    """Write the Verilog of ``net`` into the directory ``output`` (made if missing):
    ``<top>.v``, the packed test harness ``<top>_harness.v`` (unless ``harness`` is
    False), ``lint.vlt`` and the manifest ``<top>.json`` (``fatnet gen``).

    ``top`` defaults to the family's name; ``progress(done, total, what)`` is called as
    each step starts. All or nothing: the files are written beside ``output`` and moved
    into it when every one is written. A network the hardware cannot build, or one too
    large to convert, is refused in one line before anything is written.
    """
    from ..hdl.gen import generate as write
    fam = _hardware_family(net)
    top = check_identifier("top", fam.name if top is None else top)
    with staged_dir(output) as tmp:   # all or nothing
        doc = write(net, tmp, top=top, harness=harness, hardware=fam.hardware,
                    progress=progress)
    return Generated(directory=Path(output), top=top, files=list(doc["files"]),
                     manifest=doc, seconds=doc["generation_seconds"])


@dataclass(frozen=True)
class Waves:
    """The waveform of a co-simulation (:func:`cosimulate` with ``waves``).

    Attributes
    ----------
    dump : Path
        The simulator's dump (a VCD, with every wire's decoded message beside it).
    gtkw : Path
        The GTKWave save file that shows it: ``gtkwave <gtkw>``.
    note : str or None
        Why the dump holds no decoded messages, if it does not.
    """

    dump: Path
    gtkw: Path
    note: str | None


@dataclass(frozen=True)
class Cosimulation:
    """The outcome of :func:`cosimulate`.

    Attributes
    ----------
    passed : bool
        The RTL and the model agree on every ``recv`` and ``send_ack`` wire at every
        bit-time of every delivery cycle.
    failures : list of str
        What differs (empty when passed), each with the seed and the replay command.
    sim : str
        The simulator that ran.
    model : RunReport
        The model's run the RTL was compared with (:func:`fatnet.api.route`).
    run : Any
        The runner's :class:`~fatnet.sim.cocotb_runner.CocotbResult`: cycles, build and
        simulation seconds, ``log`` (the tools' output).
    waves : Waves or None
        The waveform, when asked for.
    """

    passed: bool
    failures: list
    sim: str
    model: Any
    run: Any
    waves: Waves | None


def cosimulate(net, ms, *, model=None, sim: str | None = None, seed: int = 0,
               build_dir="build/cocotb", waves=None, replay: str = "", log: bool = True,
               progress=None, **route_params) -> Cosimulation:
    """Co-simulate the Verilog of ``net`` against its model on the messages ``ms``
    (``fatnet sim``): the model runs (:func:`fatnet.api.route`, with ``route_params``)
    unless its run is given as ``model`` (a report with its cycle results kept), the
    network is generated and built once per parameter set in ``build_dir``, and every
    delivery cycle is compared wire by wire.

    Parameters
    ----------
    sim : str, optional
        ``icarus`` or ``verilator`` (default: the ``SIM`` environment variable, else
        icarus).
    seed : int
        The seed the network and messages were made with: printed with a failure.
    waves : path, optional
        A directory for the waveform dump and its GTKWave ``.gtkw``.
    replay : str
        The command that replays this run, printed with a failure.
    log : bool
        The tools' output into a log file (``run.log``) instead of the terminal.
    """
    from ..hdl.gen import check_generable
    from ..sim.cocotb_runner import run as cosim
    from .model import route
    fam = _hardware_family(net)
    sim = check_choice("sim", sim or os.environ.get("SIM") or "icarus", SIMULATORS)
    check_generable(net, hardware=fam.hardware)   # before the model runs or anything is built
    if model is None:
        model = route(net, ms, **route_params)
    elif route_params:
        raise ParameterError(f"{next(iter(route_params))} is the model run's: give it to "
                             f"fatnet.api.route, or leave model out")
    res = cosim(net, ms, model.results, family=fam, sim=sim, seed=seed, replay=replay,
                waves=waves is not None, build_root=build_dir, masks=model.masks, log=log,
                progress=progress)
    shown = None
    if waves is not None and res.waves:
        from ..sim.waves import write_waves
        if progress is not None:
            progress(0, None, "decoding the messages into the waves")
        # the dump, with every wire's decoded message beside it (fatnet.sim.wavedecode)
        dump, gtkw, note = write_waves(net, model.results, res.waves, waves, name=fam.name,
                                       family=fam)
        shown = Waves(dump=Path(dump), gtkw=Path(gtkw), note=note)
    return Cosimulation(passed=res.passed, failures=list(res.failures), sim=sim,
                        model=model, run=res, waves=shown)
