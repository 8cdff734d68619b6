"""Dagster's local (SQLite) storage, with each event database opened once per process, not once per event.

`SqliteEventLogStorage` builds a new SQLAlchemy engine for every connection it hands out and
disposes of it after (`_connect`: NullPool), and `has_table` builds yet another: a stored asset
materialization opened the run's database, then the index database, then the index again to ask
whether the tags table exists (~15 ms of CPU per materialization in the build's main process, 8 s
for the scale corpus). `HeldSqliteEventLogStorage` keeps one engine per database (shard) for the
life of the process, each with one pooled connection, and remembers the tables it has seen. What
is stored, and where, is unchanged: the same files, rows and schema, so the UI (a plain
`SqliteEventLogStorage` in `dagster dev`) reads what it wrote, and may write to the same files at
the same time (SQLite's locks and the busy timeout apply to pooled connections as to fresh ones).

A pooled connection idles between events; in WAL mode that also keeps SQLite from checkpointing
and deleting the log each time an event's connection closes (what `event_shards.py` did before).
An engine belongs to the process that made it: a forked worker (the steps' process pools) that
stores an event makes its own and never touches, closes or disposes of its parent's.

`HeldSqliteStorage` is Dagster's default `DagsterSqliteStorage` with this event log; the build
command opens its instance with it (`build_instance_ref`) when the instance is the default SQLite
one, and a dagster.yaml may name it (docs/operations.md).

Both read Dagster's alembic migration scripts once per process (`read_alembic_scripts_once`).
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from alembic.config import Config
from alembic.script import ScriptDirectory
from dagster import Field, StringSource
from dagster._core.events import ASSET_EVENTS
from dagster._core.events.log import EventLogEntry
from dagster._core.instance.ref import InstanceRef
from dagster._core.storage.base_storage import DagsterStorage
from dagster._core.storage.event_log import SqliteEventLogStorage
from dagster._core.storage.event_log.sqlite.sqlite_event_log import INDEX_SHARD_NAME
from dagster._core.storage.runs.sqlite.sqlite_run_storage import SqliteRunStorage
from dagster._core.storage.schedules.sqlite.sqlite_schedule_storage import SqliteScheduleStorage
from dagster._core.storage.sqlite import SQLITE_BUSY_TIMEOUT_SECONDS
from dagster._core.storage.sqlite_storage import (
    DagsterSqliteStorage,
    _event_logs_directory,
    _runs_directory,
    _schedule_directory,
)
from dagster._serdes import ConfigurableClassData
from dagster._utils import mkdir_p
from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, Engine

from pocket_assets.defs.event_batch import store_asset_event_batch

# SQLite's `synchronous` on this storage's connections (all in WAL mode, set by Dagster). NORMAL syncs the
# log at checkpoints, not at every commit: a commit survives the process crashing, and may be lost (the
# database stays sound) if the machine loses power or the OS crashes within the moment after it.
# docs/operations.md says why that fits an event log the build can redo, and how to keep FULL.
SYNCHRONOUS_MODES = ("NORMAL", "FULL", "EXTRA")
DEFAULT_SYNCHRONOUS = "NORMAL"

# Run databases kept open besides the index: a build writes to one run at a time; a long-lived process
# (webserver, daemon) reading many runs keeps only the latest ones open.
RUN_ENGINES_KEPT = 8


_READ_SCRIPT_DIRECTORY = ScriptDirectory.from_config  # alembic's own
# By the options of the config's main section (`script_location` and the like, already interpolated), less
# `here` (the ini file's folder): Dagster's three storages have one alembic.ini each, the same text.
_SCRIPT_DIRECTORIES: dict[tuple[tuple[str, str], ...], ScriptDirectory] = {}


def _script_directory_read_once(cls: type[ScriptDirectory], config: Config) -> ScriptDirectory:
    options = config.get_section(config.config_ini_section, {})
    key = tuple(sorted((name, value) for name, value in options.items() if name != "here"))
    directory = _SCRIPT_DIRECTORIES.get(key)
    if directory is None:
        directory = _SCRIPT_DIRECTORIES[key] = _READ_SCRIPT_DIRECTORY(config)
    return directory


def read_alembic_scripts_once() -> None:
    """From now on in this process, alembic's `ScriptDirectory.from_config` reads a migration folder
    once and hands out that one `ScriptDirectory` (whose revision map is then read once too).

    Dagster builds a new one, reading and executing its ~90 migration scripts (~25 ms of CPU), each
    time it checks or stamps a database's schema: twice for each of the three databases of a fresh
    `DAGSTER_HOME`, and twice for the database of every run (`SqliteEventLogStorage._initdb`). The
    scripts of the installed Dagster do not change while a process runs; a `ScriptDirectory` holds
    no connection (alembic passes that in the `Config`, which is not kept)."""
    if ScriptDirectory.__dict__["from_config"].__func__ is not _script_directory_read_once:
        ScriptDirectory.from_config = classmethod(_script_directory_read_once)  # type: ignore[method-assign,assignment]


class HeldSqliteEventLogStorage(SqliteEventLogStorage):
    """`SqliteEventLogStorage` with one engine (one pooled connection) per database and process."""

    def __init__(
        self, base_dir: str, inst_data: ConfigurableClassData | None = None, synchronous: str = DEFAULT_SYNCHRONOUS
    ):
        read_alembic_scripts_once()
        if synchronous not in SYNCHRONOUS_MODES:
            raise ValueError(f"synchronous: {synchronous!r} is not one of {', '.join(SYNCHRONOUS_MODES)}")
        self._synchronous = synchronous
        self._engines: OrderedDict[tuple[int, str], Engine] = OrderedDict()  # (pid, shard), least recently used first
        self._tables_seen: set[str] = set()
        self._asset_key_index_cols = False
        super().__init__(base_dir, inst_data)  # creates the index database on first use, through _connect

    @classmethod
    def from_config_value(
        cls, inst_data: ConfigurableClassData | None, config_value: Mapping[str, Any]
    ) -> HeldSqliteEventLogStorage:
        return cls(inst_data=inst_data, **config_value)

    @contextmanager
    def _connect(self, shard: str) -> Iterator[Connection]:
        """Dagster's `_connect` (one lock for all databases, schema created on first use, one
        transaction per use), on this process's engine for `shard`."""
        with self._db_lock:
            engine = self._engine(shard)
            if shard not in self._initialized_dbs:
                self._initdb(engine)
                self._initialized_dbs.add(shard)
            with engine.connect() as conn, conn.begin():
                yield conn

    def _engine(self, shard: str) -> Engine:
        key = (os.getpid(), shard)
        engine = self._engines.get(key)
        if engine is None:
            engine = create_engine(
                self.conn_string_for_shard(shard),
                pool_size=1,
                connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS},
            )
            event.listen(engine, "connect", self._set_synchronous)
            self._engines[key] = engine
            self._forget_old_run_engines()
        self._engines.move_to_end(key)
        return engine

    def _set_synchronous(self, dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.execute(f"PRAGMA synchronous={self._synchronous}")

    def _forget_old_run_engines(self) -> None:
        pid = os.getpid()
        runs = [key for key in self._engines if key[0] == pid and key[1] != INDEX_SHARD_NAME]
        for key in runs[: max(0, len(runs) - RUN_ENGINES_KEPT)]:
            self._engines.pop(key).dispose()

    def store_event_batch(self, events: Sequence[EventLogEntry]) -> None:
        """A step's materializations of its PDFs (and a run's planned events), which Dagster hands over
        together when `DAGSTER_EVENT_BATCH_SIZE` is set (the build command sets it): the same rows as
        `store_event` one by one, in one transaction per database and a few statements
        (`event_batch.py`). Anything else (other events, several runs) is stored one by one."""
        if len({event.run_id for event in events}) != 1 or not all(_is_asset_event(event) for event in events):
            super().store_event_batch(events)
            return
        store_asset_event_batch(self, events)

    def has_table(self, table_name: str) -> bool:
        """Dagster asks this for every stored asset event (and builds an engine to answer); a table
        once there stays (a missing one is asked again: a migration may add it)."""
        if table_name not in self._tables_seen and super().has_table(table_name):
            self._tables_seen.add(table_name)
        return table_name in self._tables_seen

    def _has_asset_key_index_cols_on_connection(self, conn: Connection) -> bool:
        """Asked (by reading the table's columns) for every stored asset event; columns once there stay."""
        if not self._asset_key_index_cols:
            self._asset_key_index_cols = super()._has_asset_key_index_cols_on_connection(conn)
        return self._asset_key_index_cols

    def _dispose_engines(self) -> None:
        """This process's engines; a parent's (after a fork) are left alone, they are not ours to close."""
        pid = os.getpid()
        for key in [key for key in self._engines if key[0] == pid]:
            self._engines.pop(key).dispose()

    def wipe(self) -> None:
        self._dispose_engines()  # wipe deletes the run databases' files: no connection may outlive them
        super().wipe()

    def dispose(self) -> None:
        self._dispose_engines()
        super().dispose()


def _is_asset_event(event: EventLogEntry) -> bool:
    dagster_event = event.dagster_event
    return dagster_event is not None and dagster_event.event_type in ASSET_EVENTS and dagster_event.asset_key is not None


class HeldSqliteStorage(DagsterSqliteStorage):
    """Dagster's default local storage (`DagsterSqliteStorage`, same folders) with `HeldSqliteEventLogStorage`."""

    def __init__(
        self, base_dir: str, inst_data: ConfigurableClassData | None = None, synchronous: str = DEFAULT_SYNCHRONOUS
    ):
        read_alembic_scripts_once()
        self.base_dir = base_dir
        self._run_storage = SqliteRunStorage.from_local(_runs_directory(base_dir))
        self._event_log_storage = HeldSqliteEventLogStorage(
            _event_logs_directory(base_dir), synchronous=synchronous
        )
        self._schedule_storage = SqliteScheduleStorage.from_local(_schedule_directory(base_dir))
        self._inst_data = inst_data
        DagsterStorage.__init__(self)

    @classmethod
    def config_type(cls) -> dict[str, Field]:
        return {
            "base_dir": Field(StringSource),
            "synchronous": Field(str, is_required=False, default_value=DEFAULT_SYNCHRONOUS),
        }

    @classmethod
    def from_config_value(
        cls, inst_data: ConfigurableClassData | None, config_value: Mapping[str, Any]
    ) -> HeldSqliteStorage:
        mkdir_p(config_value["base_dir"])
        synchronous = config_value.get("synchronous", DEFAULT_SYNCHRONOUS)
        return cls(config_value["base_dir"], inst_data=inst_data, synchronous=synchronous)


DAGSTER_SQLITE_STORAGE = ("dagster._core.storage.sqlite_storage", "DagsterSqliteStorage")  # module, class


def build_instance_ref(home: str) -> InstanceRef:
    """The instance of `home`'s dagster.yaml, with `HeldSqliteStorage` when its storage is Dagster's
    default local one (no `storage` setting, or `storage: sqlite`); any other storage as configured."""
    ref = InstanceRef.from_dir(home)
    storage = ref.storage_data
    if storage is None or (storage.module_name, storage.class_name) != DAGSTER_SQLITE_STORAGE:
        return ref
    return ref._replace(storage_data=ConfigurableClassData(__name__, HeldSqliteStorage.__name__, storage.config_yaml))
