"""One page's Markdown and its blocks, from its scanned lines and the document-wide decisions."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from pocket_assets.core.document import PageContent
from pocket_assets.core.extract.cleanup import (
    MarginLine,
    header_titles,
    is_page_counter,
    join_lines,
    margin_signature,
    numbers_of,
)
from pocket_assets.core.extract.headings import (
    MAX_HEADING_CHARS,
    MAX_HEADING_LINES,
    MAX_LABEL_LEVEL,
    MAX_LEVEL,
    HeadingScale,
    is_section_number,
    numbered_capitals,
    numbering_depth,
    outline_style,
    reads_as_heading_line,
    reads_as_long_title,
    run_in_heading,
)
from pocket_assets.core.extract.numbering import DECIMAL, is_bare_label, read_label
from pocket_assets.core.extract.outline import Candidate, OutlineMatch, match_outline
from pocket_assets.core.extract.reading_order import Line, Paragraph, split_margin_labels, split_paragraphs
from pocket_assets.core.extract.scan import EDGE_SLACK, EMPTY_WARNING, IMAGE_ONLY_WARNING, PageScan
from pocket_assets.core.extract.tables import pipe_table
from pocket_assets.core.records import Block, TableCells

BLOCK_SEPARATOR = "\n\n"
CODE_FENCE = "```"
EQUATION_FENCE = "$$"
MONO_CHAR_WIDTH = 0.6  # a monospaced glyph is about 0.6 em wide: turns x offsets into indentation

_BULLET_ITEM = re.compile(r"^\s*[•◦▪▫‣⁃●○■□∙·*–—-]\s+(?=\S)")
_NUMBERED_ITEM = re.compile(r"^\s*(\d{1,2})[.)]\s+(?=\S)")
_BULLET_ONLY = re.compile(r"^\s*[•◦▪▫‣⁃●○■□∙·*–—-]\s*$")
# What a Markdown reader takes for structure at the start of a paragraph: a heading, a quote,
# a bullet, a numbered item, a fence or a rule.
_MARKDOWN_OPENING = re.compile(r"^(?:#|>|[-*+](?:\s|$)|\d+[.)](?:\s|$)|```|~~~|={3,}\s*$)")


def paragraph_text(paragraph: Paragraph) -> str:
    return join_lines(line.text for line in paragraph.lines)


_PAGE_NUMBERED = re.compile(r"^\d{1,4}\s+\S|\S\s+\d{1,4}$")


def outline_matches(scan: PageScan, paragraphs: Sequence[Paragraph]) -> dict[int, OutlineMatch]:
    """Which of the page's paragraphs are the headings its outline entries name (`match_outline`).

    Text first, then code (typewriter, not bold), then the lines that may be running headers: in the
    page's margin bands, or a first or last line with a page number set apart (`46 attr`, `attributes 47`:
    a manual heads its pages with the topic they hold). A heading may be run into a paragraph whose
    first line sets its opening apart (a bold lead, pieces far apart) or that is heading-short.
    """
    last = len(paragraphs) - 1

    def tier(index: int, paragraph: Paragraph) -> int:
        first = paragraph.first
        page_numbered = first.spread and len(paragraph.lines) == 1 and bool(_PAGE_NUMBERED.search(first.text.strip()))
        if scan.margin_position(first) is not None or (index in (0, last) and page_numbered):
            return 2
        return 1 if all(line.mono and not line.bold for line in paragraph.lines) else 0

    candidates = []
    for index, paragraph in enumerate(paragraphs):
        text = paragraph_text(paragraph)
        short = len(paragraph.lines) <= MAX_HEADING_LINES and len(text) <= MAX_HEADING_CHARS
        run_in = bool(paragraph.first.lead) or paragraph.first.spread or short
        candidates.append(Candidate(text, tier(index, paragraph), run_in))
    return match_outline(scan.outline, candidates)


def starts_list_item(text: str) -> bool:
    return bool(_BULLET_ITEM.match(text) or _NUMBERED_ITEM.match(text))


def escape_paragraph(text: str) -> str:
    """A backslash before an opening that Markdown would read as structure; the words stay as they are."""
    return f"\\{text}" if _MARKDOWN_OPENING.match(text) else text


def _run_from(
    paragraphs: list[Paragraph], index: int, continues: Callable[[Paragraph], bool], headings: Collection[int] = ()
) -> list[Paragraph]:
    """`paragraphs[index]` and the paragraphs right after it that `continues` accepts (one code block, list...),
    up to the first of `headings` (the outline's)."""
    end = index + 1
    while end < len(paragraphs) and end not in headings and continues(paragraphs[end]):
        end += 1
    return paragraphs[index:end]


def _continues_code(paragraph: Paragraph) -> bool:
    return all(line.mono for line in paragraph.lines) and not is_margin_label(paragraph)


def _continues_list(paragraph: Paragraph) -> bool:
    text = paragraph.first.text
    return not paragraph.first.mono and starts_list_item(text) and not numbered_capitals(text.strip())


def list_item_markdown(text: str) -> str:
    """`• x` -> `- x`, `3) x` -> `3. x`."""
    numbered = _NUMBERED_ITEM.match(text)
    if numbered:
        return f"{numbered.group(1)}. {text[numbered.end() :]}"
    bullet = _BULLET_ITEM.match(text)
    return f"- {text[bullet.end() :]}" if bullet else f"- {text}"


def _apart_from_text(line: Line, place: str, lines: list[Line]) -> bool:
    """Whether a margin line stands off the page's text by at least its own height, on the text's side.

    A running header is set above the text block with a skip of its own, a footer below it; a
    page's first or last body line (a heading, a table row) is as close to its neighbour as lines are.
    """
    if place == "top":
        below = [other.y0 for other in lines if other.y0 > line.y0 + EDGE_SLACK]
        gap = min(below) - line.y1 if below else float("inf")
    else:
        above = [other.y1 for other in lines if other.y1 < line.y1 - EDGE_SLACK]
        gap = line.y0 - max(above) if above else float("inf")
    return gap >= line.y1 - line.y0


def margin_lines(scan: PageScan) -> tuple[MarginLine, ...]:
    """The lines that may run from page to page, the input of running-header detection."""
    lines = [line for block in scan.blocks for line in block]
    places = [place for block in scan.margin_places for place in block]
    return tuple(
        MarginLine(
            scan.number,
            margin_signature(place, line.text),
            place if in_band else "",
            line.y0,
            line.size,
            header_titles(line.text),
            in_band and _apart_from_text(line, place, lines),
            numbers_of(line.text),
        )
        for line, (place, in_band) in zip(lines, places)
        if place
    )


def strip_margins(scan: PageScan, running: frozenset[str]) -> tuple[list[list[Line]], tuple[str, ...]]:
    """The page's blocks without running headers, footers and page counters, and what was removed."""
    kept: list[list[Line]] = []
    removed: list[str] = []
    for lines, places in zip(scan.blocks, scan.margin_places):
        block = []
        for line, (place, in_band) in zip(lines, places):
            if place and ((in_band and is_page_counter(line.text)) or margin_signature(place, line.text) in running):
                removed.append(line.text)
            else:
                block.append(line)
        if block:
            kept.append(block)
    return kept, tuple(removed)


def page_paragraphs(
    scan: PageScan, running: frozenset[str], column_left: float | None
) -> tuple[list[Paragraph], tuple[str, ...]]:
    """The page's paragraphs, margin labels left of `column_left` (the text column's edge) set apart."""
    blocks, removed = strip_margins(scan, running)
    blocks = [split_margin_labels(lines, column_left) for lines in blocks]
    paragraphs = _join_continuations(_attach_lone_bullets(split_paragraphs(blocks, starts_list_item)))
    return _set_apart_label_lines(paragraphs), removed


def _set_apart_label_lines(paragraphs: list[Paragraph]) -> list[Paragraph]:
    """A numbered heading line inside a paragraph becomes a paragraph of its own, and a numbered
    paragraph glued to the one before starts its own.

    Word processors often print headings in the body's font with no more space around them than
    between lines (`5.5. Appariement au système Molter` followed at once by its text), so nothing but
    the numbering and the line break sets them apart. A line in body type is cut out as a heading when
    it reads as a labelled or numbered heading on its own (`reads_as_heading`), the author broke the
    line after it (the next line's first word would have fitted in the column) and the line before
    it, if any, ended its paragraph (a sentence end, or a break by the author). A wrapped sentence
    that happens to open a line with a number fails the last two: it fills the column, or goes on in
    the next line. A numbered title in capitals (`numbered_capitals`) needs none of that, and a
    bold line below another is cut alike: "1. OBLIGATIONS" and "1.1. COUVERTURE" set one under the
    other are two headings, "Article 1er" over "Objet" one. A longer line that opens with a label
    (`Art. 14. - Le bureau ...`, `4.1 Chaque ...`) after a sentence ended by the author starts a
    paragraph, so its number opens a line of the text, where article numbers are read.
    """
    lines = [line for paragraph in paragraphs for line in paragraph.lines]
    result: list[Paragraph] = []
    for paragraph in paragraphs:
        cut_from = 0
        for index, line in enumerate(paragraph.lines if len(paragraph.lines) > 1 else ()):
            if _is_label_line(paragraph.lines, index, lines):
                if index > cut_from:
                    result.append(Paragraph(paragraph.lines[cut_from:index]))
                result.append(Paragraph((line,)))
                cut_from = index + 1
            elif index > cut_from and _opens_numbered_paragraph(paragraph.lines[index - 1], line, lines):
                result.append(Paragraph(paragraph.lines[cut_from:index]))
                cut_from = index
        if cut_from == 0:
            result.append(paragraph)
        elif cut_from < len(paragraph.lines):
            result.append(Paragraph(paragraph.lines[cut_from:]))
    return result


_ENDS_PARAGRAPH = re.compile(r"[.;:!?»)]\s*$")
_MAY_OPEN_LABEL = re.compile(r"^\s*[\dA-Z]")  # labels open with a digit or a capital: the cheap test first


def _is_label_line(lines: tuple[Line, ...], index: int, page_lines: list[Line]) -> bool:
    """Whether `lines[index]` is a heading set in a paragraph's lines (see `_set_apart_label_lines`)."""
    line = lines[index]
    text = line.text.strip()
    if line.mono or line.margin_label or not _MAY_OPEN_LABEL.match(text) or read_label(text) is None:
        return False
    if line.bold and index == 0:
        return False  # (bold lines are cut from regular text by their style; "Article 1er" over its title is one)
    if not reads_as_heading_line(text, spread=True):  # (a number at the end: a contents entry)
        return False
    if numbered_capitals(text):
        return True
    if index + 1 < len(lines) and not _broken_before(line, lines[index + 1], page_lines):
        return False
    previous = lines[index - 1] if index else None
    return previous is None or bool(_ENDS_PARAGRAPH.search(previous.text)) or _broken_before(previous, line, page_lines)


def _opens_numbered_paragraph(previous: Line, line: Line, page_lines: list[Line]) -> bool:
    """A line opening with a label, after a sentence the author ended there, or with an article's label (`Art 1er-
    Il est fondé ...`) after a line the author ended early (see `_set_apart_label_lines`)."""
    if line.mono or not _MAY_OPEN_LABEL.match(line.text):
        return False
    label = read_label(line.text.strip())
    return (
        label is not None
        and (bool(_ENDS_PARAGRAPH.search(previous.text)) or label.kind != DECIMAL)
        and _broken_before(previous, line, page_lines)
    )


def _broken_before(line: Line, following: Line, page_lines: list[Line]) -> bool:
    """Whether the author ended `line` early: `following`'s first word would have fitted after it.

    The column's right edge is the farthest any line of the page that shares the line's horizontal
    span reaches; a word's width is estimated from `following`'s own characters.
    """
    words = following.text.split()
    if not words or following.text.lstrip()[:1].islower():
        return False
    right_edge = max(other.x1 for other in page_lines if other.x0 < line.x1 and other.x1 > line.x0)
    char_width = (following.x1 - following.x0) / max(len(following.text.strip()), 1)
    return line.x1 + char_width * (len(words[0]) + 1) <= right_edge


def _join_continuations(paragraphs: list[Paragraph]) -> list[Paragraph]:
    """Glue a paragraph that MuPDF or a style change cut after its first line.

    The sign is a next line right below that goes on with the sentence: in the
    same style and starting in lowercase (hanging indents, description lists, a
    word hyphenated across the cut), or, after a bold line, opening with more
    bold words before regular text (a bold phrase that opens a paragraph and
    runs over a line end, not a heading).
    """
    joined: list[Paragraph] = []
    for paragraph in paragraphs:
        if joined:
            last, first = joined[-1].lines[-1], paragraph.first
            same_style = (first.mono, first.bold, first.size) == (last.mono, last.bold, last.size)
            sentence_goes_on = same_style and first.text.lstrip()[:1].islower()
            bold_phrase_goes_on = (
                last.bold and first.size == last.size and bool(first.lead) and not is_section_number(first.lead)
            )
            if (
                (sentence_goes_on or bold_phrase_goes_on)
                and not (first.margin_label or last.margin_label)
                and 0 <= first.y0 - last.y1 < 0.6 * max(last.y1 - last.y0, 1.0)
            ):
                joined[-1] = Paragraph(joined[-1].lines + paragraph.lines)
                continue
        joined.append(paragraph)
    return joined


def _attach_lone_bullets(paragraphs: list[Paragraph]) -> list[Paragraph]:
    """A bullet typeset apart from its item's text becomes that item's marker."""
    merged: list[Paragraph] = []
    pending: Line | None = None
    for paragraph in paragraphs:
        if len(paragraph.lines) == 1 and _BULLET_ONLY.match(paragraph.first.text):
            pending = paragraph.first
            continue
        if pending is not None:
            first = paragraph.first
            marked = Line(
                f"{pending.text.strip()} {first.text.lstrip()}",
                min(pending.x0, first.x0),
                first.y0,
                first.x1,
                first.y1,
                first.size,
                first.bold,
                first.mono,
            )
            paragraph = Paragraph((marked, *paragraph.lines[1:]))
            pending = None
        merged.append(paragraph)
    if pending is not None:
        merged.append(Paragraph((pending,)))
    return merged


def _continues_heading(heading: Paragraph, following: Paragraph, scale: HeadingScale, page: int) -> bool:
    last, first = heading.lines[-1], following.first
    close = first.y0 - last.y1 < 0.6 * max(last.y1 - last.y0, 1.0)
    text = paragraph_text(following)
    return close and not first.margin_label and not numbering_depth(text) and scale.level(following, text, page) > 0


def _is_bare_number_in_body_type(paragraph: Paragraph, text: str, body_size: float) -> bool:
    """`3. Recall Period` set like the body: a heading or a list item, as its neighbours tell.

    In a document that sets its headings apart by type, such a line titles a part of the section
    in force (an enumerated item with a title line), one level below it.
    """
    label = read_label(text)
    return (
        label is not None
        and label.kind == DECIMAL
        and label.depth == 1
        and not any(line.bold for line in paragraph.lines)
        and paragraph.first.size <= body_size * 1.05
    )


def _is_list_item_among_items(paragraphs: list[Paragraph], index: int, text: str) -> bool:
    """A bare number opens headings and list items alike; a heading stands between paragraphs of
    text, an item follows a lead-in that ends with a colon or sits beside other items. A title in
    capitals is a heading wherever it stands."""
    if numbered_capitals(text):
        return False
    before = paragraph_text(paragraphs[index - 1]) if index else ""
    after = paragraph_text(paragraphs[index + 1]) if index + 1 < len(paragraphs) else ""
    return before.rstrip().endswith(":") or starts_list_item(before) or starts_list_item(after)


def is_margin_label(paragraph: Paragraph) -> bool:
    return paragraph.first.margin_label


def _is_display_math(paragraph: Paragraph) -> bool:
    """Lines set apart, each mostly in math fonts: a display formula (pieces of a 2-D layout included).

    Inline math in running text shares its paragraph with prose lines, so it never qualifies; nor
    does a lone symbol (an index of operators lists `<` and `|` in math fonts).
    """
    if is_margin_label(paragraph) or not all(line.math for line in paragraph.lines):
        return False
    return sum(len(line.text.replace(" ", "")) for line in paragraph.lines) >= 2


def _equation_markdown(paragraphs: list[Paragraph]) -> str:
    """Fenced like TeX display math; the text is the PDF's own (Unicode), one line per paragraph."""
    body = [paragraph_text(paragraph) for paragraph in paragraphs]
    return "\n".join([EQUATION_FENCE, *body, EQUATION_FENCE])


def _code_markdown(paragraphs: list[Paragraph]) -> str:
    lines = [line for paragraph in paragraphs for line in paragraph.lines]
    left = min(line.x0 for line in lines)
    rendered = []
    for line in lines:
        indent = round((line.x0 - left) / max(line.size * MONO_CHAR_WIDTH, 1.0))
        rendered.append(" " * indent + line.text.strip())
    return "\n".join([CODE_FENCE, *rendered, CODE_FENCE])


@dataclass(frozen=True)
class Flow:
    """What the reading of a page hands to the next."""

    section_level: int = 0  # level of the last section heading so far: margin labels on the next page sit below it
    after_bare_label: bool = False  # the last block so far is a heading that is a label alone ("Article 15")
    outline_started: bool = False  # a heading the PDF's outline lists came before: unlisted ones go below the outline's


@dataclass(frozen=True)
class RenderedPage:
    content: PageContent
    removed_lines: tuple[str, ...]  # running headers, footers and page counters taken out
    label_headings: tuple[int, ...] = ()  # indices in content.blocks of the headings that are margin labels
    flow: Flow = Flow()


class _PageWriter:
    """Appends blocks to the page text, keeping each block's exact span."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.blocks: list[Block] = []
        self.length = 0
        self.body_written = False  # a block of text longer than a heading: the page's title, if any, is above

    def add(self, kind: str, text: str, level: int = 0, table: TableCells | None = None) -> None:
        if not text:
            return
        self.body_written = self.body_written or (kind != "heading" and len(text) > MAX_HEADING_CHARS)
        if self.parts:
            self.parts.append(BLOCK_SEPARATOR)
            self.length += len(BLOCK_SEPARATOR)
        self.parts.append(text)
        self.blocks.append(Block(kind, self.length, self.length + len(text), level, table))
        self.length += len(text)

    def text(self) -> str:
        return "".join(self.parts)


def _write_listed(writer: _PageWriter, paragraphs: list[Paragraph], match: OutlineMatch, whole: bool) -> int:
    """The heading the PDF's outline lists, at its level, then the rest of its paragraph when the heading is only
    that paragraph's start (unless `whole`: the paragraph is set as a heading, and the outline left out a part
    of it such as a command's arguments); its level."""
    level = min(match.level, MAX_LABEL_LEVEL)
    text = join_lines(line.text for paragraph in paragraphs[match.first : match.last + 1] for line in paragraph.lines)
    rest = ""
    if match.cut is not None and not whole:
        text, rest = text[: match.cut].rstrip(), text[match.cut :].lstrip()
    writer.add("heading", f"{'#' * level} {text}", level=level)
    writer.add("paragraph", escape_paragraph(rest))
    return level


def render_page(
    scan: PageScan,
    running: frozenset[str],
    scale: HeadingScale,
    column_left: float | None = None,
    flow: Flow = Flow(),
) -> RenderedPage:
    """The page's Markdown: headings, paragraphs, lists, code and tables, in reading order.

    The headings the PDF's outline lists on the page (`scan.outline`) are headings at the outline's
    level; the others are found by type and numbering, and once a listed heading came, placed below
    the outline's levels (`HeadingScale.unlisted_level`).
    `flow.section_level` is the level of the last section heading before the page. A
    margin label names an item inside the current section (a command, a field),
    so it is a heading one level below it, never a section that resets the count;
    so is a bare-numbered title in body type in a document whose headings have a
    type of their own (`1. Precision` in a manual's enumeration).
    `flow.after_bare_label`: the previous page ended on a label alone ("Article 15"), so
    an unlabelled heading opening this page is that label's title cut off by the
    page break ("Litiges"); it stays in the label's section as a paragraph.
    On the first page, a paragraph above the body text that reads as the document's
    title (`reads_as_long_title`: in capitals) is a heading whatever its length.
    """
    paragraphs, removed = page_paragraphs(scan, running, column_left)
    listed = outline_matches(scan, paragraphs) if scan.outline else {}
    section_level, outline_started = flow.section_level, flow.outline_started
    writer = _PageWriter()
    label_headings: list[int] = []
    tables = list(scan.tables)
    title_open = scan.number == 1
    index = 0
    while index < len(paragraphs):
        paragraph = paragraphs[index]
        while tables and tables[0].bbox[1] <= paragraph.y0:
            writer.add("table", pipe_table(tables[0].cells), table=tables.pop(0).cells)
        text = paragraph_text(paragraph)
        if index in listed:
            typeset = bool(scale.level(paragraph, text, scan.number))
            section_level, outline_started = _write_listed(writer, paragraphs, listed[index], typeset), True
            index = listed[index].last + 1
            continue
        minor = is_margin_label(paragraph)
        level = 0 if minor else scale.level(paragraph, text, scan.number)
        learned = level and outline_started and scale.outline_levels.get(outline_style(paragraph))
        if level and outline_started:
            level = scale.unlisted_level(paragraph, level)
        if level and index == 0 and flow.after_bare_label and read_label(text) is None:
            level = 0
        if not level and not minor and title_open and not writer.body_written:
            if reads_as_long_title(text, len(paragraph.lines)):
                level, title_open = 1, False
        if level and not learned and _is_bare_number_in_body_type(paragraph, text, scale.body_size):
            if _is_list_item_among_items(paragraphs, index, text):
                level = 0
            else:
                minor = scale.styled_headings
        if minor:  # one level below the section in force, which it does not change
            minor_level = min(section_level + 1, MAX_LEVEL)
            writer.add("heading", f"{'#' * minor_level} {text}", level=minor_level)
            if is_margin_label(paragraph):
                label_headings.append(len(writer.blocks) - 1)
            index += 1
            continue
        run_in = "" if level else run_in_heading(paragraph, scale.body_size)
        if run_in and text.startswith(run_in):
            level = section_level = min(numbering_depth(run_in), MAX_LEVEL)
            if outline_started:
                level = section_level = scale.unlisted_level(paragraph, level)
            writer.add("heading", f"{'#' * level} {run_in}", level=level)
            writer.add("paragraph", escape_paragraph(text[len(run_in) :].lstrip()))
            index += 1
            continue
        # A heading broken in two by a font change (a word in typewriter) is still one heading.
        while (
            level
            and index + 1 < len(paragraphs)
            and index + 1 not in listed
            and _continues_heading(paragraph, paragraphs[index + 1], scale, scan.number)
        ):
            index += 1
            paragraph = Paragraph(paragraph.lines + paragraphs[index].lines)
            text = paragraph_text(paragraph)
        if level:
            section_level = level
            writer.add("heading", f"{'#' * level} {text}", level=level)
        elif all(line.mono for line in paragraph.lines):
            run = _run_from(paragraphs, index, _continues_code, listed)
            index += len(run) - 1
            writer.add("code", _code_markdown(run))
        elif _is_display_math(paragraph):
            run = _run_from(paragraphs, index, _is_display_math, listed)
            index += len(run) - 1
            writer.add("equation", _equation_markdown(run))
        elif starts_list_item(text):
            run = _run_from(paragraphs, index, _continues_list, listed)
            index += len(run) - 1
            items = [text, *(paragraph_text(item) for item in run[1:])]
            writer.add("list", "\n".join(map(list_item_markdown, items)))
        else:
            writer.add("paragraph", escape_paragraph(text))
        index += 1
    for table in tables:
        writer.add("table", pipe_table(table.cells), table=table.cells)
    text = writer.text()
    warnings = scan.warnings
    if not text and scan.damage is None and IMAGE_ONLY_WARNING not in warnings:
        warnings = (*warnings, EMPTY_WARNING)
    content = PageContent(scan.number, text, tuple(writer.blocks), warnings)
    last = writer.blocks[-1] if writer.blocks else None
    bare_label = last is not None and last.kind == "heading" and is_bare_label(text[last.char_start : last.char_end])
    return RenderedPage(content, removed, tuple(label_headings), Flow(section_level, bare_label, outline_started))
