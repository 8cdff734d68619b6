"""Per-PDF chunk metadata for the UI, as numbers where the UI can plot them."""

from typing import Any, Sequence

from dagster import MetadataValue

from pocket_assets.core.quality.chunk_stats import histogram_markdown, markdown_preview, pages_without_chunks, token_histogram
from pocket_assets.core.records import ChunkRecord, PageRecord


def chunk_metadata(chunks: Sequence[ChunkRecord], pages: Sequence[PageRecord] = ()) -> dict[str, Any]:
    """`pages`, when given, adds the pages with text that no chunk covers."""
    metadata: dict[str, Any] = {"chunks": len(chunks)}
    if pages:
        uncovered = pages_without_chunks(chunks, [page.page for page in pages if page.text.strip()])
        metadata["pages_without_chunks"] = len(uncovered)
        metadata["pages_without_chunks_list"] = MetadataValue.text(", ".join(map(str, uncovered)) or "none")
    histogram = token_histogram(chunks)
    if histogram is not None:
        metadata.update(
            tokens_min=histogram.minimum,
            tokens_median=histogram.median,
            tokens_p95=histogram.p95,
            tokens_max=histogram.maximum,
            token_histogram=MetadataValue.md(histogram_markdown(chunks)),
            preview=MetadataValue.md(markdown_preview(chunks)),
        )
    if chunks:
        metadata["chunker_version"] = chunks[0].chunker_version
        metadata["policy_hash"] = chunks[0].policy_hash
    return metadata
