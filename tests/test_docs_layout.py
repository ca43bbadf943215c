"""docs/layout.md names every module of the product, and names no module that is gone.

The matching rule, kept simple on purpose:

* a module file is ``<folder>/.../<name>.py`` under one of :data:`PRODUCT_FOLDERS`;
  it is named when docs/layout.md holds its path from the repository root in backquotes
  (`` `golden/cycle.py` ``); a package's ``__init__.py`` is named by its folder with a
  trailing slash (`` `golden/fattree/` ``);
* every backquoted path in docs/layout.md that starts with one of
  :data:`PRODUCT_FOLDERS` and ends in ``.py`` must be a file, and one that ends in ``/``
  a folder.

A path holding anything but letters, digits, ``_``, ``.`` and ``/`` (``golden/<folder>/``)
is a placeholder, not a module, and is not checked.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYOUT = ROOT / "docs" / "layout.md"

#: The folders whose Python files are the product's modules (bench/ is not installed,
#: but its scripts are described beside the layers).
PRODUCT_FOLDERS = ("golden", "hdl", "sim", "cli", "api", "bench")

_NAMED = re.compile(r"`((?:%s)/[\w./]*)`" % "|".join(PRODUCT_FOLDERS))


def module_files(root: Path) -> list[str]:
    """Every module file of the product, as its path from ``root`` with ``/``."""
    files = []
    for folder in PRODUCT_FOLDERS:
        files += [p.relative_to(root).as_posix() for p in (root / folder).rglob("*.py")]
    return sorted(files)


def named_paths(text: str) -> set[str]:
    """The backquoted product paths in a layout text."""
    return set(_NAMED.findall(text))


def name_of(module: str) -> str:
    """What names ``module`` in docs/layout.md: its path, or its package's folder."""
    if module.endswith("/__init__.py"):
        return module[: -len("__init__.py")]
    return module


def unnamed_modules(text: str, modules: list[str]) -> list[str]:
    """The module files that ``text`` does not name."""
    named = named_paths(text)
    return [m for m in modules if name_of(m) not in named]


def missing_paths(text: str, root: Path) -> list[str]:
    """The paths ``text`` names that are not in the repository under ``root``."""
    missing = []
    for path in sorted(named_paths(text)):
        exists = (root / path).is_dir() if path.endswith("/") else (root / path).is_file()
        if not exists:
            missing.append(path)
    return missing


def test_every_module_is_named_in_layout():
    unnamed = unnamed_modules(LAYOUT.read_text(encoding="utf-8"), module_files(ROOT))
    assert not unnamed, (
        "docs/layout.md does not name these modules (add a row with the path in "
        "backquotes; a package by its folder, e.g. `golden/fattree/`): "
        + ", ".join(unnamed))


def test_every_module_named_in_layout_exists():
    missing = missing_paths(LAYOUT.read_text(encoding="utf-8"), ROOT)
    assert not missing, (
        "docs/layout.md names modules or folders that do not exist: " + ", ".join(missing))


def test_the_check_finds_an_unnamed_module_and_a_missing_one(tmp_path):
    """The two checks on a made-up tree: each reports exactly the module at fault."""
    for path in ("golden/__init__.py", "golden/a.py", "golden/fam/__init__.py",
                 "golden/fam/b.py"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("")
    text = "`golden/` `golden/a.py` `golden/gone.py` `golden/<folder>/` `hdl/x/`"
    assert unnamed_modules(text, module_files(tmp_path)) == [
        "golden/fam/__init__.py", "golden/fam/b.py"]
    assert missing_paths(text, tmp_path) == ["golden/gone.py", "hdl/x/"]
