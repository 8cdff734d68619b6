"""The documented Postgres instance (deploy/postgres/dagster.yaml) against a real PostgreSQL server.

The server is started here from the Debian `postgresql` binaries, on loopback
with a private socket folder, and removed afterwards. Without the binaries the
test is skipped, unless CI=true (then the missing server is an error).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Iterator

import pytest
from dagster import AssetKey, DagsterInstance, DagsterRunStatus

from pocket_assets.core.pdf import discover_pdfs
from pocket_assets.runstate.storage import STATUS_OK, PartitionStore
from pocket_assets.defs.cli_build import run_build
from pocket_assets.defs.jobs import BUILD_CORPUS
from pocket_assets.defs.ranges import run_tags
from pocket_assets_tests.pdf_factory import REPO_ROOT
from pocket_assets.runstate.stages import VALIDATED_CHUNKS

psycopg2 = pytest.importorskip("psycopg2")
pytest.importorskip("dagster_postgres")

DOCUMENTED_YAML = REPO_ROOT / "deploy" / "postgres" / "dagster.yaml"
SERVER_USER = "postgres"  # the Debian package's account; PostgreSQL refuses to run as root
DATABASE = "pocket_assets"


def _postgres_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"))
    return Path(found[-1]).parent if found else None


def _as_server_user(command: list[str]) -> list[str]:
    return ["runuser", "-u", SERVER_USER, "--", *command] if os.geteuid() == 0 else command


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def postgres_server() -> Iterator[dict[str, str]]:
    """A throwaway server; yields the DAGSTER_PG_* variables the documented dagster.yaml reads."""
    bin_dir = _postgres_bin()
    if bin_dir is None:
        reason = "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin (apt-get install postgresql)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    base = Path(tempfile.mkdtemp(prefix="pocket-assets-pg-"))
    if os.geteuid() == 0:
        shutil.chown(base, user=SERVER_USER)
    data, sockets, log = base / "data", base / "sockets", base / "server.log"
    port = _free_port()
    subprocess.run(
        _as_server_user(
            [str(bin_dir / "initdb"), "-D", str(data), "-U", "dagster", "-A", "trust", "-E", "UTF8", "--no-sync"]
        ),
        check=True,
        capture_output=True,
    )
    subprocess.run(_as_server_user(["mkdir", str(sockets)]), check=True)
    options = f"-h 127.0.0.1 -p {port} -k {sockets} -c fsync=off -c full_page_writes=off"
    subprocess.run(
        _as_server_user([str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options, "-w", "start"]),
        check=True,
        capture_output=True,
    )
    try:
        connection = psycopg2.connect(host="127.0.0.1", port=port, user="dagster", dbname="postgres")
        connection.autocommit = True
        with connection.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE {DATABASE}")
        connection.close()
        yield {
            "DAGSTER_PG_HOST": "127.0.0.1",
            "DAGSTER_PG_PORT": str(port),
            "DAGSTER_PG_DB": DATABASE,
            "DAGSTER_PG_USERNAME": "dagster",
            "DAGSTER_PG_PASSWORD": "",
        }
    finally:
        subprocess.run(
            _as_server_user([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]), capture_output=True
        )
        shutil.rmtree(base, ignore_errors=True)


def _query(server: dict[str, str], sql: str) -> list[tuple]:
    connection = psycopg2.connect(
        host=server["DAGSTER_PG_HOST"], port=int(server["DAGSTER_PG_PORT"]), user="dagster", dbname=DATABASE
    )
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql)
            return cursor.fetchall()
    finally:
        connection.close()


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
