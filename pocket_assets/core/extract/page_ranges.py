"""A long PDF's pages scanned on idle cores: ranges of pages in forked processes and in the caller, in page order.

The scan of a page (its text dictionary, the table pre-filter, `find_tables()`)
depends on that page alone and is ~3/4 of extraction; the document-wide decisions
and the render that follow need every scan, in page order, and stay in the caller.
So a PDF of `split_pages` pages or more is cut into ranges, which the caller scans
from the first on. Before each range it asks its `CoreLender` (`core/idle_cores`) for
idle cores; once it gets some (and two ranges or more are left), that many forked
processes take the remaining ranges from the last, and each range's scans (lines and
tables: plain data) come back pickled. The caller takes a range only while no process
has started it, so the work is shared to within a range, and the scans are put back in
page order: the result is the serial scan's.

When cores are idle depends on who asks. A PDF built alone has every other core from
its first range. In a step's pool, a long PDF among many gets none while the pool has
other PDFs to start (the other workers are busy with them: a process more would share
their cores and add its memory), and the cores of workers left without a PDF once it
has none: the step's tail is then the long PDF's scan on every core, not on one.
Shorter PDFs are scanned in the caller alone: a few pages do not pay for a fork.

Failures are the serial scan's. A range's error is carried back and raised as
itself, and the first failing range in page order is the one raised, as the
serial loop would. A process that dies (a crash inside MuPDF) fails this PDF alone
with a `PdfError` naming the file and the pages that process could have been
reading; the caller goes on with other PDFs.

Forking from a process that was itself forked (a `pages` step worker) is allowed:
ProcessPoolExecutor's processes are not daemonic (Python 3.11). The children start
from the caller's memory (copy on write) and freeze the garbage collector over it so
they do not copy it by touching it. Each opens the PDF itself, once: the caller's
open document is inherited but never touched (MuPDF reads its file through that
document's own descriptor and offset, which a second reader would move).
"""

from __future__ import annotations

import gc
import math
import multiprocessing
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Callable, TypeVar

import pymupdf

from pocket_assets.core.carried_errors import CarriedError
from pocket_assets.core.errors import PdfError
from pocket_assets.core.idle_cores import CoreLender
from pocket_assets.core.pdf import open_pdf

Scan = TypeVar("Scan")
# (open PDF, its file name for errors, 0-based page indexes) -> one scan per page, in order
ScanRange = Callable[[pymupdf.Document, str, range], list[Scan]]

SPLIT_PAGES = 200  # a PDF with this many pages or more is scanned on idle cores too
RANGES_PER_WORKER = 8  # more ranges share the work more evenly (the caller waits at most one range)
MIN_RANGE_PAGES = 16

# In a range's process: the PDF it scans, opened once for the process's life (a 2,400-page PDF takes
# ~0.2 s to open), never the caller's document.
_document: pymupdf.Document | None = None


def page_ranges(page_count: int, workers: int) -> list[range]:
    """0-based page indexes cut into consecutive ranges, about `RANGES_PER_WORKER` per worker."""
    size = max(MIN_RANGE_PAGES, math.ceil(page_count / (workers * RANGES_PER_WORKER)))
    return [range(start, min(start + size, page_count)) for start in range(0, page_count, size)]


def scan_in_ranges(
    path: Path, document: pymupdf.Document, scan_range: ScanRange[Scan], workers: int, cores: CoreLender
) -> list[Scan]:
    """`scan_range(document, path.name, pages)` over all pages of `document` (the PDF at `path`, open in
    the caller), concatenated in page order: a range at a time here, and in up to `workers - 1` forked
    processes on the cores `cores` lends once it has some idle.

    `scan_range` must be picklable (a module-level function or a `functools.partial` of one).
    """
    ranges = page_ranges(document.page_count, workers)
    scans: list[Scan] = []
    for index, pages in enumerate(ranges):
        left = len(ranges) - index
        helpers = cores.borrow(min(workers - 1, left - 1)) if left >= 2 and workers > 1 else 0
        if helpers:
            try:
                return scans + _scan_with_helpers(path, document, scan_range, ranges[index:], helpers)
            finally:
                cores.give_back(helpers)
        scans += scan_range(document, path.name, pages)
    return scans


def _scan_with_helpers(
    path: Path, document: pymupdf.Document, scan_range: ScanRange[Scan], ranges: list[range], helpers: int
) -> list[Scan]:
    """The `ranges` scanned here from the first on and in `helpers` forked processes from the last, in order."""
    pool = ProcessPoolExecutor(
        max_workers=helpers,
        mp_context=multiprocessing.get_context("fork"),
        initializer=_open_in_range_process,
        initargs=(path,),
    )
    try:
        # The processes take ranges from the last one back; the caller takes them from the first on.
        futures = {
            index: pool.submit(_scan_carried, scan_range, path.name, ranges[index])
            for index in reversed(range(len(ranges)))
        }
        scans: list[Scan] = []
        taken = 0
        while taken < len(ranges) and futures[taken].cancel():
            scans += scan_range(document, path.name, ranges[taken])
            taken += 1
        for index in range(taken, len(ranges)):
            scans += _range_result(futures, ranges, index, path.name)
        return scans
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _range_result(futures: dict[int, Future], ranges: list[range], index: int, source: str) -> list:
    try:
        outcome = futures[index].result()
    except BrokenProcessPool:
        lost = [ranges[other] for other in range(index, len(ranges)) if _died(futures[other])]
        raise PdfError(
            source,
            f"the process reading pages {lost[0].start + 1}-{lost[-1].stop} died "
            "(a crash inside PyMuPDF on one of them?)",
        ) from None
    if isinstance(outcome, CarriedError):
        raise outcome.rebuild()
    return outcome


def _died(future: Future) -> bool:
    return isinstance(future.exception(), BrokenProcessPool)


def _open_in_range_process(path: Path) -> None:
    """A range process's start: what it inherited is frozen out of the garbage collector's reach (its
    passes would write to, so copy, every inherited object), then the PDF is opened for its own use."""
    global _document
    gc.freeze()
    _document = open_pdf(path)


def _scan_carried(scan_range: ScanRange[Scan], source: str, pages: range) -> list[Scan] | CarriedError:
    """Runs in a range process; an error comes back as a value, raised again by the caller."""
    assert _document is not None, "the process opened the PDF when it started"
    try:
        return scan_range(_document, source, pages)
    except Exception as error:
        return CarriedError.of(error)
