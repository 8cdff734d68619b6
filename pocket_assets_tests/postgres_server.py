"""A throwaway PostgreSQL server for the tests of the documented Postgres instance (deploy/postgres/dagster.yaml).

The server is started from the Debian `postgresql` binaries, on loopback with a
private socket folder, and removed afterwards. Without the binaries (or without
psycopg2 / dagster-postgres) the tests that need it are skipped, unless CI=true:
then the missing server is a failure. The fixture `postgres_server`
(pocket_assets_tests/conftest.py) yields the DAGSTER_PG_* variables the documented
dagster.yaml reads.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from pocket_assets_tests.pdf_factory import REPO_ROOT

DOCUMENTED_YAML = REPO_ROOT / "deploy" / "postgres" / "dagster.yaml"
SERVER_USER = "postgres"  # the Debian package's account; PostgreSQL refuses to run as root
DATABASE = "pocket_assets"


def skip_or_fail(reason: str) -> None:
    """Skip the test for a missing piece of the machine, except under CI=true, where it must be there."""
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


def postgres_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"))
    return Path(found[-1]).parent if found else None


def _as_server_user(command: list[str]) -> list[str]:
    return ["runuser", "-u", SERVER_USER, "--", *command] if os.geteuid() == 0 else command


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def require_postgres() -> Path:
    """The server binaries' folder, or skip (fail under CI) naming what is missing."""
    for module in ("psycopg2", "dagster_postgres"):
        if importlib.util.find_spec(module) is None:
            skip_or_fail(f"{module} is not installed (pip install -e '.[dev]')")
    bin_dir = postgres_bin()
    if bin_dir is None:
        skip_or_fail(
            "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin (apt-get install postgresql)"
        )
    assert bin_dir is not None
    return bin_dir


@contextmanager
def throwaway_postgres(bin_dir: Path) -> Iterator[dict[str, str]]:
    """Start a server with one empty database; yield the DAGSTER_PG_* variables; stop and delete it."""
    import psycopg2

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


def query(server: dict[str, str], sql: str) -> list[tuple]:
    """Rows of one statement, read straight from the server's tables."""
    import psycopg2

    connection = psycopg2.connect(
        host=server["DAGSTER_PG_HOST"], port=int(server["DAGSTER_PG_PORT"]), user="dagster", dbname=DATABASE
    )
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql)
            return cursor.fetchall()
    finally:
        connection.close()
