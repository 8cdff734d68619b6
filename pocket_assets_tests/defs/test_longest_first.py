"""A many-PDF step on two workers starts its longest PDFs first and takes them as they complete: the files
are the serial build's, a PDF whose worker dies fails alone, and the run log names every PDF once."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Iterator, Sequence

import pytest
from dagster import DagsterInstance

import pocket_assets.defs.assets.ingest as ingest
import pocket_assets.defs.per_pdf as per_pdf
from pocket_assets.defs.pdf_workers import WorkersResource
from pocket_assets.defs.per_pdf import longest_first
from pocket_assets.defs.resources import CorpusPaths
from pocket_assets.runstate.stages import CHILDREN, PAGES, PARENTS, SOURCE, TABLE_SUMMARIES
from pocket_assets_tests.defs.conftest import materialize_corpus, partition_states
from pocket_assets_tests.pdf_factory import ARTICLE_EN, ARTICLE_FR, REPO_ROOT, random_bytes_pdf, text_pdf

SELECTION = ["raw_pdf", "pages", "parents", "children", "table_summaries"]
# Each step's progress lines start with its stages' names; a failed or skipped PDF has a line per stage.
STEPS = {"pages": ("pages",), "parents+children": ("parents", "children"), "table_summaries": ("table_summaries",)}
PAGE_COUNTS = {"fr/a-short.pdf": 1, "fr/b-medium.pdf": 3, "fr/c-crash.pdf": 2, "intl/z-long.pdf": 8}
TABLE = "fr/e-table.pdf"  # 3 pages of a real regulation with a ruled table: a table summary to compare
BROKEN = "fr/d-broken.pdf"  # not a PDF: fails raw_pdf, is skipped after
CRASH = "fr/c-crash.pdf"  # its worker dies while reading it
KEYS = sorted([*PAGE_COUNTS, TABLE, BROKEN])
LONGEST_FIRST = ["intl/z-long.pdf", "fr/b-medium.pdf", TABLE, "fr/c-crash.pdf", "fr/a-short.pdf", BROKEN]  # ties by key
TEST_PROCESS = os.getpid()


def _corpus(raw: Path) -> None:
    for key, count in PAGE_COUNTS.items():
        text_pdf(raw / key, [(ARTICLE_FR if key.startswith("fr/") else ARTICLE_EN) * 3] * count)
    shutil.copyfile(REPO_ROOT / "pocket_assets_tests" / "fixtures" / "real" / "regs-serif-small-capitals.pdf", raw / TABLE)
    random_bytes_pdf(raw / BROKEN)


def _paths(tmp_path: Path, name: str) -> CorpusPaths:
    return CorpusPaths(
        raw_dir=str(tmp_path / "raw"), output_dir=str(tmp_path / name), expectations_dir=str(REPO_ROOT / "pocket_assets" / "expectations")
    )


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The order in which each step handed its PDFs to the workers."""
    orders: list[list[str]] = []
    build_in_workers = per_pdf.build_in_workers

    def recording(build, keys: Sequence[str], workers: int) -> Iterator:
        orders.append(list(keys))
        return build_in_workers(build, keys, workers)

    monkeypatch.setattr(per_pdf, "build_in_workers", recording)
    return orders


def _dying_on_the_crash_pdf(path: Path, *arguments, **settings):
    if path.name == Path(CRASH).name and os.getpid() != TEST_PROCESS:
        os._exit(9)  # as a crash inside MuPDF ends a worker
    return extract_pages(path, *arguments, **settings)


extract_pages = ingest.extract_pages


def test_longest_first_on_two_workers_gives_the_serial_files_and_fails_the_crash_alone(
    instance: DagsterInstance, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, started: list[list[str]]
) -> None:
    _corpus(tmp_path / "raw")
    serial_paths = _paths(tmp_path, "serial")
    serial = materialize_corpus(instance, serial_paths, KEYS, SELECTION, {"workers": WorkersResource(workers=1)})
    assert not serial.success, "the broken PDF fails the serial run"
    assert serial_paths.store().manifest(TABLE_SUMMARIES, TABLE).rows > 0, "a table to summarize"
    assert started == [KEYS] * 4, "raw_pdf, pages, chunks, table_summaries on one worker: key order, in the step's process"
    started.clear()

    monkeypatch.setattr(ingest, "extract_pages", _dying_on_the_crash_pdf)
    paths = _paths(tmp_path, "parallel")
    result = materialize_corpus(instance, paths, KEYS, SELECTION, {"workers": WorkersResource(workers=2)})
    assert not result.success
    assert started == [KEYS, LONGEST_FIRST, LONGEST_FIRST, KEYS], (
        "pages and chunks start the longest PDFs first; extractive table_summaries run in the step's process"
    )

    store, serial_store = paths.store(), serial_paths.store()
    good = [key for key in KEYS if key not in (CRASH, BROKEN)]
    for stage in (SOURCE, PAGES, PARENTS, CHILDREN, TABLE_SUMMARIES):
        for key in good:
            assert store.data_path(stage, key).read_bytes() == serial_store.data_path(stage, key).read_bytes(), (stage, key)
    crashed = store.manifest(PAGES, CRASH)
    assert crashed.status == "failed" and "worker process building it died" in crashed.reason
    assert [store.manifest(PAGES, key).status for key in good] == ["ok"] * len(good)
    assert store.manifest(CHILDREN, CRASH).status == "skipped"
    assert partition_states(instance, "pages")["failed"] == {CRASH, BROKEN}

    lines = [entry.user_message for entry in instance.all_logs(result.run_id) if entry.dagster_event is None]
    for names, stages in STEPS.items():
        progress = [line for line in lines if line.startswith(f"{names} [") and " rows in " in line]
        for key in good:
            assert sum(f"{key}: " in line for line in progress) == 1, (names, key, progress)
        for stage in stages:
            verdicts = [line for line in lines if line.startswith(f"{stage} [") and (" failed: " in line or " skipped: " in line)]
            assert sorted(key for key in KEYS if any(f"] {key} " in line for line in verdicts)) == [CRASH, BROKEN], verdicts
            assert len(verdicts) == 2, verdicts
        places = [line.split("]")[0] + "]" for line in lines if line.startswith((f"{names} [", *(f"{s} [" for s in stages)))]
        assert any(place.endswith(f" [{len(KEYS)}/{len(KEYS)}]") for place in places), places


def test_longest_first_orders_by_the_page_count_raw_pdf_recorded_then_by_key(
    instance: DagsterInstance, tmp_path: Path
) -> None:
    _corpus(tmp_path / "raw")
    paths = _paths(tmp_path, "out")
    materialize_corpus(instance, paths, KEYS, ["raw_pdf"])
    assert longest_first(paths.store(), KEYS) == LONGEST_FIRST
    assert longest_first(paths.store(), ["intl/new.pdf", "fr/new.pdf"]) == ["fr/new.pdf", "intl/new.pdf"], "not yet read"
