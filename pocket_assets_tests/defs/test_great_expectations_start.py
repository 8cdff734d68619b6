"""When a run not started by the build command starts the Great Expectations process: a short one (a PDF or a
few, from the UI) in its first step, so that the import overlaps the whole build; a long one once the chunking
step's workers are gone (its import runs beside the extractive table summaries, not beside the workers), and never if it does not validate or has nothing to validate."""

from __future__ import annotations

from pathlib import Path

import pytest
from dagster import DagsterInstance

import pocket_assets.defs.assets.ingest as ingest
import pocket_assets.defs.assets.quality as quality
from pocket_assets.core.quality import expectations_process
from pocket_assets.defs.pdf_workers import WorkersResource
from pocket_assets.defs.resources import CorpusPaths
from pocket_assets.runstate.stages import CHILDREN, TABLE_SUMMARIES, VALIDATED_CHUNKS, Stage
from pocket_assets.runstate.storage import STATUS_OK, PartitionStore
from pocket_assets_tests.defs.conftest import materialize_corpus
from pocket_assets_tests.pdf_factory import REPO_ROOT, random_bytes_pdf, small_corpus

TWO_WORKERS = {"workers": WorkersResource(workers=2)}
# Without the export, whose corpus-wide id check asks the process even when every PDF is left out.
UP_TO_VALIDATION = ["raw_pdf", "pages", "parents", "children", "table_summaries", "validated_chunks"]


@pytest.fixture
def paths(tmp_path: Path) -> CorpusPaths:
    return CorpusPaths(
        raw_dir=str(tmp_path / "raw"), output_dir=str(tmp_path / "out"), expectations_dir=str(REPO_ROOT / "pocket_assets" / "expectations")
    )


@pytest.fixture
def starts(paths: CorpusPaths, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, list[str]]]:
    """Each start of the process, with the PDFs whose children and table summaries were stored by then."""
    seen: list[dict[str, list[str]]] = []
    prestart = expectations_process.prestart

    def recording(expectations_dir: Path) -> expectations_process.ExpectationsProcess:
        store = paths.store()
        keys = sorted(path.relative_to(paths.raw_path).as_posix() for path in paths.raw_path.rglob("*.pdf"))
        seen.append({stage.name: [key for key in keys if _built(store, stage, key)] for stage in (CHILDREN, TABLE_SUMMARIES)})
        return prestart(expectations_dir)

    monkeypatch.setattr(expectations_process, "prestart", recording)
    monkeypatch.setattr(quality, "prestart", recording)
    return seen


@pytest.fixture
def long_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test corpus's few PDFs taken for a long run (more than `starts_early` allows)."""
    monkeypatch.setattr(ingest, "starts_early", lambda pdf_count: False)


def _built(store: PartitionStore, stage: Stage, key: str) -> bool:
    manifest = store.manifest(stage, key)
    return manifest is not None and manifest.status == STATUS_OK


def test_a_short_run_starts_it_in_its_first_step(instance: DagsterInstance, paths: CorpusPaths, starts: list) -> None:
    small_corpus(paths.raw_path)
    assert materialize_corpus(instance, paths, resources=TWO_WORKERS).success
    assert starts[0] == {"children": [], "table_summaries": []}


def test_a_long_run_starts_it_once_its_pdfs_are_chunked_and_before_validation(
    instance: DagsterInstance, paths: CorpusPaths, starts: list, long_run: None
) -> None:
    """Not beside the workers of the chunking steps (the build's memory peak), and before the validation
    step asks for it."""
    keys = small_corpus(paths.raw_path)
    assert materialize_corpus(instance, paths, resources=TWO_WORKERS).success
    assert starts[0] == {"children": keys, "table_summaries": []}
    store = paths.store()
    assert all(store.manifest(VALIDATED_CHUNKS, key).status == STATUS_OK for key in keys)


def test_a_run_that_does_not_validate_never_starts_it(
    instance: DagsterInstance, paths: CorpusPaths, starts: list
) -> None:
    small_corpus(paths.raw_path)
    assert materialize_corpus(instance, paths, selection=["raw_pdf", "pages", "parents", "children"], resources=TWO_WORKERS).success
    assert starts == []


def test_a_long_run_whose_pdfs_all_fail_before_validation_never_starts_it(
    instance: DagsterInstance, paths: CorpusPaths, starts: list, long_run: None
) -> None:
    random_bytes_pdf(paths.raw_path / "fr" / "a.pdf")
    random_bytes_pdf(paths.raw_path / "intl" / "b.pdf")
    assert not materialize_corpus(instance, paths, selection=UP_TO_VALIDATION, resources=TWO_WORKERS).success
    assert starts == []
