"""Chunking: parents for LLM context and children for search from one pass, a summary per table.

Parents and children are one step (a multi-asset): one `chunk_document` call per
PDF gives both, so nothing is carried between steps and any executor gives the
same chunks. Each stage's version comes from the resources of the run
(`runstate.stages`): a new tokenizer, chunk policy or summarizer marks the
PDFs built with the old one stale.
"""

from typing import Any, Iterator, Sequence

from dagster import AssetExecutionContext, MaterializeResult, MetadataValue

from pocket_assets.core.chunking.chunker import chunk_document
from pocket_assets.core.chunking.slice_counts import PieceCounter, PieceTokens
from pocket_assets.core.records import (
    CHUNK_PLACE_FIELDS,
    ChunkRecord,
    PageRecord,
    PdfIdentity,
    chunk_place_from_dict,
    pdf_identity_from_dict,
    to_dict,
)
from pocket_assets.core.tables.cache import SummaryCache
from pocket_assets.core.tables.summaries import has_table_blocks, summarize_tables
from pocket_assets.defs.assets.quality import prestart_if_validating
from pocket_assets.defs.chunk_metadata import chunk_metadata
from pocket_assets.defs.partitions import pdf_asset, pdf_multi_asset
from pocket_assets.defs.pdf_workers import WorkersResource
from pocket_assets.defs.per_pdf import StageOutput, run_per_pdf, run_per_pdf_stages
from pocket_assets.defs.resources import (
    ChunkPolicyResource,
    CorpusPaths,
    ExtractionResource,
    SummarizerResource,
    TokenizerResource,
    stage_settings,
)
from pocket_assets.runstate.page_records import read_pages
from pocket_assets.runstate.stages import CHILDREN, PARENTS, SOURCE, TABLE_SUMMARIES, Stage
from pocket_assets.runstate.storage import PartitionStore


def _load_document(store: PartitionStore, key: str) -> tuple[PdfIdentity, tuple[PageRecord, ...]]:
    identity = pdf_identity_from_dict(store.read(SOURCE, key)[0])
    return identity, read_pages(store, key)


def _chunk_output(
    chunks: tuple[ChunkRecord, ...], sha256: str, warnings: Sequence[str] = (), **extra_metadata: Any
) -> StageOutput:
    """`warnings` (text left out as below the minimum) go to the UI and to the manifest, for the CLI."""
    if warnings:
        extra_metadata.update(
            text_below_minimum=len(warnings), warnings=MetadataValue.md("\n".join(f"- {w}" for w in warnings))
        )
    return StageOutput(
        rows=[to_dict(chunk) for chunk in chunks],
        source_sha256=sha256,
        metadata={**chunk_metadata(chunks), **extra_metadata},
        extra={"policy_hash": chunks[0].policy_hash if chunks else None, "warnings": list(warnings)},
    )


@pdf_multi_asset(
    {
        PARENTS: "~1024-token parent chunks (15% overlap) for LLM context, cut at headings, paragraphs, "
        "list items and sentences, never inside a table; every DESIGN.md chunk field filled.",
        CHILDREN: "~450-token child chunks (15% overlap) inside their parent, for embedding and search; "
        "the string the phone embeds (text + citation + prompt) never exceeds the cap.",
    },
    name="chunks",
    group_name="chunking",
)
def chunks(
    context: AssetExecutionContext,
    paths: CorpusPaths,
    extraction: ExtractionResource,
    tokenizer: TokenizerResource,
    chunk_policy: ChunkPolicyResource,
    workers: WorkersResource,
) -> Iterator[MaterializeResult]:
    store = paths.store()
    policy = chunk_policy.policy(tokenizer)
    # One step's PDFs share `piece_tokens`: words common to them are tokenized once.
    piece_tokens = PieceTokens(tokenizer.counter())
    settings = stage_settings(extraction=extraction, tokenizer=tokenizer, chunk_policy=chunk_policy)

    def build(key: str) -> dict[Stage, StageOutput]:
        identity, page_records = _load_document(store, key)
        chunked = chunk_document(identity, page_records, policy, piece_tokens.counter, piece_tokens)
        source = store.source_sha256(key)
        return {
            PARENTS: _chunk_output(chunked.parents, source),
            CHILDREN: _chunk_output(chunked.children, source, chunked.warnings),
        }

    yield from run_per_pdf_stages(
        context,
        store,
        (PARENTS, CHILDREN),
        build,
        {stage: stage.version(settings) for stage in (PARENTS, CHILDREN)},
        workers=workers.count(),
        # Once its workers are gone: Great Expectations' ~180 MiB are never held beside a pool's workers (the
        # build's memory peak), and its seconds of import run beside table_summaries, before validation asks.
        after_building=lambda: prestart_if_validating(context, paths.expectations_path),
    )


@pdf_asset(
    TABLE_SUMMARIES,
    group_name="chunking",
    description="A ~50-token summary per table (chunk_type table_summary), typed schedule/scoring/other, "
    "linked to the parent holding the table; extractive offline by default, an LLM endpoint on demand.",
)
def table_summaries(
    context: AssetExecutionContext,
    paths: CorpusPaths,
    extraction: ExtractionResource,
    tokenizer: TokenizerResource,
    chunk_policy: ChunkPolicyResource,
    summarizer: SummarizerResource,
    workers: WorkersResource,
) -> Iterator[MaterializeResult]:
    store = paths.store()
    policy = chunk_policy.policy(tokenizer)
    # One step's PDFs share it: summaries' sentences and headers are counted from memoized pieces.
    counter = PieceCounter(PieceTokens(tokenizer.counter()))
    table_summarizer = summarizer.summarizer(counter, policy.summary_tokens)
    # The cache saves LLM calls. An extractive summary costs less to make again than the cache costs to
    # ask and fill (a SQLite commit, a disk sync, per PDF with tables): it has none.
    cache = SummaryCache(paths.output_path / "cache") if table_summarizer.kind == "llm" else None
    settings = stage_settings(extraction=extraction, tokenizer=tokenizer, chunk_policy=chunk_policy, summarizer=summarizer)

    def build(key: str) -> StageOutput:
        identity, page_records = _load_document(store, key)
        # Only where the chunks are, not their texts (`ChunkPlace`), and only for a PDF with tables. Summaries
        # ship with children (a PDF whose children failed is skipped) and number their canonical-id blocks after theirs.
        stored_parents, stored_children = [], []
        if has_table_blocks(page_records):
            stored_parents = [chunk_place_from_dict(row) for row in store.read(PARENTS, key, CHUNK_PLACE_FIELDS)]
            stored_children = [chunk_place_from_dict(row) for row in store.read(CHILDREN, key, CHUNK_PLACE_FIELDS)]
        batch = summarize_tables(
            identity, page_records, stored_parents, policy, counter, table_summarizer, cache, children=stored_children
        )
        stats = batch.stats
        return _chunk_output(
            batch.chunks,
            store.source_sha256(key),
            tables=stats.tables,
            cache_hits=stats.cache_hits,
            llm_calls=stats.llm_calls,
            llm_seconds=round(stats.llm_seconds, 3),
            fallbacks=len(stats.fallbacks),
            tables_per_page=MetadataValue.json({str(page): n for page, n in sorted(stats.tables_per_page.items())}),
            table_types=MetadataValue.json(stats.table_types),
        )

    # Extractive summaries take ~1.5 s of CPU for 5,000 pages, in this process, beside Great Expectations'
    # import (started at the end of chunks) on the other core: a pool would add two processes (~120-180
    # MiB each, the build's peak) for no wall time. An LLM's summaries wait on the endpoint: on workers,
    # PDFs wait side by side (the summary cache is SQLite, safe across processes; a summary is the same
    # whether a copy of the table was summarized before it or beside it: only `cache_hits` differs).
    in_workers = workers.count() if table_summarizer.kind == "llm" else 1
    yield from run_per_pdf(context, store, build, TABLE_SUMMARIES.version(settings), workers=in_workers)
