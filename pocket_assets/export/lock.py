"""One export of an output folder at a time.

Two builds may overlap (two `pocket-assets build`, or a build and the UI). Each
export reads the previous export and redirect history and writes the next, so
two at once could both start from the same history and the second would drop
what the first recorded; and removing a killed export's temp files is only
safe when no other export is writing its own. An exclusive `flock` on a file in
the output folder serializes them; the kernel releases it if the process dies.
"""

from __future__ import annotations

import fcntl
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

LOCK_FILE = ".pocket-assets-export.lock"


@contextmanager
def export_lock(out_dir: Path) -> Iterator[None]:
    out_dir.mkdir(parents=True, exist_ok=True)
    with open(out_dir / LOCK_FILE, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
