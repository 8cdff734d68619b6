"""The numbers and short texts a stage's materialization shows for one PDF: small, the manifest keeps the rest."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pocket_assets.core.quality.chunk_stats import (
    chunks_per_type,
    pages_without_chunks,
    preview_markdown,
    token_histogram,
)
from pocket_assets.core.records import ChunkRecord, PageRecord

# How many warnings a materialization lists (the manifest keeps them all).
LISTED_WARNINGS = 20
# The validated chunks' preview: a few SDK lines spread over the PDF, each cut short (the metadata stays small).
PREVIEW_LINES = 3
PREVIEW_CHARS = 400


class MarkdownMetadata(str):
    """A metadata value written in Markdown: the Dagster layer shows it so (a plain str is shown as text)."""


def bullets(lines: Sequence[str]) -> str:
    shown = [f"- {line}" for line in lines[:LISTED_WARNINGS]]
    if len(lines) > LISTED_WARNINGS:
        shown.append(f"- … and {len(lines) - LISTED_WARNINGS} more (in the stage's manifest)")
    return "\n".join(shown)


def validated_metadata(chunks: Sequence[ChunkRecord], pages: Sequence[PageRecord]) -> dict[str, Any]:
    """What a maintainer reads of a PDF's validated chunks, small: counts per type, the token
    figures of what the phone embeds, pages with text and no chunk, and a short preview of SDK lines."""
    embedded = [chunk for chunk in chunks if chunk.chunk_type != "parent"]
    uncovered = pages_without_chunks(chunks, [page.page for page in pages if page.text.strip()])
    metadata: dict[str, Any] = {
        "chunks": len(chunks),
        **{f"chunks_{kind}": count for kind, count in chunks_per_type(chunks).items()},
        "pages_without_chunks": len(uncovered),
    }
    histogram = token_histogram(embedded)
    if histogram is not None:
        metadata.update(
            tokens_min=histogram.minimum, tokens_median=histogram.median, tokens_p95=histogram.p95, tokens_max=histogram.maximum
        )
    warned = [page.page for page in pages if page.warnings]
    metadata["preview"] = MarkdownMetadata(preview_markdown(embedded, warned, PREVIEW_LINES, PREVIEW_CHARS))
    return metadata
