"""Ingest: each PDF's identity, then its pages as canonical text."""

from collections import Counter

from typing import Iterator

from dagster import AssetCheckSpec, AssetExecutionContext, MaterializeResult, MetadataValue

from pocket_assets.core.extract import extract_pages
from pocket_assets.core.extract.scan import IMAGE_ONLY_WARNING
from pocket_assets.core.pdf import inspect_pdf
from pocket_assets.core.quality.expectations_process import starts_early
from pocket_assets.core.records import to_dict
from pocket_assets.defs.assets.quality import prestart_if_validating
from pocket_assets.defs.partitions import pdf_asset
from pocket_assets.defs.pdf_errors import extraction_of
from pocket_assets.defs.pdf_workers import WorkersResource
from pocket_assets.defs.per_pdf import StageOutput, failed_pdfs_check, run_per_pdf
from pocket_assets.defs.resources import CorpusPaths, ExtractionResource, stage_settings
from pocket_assets.runstate.pdf_notes import pages_without_text, text_warning
from pocket_assets.runstate.stages import PAGES, RAW_PDF

READABLE_PDF = "readable_pdf"
# What the extractor found, per PDF and in total, for the UI: a drop after an extractor change shows here.
_BLOCK_COUNTS = {"heading": "headings", "table": "tables", "code": "code_blocks", "equation": "equations"}


@pdf_asset(
    RAW_PDF,
    group_name="ingest",
    kinds=("pdf", "parquet"),
    check_specs=[
        AssetCheckSpec(
            READABLE_PDF,
            asset=RAW_PDF.name,
            description="Every PDF of the run is a readable, unencrypted PDF with pages; lists those that are not.",
        )
    ],
    description="One PDF of the corpus: corpus, file name, sha256, size, page count and PDF metadata. "
    "Fails that PDF (only) if it is not a PDF, truncated, encrypted or has no pages.",
)
def raw_pdf(context: AssetExecutionContext, paths: CorpusPaths, workers: WorkersResource) -> Iterator[MaterializeResult]:
    """Each PDF opened, every page loaded and the file hashed in the step's worker processes, so the
    MuPDF work (outline, pages, freeing them: ~0.8 s of CPU on the scale corpus) uses every core (issue 18)."""
    if starts_early(len(context.partition_keys)):
        # A short run (one PDF from the UI): Great Expectations' seconds of import overlap the whole build.
        prestart_if_validating(context, paths.expectations_path)

    def build(key: str) -> StageOutput:
        identity = inspect_pdf(paths.raw_path / key, key, paths.corpus_names)
        return StageOutput(
            rows=[to_dict(identity)],
            source_sha256=identity.sha256,
            metadata={
                "page_count": identity.page_count,
                "size_bytes": identity.size_bytes,
                "sha256": identity.sha256,
                "title": identity.metadata.get("title", ""),
            },
        )

    yield from run_per_pdf(
        context, paths.store(), build, checks=failed_pdfs_check(READABLE_PDF), workers=workers.count()
    )


@pdf_asset(
    PAGES,
    group_name="ingest",
    kinds=("pdf", "parquet"),
    description="One row per page: canonical Markdown text, blocks with char spans, warnings "
    "(empty or image-only pages), and the page's span and first line in the document text.",
)
def pages(
    context: AssetExecutionContext, paths: CorpusPaths, extraction: ExtractionResource, workers: WorkersResource
) -> Iterator[MaterializeResult]:
    store = paths.store()

    def build(key: str) -> StageOutput:
        source = store.source_sha256(key)
        with extraction_of(key):
            records = extract_pages(paths.raw_path / key, extraction.options())
        text_chars = sum(len(page.text) for page in records)
        warnings = [f"p{page.page}: {warning}" for page in records for warning in page.warnings]
        kinds = Counter(block.kind for page in records for block in page.blocks)
        blank = [page for page in records if not page.text.strip()]
        textless = pages_without_text(
            [page.page for page in blank if IMAGE_ONLY_WARNING in page.warnings],
            [page.page for page in blank if IMAGE_ONLY_WARNING not in page.warnings],
        )
        text_note = text_warning(textless, len(records))
        if text_note:
            context.log.warning(f"{key}: {text_note}")
        return StageOutput(
            rows=[to_dict(page) for page in records],
            source_sha256=source,
            extra=textless,
            metadata={
                "pages_without_text": MetadataValue.md(text_note or "none"),
                "page_count": len(records),
                "characters": text_chars,
                "empty_pages": sum(1 for page in records if not page.text.strip()),
                **{_BLOCK_COUNTS[kind]: kinds[kind] for kind in _BLOCK_COUNTS},
                "warnings": len(warnings),
                "warnings_list": MetadataValue.md("\n".join(f"- {w}" for w in warnings) or "none"),
                "preview": MetadataValue.md(records[0].text[:1500] if records else ""),
            },
        )

    yield from run_per_pdf(
        context, store, build, PAGES.version(stage_settings(extraction=extraction)), workers=workers.count()
    )
