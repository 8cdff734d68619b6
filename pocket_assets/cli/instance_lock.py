"""Open the Dagster instance of `DAGSTER_HOME` one process at a time.

A fresh local (SQLite) instance creates its schema when first opened: two `pocket-assets build`
started together on a new `DAGSTER_HOME` race on it, and one dies with `sqlite3.IntegrityError:
UNIQUE constraint failed: alembic_version.version_num` (docs/operations.md). Once open, concurrent
runs are fine, so the lock is held only while opening.

The build's runs leave their stdout and stderr uncaptured (`capture_logs=False`): they run in the
command's own process, whose output goes to the terminal already, and Dagster's local capture
mirrors each run's log file back to it through a `tail -F` child, which a watcher process ends when
the command dies, except when it dies before the watcher started: that `tail` then never ends. The
instance is the same (same storage, same runs) with the compute log manager Dagster documents for
not capturing, `NoOpComputeLogManager`.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from dagster import DagsterInstance

LOCK_FILE = ".pocket-assets-instance.lock"
NO_LOG_CAPTURE = {
    "compute_logs": {"module": "dagster.core.storage.noop_compute_log_manager", "class": "NoOpComputeLogManager"}
}


def open_instance(capture_logs: bool = True) -> DagsterInstance:
    """The instance of `DAGSTER_HOME`, as `dagster.yaml` configures it; its runs' output is not captured when
    `capture_logs` is False."""
    home = os.environ.get("DAGSTER_HOME")
    if not home or not Path(home).is_absolute() or not Path(home).is_dir():
        return DagsterInstance.get()  # Dagster's own message says what is missing
    with open(Path(home) / LOCK_FILE, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return DagsterInstance.get() if capture_logs else DagsterInstance.local_temp(home, overrides=NO_LOG_CAPTURE)
