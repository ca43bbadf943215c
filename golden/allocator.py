"""The C allocator's settings for the batched model engines (glibc only).

A batched engine allocates and frees arrays of megabytes many times a second (every
step of a routing makes a few dozen temporaries the size of its messages). With
glibc's defaults each such array above the *mmap threshold* is mapped fresh from the
kernel and unmapped when freed, and the heap's free top is given back above the *trim
threshold*: every step then pays page faults to zero new pages, a third of the
store-and-forward tables' CPU time on the development machine. :func:`keep_freed_memory`
raises both thresholds (``mallopt``), so freed arrays are reused: the process keeps its
peak heap instead of returning it between steps, which the engines' batch limits bound.

Elsewhere (another C library, or no ``mallopt``) it does nothing; results never depend
on it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import platform

__all__ = ["keep_freed_memory", "MMAP_THRESHOLD", "TRIM_THRESHOLD"]

#: Arrays up to this size come from the heap (glibc's largest mmap threshold, 32 MiB).
MMAP_THRESHOLD = 32 << 20
#: Freed heap memory up to this size is kept, not returned to the kernel.
TRIM_THRESHOLD = 1 << 30

_M_TRIM_THRESHOLD = -1      # mallopt parameters (malloc.h)
_M_MMAP_THRESHOLD = -3
_done = False


def keep_freed_memory() -> bool:
    """Raise glibc's mmap and trim thresholds once per process; whether they were set."""
    global _done
    if _done:
        return True
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    libc = ctypes.CDLL(name)
    _done = bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
                 and libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    return _done
