"""The benchmark scripts of the repository's ``bench/`` folder, for the tests that check
their machinery (importable as ``bench_scripts``: pytest puts tests/ on the path for its
conftest.py). ``bench/`` is not installed: a script runs as ``python bench/<name>.py``,
with ``bench/`` on the path (the scripts import each other by name), and the tests
import them the same way."""

import importlib
import sys
from pathlib import Path

#: The repository's bench/ folder.
BENCH = Path(__file__).resolve().parent.parent / "bench"


def bench_script(name: str):
    """The module of ``bench/<name>.py``."""
    if str(BENCH) not in sys.path:
        sys.path.append(str(BENCH))
    return importlib.import_module(name)
