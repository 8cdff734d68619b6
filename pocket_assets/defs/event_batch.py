"""A batch of one run's asset events, stored with the rows Dagster's `SqliteEventLogStorage.store_event`
writes for them one by one, in fewer statements.

One by one, each event costs: its row in the run's database; the same row in the index database (whose id
is the event's storage id there), its indexed tags, and an INSERT of the asset's `asset_keys` row that fails
on the key once the asset is known, then an UPDATE, which serializes the whole event a second time for a
materialization (`last_materialization`). A step of the build hands over its materializations of all its
PDFs (and the run its planned events) at once, mostly of one asset: the event rows go in one `executemany`
per database, the tags in one, and each asset's row is written once, with the columns its events leave it:
each column as the last event that sets it sets it (Dagster's `_get_asset_entry_values`, asked only of the
last event of each type), inserted, if new, in the order one by one inserts it (at the asset's first event
that sets anything).

The index's event ids are those one by one gives: SQLite gives a row of `event_logs` (`INTEGER PRIMARY
KEY`, no AUTOINCREMENT) the largest id plus one, and the transaction holds the database's write lock from
its first INSERT, so the batch's rows get consecutive ids ending at `last_insert_rowid()`.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter
from typing import Any

import sqlalchemy.exc as db_exc
from dagster._core.events.log import EventLogEntry
from dagster._core.storage.event_log import SqliteEventLogStorage
from dagster._core.storage.event_log.schema import AssetKeyTable, SqlEventLogStorageTable
from sqlalchemy.engine import Connection


def store_asset_event_batch(storage: SqliteEventLogStorage, events: Sequence[EventLogEntry]) -> None:
    """`events` (one run's, each an asset event with an asset key) stored as `storage.store_event` would, in order."""
    rows = [storage._event_to_row(event) for event in events]
    insert = SqlEventLogStorageTable.insert()
    with storage.run_connection(events[0].run_id) as conn:
        conn.execute(insert, rows)
    with storage.index_transaction() as conn:
        conn.execute(insert, rows)
        last_id = conn.exec_driver_sql("SELECT last_insert_rowid()").scalar_one()
        event_ids = list(range(last_id - len(rows) + 1, last_id + 1))
        storage._store_asset_event_tags(conn, events, event_ids)
        for asset_key, values in _asset_entries(storage, conn, events, event_ids):
            _write_asset_entry(conn, asset_key, values)


def _asset_entries(
    storage: SqliteEventLogStorage, conn: Connection, events: Sequence[EventLogEntry], event_ids: Sequence[int]
) -> list[tuple[str, dict[str, Any]]]:
    """Per asset (its key's string), the `asset_keys` columns storing `events` one by one leaves set, the
    assets in the order one by one first writes their rows; assets whose events set nothing left out."""
    has_index_cols = storage._has_asset_key_index_cols_on_connection(conn)
    firsts: dict[tuple[str, str], int] = {}  # (asset, event type): position of its first and last event
    lasts: dict[tuple[str, str], int] = {}
    for position, event in enumerate(events):
        dagster_event = event.get_dagster_event()
        kind = (dagster_event.asset_key.to_string(), dagster_event.event_type_value)  # type: ignore[union-attr]
        firsts.setdefault(kind, position)
        lasts[kind] = position
    columns: dict[str, dict[str, Any]] = {}
    first_written: dict[str, int] = {}
    for (asset, event_type), position in sorted(lasts.items(), key=itemgetter(1)):
        values = storage._get_asset_entry_values(events[position], event_ids[position], has_index_cols)
        if values:  # which columns an event sets depends on its type alone
            columns.setdefault(asset, {}).update(values)
            first_written[asset] = min(first_written.get(asset, position), firsts[(asset, event_type)])
    return [(asset, columns[asset]) for asset in sorted(columns, key=first_written.__getitem__)]


def _write_asset_entry(conn: Connection, asset_key: str, values: dict[str, Any]) -> None:
    """Dagster's `_store_asset_event`: the asset's row inserted, or updated when the key is there."""
    try:
        conn.execute(AssetKeyTable.insert().values(asset_key=asset_key, **values))
    except db_exc.IntegrityError:
        conn.execute(AssetKeyTable.update().values(**values).where(AssetKeyTable.c.asset_key == asset_key))
