"""The page gates lose nothing: every real fixture extracts to the same pages with and without them.

Two library calls run only where they can find something: `find_tables()` on pages whose drawings
hold crossing rules (`tables.may_hold_table`), OCR on pages without a text layer whose picture shows
ink (`ocr.shows_ink`). Here each gate is opened (its test answering yes everywhere) and every page
record of every fixture in `fixtures/real/` must be what it is behind the gate, while the gate is
seen to spare work. `benchmarks/bench_page_gates.py` does the same over all of `../shared`.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pymupdf
import pytest

from pocket_assets.core.extract import ExtractionOptions, extract_pages, scan
from pocket_assets.core.extract.ocr import INSTALL, PageOcr, shows_ink
from pocket_assets.core.records import to_dict

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
FIXTURES = sorted(REAL.glob("*.pdf"))


def _pages(options: ExtractionOptions) -> dict[str, list[dict[str, Any]]]:
    return {path.name: [to_dict(page) for page in extract_pages(path, options)] for path in FIXTURES}


def _counted(monkeypatch: pytest.MonkeyPatch, owner: type, name: str) -> list[str]:
    """A list that grows by one at each call of `owner.name` from now on."""
    calls: list[str] = []
    original: Callable[..., Any] = getattr(owner, name)

    def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(name)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(owner, name, counting)
    return calls


def test_the_table_prefilter_loses_no_table(monkeypatch: pytest.MonkeyPatch) -> None:
    options = ExtractionOptions(ocr=False)  # OCR'd pages have no text layer to find ruled tables in
    calls = _counted(monkeypatch, pymupdf.Page, "find_tables")
    gated = _pages(options)
    behind_the_gate = len(calls)
    monkeypatch.setattr(scan, "may_hold_table", lambda drawings, quarter_turned=False: True)
    assert _pages(options) == gated
    assert any(block["kind"] == "table" for pages in gated.values() for page in pages for block in page["blocks"])
    assert 0 < behind_the_gate < len(calls) - behind_the_gate


def test_the_ink_test_loses_no_ocr_text(monkeypatch: pytest.MonkeyPatch) -> None:
    if shutil.which("tesseract") is None and not os.environ.get("TESSDATA_PREFIX"):
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI installs Tesseract, but it is not installed ({INSTALL})")
        pytest.skip(f"Tesseract is not installed ({INSTALL})")
    calls = _counted(monkeypatch, PageOcr, "text")
    gated = _pages(ExtractionOptions())
    behind_the_gate = len(calls)
    monkeypatch.setattr(scan, "shows_ink", lambda page: True)
    assert _pages(ExtractionOptions()) == gated
    assert "Subtotal" in "".join(page["text"] for page in gated["scanned-table.pdf"])
    assert 0 < behind_the_gate < len(calls) - behind_the_gate


def test_a_scan_shows_ink_and_its_blank_margin_does_not() -> None:
    """The blank margin is a real scan's paper (JPEG noise, specks); a photograph shows ink, text or not."""
    for name, ink in (("scanned-table.pdf", True), ("photo-without-text.pdf", True), ("scanned-blank-margin.pdf", False)):
        with pymupdf.open(REAL / name) as document:
            assert shows_ink(document[0]) is ink, name
