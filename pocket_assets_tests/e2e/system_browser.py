"""Where the Debian browser lives, and what is missing for the browser test (no selenium import here)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

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
