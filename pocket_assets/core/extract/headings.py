"""Heading detection and levels, decided from the whole document's typography.

A line is a heading candidate when it is short and either larger than body
text or entirely bold. Levels rank the candidate styles of the document
(largest first), because the same 14 pt may be a chapter in one PDF and a
section in another; a numbering prefix such as `3.9.` or `Chapitre 2.1`
overrides the rank with its depth, which is what authors mean by it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from pocket_assets.core.extract.reading_order import Paragraph

MAX_LEVEL = 4
LARGER_THAN_BODY = 1.12  # a size ratio above which text stands out as a heading
MAX_HEADING_LINES = 3
MAX_HEADING_CHARS = 160

# "3.9.", "2.1 Title", "A.2 Title", "Chapitre 2.1", "Article 4.1", "Section 3", "Appendix A", "Partie II".
_NUMBERING = re.compile(
    r"^(?:(?:chapitre|chapter|section|article|titre|partie|part|annexe|appendix)\s+"
    r"(?P<named>\d+(?:\.\d+)*|[A-Z](?:\.\d+)*|[IVXLC]+)"
    r"|(?P<bare>\d+(?:\.\d+)*|[A-Z](?:\.\d+)+))\.?(?:\s|$)",
    re.IGNORECASE,
)
_LETTER = re.compile(r"[^\W\d_]")
# Table-of-contents entries look like headings but carry dot leaders or a trailing page number.
_DOT_LEADERS = re.compile(r"(?:\.\s?){4,}|(?:\.\s){2,}\d{1,4}$")
_TOC_PAGE_NUMBER = re.compile(r"\S+\s+\S+.*\s\d{1,4}$")
# A label that introduces what follows ("Général :", "Options:") rather than titling a section.
_LABEL_END = re.compile(r":\s*$")

StyleKey = tuple[float, bool]  # (size, bold)


def numbering_depth(text: str) -> int:
    """1 for `3` or `Appendix A`, 2 for `3.9.` or `Chapitre 2.1`, 0 when the text is not numbered."""
    match = _NUMBERING.match(text)
    if not match:
        return 0
    return (match.group("named") or match.group("bare")).count(".") + 1


def is_section_number(text: str) -> bool:
    """Numbering that only a heading carries: `3.2.1`, `A.1`, `Article 4`; a bare `3` may start a list."""
    match = _NUMBERING.match(text)
    return bool(match) and (match.group("named") is not None or "." in match.group("bare").rstrip("."))


# What decides whether a short paragraph is a heading:
# (smallest size, largest size, all bold, any mono, section-numbered, ends as a label).
Shape = tuple[float, float, bool, bool, bool, bool]


def paragraph_shape(paragraph: Paragraph) -> Shape | None:
    """The typography of a paragraph short enough to be a heading, else None."""
    lines = paragraph.lines
    if len(lines) > MAX_HEADING_LINES:
        return None
    text = " ".join(line.text.strip() for line in lines)
    numbered = is_section_number(text)
    if len(text) > MAX_HEADING_CHARS or (len(_LETTER.findall(text)) < 2 and not numbered):
        return None
    # Table-of-contents entries: dot leaders, or a page number set apart at the right.
    if _DOT_LEADERS.search(text) or (lines[-1].spread and _TOC_PAGE_NUMBER.match(text)):
        return None
    return (
        min(line.size for line in lines),
        max(line.size for line in lines),
        all(line.bold for line in lines),
        any(line.mono for line in lines),
        numbered,
        bool(_LABEL_END.search(text)),
    )


def heading_style(shape: Shape | None, body_size: float) -> StyleKey | None:
    """The heading style of a paragraph shape, else None.

    Larger than body text; or at body size, bold (not a `Label :` that introduces
    a list), or section-numbered and set in bold or typewriter (`3.2.1 \\command`).
    """
    if shape is None:
        return None
    smallest, largest, bold, mono, numbered, label = shape
    if smallest >= body_size * LARGER_THAN_BODY:
        return (largest, bold)
    if largest < body_size * 0.95:
        return None
    if (bold and not mono and not label) or (numbered and (bold or mono)):
        return (round(body_size, 1), True)
    return None


def run_in_heading(paragraph: Paragraph, body_size: float) -> str:
    """The numbered bold opening of a paragraph (`4.1.1.2 Corps du document  Le document...`), else "".

    Run-in headings (LaTeX `\\paragraph`) share their line with the text; only a
    section number tells them from a bold phrase that merely opens a sentence.
    """
    lead = paragraph.first.lead
    if (
        lead
        and paragraph.first.size < body_size * LARGER_THAN_BODY
        and len(lead) <= MAX_HEADING_CHARS
        and is_section_number(lead)
        and not _LABEL_END.search(lead)
    ):
        return lead
    return ""


@dataclass
class StyleCensus:
    """Counts gathered while pages are read, small whatever the document length."""

    body_sizes: Counter[float] = field(default_factory=Counter)
    short_shapes: Counter[Shape] = field(default_factory=Counter)
    first_page_shapes: Counter[Shape] = field(default_factory=Counter)
    last_page: int = 0

    def add_paragraph(self, paragraph: Paragraph, page: int) -> None:
        self.last_page = max(self.last_page, page)
        for line in paragraph.lines:
            if not line.mono:
                self.body_sizes[line.size] += len(line.text)
        # A margin label's level comes from its section, not from its style.
        shape = None if paragraph.first.margin_label else paragraph_shape(paragraph)
        if shape is not None:
            self.short_shapes[shape] += 1
            if page == 1:
                self.first_page_shapes[shape] += 1

    def body_size(self) -> float:
        if not self.body_sizes:
            return 10.0
        return max(sorted(self.body_sizes), key=lambda size: self.body_sizes[size])


@dataclass(frozen=True)
class HeadingScale:
    """Maps heading styles to levels 1..4 for one document."""

    body_size: float
    levels: dict[StyleKey, int]
    # Styles used mostly on page 1, below its largest one: a title page's authors, dates and versions.
    title_page_only: frozenset[StyleKey] = frozenset()

    @classmethod
    def from_census(cls, census: StyleCensus) -> HeadingScale:
        body_size = census.body_size()
        style_counts: Counter[StyleKey] = Counter()
        first_page_counts: Counter[StyleKey] = Counter()
        for shape, count in census.short_shapes.items():
            style = heading_style(shape, body_size)
            if style is not None:
                style_counts[style] += count
                first_page_counts[style] += census.first_page_shapes[shape]
        # Styles used once (a title page, a colophon) must not push real chapters down a level.
        recurring = sorted(
            (style for style, count in style_counts.items() if count >= 2),
            key=lambda style: (-style[0], not style[1]),
        )
        levels = {style: min(rank + 1, MAX_LEVEL) for rank, style in enumerate(recurring)}
        for style in style_counts:
            if style not in levels:
                smaller = [levels[other] for other in recurring if other[0] <= style[0]]
                levels[style] = min(smaller) if smaller else (max(levels.values(), default=0) + 1)
                levels[style] = min(levels[style], MAX_LEVEL)
        # A title page's styles are used there more than in the rest of the document.
        title_page = sorted(
            (style for style, count in style_counts.items() if 2 * first_page_counts[style] > count),
            key=lambda style: (-style[0], not style[1]),
        )
        title_page_only = frozenset(title_page[1:]) if census.last_page > 1 else frozenset()
        return cls(body_size, levels, title_page_only)

    def level(self, paragraph: Paragraph, text: str, page: int) -> int:
        """The heading level of the paragraph, 0 when it is not a heading."""
        style = heading_style(paragraph_shape(paragraph), self.body_size)
        if style is None:
            return 0
        depth = numbering_depth(text)
        if depth:
            return min(depth, MAX_LEVEL)
        if page == 1 and style in self.title_page_only:
            return 0
        return self.levels.get(style, MAX_LEVEL)
