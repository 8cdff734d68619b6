"""Chunking: parents for LLM context, children for search, a summary per table.

The assets' code version is the chunker version plus the policy hash, so a
chunker bump or a policy change marks every PDF stale in the UI.
"""

from typing import Any, Sequence

from dagster import AssetExecutionContext, MaterializeResult, MetadataValue

from pocket_assets.core.chunking.chunker import ChunkedDocument, chunk_document
from pocket_assets.core.policy import ChunkPolicy
from pocket_assets.core.records import (
    ChunkRecord,
    PageRecord,
    PdfIdentity,
    chunk_from_dict,
    page_from_dict,
    pdf_identity_from_dict,
    to_dict,
)
from pocket_assets.core.schemas import CHUNK_SCHEMA
from pocket_assets.core.chunking.slice_counts import PieceTokens
from pocket_assets.runstate.storage import PartitionStore
from pocket_assets.core.tables.summaries import summarize_tables
from pocket_assets.core.tables.cache import SummaryCache
from pocket_assets.defs.assets.ingest import pages
from pocket_assets.defs.chunk_metadata import chunk_metadata
from pocket_assets.defs.partitions import CODE_VERSION, pdf_asset
from pocket_assets.defs.per_pdf import StageOutput, run_per_pdf
from pocket_assets.defs.resources import (
    ChunkPolicyResource,
    CorpusPaths,
    SummarizerResource,
    TokenizerResource,
)
from pocket_assets.defs.summaries import sum_of


def _load_document(store: PartitionStore, key: str) -> tuple[PdfIdentity, tuple[PageRecord, ...]]:
    identity = pdf_identity_from_dict(store.read("raw_pdf", key)[0])
    return identity, tuple(page_from_dict(row) for row in store.read("pages", key))


# Children made alongside parents in this process, waiting for the `children` step of the same
# run: parents and children come from one chunking pass. Each entry is taken once; a `children`
# step in another process (or after a parents-only run) chunks again and checks the parents match.
_CHILDREN_HANDOFF: dict[tuple, ChunkedDocument] = {}


def _chunk(store: PartitionStore, key: str, policy: ChunkPolicy, piece_tokens: PieceTokens) -> ChunkedDocument:
    """One step's PDFs share `piece_tokens`: words common to them are tokenized once."""
    identity, page_records = _load_document(store, key)
    return chunk_document(identity, page_records, policy, piece_tokens.counter, piece_tokens)


def _handoff_key(store: PartitionStore, key: str, policy: ChunkPolicy, tokenizer: str) -> tuple:
    """Keyed by the run that wrote the pages, so a rebuilt PDF is never served stale children."""
    pages_manifest = store.manifest("pages", key)
    return (str(store.root), key, pages_manifest.run_id if pages_manifest else "", policy, tokenizer)


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
        schema=CHUNK_SCHEMA,
        source_sha256=sha256,
        metadata={**chunk_metadata(chunks), **extra_metadata},
        extra={"policy_hash": chunks[0].policy_hash if chunks else None, "warnings": list(warnings)},
    )


@pdf_asset(
    group_name="chunking",
    deps=[pages],
    description="~1024-token parent chunks (15% overlap) for LLM context, cut at headings, paragraphs, "
    "list items and sentences, never inside a table; every DESIGN.md chunk field filled.",
    versioned=True,
)
def parents(
    context: AssetExecutionContext, paths: CorpusPaths, tokenizer: TokenizerResource, chunk_policy: ChunkPolicyResource
) -> MaterializeResult:
    store = paths.store()
    policy = chunk_policy.policy(tokenizer.name)
    piece_tokens = PieceTokens(tokenizer.counter())

    def build(key: str) -> StageOutput:
        chunked = _chunk(store, key, policy, piece_tokens)
        _CHILDREN_HANDOFF[_handoff_key(store, key, policy, tokenizer.name)] = chunked
        return _chunk_output(chunked.parents, store.manifest("pages", key).source_sha256)

    return run_per_pdf(context, store, build, CODE_VERSION, summarize=sum_of("chunks"))


@pdf_asset(
    group_name="chunking",
    deps=[parents],
    description="~450-token child chunks (15% overlap) inside their parent, for embedding and search; "
    "the string the phone embeds (text + citation + prompt) never exceeds the cap.",
    versioned=True,
)
def children(
    context: AssetExecutionContext, paths: CorpusPaths, tokenizer: TokenizerResource, chunk_policy: ChunkPolicyResource
) -> MaterializeResult:
    store = paths.store()
    policy = chunk_policy.policy(tokenizer.name)
    piece_tokens = PieceTokens(tokenizer.counter())

    def build(key: str) -> StageOutput:
        stored_parents = tuple(chunk_from_dict(row) for row in store.read("parents", key))
        made = _CHILDREN_HANDOFF.pop(_handoff_key(store, key, policy, tokenizer.name), None)
        if made is None:
            chunked = _chunk(store, key, policy, piece_tokens)
            if chunked.parents != stored_parents:
                raise RuntimeError(f"{key}: stored parents come from another chunking; materialize parents first")
            made = chunked
        return _chunk_output(made.children, store.manifest("pages", key).source_sha256, made.warnings)

    return run_per_pdf(context, store, build, CODE_VERSION, summarize=sum_of("chunks", "text_below_minimum"))


@pdf_asset(
    group_name="chunking",
    deps=[children],
    description="A ~50-token summary per table (chunk_type table_summary), typed schedule/scoring/other, "
    "linked to the parent holding the table; extractive offline by default, an LLM endpoint on demand.",
    versioned=True,
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
        # Summaries ship with children (a PDF whose children failed is skipped) and number their
        # canonical-id blocks after theirs.
        stored_children = [chunk_from_dict(row) for row in store.read("children", key)]
        batch = summarize_tables(
            identity, page_records, stored_parents, policy, counter, table_summarizer, cache, children=stored_children
        )
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
