"""Atomic file writes: a temp file in the same folder, fsync, then rename over the target.

A crash at any point leaves either the previous file or the new one, never half of one.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterator

_FILE_MODE = 0o644


@contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """Yield a temp path to write; it replaces `target` only if the block succeeds."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(handle)
    temp = Path(temp_name)
    os.chmod(temp, _FILE_MODE)  # mkstemp makes 0600; outputs are meant to be read by others
    try:
        yield temp
        with temp.open("rb+") as written:
            os.fsync(written.fileno())
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)


@contextmanager
def atomic_open(target: Path) -> Iterator[BinaryIO]:
    with atomic_path(target) as temp, temp.open("wb") as handle:
        yield handle


def write_bytes_atomic(target: Path, data: bytes) -> None:
    with atomic_open(target) as handle:
        handle.write(data)
