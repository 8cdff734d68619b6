"""The per-PDF stages before the gates, one builder each: read the stage's input, call the core library.

`raw_pdf` (the file's identity), `pages` (its pages as Markdown), `parents` and `children` (one chunking
pass makes both) and `table_summaries`. Each returns its rows and the numbers its materialization shows;
the runner writes them (`runner.build_pdf`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pocket_assets.core.chunking.chunker import chunk_document
from pocket_assets.core.chunking.slice_counts import PieceCounter, PieceTokens
from pocket_assets.core.errors import PdfError
from pocket_assets.core.extract import extract_pages
from pocket_assets.core.extract.scan import IMAGE_ONLY_WARNING, OCR_FAILED_WARNING, UNREADABLE_WARNING
from pocket_assets.core.pdf import inspect_pdf
from pocket_assets.core.quality.chunk_stats import token_histogram
from pocket_assets.core.raw_folder import sha256_file
from pocket_assets.core.records import (
    CHUNK_PLACE_FIELDS,
    ChunkRecord,
    PdfIdentity,
    chunk_place_from_dict,
    pdf_identity_from_dict,
    to_dict,
)
from pocket_assets.core.tables.cache import SummaryCache
from pocket_assets.core.tables.summaries import has_table_blocks, summarize_tables
from pocket_assets.stages.page_records import read_pages
from pocket_assets.stages.pdf_build.metadata import MarkdownMetadata, bullets
from pocket_assets.stages.pdf_build.outcomes import StageOutput
from pocket_assets.stages.pdf_build.plan import BuildPlan
from pocket_assets.stages.pdf_notes import pages_without_text, text_warning
from pocket_assets.stages.registry import CHILDREN, PAGES, PARENTS, RAW_PDF, TABLE_SUMMARIES, Stage
from pocket_assets.stages.sources import file_stamp

# A page whose content stream MuPDF could not read is not an "empty page": its own warning says so.
UNREADABLE_PREFIX = UNREADABLE_WARNING.split("(")[0]

Builder = Callable[[BuildPlan, str], Mapping[Stage, StageOutput]]


def _raw_pdf(plan: BuildPlan, key: str) -> dict[Stage, StageOutput]:
    stamp = file_stamp(plan.raw_dir / key) if (plan.raw_dir / key).is_file() else {}
    identity = inspect_pdf(plan.raw_dir / key, key, plan.corpora)
    metadata = {"page_count": identity.page_count, "size_bytes": identity.size_bytes, "sha256": identity.sha256}
    if identity.metadata.get("title"):
        metadata["title"] = identity.metadata["title"][:200]
    return {RAW_PDF: StageOutput([to_dict(identity)], metadata, stamp)}


def _pages(plan: BuildPlan, key: str) -> dict[Stage, StageOutput]:
    path = plan.raw_dir / key
    recorded = plan.store.source_sha256(key)
    records = extract_pages(path, plan.extraction)
    if sha256_file(path) != recorded:
        raise PdfError(key, "the file changed while it was being built; build it again")
    blank = [page for page in records if not page.text.strip()]
    unread = [page.page for page in blank if any(warning.startswith(UNREADABLE_PREFIX) for warning in page.warnings)]
    image_only = [page for page in blank if IMAGE_ONLY_WARNING in page.warnings]
    textless = pages_without_text(
        [page.page for page in image_only],
        [page.page for page in blank if IMAGE_ONLY_WARNING not in page.warnings and page.page not in unread],
        {
            page.page: warning.removeprefix(OCR_FAILED_WARNING)
            for page in image_only
            for warning in page.warnings
            if warning.startswith(OCR_FAILED_WARNING)
        },
    )
    warnings = [f"p{page.page}: {warning}" for page in records for warning in page.warnings]
    blocks = [block.kind for page in records for block in page.blocks]
    note = text_warning(textless, len(records))
    metadata: dict[str, Any] = {
        "pages": len(records),
        "characters": sum(len(page.text) for page in records),
        "empty_pages": len(blank),
        "headings": blocks.count("heading"),
        "tables": blocks.count("table"),
        "warnings": len(warnings),
    }
    if note or warnings:
        metadata["warnings_list"] = MarkdownMetadata(bullets(([note] if note else []) + warnings))
    return {PAGES: StageOutput([to_dict(page) for page in records], metadata, textless)}


def _chunks(plan: BuildPlan, key: str) -> dict[Stage, StageOutput]:
    identity = _identity(plan, key)
    pages = read_pages(plan.store, key)
    chunked = chunk_document(identity, pages, plan.policy, plan.counter, PieceTokens(plan.counter))
    return {
        PARENTS: _chunk_output(chunked.parents),
        CHILDREN: _chunk_output(chunked.children, chunked.warnings),
    }


def _table_summaries(plan: BuildPlan, key: str) -> dict[Stage, StageOutput]:
    identity = _identity(plan, key)
    pages = read_pages(plan.store, key)
    parents, children = [], []
    if has_table_blocks(pages):  # where the chunks are, to link each summary to its parent
        parents = [chunk_place_from_dict(row) for row in plan.store.read(PARENTS, key, CHUNK_PLACE_FIELDS)]
        children = [chunk_place_from_dict(row) for row in plan.store.read(CHILDREN, key, CHUNK_PLACE_FIELDS)]
    cache = SummaryCache(plan.summary_cache) if plan.summary_cache is not None else None
    counter = PieceCounter(PieceTokens(plan.counter))
    batch = summarize_tables(identity, pages, parents, plan.policy, counter, plan.summarizer, cache, children=children)
    stats = batch.stats
    output = _chunk_output(batch.chunks, [f"table summary fell back to extractive: {why}" for why in stats.fallbacks])
    metadata = {**output.metadata, "tables": stats.tables, "llm_calls": stats.llm_calls, "fallbacks": len(stats.fallbacks)}
    return {TABLE_SUMMARIES: StageOutput(output.rows, metadata, output.extra)}


BUILDERS: dict[tuple[Stage, ...], Builder] = {
    (RAW_PDF,): _raw_pdf,
    (PAGES,): _pages,
    (PARENTS, CHILDREN): _chunks,
    (TABLE_SUMMARIES,): _table_summaries,
}


def _identity(plan: BuildPlan, key: str) -> PdfIdentity:
    return pdf_identity_from_dict(plan.store.read(RAW_PDF, key)[0])


def _chunk_output(chunks: Sequence[ChunkRecord], warnings: Sequence[str] = ()) -> StageOutput:
    metadata: dict[str, Any] = {"chunks": len(chunks)}
    histogram = token_histogram(chunks)
    if histogram is not None:
        metadata.update(
            tokens_min=histogram.minimum,
            tokens_median=histogram.median,
            tokens_p95=histogram.p95,
            tokens_max=histogram.maximum,
        )
    if warnings:
        metadata.update(warnings=len(warnings), warnings_list=MarkdownMetadata(bullets(warnings)))
    extra = {"policy_hash": chunks[0].policy_hash if chunks else None, "warnings": list(warnings)}
    return StageOutput([to_dict(chunk) for chunk in chunks], metadata, extra)
