"""Per-PDF chunk metadata for the UI, as numbers where the UI can plot them."""

from typing import Any, Sequence

from dagster import MetadataValue

from pocket_assets.core.chunk_stats import markdown_preview, token_histogram
from pocket_assets.core.records import ChunkRecord


def chunk_metadata(chunks: Sequence[ChunkRecord]) -> dict[str, Any]:
    metadata: dict[str, Any] = {"chunks": len(chunks)}
    histogram = token_histogram(chunks)
    if histogram is not None:
        metadata.update(
            tokens_min=histogram.minimum,
            tokens_median=histogram.median,
            tokens_p95=histogram.p95,
            tokens_max=histogram.maximum,
            preview=MetadataValue.md(markdown_preview(chunks)),
        )
    if chunks:
        metadata["chunker_version"] = chunks[0].chunker_version
        metadata["policy_hash"] = chunks[0].policy_hash
    return metadata
