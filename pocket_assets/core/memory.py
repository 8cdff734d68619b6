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
import os
import sys

ARROW_POOL_ENV = "ARROW_DEFAULT_MEMORY_POOL"


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


def arrow_allocates_from_malloc() -> None:
    """Arrow's buffers from glibc's malloc, in this process and the ones it starts, unless
    `ARROW_DEFAULT_MEMORY_POOL` already names a pool. Called when `pocket_assets` is imported.

    The wheels' default pool (mimalloc) keeps the pages of buffers it freed: reading one long
    PDF's pages file left ~40 MiB behind in the process that read it, more with each read, and
    the Great Expectations process (pandas on Arrow) grew the same way, ~50 MiB over a 7,000-chunk
    PDF (issue 18). glibc's free pages go back with `return_freed_memory`. Not slower: reading,
    converting and writing back every stage file of the scale corpus took 3.9-4.3 s of CPU with
    it, 4.5-5.5 s with mimalloc. Arrow reads the variable when it first allocates, so a pyarrow
    imported earlier is also told directly (its C++ internals then keep their pool; few buffers).
    """
    if os.environ.get(ARROW_POOL_ENV):
        return
    os.environ[ARROW_POOL_ENV] = "system"
    pyarrow = sys.modules.get("pyarrow")
    if pyarrow is not None:
        pyarrow.set_memory_pool(pyarrow.system_memory_pool())
