"""Open the Dagster instance of `DAGSTER_HOME` one process at a time.

A fresh local (SQLite) instance creates its schema when first opened: two `pocket-assets build`
started together on a new `DAGSTER_HOME` race on it, and one dies with `sqlite3.IntegrityError:
UNIQUE constraint failed: alembic_version.version_num` (docs/operations.md). Once open, concurrent
runs are fine, so the lock is held only while opening.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from dagster import DagsterInstance

LOCK_FILE = ".pocket-assets-instance.lock"


def open_instance() -> DagsterInstance:
    home = os.environ.get("DAGSTER_HOME")
    if not home or not Path(home).is_absolute() or not Path(home).is_dir():
        return DagsterInstance.get()  # Dagster's own message says what is missing
    with open(Path(home) / LOCK_FILE, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return DagsterInstance.get()
