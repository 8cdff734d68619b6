"""One command at a time on an output folder: a second one waits for the first, and says so at once.

Two builds into the same output folder would each build the same PDFs, and each would find the
other's runs in the stage manifests and call its own PDFs failed; `forget` or `prune` in the middle
of a build would delete what the build is writing or the run it is recording. So `build`, `forget`
and `prune` hold an exclusive `flock` on a file in the output folder for their whole length; the
kernel releases it when the holder ends, however it ends (`kill -9` included). The holder writes
who it is into the file, so that the one waiting can say whom it waits for.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TextIO

LOCK_FILE = ".pocket-assets-command.lock"


@contextmanager
def holding_output_folder(output_dir: Path, command: str) -> Iterator[None]:
    """Hold the output folder for `command` (`build`, `forget`, `prune`), waiting for the command that holds it;
    the folder is made if missing. An `OSError` (a read-only or full disk) comes from making or opening it."""
    output_dir.mkdir(parents=True, exist_ok=True)
    with open(output_dir / LOCK_FILE, "a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(_waiting(handle, output_dir))
            fcntl.flock(handle, fcntl.LOCK_EX)
        handle.truncate(0)  # "a+": every write goes to the end, here the start
        handle.write(f"{os.getpid()} {datetime.now().isoformat(sep=' ', timespec='seconds')} {command}\n")
        handle.flush()
        try:
            yield
        finally:
            handle.truncate(0)
            fcntl.flock(handle, fcntl.LOCK_UN)


def _waiting(handle: TextIO, output_dir: Path) -> str:
    """What the waiting command says, naming the holder as it wrote itself in the file (nobody in the instant
    between its taking the lock and writing its name)."""
    handle.seek(0)
    pid, _, rest = handle.read().strip().partition(" ")
    when, _, command = rest.rpartition(" ")
    if not (pid.isdigit() and when and command):
        return f"another command holds {output_dir}; waiting…"
    return f"another {command} holds {output_dir} since {when} (pid {pid}); waiting…"
