"""The documented Postgres instance (deploy/postgres/dagster.yaml) against a real PostgreSQL server.

The server is the throwaway one of `pocket_assets_tests/postgres_server.py` (the `postgres_server`
fixture): started from the Debian `postgresql` binaries, on loopback with a private socket folder,
removed afterwards; without the binaries the test is skipped, unless CI=true (then it fails).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from dagster import AssetKey, DagsterInstance, DagsterRunStatus

from pocket_assets.cli.build import run_build
from pocket_assets.core.raw_folder import discover_pdfs
from pocket_assets.defs.jobs import BUILD_CORPUS
from pocket_assets.defs.ranges import run_tags
from pocket_assets.stages.registry import VALIDATED_CHUNKS
from pocket_assets.stages.store import STATUS_OK, PartitionStore
from pocket_assets_tests.postgres_server import DOCUMENTED_YAML
from pocket_assets_tests.postgres_server import query as _query


def test_build_and_backfill_on_postgres(
    postgres_server: dict[str, str], raw_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(DOCUMENTED_YAML, home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    for name, value in postgres_server.items():
        monkeypatch.setenv(name, value)
    out = tmp_path / "out"
    keys = discover_pdfs(raw_dir)
    assert keys == ["fr/f-array.pdf", "fr/faq.pdf", "intl/R-data.pdf"]

    subset = ["fr/faq.pdf", "intl/R-data.pdf"]
    # Entering an instance binds Dagster's process-wide definitions-state storage, which instances of
    # earlier tests' fixtures left bound to their deleted SQLite files; bind it to this Postgres instance.
    with DagsterInstance.get():
        assert run_build([], [], False, str(raw_dir), str(out)) == 0
        assert run_build(subset, [], False, str(raw_dir), str(out)) == 0

    with DagsterInstance.get() as instance:
        assert type(instance.run_coordinator).__name__ == "QueuedRunCoordinator"
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        records = sorted(instance.get_run_records(), key=lambda record: record.create_timestamp)
        assert [record.dagster_run.status for record in records] == [DagsterRunStatus.SUCCESS] * 4, "two builds, two exports"
        full, backfill = (record.dagster_run for record in records if record.dagster_run.job_name == BUILD_CORPUS)
        assert full.tags == run_tags(keys)
        assert backfill.tags == run_tags(subset)
        assert instance.get_materialized_partitions(AssetKey("validated_chunks")) == set(keys)
        android = instance.get_latest_materialization_event(AssetKey("android_export"))
        assert android is not None and android.run_id == records[-1].dagster_run.run_id

    store_runs = {key: _manifest_run(out, key) for key in keys}
    assert store_runs == {
        "fr/f-array.pdf": full.run_id,
        "fr/faq.pdf": backfill.run_id,
        "intl/R-data.pdf": backfill.run_id,
    }
    assert (out / "chunks_fr.txt").stat().st_size > 0 and (out / "chunks_intl.txt").stat().st_size > 0

    # The same facts, read straight from the server's tables.
    assert _query(postgres_server, "SELECT count(*) FROM runs WHERE status = 'SUCCESS'") == [(4,)]
    per_run = dict(
        _query(
            postgres_server,
            "SELECT run_id, count(*) FROM event_logs WHERE dagster_event_type = 'ASSET_MATERIALIZATION' "
            "AND asset_key = '[\"validated_chunks\"]' GROUP BY run_id",
        )
    )
    assert per_run == {full.run_id: 3, backfill.run_id: 2}


def _manifest_run(out: Path, key: str) -> str | None:
    manifest = PartitionStore(out / "stages").manifest(VALIDATED_CHUNKS, key)
    assert manifest is not None and manifest.status == STATUS_OK
    return manifest.run_id
