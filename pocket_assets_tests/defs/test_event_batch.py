"""`defs/event_batch.py`: a batch of asset events stored by the build command's storage leaves every row of
every table of the run's and the index database as Dagster's own storage leaves them storing the same events
one by one (`store_event`), storage ids included; batches it cannot store so fall back to one by one."""

from __future__ import annotations

import logging
import sqlite3
from contextlib import closing
from pathlib import Path

from dagster import AssetKey, AssetMaterialization, AssetObservation, DagsterEventType, StaticPartitionsDefinition
from dagster._core.definitions.events import (
    AssetMaterializationFailure,
    AssetMaterializationFailureReason,
    AssetMaterializationFailureType,
)
from dagster._core.events import (
    AssetFailedToMaterializeData,
    AssetMaterializationPlannedData,
    AssetObservationData,
    DagsterEvent,
    StepMaterializationData,
)
from dagster._core.events.log import EventLogEntry
from dagster._core.storage.event_log import SqliteEventLogStorage
from sqlalchemy import event as sqlalchemy_event

from pocket_assets.defs.event_store import HeldSqliteEventLogStorage

RUN_ID = "0f6d2c1e-run"
PARTITIONS = [f"fr/{index}.pdf" for index in range(5)]
# The clock's when the row is written, not the events': SQLite's CURRENT_TIMESTAMP, the schema's creation.
CLOCK_COLUMNS = {
    ("asset_keys", "create_timestamp"),
    ("secondary_indexes", "create_timestamp"),
    ("secondary_indexes", "migration_completed"),
}


def _entry(event_type: DagsterEventType, data: object, step_key: str, timestamp: float) -> EventLogEntry:
    event = DagsterEvent(
        event_type_value=event_type.value, job_name="build_corpus", event_specific_data=data, step_key=step_key
    )
    return EventLogEntry(
        error_info=None, level=logging.DEBUG, user_message="", run_id=RUN_ID, timestamp=timestamp,
        step_key=step_key, job_name="build_corpus", dagster_event=event,
    )


def _materialization(asset: str, partition: str, timestamp: float) -> EventLogEntry:
    tags = {"dagster/data_version": f"v-{partition}", "dagster/partition/language": "fr", "not_indexed": "x"}
    materialization = AssetMaterialization(
        AssetKey(asset), partition=partition, metadata={"rows": len(partition), "path": f"/out/{partition}"}, tags=tags
    )
    return _entry(DagsterEventType.ASSET_MATERIALIZATION, StepMaterializationData(materialization), asset, timestamp)


def _observation(asset: str, partition: str, timestamp: float) -> EventLogEntry:
    tags = {"dagster/data_version": "seen"}
    observation = AssetObservation(AssetKey(asset), partition=partition, tags=tags, metadata={"n": 1})
    return _entry(DagsterEventType.ASSET_OBSERVATION, AssetObservationData(observation), asset, timestamp)


def _planned(asset: str, timestamp: float) -> EventLogEntry:
    subset = StaticPartitionsDefinition(PARTITIONS).subset_with_partition_keys(PARTITIONS)
    data = AssetMaterializationPlannedData(AssetKey(asset), partitions_subset=subset)
    return _entry(DagsterEventType.ASSET_MATERIALIZATION_PLANNED, data, asset, timestamp)


def _failed(asset: str, partition: str, timestamp: float) -> EventLogEntry:
    failure = AssetMaterializationFailure(
        AssetKey(asset),
        AssetMaterializationFailureType.FAILED,
        AssetMaterializationFailureReason.FAILED_TO_MATERIALIZE,
        partition=partition,
    )
    return _entry(DagsterEventType.ASSET_FAILED_TO_MATERIALIZE, AssetFailedToMaterializeData(failure), asset, timestamp)


def _step_start(timestamp: float) -> EventLogEntry:
    return _entry(DagsterEventType.STEP_START, None, "pages", timestamp)


def _batches() -> list[list[EventLogEntry]]:
    """A build's: the run's planned events; steps' materializations of their PDFs (one failed, one asset new
    in the middle of a batch, observations between); again for assets the index knows; one batch with a step event."""
    clock = iter(1_700_000_000.0 + index / 8 for index in range(1000))
    return [
        [_planned(asset, next(clock)) for asset in ("chunks", "pages", "raw_pdf")],
        [_materialization("raw_pdf", partition, next(clock)) for partition in PARTITIONS],
        [
            _failed("pages", PARTITIONS[0], next(clock)),
            *[_materialization("pages", partition, next(clock)) for partition in PARTITIONS[1:3]],
            _observation("sources", PARTITIONS[1], next(clock)),
            _materialization("pages", PARTITIONS[3], next(clock)),
            _observation("pages", PARTITIONS[3], next(clock)),
            _failed("unplanned", PARTITIONS[4], next(clock)),
            _materialization("new_asset", PARTITIONS[4], next(clock)),
            _observation("sources", PARTITIONS[2], next(clock)),
        ],
        [_materialization("raw_pdf", partition, next(clock)) for partition in PARTITIONS[:2]],
        [_step_start(next(clock)), _materialization("chunks", PARTITIONS[0], next(clock))],
    ]


def _rows(folder: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every table of every database under `folder`, rows by rowid, clock columns blanked."""
    tables = {}
    for database in sorted(folder.glob("*.db")):
        with closing(sqlite3.connect(database)) as connection:
            names = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").fetchall()
            for (name,) in names:
                columns = [row[1] for row in connection.execute(f'PRAGMA table_info("{name}")')]
                selected = ", ".join("NULL" if (name, column) in CLOCK_COLUMNS else f'"{column}"' for column in columns)
                rows = connection.execute(f'SELECT rowid, {selected} FROM "{name}" ORDER BY rowid').fetchall()
                tables[f"{database.name}:{name}"] = rows
    return tables


def test_batches_leave_the_rows_dagster_leaves_storing_event_by_event(tmp_path: Path) -> None:
    held = HeldSqliteEventLogStorage(str(tmp_path / "held"))
    own = SqliteEventLogStorage(str(tmp_path / "own"))
    for batch in _batches():
        held.store_event_batch(batch)
        for event in batch:
            own.store_event(event)
    held.dispose()
    own.dispose()
    stored, expected = _rows(tmp_path / "held"), _rows(tmp_path / "own")
    assert stored == expected
    in_run, in_index = expected[f"{RUN_ID}.db:event_logs"], expected["index.db:event_logs"]
    assert len(in_run) == 21 == len(in_index) + 1, "all but the step event mirrored"
    keys = [row[2] for row in expected["index.db:asset_keys"]]
    assert keys == ['["chunks"]', '["pages"]', '["raw_pdf"]', '["sources"]', '["new_asset"]'], "none for only a failure"
    tags = expected["index.db:asset_event_tags"]
    assert len(tags) == 2 * 12 + 3, "two indexed tags a materialization, one an observation"


def test_a_batch_is_written_in_the_same_few_statements_whatever_its_size(tmp_path: Path) -> None:
    """Not two or three statements an event: a step of the scale corpus hands over hundreds."""
    storage = HeldSqliteEventLogStorage(str(tmp_path))
    storage.store_event_batch([_materialization("pages", "fr/first.pdf", 1_600_000_000.0)] * 2)  # databases created
    statements: list[str] = []
    for shard in ("index", RUN_ID):
        engine = storage._engine(shard)
        sqlalchemy_event.listen(engine, "before_cursor_execute", lambda *args: statements.append(args[2]))
    counts = []
    for size in (5, 50):
        statements.clear()
        storage.store_event_batch(
            [_materialization("pages", f"fr/{size}-{index}.pdf", 1_700_000_000.0 + index) for index in range(size)]
        )
        counts.append(len(statements))
    storage.dispose()
    assert counts[0] == counts[1] <= 7, statements
