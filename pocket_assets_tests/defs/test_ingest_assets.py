"""Materialize the ingest stages for real, on a temporary instance, with good and broken PDFs."""

from pathlib import Path

import pandas as pd
import pytest
from dagster import AssetKey, DagsterInstance

from pocket_assets.defs.resources import CorpusPaths, WorkersResource
from pocket_assets.stages.registry import PAGES, RAW_PDF
from pocket_assets_tests.defs.conftest import materialize_corpus, partition_metadata, partition_states
from pocket_assets_tests.pdf_factory import (
    ARTICLE_EN,
    ARTICLE_FR,
    SAMPLE_RAW,
    encrypted_pdf,
    image_only_pdf,
    random_bytes_pdf,
    text_pdf,
    truncated_pdf,
    zero_page_pdf,
)

INGEST = ["raw_pdf", "pages"]


def test_sample_corpus_ingests_in_one_run(instance: DagsterInstance, paths: CorpusPaths) -> None:
    result = materialize_corpus(instance, paths, selection=INGEST)
    assert result.success
    store = paths.store()
    frame = pd.read_parquet(store.data_path(PAGES, "fr/faq.pdf"))
    assert frame["page"].tolist() == list(range(1, 18))
    assert (frame["char_end"] >= frame["char_start"]).all()
    identity = pd.read_parquet(store.data_path(RAW_PDF, "intl/R-data.pdf")).iloc[0]
    assert (identity["corpus"], identity["source"], identity["page_count"]) == ("intl", "R-data.pdf", 41)
    materialized = instance.get_materialized_partitions(AssetKey("pages"))
    assert materialized == {"fr/f-array.pdf", "fr/faq.pdf", "intl/R-data.pdf"}
    r_data = pd.read_parquet(store.data_path(PAGES, "intl/R-data.pdf"))
    with_tables = {row.page for row in r_data.itertuples() if any(block["kind"] == "table" for block in row.blocks)}
    assert {16, 17} <= with_tables, "R-data's printed data frames (unruled) are tables"
    stored = [pd.read_parquet(store.data_path(PAGES, key)) for key in sorted(materialized)]
    tables = sum(block["kind"] == "table" for frame in stored for blocks in frame["blocks"] for block in blocks)
    own = {key: partition_metadata(instance, "pages", key) for key in sorted(materialized)}
    assert sum(numbers["tables"] for numbers in own.values()) == tables >= 4, "each PDF carries its own tables"
    assert own["intl/R-data.pdf"]["dagster/row_count"] == 41 and own["fr/faq.pdf"]["dagster/row_count"] == 17


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (random_bytes_pdf, "not a PDF"),
        (lambda path: truncated_pdf(path, SAMPLE_RAW / "fr" / "faq.pdf"), "truncated"),
        (encrypted_pdf, "encrypted"),
        (zero_page_pdf, "zero pages"),
    ],
    ids=["random-bytes", "truncated", "encrypted", "zero-pages"],
)
def test_a_broken_pdf_fails_alone_inside_a_single_run(
    instance: DagsterInstance, paths: CorpusPaths, tmp_path: Path, make, reason: str
) -> None:
    make(paths.raw_path / "fr" / "broken.pdf")
    text_pdf(paths.raw_path / "fr" / "good.pdf", [ARTICLE_FR, ARTICLE_FR])
    text_pdf(paths.raw_path / "intl" / "good.pdf", [ARTICLE_EN])
    keys = ["fr/broken.pdf", "fr/good.pdf", "intl/good.pdf"]  # three PDFs, one broken
    # Two workers whatever the machine's cores: the run's PDFs are built in worker processes.
    result = materialize_corpus(instance, paths, keys=keys, selection=INGEST, resources={"workers": WorkersResource(workers=2)})
    assert not result.success, "a run in which a PDF failed fails"
    store = paths.store()
    failed = store.manifest(RAW_PDF, "fr/broken.pdf")
    assert failed.status == "failed" and reason in failed.reason and "broken.pdf" in failed.reason
    skipped = store.manifest(PAGES, "fr/broken.pdf")
    assert skipped.status == "skipped" and "raw_pdf failed for this PDF" in skipped.reason
    assert not store.data_path(PAGES, "fr/broken.pdf").exists()
    for good in ("fr/good.pdf", "intl/good.pdf"):
        assert store.manifest(PAGES, good).status == "ok"
    check = next(e for e in result.get_asset_check_evaluations() if e.check_name == "readable_pdf")
    assert not check.passed and "fr/broken.pdf" in check.metadata["failures"].value
    for asset in INGEST:
        assert partition_states(instance, asset) == {"materialized": {"fr/good.pdf", "intl/good.pdf"}, "failed": {"fr/broken.pdf"}}
    assert partition_metadata(instance, "pages", "fr/good.pdf")["pages"] >= 1


def test_a_broken_pdf_alone_fails_its_run(instance: DagsterInstance, paths: CorpusPaths) -> None:
    random_bytes_pdf(paths.raw_path / "intl" / "junk.pdf")
    result = materialize_corpus(instance, paths, keys=["intl/junk.pdf"], selection=INGEST)
    assert not result.success
    failure = result.failure_data_for_node("pdf_stages")
    assert "junk.pdf: not a PDF" in failure.user_failure_data.description
    for asset in INGEST:
        assert partition_states(instance, asset)["failed"] == {"intl/junk.pdf"}


def test_image_only_pages_are_warned_about_not_failed(instance: DagsterInstance, paths: CorpusPaths) -> None:
    image_only_pdf(paths.raw_path / "intl" / "scan.pdf")
    result = materialize_corpus(instance, paths, keys=["intl/scan.pdf"], selection=INGEST)
    assert result.success
    page = pd.read_parquet(paths.store().data_path(PAGES, "intl/scan.pdf")).iloc[0]
    assert page["text"] == ""
    assert any("image" in warning or "empty" in warning for warning in page["warnings"])
