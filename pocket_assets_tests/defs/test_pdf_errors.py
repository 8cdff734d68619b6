"""The per-PDF boundary: an error about a PDF is recorded for it and the run goes on; a bug fails the step."""

from pathlib import Path

import pytest
from dagster import DagsterInstance

import pocket_assets.defs.assets.chunking as chunking_assets
import pocket_assets.defs.assets.ingest as ingest_assets
from pocket_assets.defs.resources import CorpusPaths
from pocket_assets.runstate.stages import PAGES, PARENTS
from pocket_assets_tests.defs.conftest import materialize_corpus
from pocket_assets_tests.pdf_factory import REPO_ROOT, small_corpus


@pytest.fixture
def small(tmp_path: Path) -> CorpusPaths:
    small_corpus(tmp_path / "raw")
    return CorpusPaths(
        raw_dir=str(tmp_path / "raw"), output_dir=str(tmp_path / "out"), expectations_dir=str(REPO_ROOT / "pocket_assets" / "expectations")
    )


def test_a_bug_in_a_stage_fails_the_step_instead_of_a_pdf(
    instance: DagsterInstance, small: CorpusPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_chunker(*args, **kwargs):
        raise TypeError("a programming error")

    monkeypatch.setattr(chunking_assets, "chunk_document", broken_chunker)
    result = materialize_corpus(instance, small, selection=["raw_pdf", "pages", "parents", "children"])
    assert not result.success
    failure = result.failure_data_for_node("chunks")
    assert failure is not None and "TypeError: a programming error" in failure.error.to_string()
    assert small.store().manifest(PARENTS, "fr/reglement.pdf") is None, "no PDF recorded as bad"


def test_an_extraction_error_is_about_that_file_only(
    instance: DagsterInstance, small: CorpusPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_extract = ingest_assets.extract_pages

    def extract(path: Path, options, **cores):
        if path.name == "rules.pdf":
            raise IndexError("list index out of range")
        return real_extract(path, options, **cores)

    monkeypatch.setattr(ingest_assets, "extract_pages", extract)
    result = materialize_corpus(instance, small, selection=["raw_pdf", "pages"])
    assert not result.success, "a run in which a PDF failed fails (after the others were built)"
    assert "intl/rules.pdf" in result.failure_data_for_node("pages").error.to_string()
    failed = small.store().manifest(PAGES, "intl/rules.pdf")
    assert failed.status == "failed"
    assert failed.reason == "intl/rules.pdf: extraction failed (IndexError: list index out of range)"
    assert small.store().manifest(PAGES, "fr/reglement.pdf").status == "ok"
