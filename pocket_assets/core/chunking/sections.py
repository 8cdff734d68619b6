"""The heading tree of a document: which section and article every offset belongs to.

Citations name a section (`Article 4 ...`), a dot path (`2.4.1`, seed Chunk ID
Schema) and an article number (`4.1`, seed SPEC-SCH-001), so every chunk needs
them; they are computed once per document from the heading blocks and looked up
by offset with a binary search.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Sequence

from pocket_assets.core.chunking.embed_text import fold_whitespace
from pocket_assets.core.extract.numbering import DASHES, DECIMAL, opens_annex, read_label
from pocket_assets.core.records import Block, PageRecord

# A heading that opens with a bare number ("3 Options"): a manual's chapter, an article for citations.
_HEADING_NUMBER = re.compile(r"^(\d+(?:\.\d+)*)\b")
# A line of body text that may open a numbered paragraph (its label is read after Markdown's escape).
_LINE_START = re.compile(r"^[ \t\\]*(?=\d|art)", re.MULTILINE | re.IGNORECASE)
LABEL_READ_CHARS = 60  # a label and what follows it fit in this
# What follows an article label that opens a paragraph rather than a sentence: "Art. 5. – Le bureau", "Article 5 : ...".
_RUN_IN_SEPARATOR = re.compile(rf"^\s*(?:[.:{re.escape(DASHES)}]|$)")
_HEADING_MARKS = re.compile(r"^\s*#{1,6}\s*")


@dataclass(frozen=True)
class SectionInfo:
    """Where an offset sits in the heading tree; the empty tree gives all-None."""

    section_path: tuple[str, ...] = ()
    section: str | None = None  # deepest h1/h2 title on the path
    section_id: str | None = None  # dot path like "2.4.1"


@dataclass(frozen=True)
class SectionIndex:
    heading_starts: tuple[int, ...]
    infos: tuple[SectionInfo, ...]
    article_starts: tuple[int, ...]
    article_numbers: tuple[str | None, ...]  # None from an annex on: it holds no article
    # Where a passage of its own opens: headings that open an article or an annex, and paragraphs run into a
    # labelled article (`Art. 7.- Le siège ...`); not the numbered items of a list (`1.1.2. La date ... ;`).
    article_openings: tuple[int, ...] = ()

    def section_at(self, offset: int) -> SectionInfo:
        index = bisect.bisect_right(self.heading_starts, offset) - 1
        return self.infos[index] if index >= 0 else SectionInfo()

    def article_at(self, offset: int) -> str | None:
        """The article in force at `offset`: the last article heading or numbered paragraph starting at or before it.

        A chunk asks it where its section path is read, after the headings it opens with, so a
        passage opening `# Comptabilité ## Article 10` is article 10's, and one opening in the
        middle of an article keeps it. Headings that are not articles (a TITRE, a Section)
        leave the article in force unchanged; an annex ends the articles.
        """
        in_force = bisect.bisect_right(self.article_starts, offset) - 1
        return self.article_numbers[in_force] if in_force >= 0 else None


def heading_level(block: Block) -> int:
    """A heading block's level, 1-6 (a heading given no valid level counts as a top one)."""
    return block.level if 1 <= block.level <= 6 else 1


def heading_title(raw: str) -> str:
    return fold_whitespace(_HEADING_MARKS.sub("", raw))


def build_section_index(pages: Sequence[PageRecord]) -> SectionIndex:
    """Walk the heading blocks in reading order, keeping a stack of open headings.

    A heading's dot path counts it among its siblings under the nearest shallower
    heading, so a document that starts at h2 still numbers from 1.
    """
    heading_starts: list[int] = []
    infos: list[SectionInfo] = []
    markers: dict[int, str | None] = {}
    heading_spans: list[tuple[int, int]] = []
    stack: list[tuple[int, str, int]] = []  # (level, title, ordinal among siblings)
    child_counts: list[int] = [0]  # children seen under each open node; [0] is the root
    for page in pages:
        for block in sorted(page.blocks, key=lambda item: item.char_start):
            if block.kind != "heading":
                continue
            title = heading_title(page.text[block.char_start : block.char_end])
            if not title:
                continue
            level = heading_level(block)
            number = decimal_parts(title)
            while stack and (stack[-1][0] >= level or _outside(number, decimal_parts(stack[-1][1]))):
                stack.pop()
                child_counts.pop()
            child_counts[-1] += 1
            stack.append((level, title, child_counts[-1]))
            child_counts.append(0)
            start = page.char_start + block.char_start
            heading_spans.append((start, page.char_start + block.char_end))
            heading_starts.append(start)
            path = tuple(entry[1] for entry in stack)
            section = next((entry[1] for entry in reversed(stack) if entry[0] <= 2), None)
            infos.append(SectionInfo(path, section, ".".join(str(entry[2]) for entry in stack)))
            if opens_annex(title):
                markers[start] = None
            elif number := article_number(title):
                markers[start] = number
    openings = set(markers)
    for page in pages:
        for match in _LINE_START.finditer(page.text):
            offset = page.char_start + match.end()
            line = page.text[match.end() : match.end() + LABEL_READ_CHARS]
            number = paragraph_article(line)
            if number is not None and not _inside(heading_spans, offset) and offset not in markers:
                markers[offset] = number
                label = read_label(line)
                if label is not None and label.kind != DECIMAL:
                    openings.add(offset)
    ordered = sorted(markers.items())
    return SectionIndex(
        heading_starts=tuple(heading_starts),
        infos=tuple(infos),
        article_starts=tuple(offset for offset, _ in ordered),
        article_numbers=tuple(number for _, number in ordered),
        article_openings=tuple(sorted(openings)),
    )


def decimal_parts(heading: str) -> tuple[str, ...]:
    """The parts of a heading's dotted number (`5.6 a) Phase de zone` -> 5, 6, a), empty when it has none."""
    label = read_label(heading)
    return tuple(label.number.replace(" ", ".").split(".")) if label is not None and label.kind == DECIMAL else ()


def _outside(number: tuple[str, ...], open_number: tuple[str, ...]) -> bool:
    """Whether a heading numbered `number` lies outside an open heading numbered `open_number`.

    `5.6 a)` belongs to 5 but not to 5.5, whatever the levels its typography gave them: a
    document that numbers 5.6's parts without a heading for 5.6 itself still means that.
    """
    return bool(number and open_number) and number[: len(open_number)] != open_number


def paragraph_article(line: str) -> str | None:
    """The article a numbered paragraph opens: a dotted number ("4.1 Chaque coup ...", "5.6 a) Les
    équipes"), or an article label run into its text ("Art. 5. – Le bureau", "ARTICLE 5 : ...").

    A bare `3.` opens list items as often as articles, and `Article 12 du code` is a sentence about
    another text: neither is one.
    """
    label = read_label(line.split("\n", 1)[0])
    if label is None or not label.is_article:
        return None
    if label.depth > 1:
        return label.number
    if label.kind == DECIMAL:
        return None
    after = line.split("\n", 1)[0].lstrip("\\ ")[len(label.text) :]
    return label.number if _RUN_IN_SEPARATOR.match(after) else None


def article_number(heading: str) -> str | None:
    """The article a heading opens, as the document numbers it ("1" for "Article 1er", "6.7" for "6.7. Délai").

    Named parts above articles (TITRE II, Section 3, Annexe A) open none.
    """
    label = read_label(heading)
    if label is not None:
        return label.number if label.is_article else None
    number = _HEADING_NUMBER.match(heading)
    return number.group(1) if number else None


def _inside(spans: list[tuple[int, int]], offset: int) -> bool:
    index = bisect.bisect_right(spans, (offset, float("inf"))) - 1
    return index >= 0 and spans[index][0] <= offset < spans[index][1]
