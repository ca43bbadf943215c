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

__all__ = ["yowasp_tool", "temporary_env", "nextpnr_fmax"]


def yowasp_tool(name: str) -> str:
    """A YoWASP console script: on PATH, or beside this interpreter (the venv)."""
    beside = Path(sys.executable).parent / name
    return shutil.which(name) or str(beside)


def nextpnr_fmax(log: str) -> float | None:
    """The Fmax in MHz of nextpnr's last "Max frequency for clock" line in ``log``, or
    None when it has none. The last is the routed design's: nextpnr prints an estimate
    after placement first (with several clocks, it is the last clock of that report)."""
    found = re.findall(r"Max frequency for clock\s+'[^']*':\s+([\d.]+) MHz", log)
    return float(found[-1]) if found else None


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
