"""Chunking: parents for LLM context, children for search, a summary per table.

The assets' code version is the chunker version plus the policy hash, so a
chunker bump or a policy change marks every PDF stale in the UI.
"""

from typing import Any

from dagster import AssetExecutionContext, MaterializeResult, MetadataValue, asset

from pocket_assets.core.chunker import chunk_document
from pocket_assets.core.records import ChunkRecord, chunk_from_dict, page_from_dict, pdf_identity_from_dict, to_dict
from pocket_assets.core.schemas import CHUNK_SCHEMA
from pocket_assets.core.storage import PartitionStore
from pocket_assets.core.summaries import summarize_tables
from pocket_assets.core.summary_cache import SummaryCache
from pocket_assets.defs.assets.ingest import pages
from pocket_assets.defs.chunk_metadata import chunk_metadata
from pocket_assets.defs.partitions import pdf_partitions, single_run
from pocket_assets.defs.per_pdf import StageOutput, run_per_pdf
from pocket_assets.defs.resources import (
    ChunkPolicyResource,
    CorpusPaths,
    SummarizerResource,
    TokenizerResource,
    environment_policy,
)
from pocket_assets.defs.summaries import sum_of

CODE_VERSION = environment_policy().code_version


def _load_document(store: PartitionStore, key: str) -> tuple[Any, tuple[Any, ...]]:
    identity = pdf_identity_from_dict(store.read("raw_pdf", key)[0])
    return identity, tuple(page_from_dict(row) for row in store.read("pages", key))


def _chunk_output(chunks: tuple[ChunkRecord, ...], sha256: str, **extra_metadata: Any) -> StageOutput:
    return StageOutput(
        rows=[to_dict(chunk) for chunk in chunks],
        schema=CHUNK_SCHEMA,
        source_sha256=sha256,
        metadata={**chunk_metadata(chunks), **extra_metadata},
        extra={"policy_hash": chunks[0].policy_hash if chunks else None},
    )


@asset(
    partitions_def=pdf_partitions,
    backfill_policy=single_run,
    group_name="chunking",
    kinds={"parquet"},
    deps=[pages],
    code_version=CODE_VERSION,
    description="~1024-token parent chunks (15% overlap) for LLM context, cut at headings, paragraphs, "
    "list items and sentences, never inside a table; every DESIGN.md chunk field filled.",
)
def parents(
    context: AssetExecutionContext, paths: CorpusPaths, tokenizer: TokenizerResource, chunk_policy: ChunkPolicyResource
) -> MaterializeResult:
    store = paths.store()
    policy = chunk_policy.policy(tokenizer.name)

    def build(key: str) -> StageOutput:
        identity, page_records = _load_document(store, key)
        chunked = chunk_document(identity, page_records, policy, tokenizer.counter())
        return _chunk_output(chunked.parents, identity.sha256)

    return run_per_pdf(context, store, build, CODE_VERSION, summarize=sum_of("chunks"))


@asset(
    partitions_def=pdf_partitions,
    backfill_policy=single_run,
    group_name="chunking",
    kinds={"parquet"},
    deps=[parents],
    code_version=CODE_VERSION,
    description="~450-token child chunks (15% overlap) inside their parent, for embedding and search; "
    "the string the phone embeds (text + citation + prompt) never exceeds the cap.",
)
def children(
    context: AssetExecutionContext, paths: CorpusPaths, tokenizer: TokenizerResource, chunk_policy: ChunkPolicyResource
) -> MaterializeResult:
    store = paths.store()
    policy = chunk_policy.policy(tokenizer.name)

    def build(key: str) -> StageOutput:
        identity, page_records = _load_document(store, key)
        stored_parents = tuple(chunk_from_dict(row) for row in store.read("parents", key))
        chunked = chunk_document(identity, page_records, policy, tokenizer.counter())
        if chunked.parents != stored_parents:
            raise RuntimeError(f"{identity.source}: parents changed since they were stored; rebuild parents first")
        return _chunk_output(chunked.children, identity.sha256)

    return run_per_pdf(context, store, build, CODE_VERSION, summarize=sum_of("chunks"))


@asset(
    partitions_def=pdf_partitions,
    backfill_policy=single_run,
    group_name="chunking",
    kinds={"parquet"},
    deps=[children],
    code_version=CODE_VERSION,
    description="A ~50-token summary per table (chunk_type table_summary), typed schedule/scoring/other, "
    "linked to the parent holding the table; extractive offline by default, an LLM endpoint on demand.",
)
def table_summaries(
    context: AssetExecutionContext,
    paths: CorpusPaths,
    tokenizer: TokenizerResource,
    chunk_policy: ChunkPolicyResource,
    summarizer: SummarizerResource,
) -> MaterializeResult:
    store = paths.store()
    policy = chunk_policy.policy(tokenizer.name)
    counter = tokenizer.counter()
    table_summarizer = summarizer.summarizer(counter, policy.summary_tokens)
    cache = SummaryCache(paths.output_path / "cache")

    def build(key: str) -> StageOutput:
        identity, page_records = _load_document(store, key)
        stored_parents = [chunk_from_dict(row) for row in store.read("parents", key)]
        store.read("children", key)  # summaries ship with children: skip the PDF if they failed
        batch = summarize_tables(identity, page_records, stored_parents, policy, counter, table_summarizer, cache)
        stats = batch.stats
        return _chunk_output(
            batch.chunks,
            identity.sha256,
            tables=stats.tables,
            cache_hits=stats.cache_hits,
            llm_calls=stats.llm_calls,
            llm_seconds=round(stats.llm_seconds, 3),
            fallbacks=len(stats.fallbacks),
            tables_per_page=MetadataValue.json({str(page): n for page, n in sorted(stats.tables_per_page.items())}),
            table_types=MetadataValue.json(stats.table_types),
        )

    return run_per_pdf(
        context, store, build, CODE_VERSION, summarize=sum_of("chunks", "tables", "cache_hits", "llm_calls")
    )
