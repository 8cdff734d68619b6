"""Atomic file writes: a temp file in the same folder, fsync, then rename over the target.

A crash at any point leaves either the previous file or the new one, never half of one.
The temp file's name says which host and process wrote it (`.<name>.<host>~<pid>.<random>.tmp`),
so that a later build can tell a killed build's leftovers from another build's work in progress.
"""

from __future__ import annotations

import os
import re
import socket
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterator

_FILE_MODE = 0o644


@contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """Yield a temp path to write; it replaces `target` only if the block succeeds."""
    target.parent.mkdir(parents=True, exist_ok=True)
    owner = f"{this_host()}~{os.getpid()}"
    handle, temp_name = tempfile.mkstemp(prefix=f".{target.name}.{owner}.", suffix=".tmp", dir=target.parent)
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


def this_host() -> str:
    """This machine's name as temp file names hold it (no dots)."""
    return socket.gethostname().replace(".", "-")


_OWNER = re.compile(r"\.([^.~/]+)~(\d+)\.[^.]+\.tmp$")


def temp_owner(name: str) -> tuple[str, int] | None:
    """The (host, pid) that wrote an `atomic_path` temp file, from its name; None for another name."""
    match = _OWNER.search(name)
    return (match.group(1), int(match.group(2))) if match else None
