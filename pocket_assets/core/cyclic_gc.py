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


@contextmanager
def loaded_objects_frozen() -> Iterator[None]:
    """The objects alive on entry (a run's loaded libraries and resources: millions, none of them garbage
    yet) kept out of the collector's full collections inside, which then walk only what the block made;
    they rejoin the collector on leaving. Nested with a freeze of its own (`pdf_workers`), the first
    unfreeze ends both: the work after it pays full collections again, as before."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
