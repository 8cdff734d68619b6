import gc
import shutil
import sys
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


@pytest.fixture(autouse=True)
def no_dagster_instance_left_entered() -> Iterator[None]:
    """Fails the test that leaves a Dagster instance entered and gone (a sensor or schedule context built without
    `with`): Dagster binds process-wide state to the instance last entered, and the tests after it would fail,
    depending on their order, with "Attempted to resolve undefined DagsterInstance weakref"."""
    yield
    if "dagster" not in sys.modules:
        return
    from dagster._core.storage.defs_state.base import DefsStateStorage

    storage = DefsStateStorage.get()
    if storage is None:
        return
    gc.collect()  # an instance left entered lives as long as the context that entered it
    reference = getattr(storage, "_instance_weakref", None)
    assert reference is None or reference() is not None, "an instance entered by this test was never exited"
