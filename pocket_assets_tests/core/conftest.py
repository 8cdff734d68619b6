"""Fixtures shared by the core tests."""

from __future__ import annotations

import pytest

from pocket_assets.core.quality.suites import Gates, load_gates
from pocket_assets_tests.core.test_validation import EXPECTATIONS_DIR


@pytest.fixture(scope="module")
def gates() -> Gates:
    """The shipped suites and schemas, loaded once per test module."""
    return load_gates(EXPECTATIONS_DIR)
