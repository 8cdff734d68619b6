"""Where the Debian browser lives, and what is missing for the browser test (no selenium import here)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

# Debian packages `chromium` and `chromium-driver`; nothing is ever downloaded.
CHROMIUM_BINARY = Path("/usr/bin/chromium")
CHROMEDRIVER_BINARY = Path("/usr/bin/chromedriver")


def missing_browser_parts() -> list[str]:
    """Empty when the browser test can run here; otherwise what to install."""
    missing = [
        f"{path} (apt-get install chromium chromium-driver)"
        for path in (CHROMIUM_BINARY, CHROMEDRIVER_BINARY)
        if not path.exists()
    ]
    if importlib.util.find_spec("selenium") is None:
        missing.append("selenium (pip install -e '.[dev]')")
    return missing


def require_browser() -> None:
    """Skip the test without the browser, except under CI=true, where a skipped browser test would hide a broken UI."""
    missing = missing_browser_parts()
    if not missing:
        return
    reason = f"browser test needs {', '.join(missing)}"
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)
