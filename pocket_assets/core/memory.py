"""Give freed heap back to the system, so a long build's processes stay the size of what they hold.

glibc's allocator keeps freed memory mapped (below the heap's top, and in the arenas of
threads such as the tokenizer's); a process that once parsed a 33 MB tokenizer JSON, read
the vocabulary, or held one big PDF's rows stays that big for the rest of the run unless
told otherwise. `malloc_trim(0)` returns every free page; it costs ~0.2 ms on a build
process's heap, so the per-PDF loops call it after each PDF.
"""

from __future__ import annotations

import ctypes
import functools


def return_freed_memory() -> None:
    """`malloc_trim(0)`: a no-op where there is no glibc."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> ctypes._CFuncPtr | None:
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None
