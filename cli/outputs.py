"""Where the command line writes, checked before anything is built and written
all-or-nothing.

Every output path a user gives (``gen -o``, ``board -o``, ``sim --build-dir`` and
``--waves``, ``--plot``) is checked before the work starts: a bad one is refused in one
line (:class:`~fatnet.golden.errors.ParameterError`) naming the option. The work then
writes into a temporary directory (or file) beside the target, on the same file system,
and only a run that finishes moves it into place: a failure, an interrupt or a full disk
leaves no partial and no empty output behind.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

from ..golden.errors import ParameterError

__all__ = ["check_output_dir", "check_output_file", "check_module_name", "staged_dir",
           "staged_file", "PLOT_SUFFIXES", "MAX_NAME"]

#: What ``--plot`` can write (matplotlib's formats picked by the file's suffix).
PLOT_SUFFIXES = (".png", ".pdf", ".svg")
#: Longest module name: it names files (``<top>_harness.v``, below a file system's 255).
MAX_NAME = 100
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


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


def _check_writable_below(path: Path, option: str) -> None:
    """``path``'s nearest existing ancestor must be a directory we may write into."""
    base = _existing_ancestor(path.parent if not path.exists() else path)
    if not base.is_dir():
        raise ParameterError(f"{option} must be a path whose parents are directories; "
                             f"{str(base)!r} is a file")
    if not os.access(base, os.W_OK | os.X_OK):
        raise ParameterError(f"{option} must be in a directory you can write; "
                             f"{str(base)!r} is not writable")


def check_output_dir(path, option: str = "output") -> Path:
    """The directory an option names, refused in one line unless it can be written: not
    empty, not an existing file, not below a file, in a writable directory."""
    if path is None or str(path) == "":
        raise ParameterError(f"{option} must name a directory, got ''")
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise ParameterError(f"{option} must be a directory; {str(p)!r} is a file")
    _check_writable_below(p, option)
    return p


def check_output_file(path, option: str = "plot",
                      suffixes: tuple = PLOT_SUFFIXES) -> Path:
    """The file an option names (a plot), refused in one line unless it can be written:
    a known suffix, not a directory, its directory existing and writable."""
    p = Path(str(path))
    if p.suffix.lower() not in suffixes:
        raise ParameterError(f"{option} must be a file ending in {', '.join(suffixes)}, "
                             f"got {str(path)!r}")
    if p.is_dir():
        raise ParameterError(f"{option} must be a file; {str(p)!r} is a directory")
    if not p.parent.is_dir():
        raise ParameterError(f"{option} must be in an existing directory; "
                             f"{str(p.parent)!r} is not one")
    _check_writable_below(p, option)
    return p


def check_module_name(name: str, option: str = "top") -> str:
    """A Verilog module name that also names files: an identifier of at most
    :data:`MAX_NAME` characters."""
    if not _IDENTIFIER.fullmatch(name or "") or len(name) > MAX_NAME:
        raise ParameterError(f"{option} must be a Verilog identifier (a letter or _, then "
                             f"letters, digits and _; at most {MAX_NAME} characters), "
                             f"got {name!r}")
    return name


@contextmanager
def staged_dir(path, option: str = "output"):
    """Yield a new temporary directory beside ``path``; when the block finishes, move
    its files into ``path`` (created, with its parents, only then); when it raises,
    remove it and write nothing."""
    target = check_output_dir(path, option)
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
def staged_file(path, option: str = "plot", suffixes: tuple = PLOT_SUFFIXES):
    """Yield a temporary file name beside ``path`` with its suffix; when the block
    finishes, move the file into place; when it raises, remove it."""
    target = check_output_file(path, option, suffixes)
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
