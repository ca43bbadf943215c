"""Outputs written all-or-nothing.

The output paths a user gives (``gen -o``, ``board -o``, ``--plot``) are checked when
the options are parsed (:mod:`fatnet.cli.options`), before any work (the API's board
build writes through here too). The work then writes
into a temporary directory (or file) beside the target, on the same file system, and
only a run that finishes moves it into place: a failure, an interrupt or a full disk
leaves no partial and no empty output behind.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

__all__ = ["staged_dir", "staged_file"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _existing_ancestor(path: Path) -> Path:
    """The nearest part of ``path`` (itself included) that exists."""
    for p in (path, *path.parents):
        if p.exists():
            return p
    return Path(".")


@contextmanager
def staged_dir(path):
    """Yield a new temporary directory beside ``path``; when the block finishes, move
    its files into ``path`` (created, with its parents, only then); when it raises,
    remove it and write nothing."""
    target = Path(path)
    base = _existing_ancestor(target.parent)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name or 'out'}.", suffix=".partial",
                                dir=base))
    tmp.chmod(0o777 & ~_umask())   # mkdtemp's 0700 would stay on the output
    try:
        yield tmp
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp, target)
            return
        for item in tmp.iterdir():     # an existing directory: replace what was made
            dest = target / item.name
            if dest.is_dir() and not dest.is_symlink():
                shutil.rmtree(dest)
            os.replace(item, dest)
        tmp.rmdir()
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


@contextmanager
def staged_file(path):
    """Yield a temporary file name beside ``path`` with its suffix; when the block
    finishes, move the file into place; when it raises, remove it."""
    target = Path(path)
    fd, name = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=target.suffix,
                                dir=target.parent)
    os.close(fd)
    tmp = Path(name)
    tmp.chmod(0o666 & ~_umask())   # mkstemp's 0600 would stay on the output
    try:
        yield tmp
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()
