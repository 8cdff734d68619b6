"""The `pages` step with long PDFs scanned over page ranges on the cores the pool leaves idle: the serial
step's bytes; no range process while the pool has other PDFs to build, one once a worker has nothing left;
a range's process that dies fails its PDF alone, named, while the run goes on with the others."""

from __future__ import annotations

import json
import multiprocessing
import os
import time
from pathlib import Path

import pymupdf
import pytest
from dagster import DagsterInstance

import pocket_assets.core.extract as extract
from pocket_assets.core.extract.scan import scan_pages
from pocket_assets.defs.pdf_workers import WorkersResource, step_cores
from pocket_assets.defs.resources import CorpusPaths
from pocket_assets.runstate.stages import PAGES
from pocket_assets_tests.defs.conftest import materialize_corpus

INGEST = ["raw_pdf", "pages"]
KEYS = ["fr/f-array.pdf", "fr/faq.pdf", "intl/R-data.pdf"]  # 34, 17 and 41 pages
SPLIT = WorkersResource(workers=2, split_pages=20)  # f-array and R-data over page ranges, faq on one worker
TEST_PROCESS = os.getpid()
SCAN_LOG = Path("scans.jsonl")  # set to a file of the test's; the forked processes append to it


def _wait_for_an_idle_core() -> None:
    """In a pool's worker: until the pool has a worker with nothing left to build (as at the tail of a long
    run), so that the next range of this PDF may be lent its core whatever the machine's load."""
    cores = step_cores()
    assert cores is not None, "built in a pool's worker"
    deadline = time.monotonic() + 60
    while cores.borrow(1) == 0:
        assert time.monotonic() < deadline, "the pool never had an idle worker"
        time.sleep(0.01)
    cores.give_back(1)


def _logged_scan(document: pymupdf.Document, source: str, pages: range | None, **settings: object) -> list:
    """The real scan, logged (which PDF, which pages, which process and when); R-data's first range, in its
    worker, waits for an idle core."""
    parent = multiprocessing.parent_process()
    in_range_process = parent is not None and parent.pid != TEST_PROCESS
    started = time.time()
    if source == "R-data.pdf" and not in_range_process and pages is not None and pages.start == 0:
        _wait_for_an_idle_core()
    scans = scan_pages(document, source, pages, **settings)
    entry = {"source": source, "range_process": in_range_process, "started": started, "ended": time.time()}
    with SCAN_LOG.open("a", encoding="utf-8") as log:
        log.write(json.dumps(entry) + "\n")
    return scans


def _pages_bytes(paths: CorpusPaths) -> dict[str, bytes]:
    store = paths.store()
    return {key: store.data_path(PAGES, key).read_bytes() for key in KEYS}


def test_pages_over_page_ranges_are_the_serial_steps_bytes(
    instance: DagsterInstance, paths: CorpusPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R-data, the longest, starts first: its worker scans it alone while the other worker builds f-array and
    faq; once they are built, that worker's core takes R-data's remaining ranges."""
    monkeypatch.setattr(extract, "scan_pages", _logged_scan)
    monkeypatch.setattr(f"{__name__}.SCAN_LOG", tmp_path / "scans.jsonl")
    result = materialize_corpus(instance, paths, selection=INGEST, resources={"workers": SPLIT})
    scans = [json.loads(line) for line in SCAN_LOG.read_text(encoding="utf-8").splitlines()]
    monkeypatch.undo()
    assert result.success
    others_ended = max(scan["ended"] for scan in scans if scan["source"] != "R-data.pdf")
    helped = [scan for scan in scans if scan["range_process"]]
    assert helped and {scan["source"] for scan in helped} == {"R-data.pdf"}, "f-array is never alone with a core idle"
    assert min(scan["started"] for scan in helped) > others_ended, "no range process while other PDFs are built"
    split = _pages_bytes(paths)
    # Each PDF's seconds are its build's, timed where it was built: the step's process, waiting for
    # results the workers had ready, used to show 0.0 s for every PDF.
    pages_seconds = {
        event.partition: event.materialization.metadata["seconds"].value
        for event in result.get_asset_materialization_events()
        if event.asset_key.to_user_string() == "pages"
    }
    assert sorted(pages_seconds) == KEYS and all(seconds > 0.01 for seconds in pages_seconds.values()), pages_seconds
    serial_paths = CorpusPaths(
        raw_dir=paths.raw_dir, output_dir=str(tmp_path / "serial"), expectations_dir=paths.expectations_dir
    )
    serial = materialize_corpus(instance, serial_paths, selection=INGEST, resources={"workers": WorkersResource(workers=1)})
    assert serial.success
    assert split == _pages_bytes(serial_paths)


def _scan_dying_in_f_arrays_range_processes(
    document: pymupdf.Document, source: str, pages: range | None, **settings: object
) -> list:
    """A range's process is forked from a step worker, itself forked from this test's process. f-array's
    first range waits in its worker until faq is built, so that its next ones go to a range process."""
    parent = multiprocessing.parent_process()
    if source == "f-array.pdf" and parent is not None and parent.pid != TEST_PROCESS:
        os._exit(11)  # as a crash inside MuPDF would end the process
    if source == "f-array.pdf" and pages is not None and pages.start == 0:
        _wait_for_an_idle_core()
    return scan_pages(document, source, pages, **settings)


def test_a_range_process_that_dies_fails_its_pdf_alone(
    instance: DagsterInstance, paths: CorpusPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(extract, "scan_pages", _scan_dying_in_f_arrays_range_processes)
    keys = ["fr/f-array.pdf", "fr/faq.pdf"]
    result = materialize_corpus(instance, paths, keys=keys, selection=INGEST, resources={"workers": SPLIT})
    assert not result.success, "a run in which a PDF failed fails"
    store = paths.store()
    failed = store.manifest(PAGES, "fr/f-array.pdf")
    assert failed.status == "failed"
    assert "f-array.pdf" in failed.reason and "the process reading pages" in failed.reason and "-34 died" in failed.reason
    assert store.manifest(PAGES, "fr/faq.pdf").status == "ok"
