"""The browser tests' shared fixtures: one headless Chromium per module, and where screenshots go."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pocket_assets_tests.e2e.system_browser import require_browser
from pocket_assets_tests.pdf_factory import REPO_ROOT

if TYPE_CHECKING:
    from pocket_assets_tests.e2e.browser import Browser


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    require_browser()
    from pocket_assets_tests.e2e.browser import headless_chromium  # selenium may be absent: checked just above

    with headless_chromium(tmp_path_factory.mktemp("chromium_profile")) as chromium:
        yield chromium


@pytest.fixture(scope="module")
def screenshots() -> Path:
    """`test-artifacts/screenshots/` (gitignored), or the folder named by POCKET_ASSETS_ARTIFACTS."""
    return Path(os.environ.get("POCKET_ASSETS_ARTIFACTS") or REPO_ROOT / "test-artifacts" / "screenshots")
