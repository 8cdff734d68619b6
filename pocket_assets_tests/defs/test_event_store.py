"""The build command's event log storage (`defs/event_store.py`): what Dagster shows is what its own
storage shows, a forked worker never uses its parent's connections, and another process (the UI's
webserver, with Dagster's own storage) may write to the same files at the same time."""

from __future__ import annotations

import logging
import multiprocessing
import os
import sqlite3
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import pytest
from alembic.config import Config
from alembic.script import ScriptDirectory
from dagster import AssetKey, AssetMaterialization, DagsterEventType, DagsterInstance
from dagster._core.events import DagsterEvent, DagsterEventBatchMetadata, StepMaterializationData
from dagster._core.instance.ref import InstanceRef
from dagster._core.storage.event_log import SqliteEventLogStorage
from dagster_graphql.test.utils import define_out_of_process_context, execute_dagster_graphql

import pocket_assets.defs.event_store as event_store
import pocket_assets.defs.instance_lock as instance_lock
from pocket_assets.cli import main
from pocket_assets.defs.event_store import RUN_ENGINES_KEPT, HeldSqliteEventLogStorage, build_instance_ref
from pocket_assets.runstate.stages import STAGES
from pocket_assets_tests.pdf_factory import REPO_ROOT, random_bytes_pdf, small_corpus

WHAT_THE_UI_SHOWS = """
query Shown($key: AssetKeyInput!) {
  assetNodeOrError(assetKey: $key) {
    ... on AssetNode {
      assetPartitionStatuses { ... on DefaultPartitionStatuses { materializedPartitions failedPartitions } }
    }
  }
  assetOrError(assetKey: $key) {
    ... on Asset {
      assetMaterializations {
        partition
        metadataEntries { label ... on IntMetadataEntry { intValue } ... on TextMetadataEntry { text } }
      }
    }
  }
}
"""
# What a run stores that is the same in every build of the same PDFs (not log lines, not timings).
COMPARED_EVENTS = {
    DagsterEventType.ASSET_MATERIALIZATION,
    DagsterEventType.ASSET_MATERIALIZATION_PLANNED,
    DagsterEventType.ASSET_FAILED_TO_MATERIALIZE,
    DagsterEventType.ASSET_CHECK_EVALUATION,
    DagsterEventType.STEP_SUCCESS,
    DagsterEventType.STEP_FAILURE,
    DagsterEventType.RUN_SUCCESS,
    DagsterEventType.RUN_FAILURE,
}


def test_what_dagster_shows_of_a_build_is_what_its_own_storage_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same build (two PDFs and a broken one), once with the build command's storage and once with
    Dagster's; each read back by Dagster's own storage, as the UI does: partitions, materializations
    and their metadata, the runs' asset, check, step and run events."""
    raw = tmp_path / "raw"
    small_corpus(raw)
    random_bytes_pdf(raw / "fr" / "zz-broken.pdf")
    shown = {}
    for storage in ("held", "dagster"):
        home = tmp_path / storage / "home"
        home.mkdir(parents=True)
        monkeypatch.setenv("DAGSTER_HOME", str(home))
        if storage == "dagster":
            monkeypatch.setattr(instance_lock, "build_instance_ref", InstanceRef.from_dir)
        else:
            with instance_lock.open_instance() as instance:
                assert isinstance(instance.event_log_storage, HeldSqliteEventLogStorage)
        assert main(["build", "--raw-dir", str(raw), "--output-dir", str(tmp_path / storage / "out")]) == 1
        shown[storage] = _what_dagster_shows()
    capsys.readouterr()
    assert shown["held"]["ui"]["raw_pdf"]["statuses"]["failedPartitions"] == ["fr/zz-broken.pdf"], "the test sees failures"
    assert shown["held"] == shown["dagster"]


def _what_dagster_shows() -> dict[str, object]:
    with DagsterInstance.get() as instance:
        assert type(instance.event_log_storage) is SqliteEventLogStorage, "read back as the UI reads"
        runs = instance.get_run_records()
        events: Counter[tuple[str, ...]] = Counter()
        for run in runs:
            for record in instance.get_records_for_run(run.dagster_run.run_id).records:
                event = record.event_log_entry.dagster_event
                if event is not None and event.event_type in COMPARED_EVENTS:
                    asset = event.asset_key.to_user_string() if event.asset_key else ""
                    events[(event.event_type_value, asset)] += 1
        with define_out_of_process_context(str(REPO_ROOT / "workspace.yaml"), None, instance) as context:
            ui = {stage.name: _asset_as_shown(context, stage.name) for stage in STAGES}
    return {"runs": sorted(str(run.dagster_run.status) for run in runs), "events": events, "ui": ui}


def _asset_as_shown(context: object, asset: str) -> dict[str, object]:
    result = execute_dagster_graphql(context, WHAT_THE_UI_SHOWS, {"key": {"path": [asset]}})
    assert not result.errors, result.errors
    statuses = result.data["assetNodeOrError"]["assetPartitionStatuses"]
    materializations = sorted(
        (
            event["partition"],
            sorted((entry["label"], entry.get("intValue", entry.get("text"))) for entry in event["metadataEntries"]),
        )
        for event in result.data["assetOrError"]["assetMaterializations"]
    )
    return {"statuses": statuses, "materializations": materializations}


@contextmanager
def _held_instance(home: Path) -> Iterator[DagsterInstance]:
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    with DagsterInstance.from_ref(build_instance_ref(str(home))) as instance:
        yield instance


def _store_materialization(instance: DagsterInstance, run_id: str, partition: str) -> None:
    event = DagsterEvent(
        event_type_value=DagsterEventType.ASSET_MATERIALIZATION.value,
        job_name="build_corpus",
        event_specific_data=StepMaterializationData(AssetMaterialization(AssetKey("pages"), partition=partition)),
    )
    instance.report_dagster_event(event, run_id, logging.DEBUG)


def _stored_partitions(instance: DagsterInstance, run_id: str) -> list[str]:
    records = instance.get_records_for_run(run_id, of_type=DagsterEventType.ASSET_MATERIALIZATION).records
    return [record.event_log_entry.dagster_event.partition for record in records]


def _store_in_child(instance: DagsterInstance, run_id: str, parents_engines: list[object]) -> None:
    """In a forked process: stores through engines of its own; the parent's are still as the parent left them."""
    _store_materialization(instance, run_id, "fr/child.pdf")
    storage = instance.event_log_storage
    assert all(engine.pool.checkedin() == 1 for engine in parents_engines), "the parent's connections untouched"
    own = [engine for (pid, _), engine in storage._engines.items() if pid == os.getpid()]
    assert own and all(engine not in parents_engines for engine in own)


def test_a_forked_worker_stores_events_through_its_own_connections(tmp_path: Path) -> None:
    with _held_instance(tmp_path) as instance:
        run_id = str(uuid.uuid4())
        _store_materialization(instance, run_id, "fr/a.pdf")
        parents_engines = list(instance.event_log_storage._engines.values())
        child = multiprocessing.get_context("fork").Process(target=_store_in_child, args=(instance, run_id, parents_engines))
        child.start()
        child.join()
        assert child.exitcode == 0
        _store_materialization(instance, run_id, "fr/b.pdf")
        assert _stored_partitions(instance, run_id) == ["fr/a.pdf", "fr/child.pdf", "fr/b.pdf"]
        kept = {id(engine) for engine in instance.event_log_storage._engines.values()}
        assert kept == {id(engine) for engine in parents_engines}, "the parent kept its engines, and knows no other"


def test_dagsters_own_storage_writes_to_the_same_files_between_its_events(tmp_path: Path) -> None:
    """The webserver or the daemon (Dagster's storage) and a build (this one) on the same instance at once."""
    with _held_instance(tmp_path) as held, DagsterInstance.from_ref(InstanceRef.from_dir(str(tmp_path))) as plain:
        run_id = str(uuid.uuid4())
        for index in range(3):
            _store_materialization(held, run_id, f"fr/held-{index}.pdf")
            _store_materialization(plain, run_id, f"fr/plain-{index}.pdf")
        expected = [f"fr/{who}-{index}.pdf" for index in range(3) for who in ("held", "plain")]
        assert _stored_partitions(held, run_id) == _stored_partitions(plain, run_id) == expected
        latest = plain.get_latest_materialization_event(AssetKey("pages"))
        assert latest is not None and latest.dagster_event.partition == "fr/plain-2.pdf", "the index shard too"
        for instance, synchronous in ((held, 1), (plain, 2)):  # NORMAL on the build's connections, FULL (SQLite's) on Dagster's
            with instance.event_log_storage.run_connection(run_id) as connection:
                assert connection.exec_driver_sql("PRAGMA synchronous").scalar() == synchronous


def test_a_long_lived_process_keeps_only_the_latest_runs_open(tmp_path: Path) -> None:
    with _held_instance(tmp_path) as instance:
        run_ids = [str(uuid.uuid4()) for _ in range(RUN_ENGINES_KEPT + 3)]
        for run_id in run_ids:
            _store_materialization(instance, run_id, "fr/a.pdf")
        assert {shard for _, shard in instance.event_log_storage._engines} == {"index", *run_ids[-RUN_ENGINES_KEPT:]}
        assert all(_stored_partitions(instance, run_id) == ["fr/a.pdf"] for run_id in run_ids), "a closed run reopens"


def test_a_dagster_yaml_may_name_the_storage_for_every_process_of_the_instance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What docs/operations.md gives for the UI, the daemon and the runs they launch; the build command keeps it."""
    (tmp_path / "dagster.yaml").write_text(
        "storage:\n  custom:\n    module: pocket_assets.defs.event_store\n    class: HeldSqliteStorage\n"
        "    config:\n      base_dir:\n        env: DAGSTER_HOME\n      synchronous: FULL\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    with DagsterInstance.get() as instance:
        assert isinstance(instance.event_log_storage, HeldSqliteEventLogStorage)
        with instance.event_log_storage.index_connection() as connection:
            assert connection.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL, as configured
        run_id = str(uuid.uuid4())
        _store_materialization(instance, run_id, "fr/a.pdf")
    assert build_instance_ref(str(tmp_path)) == InstanceRef.from_dir(str(tmp_path)), "left as configured"
    with DagsterInstance.from_ref(InstanceRef.from_dir(str(tmp_path))) as instance:
        assert _stored_partitions(instance, run_id) == ["fr/a.pdf"]


def test_a_batch_of_materializations_is_stored_as_one_by_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a step's result hands over together (DAGSTER_EVENT_BATCH_SIZE): the same rows in both databases,
    in the same order, as Dagster's storage stores event by event; the asset's latest record and tags too."""
    monkeypatch.setenv("DAGSTER_EVENT_BATCH_SIZE", "1000")
    batches: list[int] = []
    store_batch = HeldSqliteEventLogStorage.store_event_batch
    monkeypatch.setattr(
        HeldSqliteEventLogStorage, "store_event_batch", lambda self, events: store_batch(self, batches.append(len(events)) or events)
    )
    (tmp_path / "held").mkdir()
    (tmp_path / "plain").mkdir()
    stored = {}
    with _held_instance(tmp_path / "held") as held, DagsterInstance.from_ref(InstanceRef.from_dir(str(tmp_path / "plain"))) as plain:
        for name, instance in (("held", held), ("plain", plain)):
            run_id = "batch-run"
            partitions = [f"fr/{index}.pdf" for index in range(4)]
            for index, partition in enumerate(partitions):
                materialization = AssetMaterialization(AssetKey("pages"), partition=partition, tags={"dagster/data_version": str(index)})
                event = DagsterEvent(
                    event_type_value=DagsterEventType.ASSET_MATERIALIZATION.value,
                    job_name="build_corpus",
                    event_specific_data=StepMaterializationData(materialization),
                )
                batch = DagsterEventBatchMetadata("step", index == len(partitions) - 1)
                instance.report_dagster_event(event, run_id, logging.DEBUG, batch_metadata=batch, timestamp=1_000_000.0 + index)
            in_run = instance.get_records_for_run(run_id).records
            (asset,) = instance.get_asset_records([AssetKey("pages")])
            latest = asset.asset_entry.last_materialization_record
            stored[name] = {
                "run": [(record.storage_id, record.event_log_entry.dagster_event.partition) for record in in_run],
                "index": [
                    (record.storage_id, record.partition_key)
                    for record in instance.fetch_materializations(AssetKey("pages"), limit=10, ascending=True).records
                ],
                "latest": (latest.storage_id, latest.partition_key),
                "tags": instance.event_log_storage.get_latest_tags_by_partition(
                    AssetKey("pages"), DagsterEventType.ASSET_MATERIALIZATION, ["dagster/data_version"]
                ),
            }
    assert batches == [4], "the held storage got them as one batch"
    assert stored["held"]["run"] == [(index + 1, f"fr/{index}.pdf") for index in range(4)]
    assert stored["held"] == stored["plain"]


def test_every_database_is_stamped_at_dagsters_head_with_the_migration_scripts_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh instance's three databases and each run's own are stamped (schema checked, then
    written) from one reading of Dagster's alembic scripts, at the revision Dagster's own reading gives."""
    reads: list[Config] = []
    alembics_own = event_store._READ_SCRIPT_DIRECTORY

    def read(config: Config) -> ScriptDirectory:
        reads.append(config)
        return alembics_own(config)

    monkeypatch.setattr(event_store, "_SCRIPT_DIRECTORIES", {})
    monkeypatch.setattr(event_store, "_READ_SCRIPT_DIRECTORY", read)
    with _held_instance(tmp_path) as instance:
        for partition in ("fr/a.pdf", "fr/b.pdf"):
            _store_materialization(instance, str(uuid.uuid4()), partition)
    assert len(reads) == 1
    head = alembics_own(reads[0]).get_current_head()
    databases = sorted(tmp_path.rglob("*.db"))
    assert len(databases) == 5, "runs, schedules, the event index and two runs' event logs"
    for database in databases:
        with closing(sqlite3.connect(database)) as connection:
            assert connection.execute("SELECT version_num FROM alembic_version").fetchall() == [(head,)], database
