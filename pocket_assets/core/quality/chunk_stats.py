"""Numbers a maintainer scans after a build: counts, token distribution, a readable preview."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Sequence

from pocket_assets.core.records import ChunkRecord

PREVIEW_CHUNKS = 3
PREVIEW_CHARS = 600


@dataclass(frozen=True)
class TokenHistogram:
    minimum: int
    median: float
    p95: float
    maximum: int


def token_histogram(chunks: Sequence[ChunkRecord]) -> TokenHistogram | None:
    if not chunks:
        return None
    counts = sorted(chunk.tokens for chunk in chunks)
    p95 = counts[min(len(counts) - 1, max(0, round(0.95 * len(counts)) - 1))]
    return TokenHistogram(counts[0], float(statistics.median(counts)), float(p95), counts[-1])


def pages_without_chunks(chunks: Sequence[ChunkRecord], pages_with_text: Sequence[int]) -> list[int]:
    covered = {page for chunk in chunks for page in chunk.pages}
    return [page for page in pages_with_text if page not in covered]


def markdown_preview(chunks: Sequence[ChunkRecord], count: int = PREVIEW_CHUNKS) -> str:
    """The first chunks as Markdown, each under its id and citation."""
    parts = []
    for chunk in chunks[:count]:
        body = chunk.text if len(chunk.text) <= PREVIEW_CHARS else chunk.text[:PREVIEW_CHARS] + " …"
        parts.append(f"**{chunk.id}** (page {chunk.page}, {chunk.tokens} tokens)\n\n{body}")
    return "\n\n---\n\n".join(parts)


def token_bins(chunks: Sequence[ChunkRecord], width: int = 64) -> list[tuple[int, int, int]]:
    """(low, high, count) per `width`-token bin from 0 to the largest chunk, empty bins included."""
    if not chunks:
        return []
    counts = [0] * (max(chunk.tokens for chunk in chunks) // width + 1)
    for chunk in chunks:
        counts[chunk.tokens // width] += 1
    return [(index * width, (index + 1) * width - 1, count) for index, count in enumerate(counts)]


def histogram_markdown(chunks: Sequence[ChunkRecord], width: int = 64, bar_width: int = 30) -> str:
    bins = token_bins(chunks, width)
    peak = max((count for _, _, count in bins), default=0) or 1
    lines = ["| tokens | chunks | |", "|---|---|---|"]
    lines += [f"| {low}-{high} | {count} | {'█' * round(bar_width * count / peak)} |" for low, high, count in bins]
    return "\n".join(lines)
