"""Per-PDF chunk metadata for the UI, as numbers where the UI can plot them."""

from typing import Any, Sequence

from dagster import MetadataValue

from pocket_assets.core.quality.chunk_stats import (
    chunks_per_type,
    histogram_markdown,
    pages_without_chunks,
    preview_markdown,
    token_histogram,
)
from pocket_assets.core.records import ChunkRecord, PageRecord


def chunk_metadata(chunks: Sequence[ChunkRecord], pages: Sequence[PageRecord] = ()) -> dict[str, Any]:
    """`pages`, when given, adds the PDF's pages, warnings and tables, and the pages with text no chunk covers."""
    metadata: dict[str, Any] = {"chunks": len(chunks)}
    metadata.update({f"chunks_{chunk_type}": count for chunk_type, count in chunks_per_type(chunks).items()})
    warned_pages = [page.page for page in pages if page.warnings]
    if pages:
        uncovered = pages_without_chunks(chunks, [page.page for page in pages if page.text.strip()])
        metadata.update(
            pages=len(pages),
            pages_without_chunks=len(uncovered),
            pages_without_chunks_list=MetadataValue.text(", ".join(map(str, uncovered)) or "none"),
            warnings=sum(len(page.warnings) for page in pages),
            tables=sum(1 for page in pages for block in page.blocks if block.kind == "table"),
        )
    histogram = token_histogram(chunks)
    if histogram is not None:
        metadata.update(
            tokens_min=histogram.minimum,
            tokens_median=histogram.median,
            tokens_p95=histogram.p95,
            tokens_max=histogram.maximum,
            token_histogram=MetadataValue.md(histogram_markdown(chunks)),
        )
    metadata["preview"] = MetadataValue.md(preview_markdown(chunks, warned_pages))
    if chunks:
        metadata["chunker_version"] = chunks[0].chunker_version
        metadata["policy_hash"] = chunks[0].policy_hash
    return metadata
