"""The `pages` step with long PDFs scanned over page ranges on every worker: the serial step's bytes, and a
range's process that dies fails its PDF alone, named, while the run goes on with the others."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pymupdf
import pytest
from dagster import DagsterInstance

import pocket_assets.core.extract as extract
from pocket_assets.core.extract.scan import scan_pages
from pocket_assets.defs.pdf_workers import WorkersResource
from pocket_assets.defs.resources import CorpusPaths
from pocket_assets.runstate.stages import PAGES
from pocket_assets_tests.defs.conftest import materialize_corpus

INGEST = ["raw_pdf", "pages"]
KEYS = ["fr/f-array.pdf", "fr/faq.pdf", "intl/R-data.pdf"]  # 34, 17 and 41 pages
SPLIT = WorkersResource(workers=2, split_pages=20)  # f-array and R-data over page ranges, faq on one worker
TEST_PROCESS = os.getpid()


def _pages_bytes(paths: CorpusPaths) -> dict[str, bytes]:
    store = paths.store()
    return {key: store.data_path(PAGES, key).read_bytes() for key in KEYS}


def test_pages_over_page_ranges_are_the_serial_steps_bytes(
    instance: DagsterInstance, paths: CorpusPaths, tmp_path: Path
) -> None:
    result = materialize_corpus(instance, paths, selection=INGEST, resources={"workers": SPLIT})
    assert result.success
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
    """A range's process is forked from a step worker, itself forked from this test's process."""
    parent = multiprocessing.parent_process()
    if source == "f-array.pdf" and parent is not None and parent.pid != TEST_PROCESS:
        os._exit(11)  # as a crash inside MuPDF would end the process
    return scan_pages(document, source, pages, **settings)


def test_a_range_process_that_dies_fails_its_pdf_alone(
    instance: DagsterInstance, paths: CorpusPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(extract, "scan_pages", _scan_dying_in_f_arrays_range_processes)
    result = materialize_corpus(instance, paths, selection=INGEST, resources={"workers": SPLIT})
    assert not result.success, "a run in which a PDF failed fails"
    store = paths.store()
    failed = store.manifest(PAGES, "fr/f-array.pdf")
    assert failed.status == "failed"
    assert "f-array.pdf" in failed.reason and "the process reading pages" in failed.reason and "-34 died" in failed.reason
    assert [store.manifest(PAGES, key).status for key in ("fr/faq.pdf", "intl/R-data.pdf")] == ["ok", "ok"]
