"""A long PDF's pages scanned over page ranges in several processes: the serial extraction's bytes, and the
serial extraction's errors (file and page), or the PDF's own error when a range's process dies; processes
start only on the cores the lender has idle, when it has them."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path

import pymupdf
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pocket_assets.core.extract as extract
from pocket_assets.core.errors import PdfError
from pocket_assets.core.extract import extract_pages
from pocket_assets.core.extract.page_ranges import page_ranges, scan_in_ranges
from pocket_assets.core.extract.scan import scan_pages
from pocket_assets.core.idle_cores import AllCores, IdleCores
from pocket_assets.core.records import to_dict
from pocket_assets_tests.pdf_factory import SAMPLE_RAW, text_pdf

LONG_PDF = SAMPLE_RAW / "intl" / "R-data.pdf"  # 41 pages: three ranges, unruled tables, running headers
TEST_PROCESS = os.getpid()  # forked processes inherit it, so they can tell they are not the test's process
_range_started = multiprocessing.get_context("fork").Event()


@given(st.integers(min_value=1, max_value=5000), st.integers(min_value=2, max_value=16))
def test_ranges_cover_every_page_once_in_order(page_count: int, workers: int) -> None:
    ranges = page_ranges(page_count, workers)
    assert [index for pages in ranges for index in pages] == list(range(page_count))
    assert all(len(pages) > 0 for pages in ranges)


def _pages_and_processes(document: pymupdf.Document, source: str, pages: range) -> list[tuple[int, int]]:
    """A scan standing for the real one: which process read which page. The test's process waits until a
    forked process has read a range, so both take part whatever the machine's load."""
    if os.getpid() == TEST_PROCESS:
        assert _range_started.wait(timeout=60), "no forked process took a range"
    else:
        _range_started.set()
    return [(index, os.getpid()) for index in pages]


def test_ranges_are_shared_with_forked_processes_and_come_back_in_page_order(tmp_path: Path) -> None:
    _range_started.clear()
    path = text_pdf(tmp_path / "long.pdf", [""] * 300)
    with pymupdf.open(path) as document:
        scanned = scan_in_ranges(path, document, _pages_and_processes, workers=3, cores=AllCores(2))
    assert [index for index, _ in scanned] == list(range(300))
    processes = {process for _, process in scanned}
    assert TEST_PROCESS in processes and len(processes) >= 2


class _IdleAfter:
    """A lender with no idle core for the first `asks` asks (its pool still had other PDFs), then one."""

    def __init__(self, asks: int) -> None:
        self.asks, self.lent = asks, 0

    def borrow(self, wanted: int) -> int:
        self.asks -= 1
        granted = min(wanted, 1) if self.asks < 0 and self.lent == 0 else 0
        self.lent += granted
        return granted

    def give_back(self, count: int) -> None:
        self.lent -= count


def _pages_in_processes(document: pymupdf.Document, source: str, pages: range) -> list[tuple[int, int]]:
    return [(index, os.getpid()) for index in pages]


@pytest.mark.parametrize("asks", [0, 3, 100])
def test_processes_start_only_once_the_lender_has_an_idle_core_and_give_it_back(tmp_path: Path, asks: int) -> None:
    path = text_pdf(tmp_path / "long.pdf", [""] * 200)
    cores = _IdleAfter(asks)
    with pymupdf.open(path) as document:
        scanned = scan_in_ranges(path, document, _pages_in_processes, workers=2, cores=cores)
    assert [index for index, _ in scanned] == list(range(200))
    ranges = page_ranges(200, 2)
    here = [pages for pages in ranges if {scanned[index][1] for index in pages} == {TEST_PROCESS}]
    assert ranges[: min(asks, len(ranges))] == here[: min(asks, len(ranges))], "no process while no core is idle"
    if asks >= len(ranges):
        assert here == ranges, "never an idle core: every range in the caller"
    assert cores.lent == 0


def test_cores_lent_by_the_pool_are_shared_with_forked_processes_and_given_back() -> None:
    cores = IdleCores()
    assert cores.borrow(1) == 0, "nothing idle while the pool has PDFs to start"
    cores.set_idle(1)
    context = multiprocessing.get_context("fork")
    borrowed = context.Value("i", -1)
    child = context.Process(target=lambda: setattr(borrowed, "value", cores.borrow(2)))
    child.start()
    child.join()
    assert borrowed.value == 1, "a worker gets the one idle core"
    assert cores.borrow(1) == 0, "lent already: another long PDF does not take it too"
    cores.give_back(1)
    assert cores.borrow(3) == 1
    cores.reset()
    assert cores.borrow(1) == 0


@pytest.mark.parametrize("workers", [2, 3])
def test_extraction_over_page_ranges_is_the_serial_extraction_byte_for_byte(workers: int) -> None:
    serial = extract_pages(LONG_PDF)
    split = extract_pages(LONG_PDF, workers=workers, split_pages=2)
    assert _bytes(split) == _bytes(serial)
    assert len(page_ranges(len(serial), workers)) >= 3


def test_a_short_pdf_is_not_split() -> None:
    assert extract_pages(LONG_PDF, workers=2, split_pages=42) == extract_pages(LONG_PDF)


def _with_unreadable_last_page(path: Path, pages: int) -> Path:
    """A PDF whose last page is a loop in its page tree: it opens, every other page reads, that one cannot."""
    document = pymupdf.open()
    for number in range(1, pages + 1):
        document.new_page().insert_text((72, 72), f"Page {number} of a long report.", fontsize=11)
    tree = document.xref_get_key(document.pdf_catalog(), "Pages")[1].split()[0]
    kids = document.xref_get_key(int(tree), "Kids")[1]
    document.xref_set_key(int(tree), "Kids", kids.replace(f"{document.page_xref(pages - 1)} 0 R", f"{tree} 0 R"))
    path.write_bytes(document.tobytes())
    return path


def test_a_page_that_cannot_be_read_in_a_range_process_fails_its_pdf_naming_file_and_page(tmp_path: Path) -> None:
    path = _with_unreadable_last_page(tmp_path / "long-report.pdf", 40)
    with pytest.raises(PdfError) as serial:
        extract_pages(path)
    with pytest.raises(PdfError) as split:
        extract_pages(path, workers=2, split_pages=2)
    assert (split.value.source, split.value.page) == ("long-report.pdf", 40)
    assert str(split.value) == str(serial.value) and str(serial.value).startswith("long-report.pdf, page 40: page cannot be read")
    assert any("raised in a worker process" in note for note in split.value.__notes__), "read by a range's process"


def _scan_dying_outside_the_test_process(
    document: pymupdf.Document, source: str, pages: range | None, **settings: object
) -> list:
    if os.getpid() != TEST_PROCESS:
        os._exit(11)  # as a crash inside MuPDF would end the process
    return scan_pages(document, source, pages, **settings)


def test_a_range_process_that_dies_fails_its_pdf_alone_naming_file_and_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extract, "scan_pages", _scan_dying_outside_the_test_process)
    with pytest.raises(PdfError) as died:
        extract_pages(LONG_PDF, workers=2, split_pages=2)
    assert died.value.source == "R-data.pdf" and died.value.page is None
    assert "the process reading pages" in str(died.value) and "-41 died" in str(died.value)
    monkeypatch.undo()
    assert extract_pages(LONG_PDF, workers=2, split_pages=2) == extract_pages(LONG_PDF), "the caller goes on"


def _bytes(pages) -> bytes:
    return json.dumps([to_dict(page) for page in pages], ensure_ascii=False, sort_keys=True).encode("utf-8")
