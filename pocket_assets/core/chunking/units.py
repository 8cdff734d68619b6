"""Where a document may be cut, and how good each cut is.

The chunker never looks at text structure itself: it asks this layout for the
break points inside a token window and takes the strongest. A break point is
the offset of the first character of the unit that would start the next chunk
(the previous chunk ends at the last non-space character before it).

Tables, fenced code and display equations are atomic spans: the only breaks
inside them are row (line) breaks, tagged with the span, which the chunker uses
only when the whole span does not fit its budget.

A heading of the document's top levels (its chapters and sections, see
`top_heading_level`) is more than a strong break: a reader expects a new
section to start a new passage, so the layout lists where such sections open
(`section_starts`) and the chunker starts a child at each one. So does every
article (`Article 10`, `6.7.`, a paragraph opening `Art. 7.- Le siège ...`): a
passage is cited by one article, so one that ran from the end of article 9 into
article 10 would cite article 9 for article 10's words.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from enum import IntEnum
from typing import Iterator, Sequence

from pocket_assets.core.chunking.sections import heading_level
from pocket_assets.core.document import canonical_text
from pocket_assets.core.records import Block, PageRecord

ATOMIC_KINDS: tuple[str, ...] = ("table", "code", "equation")


class Boundary(IntEnum):
    """Boundary strengths, DESIGN.md section 4: heading > paragraph > list item > sentence > token."""

    TOKEN = 0
    WORD = 1
    SENTENCE = 2
    LIST_ITEM = 3
    PARAGRAPH = 4  # also a page break, a block boundary and a row inside an oversized atomic span
    HEADING = 5


@dataclass(frozen=True)
class AtomicSpan:
    """A table, code block or display equation, in document offsets.

    `header_end` is where a table's header (its first row, plus the Markdown
    `|---|` separator line when present) ends; equal to `start` otherwise.
    """

    kind: str
    start: int
    end: int
    header_end: int


@dataclass(frozen=True)
class StructureSpan:
    """A block in document offsets, kept for a chunk's content type and features."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class DocumentLayout:
    text: str  # the canonical text
    break_positions: tuple[int, ...]  # sorted, unique
    break_strengths: tuple[int, ...]
    break_atomic: tuple[int, ...]  # index into `atomics` for row breaks inside one, else -1
    atomics: tuple[AtomicSpan, ...]
    structures: tuple[StructureSpan, ...]  # every block, sorted by start
    # Breaks where a section of the top levels or an article opens (a chain of headings opens at its first).
    section_starts: tuple[int, ...] = ()


_BLANK_LINE = re.compile(r"\n[ \t]*\n\s*")
_SENTENCE_END = re.compile(r"[.!?\u2026][\"'\u00bb\u201d\u2019)\]]*\s+")
_LIST_ITEM_LINE = re.compile(r"\n[ \t]*(?=(?:[-*+\u2022\u2013]|\d{1,3}[.)]|[a-zA-Z][.)])[ \t])")
_LINE_START = re.compile(r"\n\s*")
_TABLE_SEPARATOR = re.compile(r"[ \t]*\|?[ \t]*:?-{3,}")
_INNER_PATTERNS = (
    (_BLANK_LINE, Boundary.PARAGRAPH),
    (_LIST_ITEM_LINE, Boundary.LIST_ITEM),
    (_SENTENCE_END, Boundary.SENTENCE),
)


def layout_document(pages: Sequence[PageRecord], article_openings: Sequence[int] = ()) -> DocumentLayout:
    """One pass over the pages' blocks; text between blocks counts as paragraphs.

    `article_openings`: where articles open a passage of their own (`SectionIndex.article_openings`);
    each opens one at the break before it: its own, or the first heading of the chain it ends.
    """
    text = canonical_text(pages)
    breaks: dict[int, tuple[int, int]] = {}
    atomics: list[AtomicSpan] = []
    structures: list[StructureSpan] = []
    heading_breaks: list[tuple[int, int]] = []  # (position, highest level) of each chain of headings
    openings: dict[int, int] = {}  # each block's start -> the break its passage would open at
    after_heading = False
    for page in pages:
        for block in _regions(page):
            start = page.char_start + _skip_space(page.text, block.char_start, block.char_end)
            end = page.char_start + block.char_end
            if start >= end:
                continue
            structures.append(StructureSpan(block.kind, start, end))
            if not after_heading:  # a heading never ends a chunk: no break right after one
                strength = Boundary.HEADING if block.kind == "heading" else Boundary.PARAGRAPH
                _add(breaks, start, strength, -1)
                if block.kind == "heading":
                    heading_breaks.append((start, heading_level(block)))
            elif block.kind == "heading":  # a chain opens at the level of its highest heading ("Chapter 4", "# Grid")
                heading_breaks[-1] = (heading_breaks[-1][0], min(heading_breaks[-1][1], heading_level(block)))
            openings[start] = openings[structures[-2].start] if after_heading else start
            after_heading = block.kind == "heading"
            if block.kind in ATOMIC_KINDS:
                atomic_index = len(atomics)
                atomic = _atomic_span(text, block.kind, start, end)
                atomics.append(atomic)
                for position in _row_starts(text, atomic):
                    _add(breaks, position, Boundary.PARAGRAPH, atomic_index)
            elif block.kind != "heading":
                _add_inner_breaks(breaks, text, start, end)
    positions = sorted(breaks)
    top_level = top_heading_level([level for _, level in heading_breaks])
    section_starts = {position for position, level in heading_breaks if level <= top_level}
    section_starts.update(_opening_breaks(text, breaks, openings, article_openings))
    return DocumentLayout(
        text=text,
        break_positions=tuple(positions),
        break_strengths=tuple(breaks[position][0] for position in positions),
        break_atomic=tuple(breaks[position][1] for position in positions),
        atomics=tuple(atomics),
        structures=tuple(structures),
        section_starts=tuple(sorted(section_starts)),
    )


def _opening_breaks(
    text: str, breaks: dict[int, tuple[int, int]], openings: dict[int, int], article_openings: Sequence[int]
) -> set[int]:
    """The breaks at which the articles open: an article's block's opening, or the list item it heads.

    An article read inside a table, code or a line that is no break (a wrapped list line) opens nothing.
    """
    found = set()
    for offset in article_openings:
        line = text.rfind("\n", 0, offset) + 1
        line = _skip_space(text, line, offset)
        if line in openings:
            found.add(openings[line])
        elif line in breaks and breaks[line][1] < 0:
            found.add(line)
    return found


def top_heading_level(levels: Sequence[int]) -> int:
    """The deepest level that still opens a top section: the second level, from the top, used at least twice.

    Chapters and sections are the two top levels a reader sees; a level used once above them
    (a document title set larger than the chapters) does not push the sections out. With fewer
    recurring levels, every heading down to the deepest recurring one (else any heading) opens one.
    """
    counts = Counter(levels)
    recurring = sorted(level for level, count in counts.items() if count >= 2)
    if recurring:
        return recurring[:2][-1]
    return max(counts, default=0)


def _regions(page: PageRecord) -> Iterator[Block]:
    """The page's blocks in order, with uncovered non-blank text as paragraphs (so nothing is lost)."""
    cursor = 0
    for block in sorted(page.blocks, key=lambda item: (item.char_start, item.char_end)):
        if block.char_start > cursor and page.text[cursor : block.char_start].strip():
            yield Block("paragraph", cursor, block.char_start)
        if block.char_end > max(cursor, block.char_start):
            yield Block(block.kind, max(cursor, block.char_start), block.char_end, block.level, block.table)
        cursor = max(cursor, block.char_end)
    if cursor < len(page.text) and page.text[cursor:].strip():
        yield Block("paragraph", cursor, len(page.text))


def _add_inner_breaks(breaks: dict[int, tuple[int, int]], text: str, start: int, end: int) -> None:
    """Paragraph, list item and sentence breaks inside a block."""
    for pattern, strength in _INNER_PATTERNS:
        for match in pattern.finditer(text, start, end):
            if match.end() < end:
                _add(breaks, match.end(), strength, -1)


def _atomic_span(text: str, kind: str, start: int, end: int) -> AtomicSpan:
    header_end = start
    if kind == "table":
        first_newline = text.find("\n", start, end)
        header_end = end if first_newline < 0 else first_newline + 1
        if header_end < end and _TABLE_SEPARATOR.match(text, header_end, end):
            second_newline = text.find("\n", header_end, end)
            header_end = end if second_newline < 0 else second_newline + 1
    return AtomicSpan(kind, start, end, header_end)


def _row_starts(text: str, atomic: AtomicSpan) -> Iterator[int]:
    """Line starts after the header: the only places an oversized atomic span may be split."""
    first = max(atomic.header_end - 1, atomic.start)
    for match in _LINE_START.finditer(text, first, atomic.end):
        if atomic.header_end <= match.end() < atomic.end:
            yield match.end()


def _add(breaks: dict[int, tuple[int, int]], position: int, strength: int, atomic_index: int) -> None:
    known = breaks.get(position)
    if known is None or (atomic_index < 0 and (known[1] >= 0 or strength > known[0])):
        breaks[position] = (int(strength), atomic_index)


def _skip_space(text: str, start: int, end: int) -> int:
    while start < end and text[start].isspace():
        start += 1
    return start
