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

from pocket_assets.core.extract.layout import Paragraph

MAX_LEVEL = 4
LARGER_THAN_BODY = 1.12  # a size ratio above which text stands out as a heading
MAX_HEADING_LINES = 3
MAX_HEADING_CHARS = 160

# "3.9.", "2.1 Title", "A.2 Title", "Chapitre 2.1", "Article 4.1", "Section 3".
_NUMBERING = re.compile(
    r"^(?:(?:chapitre|chapter|section|article|titre|partie|part|annexe|appendix)\s+)?"
    r"(\d+(?:\.\d+)*|[A-Z](?:\.\d+)+)\.?(?:\s|$)",
    re.IGNORECASE,
)
_LETTER = re.compile(r"[^\W\d_]")
# Table-of-contents entries look like headings but carry dot leaders or a trailing page number.
_DOT_LEADERS = re.compile(r"(?:\.\s?){4,}")
_TOC_PAGE_NUMBER = re.compile(r"\S+\s+\S+.*\s\d{1,4}$")

StyleKey = tuple[float, bool]  # (size, bold)


def numbering_depth(text: str) -> int:
    """1 for `3`, 2 for `3.9.` or `Chapitre 2.1`, 0 when the text is not numbered."""
    match = _NUMBERING.match(text)
    return match.group(1).count(".") + 1 if match else 0


# What decides whether a short paragraph is a heading: (smallest size, largest size, all bold, any mono).
Shape = tuple[float, float, bool, bool]


def paragraph_shape(paragraph: Paragraph) -> Shape | None:
    """The typography of a paragraph short enough to be a heading, else None."""
    lines = paragraph.lines
    if len(lines) > MAX_HEADING_LINES:
        return None
    text = " ".join(line.text.strip() for line in lines)
    if len(text) > MAX_HEADING_CHARS or len(_LETTER.findall(text)) < 2:
        return None
    if _DOT_LEADERS.search(text) or _TOC_PAGE_NUMBER.match(text):
        return None
    return (
        min(line.size for line in lines),
        max(line.size for line in lines),
        all(line.bold for line in lines),
        any(line.mono for line in lines),
    )


def heading_style(shape: Shape | None, body_size: float) -> StyleKey | None:
    """The heading style of a paragraph shape (larger than body, or bold body text), else None."""
    if shape is None:
        return None
    smallest, largest, bold, mono = shape
    if smallest >= body_size * LARGER_THAN_BODY:
        return (largest, bold)
    if bold and not mono and largest >= body_size * 0.95:
        return (round(body_size, 1), True)
    return None


@dataclass
class StyleCensus:
    """Counts gathered while pages are read, small whatever the document length."""

    body_sizes: Counter[float] = field(default_factory=Counter)
    short_shapes: Counter[Shape] = field(default_factory=Counter)

    def add_paragraph(self, paragraph: Paragraph) -> None:
        for line in paragraph.lines:
            if not line.mono:
                self.body_sizes[line.size] += len(line.text)
        shape = paragraph_shape(paragraph)
        if shape is not None:
            self.short_shapes[shape] += 1

    def body_size(self) -> float:
        if not self.body_sizes:
            return 10.0
        return max(sorted(self.body_sizes), key=lambda size: self.body_sizes[size])


@dataclass(frozen=True)
class HeadingScale:
    """Maps heading styles to levels 1..4 for one document."""

    body_size: float
    levels: dict[StyleKey, int]

    @classmethod
    def from_census(cls, census: StyleCensus) -> HeadingScale:
        body_size = census.body_size()
        style_counts: Counter[StyleKey] = Counter()
        for shape, count in census.short_shapes.items():
            style = heading_style(shape, body_size)
            if style is not None:
                style_counts[style] += count
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
        return cls(body_size, levels)

    def level(self, paragraph: Paragraph, text: str) -> int:
        """The heading level of the paragraph, 0 when it is not a heading."""
        style = heading_style(paragraph_shape(paragraph), self.body_size)
        if style is None:
            return 0
        depth = numbering_depth(text)
        if depth:
            return min(depth, MAX_LEVEL)
        return self.levels.get(style, MAX_LEVEL)
