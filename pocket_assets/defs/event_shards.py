"""Keep the run's SQLite event log files open while the build command's run writes to them.

On the local (SQLite) instance Dagster opens and closes a connection to the run's database, and
another to the index database, for every event it stores (`SqliteEventLogStorage._connect`:
NullPool). SQLite in WAL mode checkpoints the log into the database, syncs it and deletes it when
the *last* connection to a database closes, so each event paid that too: ~6 materializations per
PDF. One idle connection held here for the run makes every other close an ordinary one; nothing
else changes (the WAL is still checkpointed as it grows, and when this connection closes).
Measured alone (`benchmarks/README.md`, sixth session, planned): ~10 -> ~8 ms of CPU and ~13 -> ~9 ms
of wall per stored event on a quiet machine, more wall under load.
"""

from __future__ import annotations

import sqlite3
from contextlib import ExitStack, closing, contextmanager
from typing import Iterator

from dagster import DagsterInstance
from dagster._core.storage.event_log import SqliteEventLogStorage
from dagster._core.storage.event_log.sqlite.sqlite_event_log import INDEX_SHARD_NAME


@contextmanager
def event_log_held_open(instance: DagsterInstance, run_id: str) -> Iterator[None]:
    """While inside, the run's and the index's event databases each have one idle connection from
    here (created first, by Dagster, if new). Other storages (Postgres) are left as they are."""
    storage = instance.event_log_storage
    if not isinstance(storage, SqliteEventLogStorage):
        yield
        return
    # Dagster creates each database (schema, WAL mode) on its first connection; one at a time (one lock).
    with storage.run_connection(run_id):
        pass
    with storage.index_connection():
        pass
    with ExitStack() as held:
        for shard in (run_id, INDEX_SHARD_NAME):
            connection = held.enter_context(closing(sqlite3.connect(storage.path_for_shard(shard))))
            connection.execute("SELECT count(*) FROM sqlite_master").fetchall()  # joins the WAL: now a holder
        yield
