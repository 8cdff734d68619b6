"""The build command holds the run's SQLite event databases open while the run writes to them."""

from __future__ import annotations

import logging
import uuid
from pathlib import Path

from dagster import AssetKey, AssetMaterialization, DagsterInstance, instance_for_test
from dagster._core.events import DagsterEvent, DagsterEventType, StepMaterializationData

from pocket_assets.defs.event_shards import event_log_held_open


def _store_materialization(instance: DagsterInstance, run_id: str, partition: str) -> None:
    event = DagsterEvent(
        event_type_value=DagsterEventType.ASSET_MATERIALIZATION.value,
        job_name="build_corpus",
        event_specific_data=StepMaterializationData(AssetMaterialization(AssetKey("pages"), partition=partition)),
    )
    instance.report_dagster_event(event, run_id, logging.DEBUG)


def test_events_between_stores_keep_the_write_ahead_log_and_all_are_stored() -> None:
    """Without a connection held, each event's last close checkpoints and deletes the run's WAL file."""
    with instance_for_test() as instance:
        run_id = str(uuid.uuid4())
        run_db = Path(instance.event_log_storage.path_for_shard(run_id))
        with event_log_held_open(instance, run_id):
            for partition in ("fr/a.pdf", "fr/b.pdf"):
                _store_materialization(instance, run_id, partition)
                assert run_db.with_name(run_db.name + "-wal").is_file()
        assert not run_db.with_name(run_db.name + "-wal").exists()  # the last close checkpoints as before
        stored = instance.get_records_for_run(run_id, of_type=DagsterEventType.ASSET_MATERIALIZATION).records
        assert [record.event_log_entry.dagster_event.partition for record in stored] == ["fr/a.pdf", "fr/b.pdf"]
