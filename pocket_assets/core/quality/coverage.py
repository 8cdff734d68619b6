"""The `coverage` gate: nothing lost between the pages and the chunks.

Every page with text has a chunk, parent and child texts are their offsets' slice of the canonical
text, and children cover the text outside tables. Text the chunking rule leaves out (shorter than
`min_chars` with nothing after it to join, warned as `text_below_minimum`) is accounted for, not a gap.
"""

from __future__ import annotations

import bisect
from typing import Iterable, Sequence

from pocket_assets.core.chunking.segments import TEXT_BELOW_MINIMUM, TextBelowMinimum, plan_segments
from pocket_assets.core.document import canonical_text
from pocket_assets.core.policy import ChunkPolicy
from pocket_assets.core.quality.chunk_stats import pages_without_chunks
from pocket_assets.core.quality.gate_results import COVERAGE_GATE, OFFENDING_LIMIT, GateResult
from pocket_assets.core.records import ChunkRecord, PageRecord

# Coverage expectations (plain Python, not GE: they compare chunks with the pages).
PAGES_HAVE_CHUNKS = "pages_with_text_have_a_chunk"
TEXT_MATCHES_OFFSETS = "text_is_canonical_slice"
CHILDREN_COVER_TEXT = "children_cover_text_outside_tables"


def check_coverage(
    partition_key: str, chunks: Sequence[ChunkRecord], pages: Sequence[PageRecord], policy: ChunkPolicy
) -> tuple[GateResult, ...]:
    """Nothing lost (DESIGN.md section 4): the chunks account for every page and character.

    What the policy's minimum leaves out is asked of the chunking rule itself (`plan_segments`),
    the same function the chunker follows, so a chunker that dropped anything else still fails.
    """
    text = canonical_text(pages)
    left_out = plan_segments(pages, policy.page_mode, policy.min_chars).left_out
    return (
        _pages_have_chunks(partition_key, chunks, pages, left_out),
        _text_matches_offsets(chunks, text),
        _children_cover_text(partition_key, chunks, pages, text, left_out),
    )


def _pages_have_chunks(
    partition_key: str,
    chunks: Sequence[ChunkRecord],
    pages: Sequence[PageRecord],
    left_out: Sequence[TextBelowMinimum],
) -> GateResult:
    excused = {short.page for short in left_out}
    with_text = [page.page for page in pages if page.text.strip() and page.page not in excused]
    missing = pages_without_chunks(chunks, with_text)
    return GateResult(
        gate=COVERAGE_GATE,
        expectation=PAGES_HAVE_CHUNKS,
        passed=not missing,
        checked_count=len(with_text),
        unexpected_count=len(missing),
        offending=tuple((partition_key, page) for page in missing[:OFFENDING_LIMIT]),
        detail="every page with non-whitespace text is in some chunk's pages"
        + (f" (pages {', '.join(map(str, sorted(excused)))}: {TEXT_BELOW_MINIMUM}, left out)" if excused else ""),
    )


def _text_matches_offsets(chunks: Sequence[ChunkRecord], text: str) -> GateResult:
    """Coverage is judged on offsets, so the offsets must be the truth about each text."""
    sliced = [chunk for chunk in chunks if chunk.chunk_type in ("parent", "child")]
    wrong = [chunk for chunk in sliced if text[chunk.char_start : chunk.char_end] != chunk.text]
    return GateResult(
        gate=COVERAGE_GATE,
        expectation=TEXT_MATCHES_OFFSETS,
        passed=not wrong,
        checked_count=len(sliced),
        unexpected_count=len(wrong),
        offending=tuple((chunk.id, chunk.page) for chunk in wrong[:OFFENDING_LIMIT]),
        detail="parent and child text == canonical_text[char_start:char_end]",
    )


def _children_cover_text(
    partition_key: str,
    chunks: Sequence[ChunkRecord],
    pages: Sequence[PageRecord],
    text: str,
    left_out: Sequence[TextBelowMinimum],
) -> GateResult:
    spans = [(chunk.char_start, chunk.char_end) for chunk in chunks if chunk.chunk_type == "child"]
    spans += list(_table_spans(pages))
    spans += [(short.char_start, short.char_end) for short in left_out]
    gaps = list(_uncovered_ranges(text, spans))
    page_starts = [page.char_start for page in pages]
    offending = tuple(
        (f"{partition_key} chars {start}-{end}", pages[bisect.bisect_right(page_starts, start) - 1].page)
        for start, end in gaps[:OFFENDING_LIMIT]
    )
    return GateResult(
        gate=COVERAGE_GATE,
        expectation=CHILDREN_COVER_TEXT,
        passed=not gaps,
        checked_count=len(text),
        unexpected_count=len(gaps),
        offending=offending,
        detail=(
            f"{sum(end - start for start, end in gaps)} characters in {len(gaps)} uncovered ranges"
            " (each from its first to its last non-whitespace character)"
            if gaps
            else "every non-whitespace character outside tables is in a child"
            + (f" or left out as {TEXT_BELOW_MINIMUM} ({len(left_out)} pages)" if left_out else "")
        ),
    )


def _table_spans(pages: Iterable[PageRecord]) -> Iterable[tuple[int, int]]:
    """Tables are summarised, not embedded whole, so children need not cover them."""
    for page in pages:
        for block in page.blocks:
            if block.kind == "table":
                yield page.char_start + block.char_start, page.char_start + block.char_end


def _uncovered_ranges(text: str, spans: Iterable[tuple[int, int]]) -> Iterable[tuple[int, int]]:
    """Maximal stretches of `text` outside every span that hold non-whitespace, trimmed."""
    position = 0
    for start, end in sorted(spans) + [(len(text), len(text))]:
        if start > position:
            gap = text[position:start]
            trimmed = gap.lstrip()
            if trimmed:
                first = position + len(gap) - len(trimmed)
                yield first, position + len(gap.rstrip())
        position = max(position, end)
