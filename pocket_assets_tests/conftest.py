import shutil
from pathlib import Path

import pytest

from pocket_assets_tests.pdf_factory import SAMPLE_RAW


@pytest.fixture
def raw_dir(tmp_path: Path) -> Path:
    """A private copy of the shipped sample corpus, free to add to and break."""
    target = tmp_path / "raw"
    shutil.copytree(SAMPLE_RAW, target)
    return target
