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
from functools import lru_cache

from pocket_assets.core.extract.cleanup import title_key
from pocket_assets.core.extract.numbering import ARTICLE_RANK, DASHES, DECIMAL, KIND_RANKS, read_label
from pocket_assets.core.extract.reading_order import Paragraph

MAX_LEVEL = 4
MAX_LABEL_LEVEL = 6  # labelled parts nest deeper (TITRE > CHAPITRE > Section > Article > 6.7 > 6.7.1): Markdown's six
LARGER_THAN_BODY = 1.12  # a size ratio above which text stands out as a heading
MAX_HEADING_LINES = 3
MAX_HEADING_CHARS = 160
WORDINGS_KEPT = 32768  # short paragraphs read once by the census and again by the render (refman: ~23,000)

_LETTER = re.compile(r"[^\W\d_]")
_TWO_LETTERS = re.compile(r"[^\W\d_].*?[^\W\d_]", re.DOTALL)
_CLOSING = re.compile(r"[;,]\s*$")  # an enumeration item, not a title
_SENTENCE_END = re.compile(r"[.;:,!]\s*$")
_WORDS = re.compile(r"[^\W\d_]{3,}")  # words, not cell names ("A1 B1 C1") or initials
MAX_TITLE_WORDS = 15
MAX_NUMBERED_TITLE_WORDS = 10
MAX_RUN_IN_TITLE_WORDS = 3  # a title after a label ending with a full stop: "Article 12 - Le bureau."
MAX_BARE_NUMBER_DIGITS = 2  # a part numbered `3.` has one or two digits, as a numbered list item does
# A caption names a table or figure; it is never a heading.
_CAPTION = re.compile(r"^(?:tableau|table|figure|fig\.|illustration)\s+\d+\s*[–—:.-]", re.IGNORECASE)
MIN_CAPITALS = 5  # letters of a line in capitals that makes a heading ("OBJET", "BUREAU")
_WORD = re.compile(r"[^\W\d_]{3}")  # a word, not a formula's single-letter names ("M_1 * M_2")
_CODE_OR_MATH = re.compile(r"[\[\]{}=_*+<>|\\/@#$%^&]|\(\)")  # "X11() [UNIX]" is code, not a heading
# Table-of-contents entries look like headings but carry dot leaders or a trailing page number.
_DOT_LEADERS = re.compile(r"(?:\.\s?){4,}|(?:\.\s){2,}\d{1,4}$")
_TOC_PAGE_NUMBER = re.compile(r"\S+\s+\S+.*\s\d{1,4}$")
# A label that introduces what follows ("Général :", "Options:") rather than titling a section.
_LABEL_END = re.compile(r":\s*$")

StyleKey = tuple[float, bool]  # (size, bold)


def outline_style(paragraph: Paragraph) -> StyleKey:
    """How a heading is set, as the outline's headings teach it: its first line's size (to half a point) and weight."""
    return (round(paragraph.first.size * 2) / 2, paragraph.first.bold)


def numbering_depth(text: str) -> int:
    """1 for `3.` or `Appendix A`, 2 for `3.9.` or `Chapitre 2.1`, 0 when the text is not numbered."""
    label = read_label(text)
    return label.depth if label else 0


def is_section_number(text: str) -> bool:
    """Numbering that only a heading carries: `3.2.1`, `A.1`, `Article 4`; a bare `3.` may start a list."""
    label = read_label(text)
    return label is not None and (label.kind != DECIMAL or label.depth > 1)


def reads_as_heading(text: str, line_count: int) -> bool:
    """Set like a heading in body type, as Word-made regulations do: by numbering or capitals alone.

    A named label with at most a short title (`ARTICLE 3 - OBJET`, `Titre Ier`; not a sentence run into
    it, `Art. 7.- Le siège social est fixé à Paris.`), a number with a
    short capitalised title and no closing punctuation (`6.7. Délai de forfait`, `5.6 a) Phase de
    zone`, `3. Recall Period`; the paragraph `1.1.2. La date de sa création ;` is not one; a bare
    `3.` may also be a list item, which `render_page` tells by its neighbours), or a line in capitals.
    Sentences that merely open with a label go on in lower case (`Article 12 du code ...`).
    """
    if line_count > 2 or _CLOSING.search(text):
        return False
    label = read_label(text)
    rest = text.lstrip("#\\ ")[len(label.text) :].lstrip(f" .:{DASHES}") if label else text
    words = rest.split()
    if label is not None and (not words or not words[0][:1].islower()):
        if label.kind != DECIMAL:  # (a sentence run into its article, `Art. 7.- Le siège est à Paris.`, is text)
            return len(words) <= MAX_TITLE_WORDS and not (len(words) > MAX_RUN_IN_TITLE_WORDS and rest.endswith("."))
        if label.depth == 1 and (len(label.number) > MAX_BARE_NUMBER_DIGITS or not words or not words[0][:1].isupper()):
            return False  # "2024. A year ...", "2 - 3 joueurs": a year, a range, not a part
        return line_count == 1 and 0 < len(words) <= MAX_NUMBERED_TITLE_WORDS and not rest.endswith((".", ":"))
    letters = _LETTER.findall(text)
    return (
        len(letters) >= MIN_CAPITALS
        and not any(map(str.islower, letters))
        and bool(_WORD.search(text))
        and not _CODE_OR_MATH.search(text)
    )


def numbered_capitals(text: str) -> bool:
    """A numbered title in capitals: `1.2. COUVERTURE RADIOÉLECTRIQUE`, `9.2.1. PRINCIPES GÉNÉRAUX`, `2. QUALITÉ`.

    Such a line is a heading wherever it stands, as the first of its series is: after a list, glued to
    the paragraph before it or to the heading above it. Neither list items nor wrapped sentences are
    set in capitals, and a year (`2024. BILAN`) is no number of a part.
    """
    label = read_label(text)
    if label is None or (label.kind == DECIMAL and label.depth == 1 and len(label.number) > MAX_BARE_NUMBER_DIGITS):
        return False
    rest = text.lstrip("#\\ ")[len(label.text) :].lstrip(f" .:{DASHES}")
    letters = _LETTER.findall(rest)
    return (
        len(letters) >= MIN_CAPITALS
        and not any(map(str.islower, letters))
        and len(rest.split()) <= MAX_TITLE_WORDS
        and not _CLOSING.search(rest)
        and not _CODE_OR_MATH.search(rest)
    )


MAX_DOCUMENT_TITLE_LINES = 6
MAX_DOCUMENT_TITLE_CHARS = 400


def reads_as_long_title(text: str, line_count: int) -> bool:
    """A document's title in capitals too long for a heading (`CAHIER DES CHARGES ANNEXÉ À LA DÉCISION
    PORTANT AUTORISATION D'UTILISER DES FRÉQUENCES ...` over three lines): no sentence, caption, labelled
    part or formula. Shorter lines in capitals are headings by `reads_as_heading` already."""
    letters = _LETTER.findall(text)
    return (
        (line_count > 2 or len(text) > MAX_HEADING_CHARS)
        and line_count <= MAX_DOCUMENT_TITLE_LINES
        and len(text) <= MAX_DOCUMENT_TITLE_CHARS
        and len(_WORDS.findall(text)) >= 2
        and not any(map(str.islower, letters))
        and not _SENTENCE_END.search(text)
        and not _CAPTION.match(text)
        and read_label(text) is None
        and not _CODE_OR_MATH.search(text)
    )


# What decides whether a short paragraph is a heading: (smallest size, largest size, all bold,
# any mono, section-numbered, ends as a label, rank of its label (0: none), set as a heading in body type).
Shape = tuple[float, float, bool, bool, bool, bool, int, bool]


def paragraph_shape(paragraph: Paragraph) -> Shape | None:
    """The typography of a paragraph short enough to be a heading, else None."""
    lines = paragraph.lines
    if len(lines) > MAX_HEADING_LINES:
        return None
    wording = _wording(" ".join(line.text.strip() for line in lines), len(lines), lines[-1].spread)
    if wording is None:
        return None
    numbered, label_end, rank, plain_heading = wording
    mono = any(line.mono for line in lines)
    return (
        min(line.size for line in lines),
        max(line.size for line in lines),
        all(line.bold for line in lines),
        mono,
        numbered,
        label_end,
        rank,
        not mono and plain_heading,
    )


@lru_cache(maxsize=WORDINGS_KEPT)
def _wording(text: str, line_count: int, spread: bool) -> tuple[bool, bool, int, bool] | None:
    """What the words of a short paragraph say: (section-numbered, ends as a label, label rank, reads as a
    heading in body type), or None when they rule a heading out. `spread`: its last line has pieces far
    apart. Cached: the style census asks it of every page before the render asks it again, so the
    cache holds a long document's short paragraphs (`forget_wordings` empties it after each document)."""
    if len(text) > MAX_HEADING_CHARS:
        return None
    numbered = is_section_number(text)
    if not numbered and not _TWO_LETTERS.search(text):
        return None
    # Table-of-contents entries: dot leaders, or a page number set apart at the right.
    if _CAPTION.match(text) or _DOT_LEADERS.search(text) or (spread and _TOC_PAGE_NUMBER.match(text)):
        return None
    label = read_label(text)
    return numbered, bool(_LABEL_END.search(text)), label.rank if label else 0, reads_as_heading(text, line_count)


def reads_as_heading_line(text: str, spread: bool) -> bool:
    """Whether one line's words make a heading in body type (`reads_as_heading`), contents entries and
    captions aside."""
    wording = _wording(text, 1, spread)
    return wording is not None and wording[3]


def forget_wordings() -> None:
    """Empty `_wording`'s and `read_label`'s caches: a document's paragraphs are not the next one's. Memory
    stays bounded, and returns: the labels kept from a long manual would pin the heap it had freed."""
    _wording.cache_clear()
    read_label.cache_clear()


def heading_style(shape: Shape | None, body_size: float) -> StyleKey | None:
    """The heading style of a paragraph shape, else None.

    Larger than body text; or at body size, bold (not a `Label :` that introduces
    a list), or section-numbered and set in bold or typewriter (`3.2.1 \\command`).
    """
    if shape is None:
        return None
    smallest, largest, bold, mono, numbered, label, _, plain_heading = shape
    if smallest >= body_size * LARGER_THAN_BODY:
        return (largest, bold)
    if largest < body_size * 0.95:
        return None
    if (bold and not mono and not label) or (numbered and (bold or mono)):
        return (round(body_size, 1), True)
    if plain_heading:
        return (round(body_size, 1), bold)
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
    """Counts gathered while pages are read, and the titles of short paragraphs: small whatever the document length."""

    body_sizes: Counter[float] = field(default_factory=Counter)
    short_shapes: Counter[Shape] = field(default_factory=Counter)
    first_page_shapes: Counter[Shape] = field(default_factory=Counter)
    last_page: int = 0
    # Short paragraphs out of the margins as (title_key, shape): the headings a running header may name.
    titles: set[tuple[str, Shape]] = field(default_factory=set)
    # (style, level) of each heading the PDF's outline lists and the page shows.
    outline_styles: Counter[tuple[StyleKey, int]] = field(default_factory=Counter)

    def add_paragraph(self, paragraph: Paragraph, page: int, in_margin: bool = False) -> None:
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
            title = title_key(" ".join(line.text for line in paragraph.lines))
            if title and not in_margin:
                self.titles.add((title, shape))

    def add_outline(self, paragraph: Paragraph, level: int) -> None:
        self.outline_styles[(outline_style(paragraph), level)] += 1

    def body_size(self) -> float:
        if not self.body_sizes:
            return 10.0
        return max(sorted(self.body_sizes), key=lambda size: self.body_sizes[size])

    def heading_titles(self) -> frozenset[str]:
        """title_keys of the paragraphs set as headings (out of the margins)."""
        body_size = self.body_size()
        return frozenset(title for title, shape in self.titles if heading_style(shape, body_size) is not None)


@dataclass(frozen=True)
class HeadingScale:
    """Maps heading styles to levels 1..4 (labelled parts: 1..6) for one document."""

    body_size: float
    levels: dict[StyleKey, int]
    # Styles used mostly on page 1, below its largest one: a title page's authors, dates and versions.
    title_page_only: frozenset[StyleKey] = frozenset()
    # In documents that label their parts (TITRE, CHAPITRE, Article): label rank -> level, and the
    # rank an unlabelled heading style takes among them. Empty: levels come from styles and numbering.
    rank_levels: dict[int, int] = field(default_factory=dict)
    unlabelled_ranks: dict[StyleKey, int] = field(default_factory=dict)
    # The document sets its headings apart by type (larger than the body, or bold, more than once):
    # a heading it sets in body type is then a minor one.
    styled_headings: bool = False
    # In a PDF whose outline lists headings the pages show: the level the outline gives each style (the
    # most listed), and the deepest it gives (0: no outline, levels come from the pages alone).
    outline_levels: dict[StyleKey, int] = field(default_factory=dict)
    outline_depth: int = 0

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
        styled = any(style != (round(body_size, 1), False) for style in recurring)
        listed = _outline_levels(census.outline_styles)
        depth = max((level for _, level in census.outline_styles), default=0)
        named: dict[int, set[StyleKey]] = {}
        decimal_ranks: set[int] = set()
        unlabelled: set[StyleKey] = set()
        for shape in census.short_shapes:
            style = heading_style(shape, body_size)
            rank = shape[6]
            if style is None:
                continue
            if not rank:
                unlabelled.add(style)
            elif rank > ARTICLE_RANK:
                decimal_ranks.add(rank)
            else:
                named.setdefault(rank, set()).add(style)
        if not set(named) - {ANNEX_RANK}:
            return cls(body_size, levels, title_page_only, styled_headings=styled, outline_levels=listed,
                       outline_depth=depth)
        rank_levels, unlabelled_ranks = _label_ladder(named, decimal_ranks, unlabelled)
        return cls(body_size, levels, title_page_only, rank_levels, unlabelled_ranks, styled, listed, depth)

    def level(self, paragraph: Paragraph, text: str, page: int) -> int:
        """The heading level of the paragraph, 0 when it is not a heading."""
        style = heading_style(paragraph_shape(paragraph), self.body_size)
        if style is None:
            return 0
        label = read_label(text)
        if self.rank_levels and label is not None:
            return self._rank_level(label.rank)
        if label is not None:
            return min(label.depth, MAX_LEVEL)
        if page == 1 and style in self.title_page_only:
            return 0
        if self.rank_levels:
            return self._rank_level(self.unlabelled_ranks.get(style, ARTICLE_RANK - 1))
        return self.levels.get(style, MAX_LEVEL)

    def unlisted_level(self, paragraph: Paragraph, level: int) -> int:
        """The level of a heading found on the page that the PDF's outline does not list.

        The outline is the author's own tree: such a heading takes the level the outline gives
        headings set like it, else sits below every level the outline uses (a heading the author
        left out of the outline is a minor one), so it never closes a listed section early.
        """
        if not self.outline_depth or not level:
            return level
        learned = self.outline_levels.get(outline_style(paragraph))
        return learned or min(max(level, self.outline_depth + 1), MAX_LABEL_LEVEL)

    def _rank_level(self, rank: int) -> int:
        if rank in self.rank_levels:
            return self.rank_levels[rank]
        above = [level for other, level in self.rank_levels.items() if other < rank]
        return min(max(above, default=0) + 1, MAX_LABEL_LEVEL)


def _outline_levels(listed: Counter[tuple[StyleKey, int]]) -> dict[StyleKey, int]:
    """Each style's most listed outline level (the higher level of equals)."""
    best: dict[StyleKey, tuple[int, int]] = {}
    for (style, level), count in listed.items():
        if style not in best or (count, -level) > (best[style][0], -best[style][1]):
            best[style] = (count, level)
    return {style: min(level, MAX_LABEL_LEVEL) for style, (_, level) in best.items()}


ANNEX_RANK = KIND_RANKS["annexe"]
GROUP_OFFSET = 5  # an unlabelled heading sits this far below the label it follows in rank


def _label_ladder(
    named: dict[int, set[StyleKey]], decimal_ranks: set[int], unlabelled: set[StyleKey]
) -> tuple[dict[int, int], dict[StyleKey, int]]:
    """Levels of a document that labels its parts, as a reader nests them.

    Labels rank by kind (TITRE > CHAPITRE > Section > Article > 6.7 > 6.7.1). An unlabelled
    heading larger than every label is a title above them; one set like a TITRE or a CHAPITRE
    ranks with it; one set like the articles (or between them and larger labels) groups
    articles ("Bureau", "Objet" above "Article 5"). An annex opens at the top level of the body.
    """
    body = {rank: styles for rank, styles in named.items() if rank != ANNEX_RANK}
    largest = max(style[0] for styles in body.values() for style in styles)
    ranks: dict[StyleKey, int] = {}
    titles = sorted((style for style in unlabelled if style[0] > largest + 0.5), key=lambda s: (-s[0], not s[1]))
    for index, style in enumerate(titles):
        ranks[style] = min(index, min(body) - 1)
    article_sizes = [style[0] for style in body.get(ARTICLE_RANK, ())]
    for style in unlabelled - set(titles):
        sharing = sorted(rank for rank, styles in body.items() if style in styles)
        if sharing and sharing[0] != ARTICLE_RANK:
            ranks[style] = sharing[0]
        elif article_sizes and style[0] >= min(article_sizes):
            ranks[style] = ARTICLE_RANK - GROUP_OFFSET
        else:
            larger = [rank for rank, styles in body.items() if any(other[0] > style[0] for other in styles)]
            ranks[style] = max(larger, default=ARTICLE_RANK - 2 * GROUP_OFFSET) + GROUP_OFFSET
    ordered = sorted(set(body) | set(ranks.values()) | decimal_ranks)
    rank_levels = {rank: min(index + 1, MAX_LABEL_LEVEL) for index, rank in enumerate(ordered)}
    rank_levels[ANNEX_RANK] = rank_levels[min(body)]
    return rank_levels, ranks
