import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from pocket_assets.cli import SUBSET_PLANNED_EVENTS
from pocket_assets_tests.pdf_factory import SAMPLE_RAW


@pytest.fixture(autouse=True, scope="session")
def planned_events_as_users_get_them() -> Iterator[None]:
    """Runs the tests create plan one materialization per asset, as those `pocket-assets` and Dagster's
    commands in the project folder (`.env`) create; a test may still set it otherwise."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(SUBSET_PLANNED_EVENTS, os.environ.get(SUBSET_PLANNED_EVENTS, "1"))
        yield


@pytest.fixture
def raw_dir(tmp_path: Path) -> Path:
    """A private copy of the shipped sample corpus, free to add to and break."""
    target = tmp_path / "raw"
    shutil.copytree(SAMPLE_RAW, target)
    return target
