"""The cyclic garbage collector paused over work that allocates much and makes no reference cycles.

Python's collector runs every few hundred container allocations, and now and then
walks every object the process holds. Extraction allocates a page's text dictionary
(thousands of span dicts and tuples) per page and keeps what it reads of every page
until the document is rendered: on a 2,400-page manual the collector ran ~1,350 times
and walked the growing scans nine times, ~8 % of the extraction's CPU, and found
nothing to free (its objects hold no cycles: the dicts, lines and records are trees,
freed by reference counting as soon as they are dropped). Paused over one document,
the same work leaves the same objects; the collector runs again as before afterwards.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_cyclic_gc() -> Iterator[None]:
    """No automatic collection inside; the collector's state (on, or off already) is restored on leaving."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
