"""A range run of many PDFs on two workers: the files are the serial build's, a broken PDF and a PDF whose
worker dies fail alone and show failed at every stage, the others show materialized, and the run fails."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from dagster import DagsterInstance

import pocket_assets.stages.pdf_build.builders as pdf_builders
from pocket_assets.defs.resources import CorpusPaths, WorkersResource
from pocket_assets.stages.pdf_build.runner import page_counts
from pocket_assets.stages.registry import PAGES, STAGES
from pocket_assets_tests.defs.conftest import PER_PDF, materialize_corpus, partition_states
from pocket_assets_tests.pdf_factory import ARTICLE_EN, ARTICLE_FR, REPO_ROOT, random_bytes_pdf, text_pdf

PAGE_COUNTS = {"fr/a-short.pdf": 1, "fr/b-medium.pdf": 3, "fr/c-crash.pdf": 2, "intl/z-long.pdf": 8}
TABLE = "fr/e-table.pdf"  # 3 pages of a real regulation with a ruled table: a table summary to compare
BROKEN = "fr/d-broken.pdf"  # not a PDF: fails raw_pdf, every stage after it is not built
CRASH = "fr/c-crash.pdf"  # its worker dies while its pages are read
KEYS = sorted([*PAGE_COUNTS, TABLE, BROKEN])
TEST_PROCESS = os.getpid()
extract_pages = pdf_builders.extract_pages


def _corpus(raw: Path) -> None:
    for key, count in PAGE_COUNTS.items():
        text_pdf(raw / key, [(ARTICLE_FR if key.startswith("fr/") else ARTICLE_EN) * 3] * count)
    shutil.copyfile(REPO_ROOT / "pocket_assets_tests" / "fixtures" / "real" / "regs-serif-small-capitals.pdf", raw / TABLE)
    random_bytes_pdf(raw / BROKEN)


def _dying_on_the_crash_pdf(path: Path, *arguments, **settings):
    if path.name == Path(CRASH).name and os.getpid() != TEST_PROCESS:
        os._exit(9)  # as a crash inside MuPDF ends a worker
    return extract_pages(path, *arguments, **settings)


def test_two_workers_give_the_serial_files_and_fail_the_broken_and_the_crashed_pdf_alone(
    instance: DagsterInstance, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _corpus(tmp_path / "raw")
    serial_paths = CorpusPaths(raw_dir=str(tmp_path / "raw"), output_dir=str(tmp_path / "serial"))
    serial = materialize_corpus(instance, serial_paths, KEYS, resources={"workers": WorkersResource(workers=1)})
    assert not serial.success, "the broken PDF fails the serial run"

    monkeypatch.setattr(pdf_builders, "extract_pages", _dying_on_the_crash_pdf)
    paths = CorpusPaths(raw_dir=str(tmp_path / "raw"), output_dir=str(tmp_path / "parallel"))
    result = materialize_corpus(instance, paths, KEYS, resources={"workers": WorkersResource(workers=2)})
    assert not result.success

    store, serial_store = paths.store(), serial_paths.store()
    good = [key for key in KEYS if key not in (CRASH, BROKEN)]
    for stage in STAGES:
        for key in good:
            assert store.data_path(stage, key).read_bytes() == serial_store.data_path(stage, key).read_bytes(), (stage, key)
    crashed = store.manifest(PAGES, CRASH)
    assert crashed.status == "failed" and "the process building it died" in crashed.reason
    for asset in PER_PDF:
        assert partition_states(instance, asset) == {"materialized": set(good), "failed": {CRASH, BROKEN}}, asset
    failure = next(event for event in result.all_events if event.is_step_failure)
    description = failure.step_failure_data.user_failure_data.description
    assert description.startswith("2 of 6 PDF(s) failed:") and BROKEN in description and CRASH in description


def test_the_longest_pdfs_start_first_by_the_page_count_raw_pdf_recorded(instance: DagsterInstance, tmp_path: Path) -> None:
    _corpus(tmp_path / "raw")
    paths = CorpusPaths(raw_dir=str(tmp_path / "raw"), output_dir=str(tmp_path / "out"))
    materialize_corpus(instance, paths, KEYS, ["raw_pdf"])
    counts = page_counts(paths.store(), KEYS)
    assert sorted(KEYS, key=lambda key: (-counts[key], key)) == [
        "intl/z-long.pdf", "fr/b-medium.pdf", TABLE, CRASH, "fr/a-short.pdf", BROKEN
    ]  # fmt: skip
    assert page_counts(paths.store(), ["fr/new.pdf"]) == {"fr/new.pdf": 0}, "not read yet"
