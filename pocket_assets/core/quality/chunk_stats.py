"""Numbers a maintainer scans after a build: counts, token distribution, a readable preview."""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Collection, Sequence

from pocket_assets.core.chunking.embed_text import sdk_line
from pocket_assets.core.records import ChunkRecord

PREVIEW_CHUNKS = 8
# Of the preview's chunks, at most this many are picked for holding a table, and as many for a page with warnings.
PREVIEW_TABLES = 2
PREVIEW_WARNED = 2
EXCERPT_CHARS = 120


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


def chunks_per_type(chunks: Sequence[ChunkRecord]) -> dict[str, int]:
    return dict(sorted(Counter(chunk.chunk_type for chunk in chunks).items()))


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """The start of a text on one line, for tables of offending chunks."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def preview_selection(
    chunks: Sequence[ChunkRecord], warned_pages: Collection[int] = (), count: int = PREVIEW_CHUNKS
) -> list[ChunkRecord]:
    """Chunks that show what the document became, in document order: some holding a table, some
    on a page with extraction warnings, the rest spread evenly over its pages (not its first
    chunks, which are the title page, copyright and contents of most documents)."""
    ordered = sorted(chunks, key=lambda chunk: (chunk.page, chunk.chunk_index, chunk.id))
    tables = [c for c in ordered if c.chunk_type == "table_summary" or c.content_features.table_count]
    warned = [c for c in ordered if set(c.pages) & set(warned_pages)]
    chosen = {c.id: c for c in spread(tables, PREVIEW_TABLES) + spread(warned, PREVIEW_WARNED)}
    rest = [c for c in ordered if c.id not in chosen]
    chosen.update((c.id, c) for c in spread(rest, max(0, count - len(chosen))))
    return [c for c in ordered if c.id in chosen]


def preview_markdown(
    chunks: Sequence[ChunkRecord], warned_pages: Collection[int] = (), count: int = PREVIEW_CHUNKS, max_chars: int = 0
) -> str:
    """The preview's chunks under their id, page, tokens and type, each as the phone's SDK file holds it
    (parents, which the phone never embeds, as their text); each cut at `max_chars` when given."""
    parts = []
    for chunk in preview_selection(chunks, warned_pages, count):
        line = sdk_line(chunk.text, chunk.source, chunk.page, chunk.context) if chunk.chunk_type != "parent" else chunk.text
        if max_chars and len(line) > max_chars:
            line = line[: max_chars - 1] + "…"
        warned = " · page has warnings" if set(chunk.pages) & set(warned_pages) else ""
        parts.append(
            f"**{chunk.id}** · page {chunk.page} · {chunk.tokens} tokens · {chunk.chunk_type}{warned}\n\n"
            f"```\n{line}\n```"
        )
    return "\n\n".join(parts) or "no chunks"


def spread(items: Sequence[ChunkRecord], count: int) -> list[ChunkRecord]:
    """`count` items at evenly spaced places from the first to the last."""
    if count <= 0 or not items:
        return []
    if count >= len(items):
        return list(items)
    if count == 1:
        return [items[len(items) // 2]]
    return [items[round(index * (len(items) - 1) / (count - 1))] for index in range(count)]
