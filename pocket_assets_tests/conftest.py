import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from pocket_assets_tests.pdf_factory import SAMPLE_RAW
from pocket_assets_tests.postgres_server import require_postgres, throwaway_postgres


@pytest.fixture
def raw_dir(tmp_path: Path) -> Path:
    """A private copy of the shipped sample corpus, free to add to and break."""
    target = tmp_path / "raw"
    shutil.copytree(SAMPLE_RAW, target)
    return target


@pytest.fixture(scope="module")
def postgres_server() -> Iterator[dict[str, str]]:
    """A throwaway PostgreSQL server with an empty database (postgres_server.py); yields the DAGSTER_PG_*
    variables the documented dagster.yaml reads. Skipped without the server binaries, except under CI=true."""
    with throwaway_postgres(require_postgres()) as server:
        yield server
