"""Parents and children: token-accurate windows cut at the strongest boundary, with exact offsets.

Every page is tokenized once, offsets included (`slice_counts` assembles them
from the page's distinct pieces); windows are planned on those offsets against
the break points of `units.layout_document`, never by re-tokenizing
candidates. The final texts are then counted exactly, and the count is what
`tokens` records and what the limits are checked on: a
window that comes out over its limit (sub-word merges differ a little between a
slice and the whole page) is planned again with a smaller budget, so the limits
are guarantees, not estimates. Exact counts do not need a second tokenizer pass
(`slice_counts`): the page encoding already holds them, except near a slice's
edges.

Contract: for every parent and child, `text == canonical_text[char_start:char_end]`.
A table larger than a child is split at row boundaries and every piece stays
such a slice: the header row is not copied into the pieces' text. Instead the
budget of a piece that starts past the header leaves room for it, and
`table_header_for` returns it, so a consumer that wants the header in front
(an export, a summary) can add it without breaking the cap.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Sequence

from pocket_assets.core import ids
from pocket_assets.core.chunking.context import ContextHeaders
from pocket_assets.core.chunking.embed_text import CONTEXT_SEPARATOR, citation, count_embedded, text_to_embed
from pocket_assets.core.chunking.sections import SectionIndex, build_section_index
from pocket_assets.core.chunking.segments import Span, TextBelowMinimum, plan_segments
from pocket_assets.core.chunking.slice_counts import PieceTokens, SliceCounter, TokenOffsets
from pocket_assets.core.chunking.units import Boundary, DocumentLayout, layout_document
from pocket_assets.core.policy import SEARCHABLE_MAX_TOKENS, ChunkPolicy
from pocket_assets.core.records import ChunkRecord, ContentFeatures, PageRecord, PdfIdentity, new_chunk
from pocket_assets.core.tokenizer import TokenCounter

_MAX_REPLANS = 12
# A slice can encode a token or two longer than the offsets of the whole page say (its first
# word loses the leading space it was merged with), so windows are planned this much short.
_SLICE_MARGIN = 2
# The anchor is the first salient sentence, looked for in the chunk's opening only: the search runs on every chunk.
_ANCHOR_PREFIX_CHARS = 1000
_CONTENT_CATEGORY = {
    "heading": "text",
    "paragraph": "text",
    "list": "text",
    "code": "text",
    "table": "table",
    "equation": "equation",
}

_NEWLINE = re.compile("\n")


@dataclass(frozen=True)
class ChunkedDocument:
    """The chunks, and the text too short to make one that had nothing to join (see `segments`)."""

    parents: tuple[ChunkRecord, ...]
    children: tuple[ChunkRecord, ...]
    left_out: tuple[TextBelowMinimum, ...] = ()

    @property
    def warnings(self) -> tuple[str, ...]:
        return tuple(text.warning() for text in self.left_out)


def chunk_document(
    identity: PdfIdentity,
    pages: Sequence[PageRecord],
    policy: ChunkPolicy,
    counter: TokenCounter,
    piece_tokens: PieceTokens | None = None,
) -> ChunkedDocument:
    """Parents over the document (or over each page in `pdf-page-v1` mode), children inside each parent.

    `piece_tokens` may be shared by the documents of one run (same `counter`): words common to
    them are then tokenized once.
    """
    pages = tuple(pages)
    sections = build_section_index(pages)
    layout = layout_document(pages, sections.article_openings)
    _check_page_spans(layout.text, pages)
    slices = SliceCounter(layout.text, pages, piece_tokens or PieceTokens(counter))
    planner = _Planner(layout, slices.tokens, policy.min_chars)
    locator = _Locator(layout, pages, policy.min_chars)
    headers = ContextHeaders.for_document(identity, pages, policy, slices)  # counted from memoized pieces

    def context_of(span: Span) -> str:
        filing = locator.filing_offset(span)
        return headers.header(sections.section_at(filing).section_path, sections.article_at(filing))

    embedded_tokens: dict[Span, int] = {}  # the last count of each planned child span wins

    def parent_excess(spans: list[Span]) -> tuple[list[int], list[int]]:
        counts = slices.count_slices(spans)
        return counts, [count - policy.parent_tokens for count in counts]

    def child_excess(spans: list[Span]) -> tuple[list[int], list[int]]:
        counts = slices.count_slices(spans)
        embedded = count_embedded(
            slices,
            (  # made as counted: a long document's embedded strings are not all held
                text_to_embed(
                    layout.text[start:end],
                    identity.source,
                    locator.principal_page((start, end)),
                    policy.device.document_prompt,
                    context_of((start, end)),
                )
                for start, end in spans
            ),
            policy.device,
        )
        embedded_tokens.update(zip(spans, embedded))
        # A child that took in a fragment shorter than `min_chars` may pass the child target, never the window
        # nor the seed's cap on a child's text.
        excess = [
            max(count - SEARCHABLE_MAX_TOKENS, embed - policy.max_tokens)
            if span in planner.joined
            else max(count - policy.child_tokens, embed - policy.max_tokens)
            for span, count, embed in zip(spans, counts, embedded)
        ]
        return counts, excess

    segments = plan_segments(pages, policy.page_mode, policy.min_chars)
    parent_plan = _plan_within_limits(
        planner, segments.spans, policy.parent_tokens, policy.parent_overlap, parent_excess
    )
    parent_windows = [window for segment in parent_plan for window in segment]
    text_room = policy.max_tokens - _embedding_reserve(identity, pages, policy, counter)
    child_budget = min(policy.child_tokens, text_room)
    if child_budget < 8:
        raise ValueError(
            f"the device's window ({policy.max_tokens} tokens) leaves no room for text after the document prompt, "
            "special tokens, context header and citation"
        )
    planner.joined.clear()  # a parent that took in a short fragment does not loosen its children's target
    child_plan = _plan_within_limits(
        planner,
        [span for span, _ in parent_windows],
        child_budget,
        policy.child_overlap,
        child_excess,
        slack=min(text_room, SEARCHABLE_MAX_TOKENS) - child_budget,
        by_section=True,
    )
    parents, children = _records(
        identity, policy, layout, locator, sections, parent_windows, child_plan, context_of, embedded_tokens
    )
    return ChunkedDocument(parents, children, segments.left_out)


def table_header_for(chunk: ChunkRecord, pages: Sequence[PageRecord]) -> str:
    """The header of the table a chunk starts inside, past that header; "" otherwise.

    Pieces of an oversized table stay exact slices of the canonical text; this is
    the header a consumer may repeat in front of one (its tokens are reserved in
    the piece's budget).
    """
    layout = layout_document(tuple(pages))
    for atomic in layout.atomics:
        if atomic.kind == "table" and atomic.header_end <= chunk.char_start < atomic.end:
            return layout.text[atomic.start : atomic.header_end]
    return ""


# --- planning -------------------------------------------------------------------------------


class _Planner:
    """Greedy windows over one span: as many tokens as the budget allows, cut at the best break
    (children also start at every top section: `windows(by_section=True)`).

    No window is shorter than `min_chars` when its span is not: a short one joins a neighbour
    (`joined` keeps the windows that took one in, which may pass the budget by the `slack` given).
    """

    def __init__(self, layout: DocumentLayout, tokens: TokenOffsets, min_chars: int) -> None:
        self.text = layout.text
        self.layout = layout
        self.starts = tokens.starts
        self.ends = tokens.ends
        self.min_chars = min_chars
        self.atomic_starts = [atomic.start for atomic in layout.atomics]
        self.atomic_tokens = [self.token_count(atomic.start, atomic.end) for atomic in layout.atomics]
        self.header_tokens = [self.token_count(atomic.start, atomic.header_end) for atomic in layout.atomics]
        self.joined: set[Span] = set()

    def token_count(self, start: int, end: int) -> int:
        """Tokens overlapping [start, end): an upper bound of what the slice encodes to, give or take a merge."""
        return max(0, bisect.bisect_left(self.starts, end) - bisect.bisect_right(self.ends, start))

    def windows(
        self, segment_start: int, segment_end: int, budget: int, overlap: int, slack: int = 0, by_section: bool = False
    ) -> list[Span]:
        """Windows over the segment; `by_section`: a window also starts where each top section opens in it.

        A reader expects a new chapter or section to start a new passage, and a passage filed
        under one section is found by that section's title. A section too short to make a
        chunk alone still joins a neighbour (`_join_short`).
        """
        pieces = self._section_pieces(segment_start, segment_end) if by_section else [(segment_start, segment_end)]
        windows = [window for start, end in pieces for window in self._greedy(start, end, budget, overlap)]
        return self._join_short(windows, budget, budget + slack)

    def _section_pieces(self, segment_start: int, segment_end: int) -> list[Span]:
        """The segment cut where top sections open; a stretch shorter than `min_chars` is planned with the
        section after it (the last one with the section before it), since it could not make a chunk alone."""
        starts = self.layout.section_starts
        bounds = [segment_start]
        for start in starts[bisect.bisect_right(starts, segment_start) : bisect.bisect_left(starts, segment_end)]:
            if self._visible_length(bounds[-1], start) >= self.min_chars:
                bounds.append(start)
        if len(bounds) > 1 and self._visible_length(bounds[-1], segment_end) < self.min_chars:
            bounds.pop()
        bounds.append(segment_end)
        return list(zip(bounds, bounds[1:]))

    def _visible_length(self, start: int, end: int) -> int:
        return len(self.text[start:end].strip())

    def _greedy(self, segment_start: int, segment_end: int, budget: int, overlap: int) -> list[Span]:
        """As many tokens as the budget allows per window, cut at the best break."""
        text = self.text
        start = _skip_space(text, segment_start, segment_end)
        segment_end = _trim_end(text, start, segment_end)
        windows: list[Span] = []
        previous_cut = start
        while start < segment_end:
            window_budget = self._budget_at(start, budget)
            first = bisect.bisect_right(self.ends, start)
            remaining = bisect.bisect_left(self.starts, segment_end) - first
            if remaining <= window_budget:
                windows.append((start, segment_end))
                break
            limit = self.starts[first + window_budget]
            if limit <= start:
                limit = self.ends[first]
            tail = max(self.starts[first + window_budget // 2], start + 1)
            cut, strength = self._cut(start, limit, tail, segment_end, budget, first + window_budget)
            end = _trim_end(text, start, cut)
            if windows and end <= windows[-1][1]:
                # The overlap could not reach past the previous window's end (an atomic unit too big
                # to share a window follows): start where the previous window was cut, without overlap,
                # rather than creeping forward one word at a time.
                start = _skip_space(text, previous_cut, segment_end)
                continue
            windows.append((start, end))
            previous_cut = next_start = cut
            if overlap and strength < Boundary.HEADING:
                next_start = self._overlap_start(start, end, first, overlap, budget) or cut
            start = _skip_space(text, next_start, segment_end)
        return windows

    def _join_short(self, windows: list[Span], budget: int, limit: int) -> list[Span]:
        """Windows shorter than `min_chars` join the previous window (the next first if led by a heading),
        when the union fits `limit`.

        When neither union fits (the neighbour is a nearly full table or code block), the short window
        grows over its neighbour's text instead, as an overlap, until it reaches `min_chars`.
        """
        index = 0
        while index < len(windows):
            start, end = windows[index]
            if end - start >= self.min_chars or len(windows) == 1:
                index += 1
                continue
            with_previous = index > 0 and self.token_count(windows[index - 1][0], end) <= limit
            with_next = index + 1 < len(windows) and self.token_count(start, windows[index + 1][1]) <= limit
            if with_previous and not (with_next and self._opens_with_heading(start)):
                index -= 1
                windows[index : index + 2] = [(windows[index][0], end)]
                self.joined.add(windows[index])  # checked again, like a union with the next window
            elif with_next:
                windows[index : index + 2] = [(start, windows[index + 1][1])]
                self.joined.add(windows[index])  # checked again: a union of two short windows may be short
            else:
                windows[index] = self._grown(windows, index, budget)
                index += 1
        return windows

    def _opens_with_heading(self, position: int) -> bool:
        """A fragment led by a heading belongs with what follows it, where that fits."""
        positions = self.layout.break_positions
        index = bisect.bisect_left(positions, position)
        found = index < len(positions) and positions[index] == position
        return found and self.layout.break_strengths[index] == Boundary.HEADING

    def _grown(self, windows: list[Span], index: int, budget: int) -> Span:
        """A short window widened to `min_chars`: back to the latest break (else word) before it, else forward."""
        start, end = windows[index]
        if index > 0:
            floor = windows[index - 1][0] + 1
            return self._start_reaching(floor, end - self.min_chars, budget), end
        return start, self._end_reaching(start + self.min_chars, windows[index + 1][1])

    def _start_reaching(self, floor: int, latest: int, budget: int) -> int:
        """The latest break in [floor, latest], else word start, else `floor`.

        A break the window may not cut at (a row of a table that fits a window) is taken only when no other
        is there: the table stays whole in the neighbour, this window repeats its last rows as overlap.
        """
        positions = self.layout.break_positions
        backup = None
        for index in range(bisect.bisect_right(positions, latest) - 1, bisect.bisect_left(positions, floor) - 1, -1):
            if self._usable(index, budget):
                return positions[index]
            backup = positions[index] if backup is None else backup
        if backup is not None:
            return backup
        text = self.text
        for position in range(latest, floor - 1, -1):
            if text[position - 1].isspace() and not text[position].isspace():
                return position
        return floor

    def _end_reaching(self, earliest: int, ceiling: int) -> int:
        """The first word end in [earliest, ceiling], else `ceiling`."""
        text = self.text
        for position in range(earliest, ceiling):
            if text[position].isspace() and not text[position - 1].isspace():
                return position
        return ceiling

    def _separators_between(self, low_token: int, end_token: int) -> int:
        """Gaps in the token offsets between these tokens: text outside every page encoding."""
        ends, starts = self.ends, self.starts
        return sum(1 for token in range(low_token, end_token - 1) if ends[token] < starts[token + 1])

    def _budget_at(self, position: int, budget: int) -> int:
        """A piece of an oversized table that starts past the header leaves room for the header."""
        atomic = self._atomic_at(position)
        if atomic < 0 or self.layout.atomics[atomic].kind != "table":
            return budget
        if position < self.layout.atomics[atomic].header_end or self.atomic_tokens[atomic] <= budget:
            return budget
        return max(budget - self.header_tokens[atomic], budget // 2)

    def _atomic_at(self, position: int) -> int:
        index = bisect.bisect_right(self.atomic_starts, position) - 1
        if index >= 0 and position < self.layout.atomics[index].end:
            return index
        return -1

    def _splits_fitting_atomic(self, position: int, budget: int) -> bool:
        atomic = self._atomic_at(position)
        return atomic >= 0 and position > self.layout.atomics[atomic].start and self.atomic_tokens[atomic] <= budget

    def _usable(self, index: int, budget: int) -> bool:
        atomic = self.layout.break_atomic[index]
        return atomic < 0 or self.atomic_tokens[atomic] > budget

    def _cut(
        self, start: int, limit: int, tail: int, segment_end: int, budget: int, limit_token: int
    ) -> tuple[int, int]:
        """Strongest break in the window's second half; a structural break earlier; else a word, else a token.

        Breaks that leave a fragment shorter than `min_chars` on either side lose to any that do not.
        """
        positions = self.layout.break_positions
        strengths = self.layout.break_strengths
        best_key: tuple[bool, bool, int, int] | None = None
        low = bisect.bisect_right(positions, start)
        high = bisect.bisect_right(positions, limit)
        for index in range(low, high):
            position = positions[index]
            strength = strengths[index]
            in_tail = position >= tail
            if not (in_tail or strength >= Boundary.PARAGRAPH) or not self._usable(index, budget):
                continue
            long_enough = position - start >= self.min_chars and segment_end - position >= self.min_chars
            key = (long_enough, in_tail, strength, position)
            if best_key is None or key > best_key:
                best_key = key
        if best_key is not None:
            return best_key[3], best_key[2]
        # A word boundary, in the tail first, then anywhere in the window: a short window beats a
        # token cut inside a table (code, equation) that fits a window alone, e.g. after its heading.
        first = bisect.bisect_right(self.ends, start)
        for token in range(limit_token, first, -1):
            position = self.starts[token]
            if start < position <= limit and self.text[position].isspace():
                if not self._splits_fitting_atomic(position, budget):
                    return position, Boundary.WORD
        return limit, Boundary.TOKEN

    def _overlap_start(self, start: int, end: int, first: int, overlap: int, budget: int) -> int | None:
        """Where the next window starts to repeat at most `overlap` tokens, at the best break available.

        Inside a table, code or equation it starts only at a row (line) break. The lower bound is
        one token inside the budget (slices may encode one token longer than
        offsets say) and always after this window's start, so overlap never runs back past it.
        """
        end_token = bisect.bisect_left(self.starts, end)
        low_token = max(end_token - overlap + 1, first + 1)
        # Page separators are in no page's encoding, so offsets miss a token for each one crossed.
        while low_token < end_token:
            shifted = max(end_token - overlap + 1 + self._separators_between(low_token, end_token), first + 1)
            if shifted <= low_token:
                break
            low_token = shifted
        if low_token >= end_token:
            return None
        low = max(self.starts[low_token], start + 1)
        positions = self.layout.break_positions
        strengths = self.layout.break_strengths
        best: tuple[int, int] | None = None
        for index in range(bisect.bisect_left(positions, low), bisect.bisect_left(positions, end)):
            if self._usable(index, budget) and (best is None or strengths[index] > best[0]):
                best = (strengths[index], positions[index])
        if best is not None:
            return best[1]
        for token in range(low_token, end_token):
            position = self.starts[token]
            if position >= low and self.text[position].isspace():
                word = _skip_space(self.text, position, end)
                if word < end and self._atomic_at(word) < 0:
                    return word
        return None


def _plan_within_limits(
    planner: _Planner,
    segments: Sequence[Span],
    budget: int,
    overlap: int,
    measure: Callable[[list[Span]], tuple[list[int], list[int]]],
    slack: int = 0,
    by_section: bool = False,
) -> list[list[tuple[Span, int]]]:
    """Plan every segment, count the results in one batch, re-plan only the segments that overflowed.

    `slack`: tokens past the budget a window may take to join a fragment shorter than `min_chars`.
    """
    budgets = [budget] * len(segments)
    plans: list[list[tuple[Span, int]]] = [[] for _ in segments]
    pending = list(range(len(segments)))
    for _ in range(_MAX_REPLANS):
        if not pending:
            return plans
        planned = {
            index: planner.windows(*segments[index], budgets[index] - _SLICE_MARGIN, overlap, slack, by_section)
            for index in pending
        }
        flat = [span for index in pending for span in planned[index]]
        counts, excess = measure(flat)
        cursor = 0
        still_over = []
        for index in pending:
            size = len(planned[index])
            worst = max(excess[cursor : cursor + size], default=0)
            plans[index] = list(zip(planned[index], counts[cursor : cursor + size]))
            if worst > 0:
                budgets[index] -= worst + 1
                if budgets[index] < 4:
                    raise ValueError(f"cannot fit span {segments[index]} under the token limit")
                still_over.append(index)
            cursor += size
        pending = still_over
    if pending:
        raise ValueError(f"token limit still exceeded after {_MAX_REPLANS} re-plans for spans {pending}")
    return plans


def _embedding_reserve(
    identity: PdfIdentity, pages: Sequence[PageRecord], policy: ChunkPolicy, counter: TokenCounter
) -> int:
    """Tokens the phone adds around a child's text: the citation (widest page number), the prompt, the
    special tokens and the context header (at most `policy.header_tokens`, plus its separator)."""
    widest_page = max((page.page for page in pages), default=1)
    suffix, prompt, separator = counter.count_batch(
        [
            " " + citation(identity.source, widest_page),
            text_to_embed("", identity.source, widest_page, policy.device.document_prompt),
            CONTEXT_SEPARATOR,
        ]
    )
    header = policy.header_tokens + separator if policy.header_tokens else 0
    return max(suffix, prompt) + policy.device.special_tokens + header + 2


def _check_page_spans(text: str, pages: Sequence[PageRecord]) -> None:
    for page in pages:
        if text[page.char_start : page.char_end] != page.text:
            raise ValueError(f"page {page.page}: its span does not match the canonical text (use assemble_pages)")


def _skip_space(text: str, start: int, end: int) -> int:
    while start < end and text[start].isspace():
        start += 1
    return start


def _trim_end(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


# --- records --------------------------------------------------------------------------------


def _principal(shares: list[tuple[int, int]]) -> int:
    """The page holding most of a span (the first of equals); 1 for a span on no page."""
    return max(shares, key=lambda item: (item[1], -item[0]))[0] if shares else 1


class _Locator:
    """Offsets to pages, lines and block structure, by binary search."""

    def __init__(self, layout: DocumentLayout, pages: Sequence[PageRecord], min_chars: int) -> None:
        self.pages = [page for page in pages if page.text]
        self.section_starts = layout.section_starts
        self.min_chars = min_chars
        self.page_starts = [page.char_start for page in self.pages]
        self.text = text = layout.text
        self.newlines = [match.start() for match in _NEWLINE.finditer(text)]
        self.structures = layout.structures
        self.structure_starts = [structure.start for structure in layout.structures]
        self.structure_ends = [structure.end for structure in layout.structures]

    def page_shares(self, span: Span) -> list[tuple[int, int]]:
        start, end = span
        shares = []
        index = max(bisect.bisect_right(self.page_starts, start) - 1, 0)
        while index < len(self.pages) and self.pages[index].char_start < end:
            page = self.pages[index]
            share = min(end, page.char_end) - max(start, page.char_start)
            if share > 0:
                shares.append((page.page, share))
            index += 1
        return shares

    def principal_page(self, span: Span) -> int:
        return _principal(self.page_shares(span))

    def filing_offset(self, span: Span) -> int:
        """Where a span's section path, article and context header are read: the last heading of the chain
        that opens it, else its first character.

        A passage that opens with "7 R Miscellanea" and "7.1 How can I ..." (or "# Comptabilité" and
        "## Article 10") is about 7.1 inside 7 (article 10), while at its first character the previous
        section (article 9) is still in force; a passage opening in the middle of an article keeps it.
        Text that is no heading and shorter than `min_chars` before the span's first section opening
        (a stray line above a document's title) was planned with that section, and is filed with it.
        """
        start, end = span
        filing = position = _skip_space(self.text, start, end)
        index = bisect.bisect_left(self.structure_starts, position)
        opening = bisect.bisect_right(self.section_starts, position)
        if (
            (index == len(self.structures) or self.structures[index].kind != "heading")
            and opening < len(self.section_starts)
            and self.section_starts[opening] < end
            and len(self.text[position : self.section_starts[opening]].strip()) < self.min_chars
        ):
            filing = position = self.section_starts[opening]
            index = bisect.bisect_left(self.structure_starts, position)
        while index < len(self.structures) and position < end:
            heading = self.structures[index]
            if heading.kind != "heading" or heading.start != position or heading.end > end:
                break  # (a heading cut by the span's end is not one it opens with)
            filing = heading.start
            position = _skip_space(self.text, heading.end, end)
            index += 1
        return filing

    def line(self, offset: int) -> int:
        return bisect.bisect_left(self.newlines, offset) + 1

    def features(self, span: Span) -> tuple[str, ContentFeatures]:
        start, end = span
        kinds: Counter[str] = Counter()
        for index in range(
            bisect.bisect_right(self.structure_ends, start), bisect.bisect_left(self.structure_starts, end)
        ):
            structure = self.structures[index]
            if structure.kind != "heading" or structure.start >= start:
                kinds[structure.kind] += 1
        categories = {_CONTENT_CATEGORY.get(kind, "text") for kind in kinds} or {"text"}
        content_type = categories.pop() if len(categories) == 1 else "mixed"
        return content_type, ContentFeatures(
            heading_count=kinds["heading"],
            list_count=kinds["list"],
            table_count=kinds["table"],
            equation_count=kinds["equation"],
        )


def _records(
    identity: PdfIdentity,
    policy: ChunkPolicy,
    layout: DocumentLayout,
    locator: _Locator,
    sections: SectionIndex,
    parent_windows: list[tuple[Span, int]],
    child_plan: list[list[tuple[Span, int]]],
    context_of: Callable[[Span], str],
    embedded_tokens: dict[Span, int],
) -> tuple[tuple[ChunkRecord, ...], tuple[ChunkRecord, ...]]:
    document_id = ids.document_uuid(identity.partition_key)
    doc_uid = ids.doc_uid(identity.partition_key)
    revision = ids.revision8(layout.text)
    block_counters: Counter[str] = Counter()
    parent_spans = [span for span, _ in parent_windows]
    child_spans = [span for windows in child_plan for span, _ in windows]

    def make(
        spans: list[Span], index: int, tokens: int, chunk_type: str, record_id: str, parent: str | None
    ) -> ChunkRecord:
        start, end = spans[index]
        text = layout.text[start:end]
        shares = locator.page_shares(spans[index])
        page = _principal(shares)
        filing = locator.filing_offset(spans[index])
        section = sections.section_at(filing)
        block_key = section.section_id or f"p{page:03d}"
        block = block_counters[block_key]
        block_counters[block_key] += 1
        content_type, features = locator.features(spans[index])
        return new_chunk(
            identity,
            document_id,
            policy,
            id=record_id,
            text=text,
            anchor_text=text[:_ANCHOR_PREFIX_CHARS],
            chunk_type=chunk_type,
            page=page,
            pages=tuple(number for number, _ in shares) or (page,),
            tokens=tokens,
            section=section.section,
            section_path=section.section_path,
            section_id=section.section_id,
            article_num=sections.article_at(filing),
            parent_id=parent,
            table_type=None,
            char_start=start,
            char_end=end,
            line_from=locator.line(start),
            line_to=locator.line(end - 1),
            canonical_id=ids.canonical_id(doc_uid, revision, section.section_id, page, block),
            chunk_index=index,
            total_chunks=len(spans),
            # Reading order and overlap against the neighbours of the same type.
            has_overlap_previous=index > 0 and spans[index - 1][1] > start,
            has_overlap_next=index + 1 < len(spans) and end > spans[index + 1][0],
            content_type=content_type,
            content_features=features,
            context=context_of(spans[index]) if chunk_type == "child" else "",
            embedded_tokens=embedded_tokens[spans[index]] if chunk_type == "child" else 0,
        )

    parents: list[ChunkRecord] = []
    children: list[ChunkRecord] = []
    for parent_index, ((parent_span, parent_tokens), child_windows) in enumerate(zip(parent_windows, child_plan)):
        parent_record_id = ids.parent_id(identity.source, locator.principal_page(parent_span), parent_index)
        parents.append(make(parent_spans, parent_index, parent_tokens, "parent", parent_record_id, None))
        for child_index, (_, child_tokens) in enumerate(child_windows):
            child_record_id = ids.child_id(parent_record_id, child_index)
            children.append(make(child_spans, len(children), child_tokens, "child", child_record_id, parent_record_id))
    return tuple(parents), tuple(children)
