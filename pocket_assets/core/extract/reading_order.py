"""Reading a page's text layer into lines and paragraphs in reading order.

`get_text("dict")` gives blocks in content-stream order, which is not always
reading order, and `sort=True` costs many times plain extraction; so the
blocks are ordered here: full-width blocks cut the page into bands, and inside
a band a left column is read before a right one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import lru_cache
from operator import itemgetter
from typing import Any, NamedTuple

from pocket_assets.core.extract.cleanup import clean_text
from pocket_assets.core.mupdf import pymupdf

# Ligatures are expanded by MuPDF when TEXT_PRESERVE_LIGATURES is off; images are not needed here.
DICT_FLAGS = pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_MEDIABOX_CLIP

_BOLD_FONT = re.compile(r"bold|black|heavy|semibold|demi|medi|-bd|cmbx|cmb\d", re.IGNORECASE)
_MONO_FONT = re.compile(r"mono|courier|typewriter|consol|menlo|cmtt|sftt|lmtt|\btt", re.IGNORECASE)
# TeX's math italic, symbol and extension fonts (and their Latin Modern, AMS, STIX and Cambria kin).
_MATH_FONT = re.compile(r"cmmi|cmsy|cmex|msam|msbm|lmmath|stixmath|cambriamath|eufm|rsfs|^symbol", re.IGNORECASE)
SMALL_CAPITALS = 0.6  # smaller capitals at least this share of the large ones' size are small caps
MATH_SHARE = 0.33  # of a line's characters (dots and spaces aside) in math fonts: a display formula
_FLAG_MONOSPACED = 8
_FLAG_BOLD = 16
_TEXT = itemgetter("text")
SPREAD_GAP = 2.0  # in em: a wider gap between pieces of one line is a tab stop, not a word space
EDGE_TOLERANCE = 1.0  # pt: how far text may stick out of the text column's left edge and still be on it
FULL_LINE_SLACK = 0.02  # of the page width: a line ending this close to the text's right edge is a full line
MARGIN_LABEL_MAX_WORDS = 3
MARGIN_LABEL_MAX_CHARS = 40
LABEL_LOOKBACK = 4  # blocks above a margin block among which the block it labels is looked for
_LETTER = re.compile(r"[^\W\d_]")


class LabelCut(NamedTuple):
    """Where a line's opening term ends, should it turn out to sit in the left margin."""

    chars: int  # length of the term in the line's text
    x1: float  # where the term ends on the page
    rest_x0: float | None  # where the rest of the line starts, None when the term is the whole line


@dataclass(slots=True, unsafe_hash=True)
class Line:
    """One visual line with the style that decides its role (heading, code, body).

    Never changed once made (`replace` makes the changed copies), but not `frozen`: a frozen
    dataclass sets each of its 13 fields through `object.__setattr__`, ~3 us a line, and a
    2,400-page manual makes ~110,000 lines. Hashed like a frozen one (its fields' tuple).
    """

    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    size: float  # size carrying most characters, rounded to 0.1 pt
    bold: bool  # every visible character is bold
    mono: bool  # every visible character is monospaced
    lead: str = ""  # a bold opening that runs on into regular text ("3.3.1 Titre  Le texte..."), else ""
    spread: bool = False  # pieces far apart on the baseline: a right-aligned page number, a tab stop
    margin_label: bool = False  # a term set in the left margin that names the block beside or below it
    math: bool = False  # a third or more of its characters set in math fonts (dot leaders aside)
    label_cut: LabelCut | None = None  # the line opens with a short term in a style of its own


@dataclass(frozen=True, slots=True)
class Paragraph:
    """Consecutive lines of one style that read as one unit."""

    lines: tuple[Line, ...]

    @property
    def first(self) -> Line:
        return self.lines[0]

    @property
    def y0(self) -> float:
        return min(line.y0 for line in self.lines)


@lru_cache(maxsize=4096)
def font_style(font: str, flags: int) -> tuple[bool, bool]:
    """(bold, monospaced) of a font; cached because pages repeat a handful of fonts over thousands of spans."""
    bold = bool(flags & _FLAG_BOLD) or bool(_BOLD_FONT.search(font))
    mono = bool(flags & _FLAG_MONOSPACED) or bool(_MONO_FONT.search(font))
    return bold, mono


def _bold_lead(spans: list[dict[str, Any]], text: str) -> str:
    """The bold words a line opens with when regular text follows them on the same line."""
    lead: list[str] = []
    for span in spans:
        if not span["text"].strip() or font_style(span["font"], span["flags"])[0]:
            lead.append(span["text"])
        elif not "".join(lead).strip():
            return ""
        else:
            opening = clean_text("".join(lead)).strip()
            return opening if text.lstrip().startswith(opening) else ""
    return ""


def _make_line(spans: list[dict[str, Any]], bbox: tuple[float, float, float, float], spread: bool) -> Line | None:
    texts = list(map(_TEXT, spans))
    text = clean_text("".join(texts))
    if not text.strip():
        return None
    # Each span's visible text, read once for the tally, the margin label and the math share ("" for
    # the spans MuPDF makes of the spaces it inserts between words: half of a manual's spans).
    shown = list(map(str.strip, texts))
    # Font expansion (microtype) and word spacing give every word its own span: tally
    # characters per (font, flags, size) first, then look at the few distinct styles.
    # style -> [visible characters, non-digit spans, 1 if any lowercase]
    runs: dict[tuple[str, int, float], list[int]] = {}
    for span, visible in zip(spans, shown):
        if visible:
            style = (span["font"], span["flags"], span["size"])
            run = runs.get(style)
            if run is None:
                run = runs[style] = [0, 0, 0]
            run[0] += len(visible)
            if not visible.isdigit():
                run[1] += 1
            if not run[2] and visible.upper() != visible:
                run[2] = 1  # holds lowercase letters
    weights: dict[float, int] = {}
    bold = True
    any_mono = False
    other_spans = 0
    any_math = False
    for (font, flags, raw_size), (characters, words, _) in runs.items():
        size = round(raw_size, 1)
        weights[size] = weights.get(size, 0) + characters
        span_bold, span_mono = font_style(font, flags)
        bold = bold and span_bold
        if span_mono:
            any_mono = True
        else:
            other_spans += words  # listings number their lines in another font: digits do not count
        any_math = any_math or _math_font(font)
    # The size carrying most characters, the smallest on a tie (most lines have one size).
    size = next(iter(weights)) if len(weights) == 1 else max(sorted(weights), key=weights.__getitem__)
    if any(not run[2] for run in runs.values()):  # capitals somewhere: maybe small caps
        spaced = max(span["size"] for span in spans)
        if (spaced > max(weights) + 0.1 or len(weights) > 1) and _small_capitals(runs, spaced):
            size = round(spaced, 1)
    lead = "" if bold or len(runs) == 1 else _bold_lead(spans, text)
    mono = any_mono and other_spans == 0
    math = any_math and _mostly_math(spans, shown)
    cut = _label_cut(spans, shown, text)
    return Line(text, bbox[0], bbox[1], bbox[2], bbox[3], size, bold, mono, lead, spread, label_cut=cut, math=math)


def _mostly_math(spans: list[dict[str, Any]], shown: list[str]) -> bool:
    """A third or more of the line's characters (dots and spaces aside) in math fonts: a display formula.
    Only asked of lines with a math font somewhere, so the count is not paid on every line.
    `shown`: each span's visible text."""
    substantive = math_characters = 0
    for span, visible in zip(spans, shown):
        solid = len(visible) - visible.count(".") - visible.count(" ")
        substantive += solid
        if _math_font(span["font"]):
            math_characters += solid
    return math_characters > 0 and math_characters >= MATH_SHARE * substantive


def _small_capitals(runs: dict[tuple[str, int, float], list[int]], largest: float) -> bool:
    """Smaller type holding only capitals beside larger capitals or spaces: small caps (`A` `RTICLE` `17`,
    `DE PREMIÈRE INSTANCE` with full-size spaces), one size to a reader."""
    return all(
        run[2] == 0 and raw_size >= SMALL_CAPITALS * largest
        for (_, _, raw_size), run in runs.items()
        if raw_size < largest
    )


@lru_cache(maxsize=4096)
def _math_font(font: str) -> bool:
    return bool(_MATH_FONT.search(font))


def text_column_left(lines: list[Line], page_width: float) -> float | None:
    """The left edge of the page's text column: the leftmost x where full lines start.

    Full lines (those reaching the right edge of the text) are running text, so
    where they start is the column and not a margin: a description list's terms
    at that edge are not margin labels, wherever most of the page's text starts.
    A line that may open with a margin label starts where the rest of it does.
    None when no two full lines start together in the left half of the page (two
    columns, an index, a title page): there is no margin then.
    """
    if not lines:
        return None
    # Where lines end, at least two of them: one overfull line does not move the right edge.
    ends: dict[int, int] = {}
    for line in lines:
        ends[round(line.x1)] = ends.get(round(line.x1), 0) + 1
    right = max((end for end, count in ends.items() if count >= 2), default=max(ends)) - FULL_LINE_SLACK * page_width
    starts: dict[int, list[float]] = {}
    for line in lines:
        if line.x1 >= right:
            cut = line.label_cut
            x0 = cut.rest_x0 if cut is not None and cut.rest_x0 is not None else line.x0
            starts.setdefault(round(x0), []).append(x0)
    left = next((key for key in sorted(starts) if len(starts[key]) >= 2), None)
    return min(starts[left]) if left is not None and left < page_width / 2 else None


def _label_cut(spans: list[dict[str, Any]], shown: list[str], text: str) -> LabelCut | None:
    """Where the line's opening term ends, when it opens with one: a short term in one font and
    colour, followed by nothing or by text in another font or colour (`shown`: each span's visible text).

    Only the term is found here; whether it sits in the margin depends on the
    text column's edge, which is known once the whole document is read.
    """
    style = None
    length = 0
    end = 0
    rest_x0 = None
    for index, visible in enumerate(shown):
        if not visible:
            continue
        span = spans[index]
        span_style = (span["font"], span["color"])
        if style is None:
            style = span_style
        elif span_style != style:
            rest_x0 = span["bbox"][0]
            break
        length += len(visible)
        if length > MARGIN_LABEL_MAX_CHARS:
            return None
        end = index + 1
    term = "".join([span["text"] for span in spans[:end]]).strip()
    if (
        term[:1].isdigit()  # a listing's line number, not a term
        or len(term.split()) > MARGIN_LABEL_MAX_WORDS
        or len(_LETTER.findall(term)) < 2
    ):
        return None
    start = text.find(term)
    if start < 0:  # ligatures or soft hyphens that the line's text has cleaned
        term = clean_text(term)
        start = text.find(term)
    if start < 0 or text[:start].strip():
        return None
    return LabelCut(start + len(term), spans[end - 1]["bbox"][2], rest_x0)


def _is_margin_label(line: Line, cut: LabelCut, column_left: float) -> bool:
    """The term starts at least an em left of the text column and stops at its edge; the rest is in the column."""
    return (
        line.x0 <= column_left - line.size
        and cut.x1 <= column_left + EDGE_TOLERANCE
        and (cut.rest_x0 is None or cut.rest_x0 >= column_left - EDGE_TOLERANCE)
    )


def split_margin_labels(lines: Iterable[Line], column_left: float | None) -> list[Line]:
    """The lines, a margin label cut off each as a line of its own, before the rest of its line.

    Description lists and command references set the term they describe in the
    margin, right-aligned on the text column, with the signature or description
    beside it in the column (`\\cite[prenote]{key}`, `eventdate  champ (date)`).
    A first line merely hanging into the margin runs across the edge in one
    style, so it has no label.
    """
    if column_left is None:
        return list(lines)
    result: list[Line] = []
    for line in lines:
        cut = line.label_cut
        if cut is None or not _is_margin_label(line, cut, column_left):
            result.append(line)
            continue
        label = line.text[: cut.chars].strip()
        result.append(replace(line, text=label, x1=cut.x1, lead="", spread=False, margin_label=True, label_cut=None))
        rest = line.text[cut.chars :].lstrip()
        if rest and cut.rest_x0 is not None:
            result.append(replace(line, text=rest, x0=cut.rest_x0, lead="", label_cut=None))
    return result


def document_column_lefts(page_lefts: list[float | None]) -> list[float | None]:
    """Each page's text column edge, from the document as well as from the page itself.

    A page that is one long description list has its full lines indented, so
    its own estimate is too far right; the document's usual edge is right then.
    But full lines that start further left than usual show the page's column
    really starts there: the leftmost of the two wins. Odd and even pages are
    told apart (two-sided layouts mirror their margins). A page without an
    estimate (a title page, a two-column index) keeps None: it has no margin.
    """
    usual: dict[int, float] = {}
    for parity in (0, 1):
        edges = [left for number, left in enumerate(page_lefts) if left is not None and number % 2 == parity]
        counts: dict[int, int] = {}
        for left in edges:
            counts[round(left)] = counts.get(round(left), 0) + 1
        if counts:
            common = max(sorted(counts), key=counts.__getitem__)
            usual[parity] = min(left for left in edges if round(left) == common)
    return [None if left is None else min(left, usual[number % 2]) for number, left in enumerate(page_lefts)]


def _block_lines(block: dict[str, Any]) -> list[Line]:
    """A block's lines, with pieces on the same baseline merged into one line."""
    rows: list[tuple[list[dict[str, Any]], list[float], list[bool]]] = []
    for raw in block["lines"]:
        x0, y0, x1, y1 = raw["bbox"]
        spans = list(filter(_TEXT, raw["spans"]))
        if not spans:
            continue
        if rows:
            last_spans, box, spread = rows[-1]
            height = max(box[3] - box[1], 1.0)
            if abs(y1 - box[3]) < 0.35 * height and x0 >= box[2] - 1.0:
                gap = x0 - box[2]
                if gap > 0.15 * spans[0]["size"] and not last_spans[-1]["text"].endswith(" "):
                    last_spans.append({**spans[0], "text": " "})
                if gap > SPREAD_GAP * spans[0]["size"]:
                    spread[0] = True
                last_spans.extend(spans)
                box[:] = [min(box[0], x0), min(box[1], y0), max(box[2], x1), max(box[3], y1)]
                continue
        rows.append((spans, [x0, y0, x1, y1], [False]))
    lines = []
    for spans, box, spread in rows:
        line = _make_line(spans, (box[0], box[1], box[2], box[3]), spread[0])
        if line is not None:
            lines.append(line)
    return lines


def _labels_before_what_they_label(
    ordered: list[tuple[tuple[float, float, float, float], list[Line]]],
) -> list[tuple[tuple[float, float, float, float], list[Line]]]:
    """Blocks top to bottom, a block set in the margin beside another read just before it.

    Margin labels may be blocks of their own, beside the first lines of the
    paragraph they label, a point below its top or stacked down its side; by
    height alone they would be read after that paragraph's first line. A block
    is beside another when it lies entirely left of it and starts within its
    height; only the few blocks just above are looked at, the page stays linear.
    """
    keys = []
    for index, (box, _) in enumerate(ordered):
        target = index
        for previous in range(index - 1, max(index - LABEL_LOOKBACK, 0) - 1, -1):
            other = ordered[previous][0]
            if other[0] >= box[2] and other[1] <= box[1] < other[3]:
                target = previous
                break
        keys.append((target, 0 if target != index else 1, box[1]))
    return [ordered[index] for index in sorted(range(len(ordered)), key=keys.__getitem__)]


def _reading_order(
    blocks: list[tuple[tuple[float, float, float, float], list[Line]]], page_width: float
) -> list[list[Line]]:
    """Blocks sorted top to bottom, two-column bands read left column first.

    A block is "left" or "right" when it stays on its side of the page middle;
    a band of side-by-side blocks between two full-width blocks is read column
    by column only when both columns really hold text side by side.
    """
    middle = page_width / 2
    margin = page_width * 0.02
    ordered = _labels_before_what_they_label(sorted(blocks, key=lambda item: (round(item[0][1], 1), item[0][0])))
    result: list[list[Line]] = []
    band: list[tuple[tuple[float, float, float, float], list[Line]]] = []

    def flush() -> None:
        left = [item for item in band if item[0][2] <= middle + margin]
        right = [item for item in band if item[0][2] > middle + margin]
        side_by_side = any(r[0][1] < l[0][3] and l[0][1] < r[0][3] for l in left for r in right)
        if left and right and side_by_side:
            result.extend(lines for _, lines in left)
            result.extend(lines for _, lines in right)
        else:
            result.extend(lines for _, lines in band)
        band.clear()

    for item in ordered:
        x0, _, x1, _ = item[0]
        full_width = x0 < middle - margin and x1 > middle + margin
        if full_width:
            flush()
            result.append(item[1])
        else:
            band.append(item)
    flush()
    return result


def text_dict(page: pymupdf.Page, textpage: pymupdf.TextPage | None = None) -> dict[str, Any]:
    """The page's `get_text("dict")`, read once and shared by the line reader and the table pre-filter."""
    return page.get_text("dict", flags=DICT_FLAGS, textpage=textpage)


def read_lines(data: dict[str, Any], page_width: float) -> list[list[Line]]:
    """The text blocks of a page's `text_dict` in reading order, each a list of lines."""
    blocks = []
    for block in data["blocks"]:
        if block.get("type", 0) != 0:
            continue
        lines = _block_lines(block)
        if lines:
            box = (
                min(line.x0 for line in lines),
                min(line.y0 for line in lines),
                max(line.x1 for line in lines),
                max(line.y1 for line in lines),
            )
            blocks.append((box, lines))
    return _reading_order(blocks, page_width)


def split_paragraphs(blocks: Iterable[list[Line]], starts_item: Any) -> list[Paragraph]:
    """Cut blocks into paragraphs at style changes, vertical gaps, list markers and margin labels.

    `starts_item(text)` says whether a line opens a list item (a new paragraph).
    """
    paragraphs: list[Paragraph] = []
    for lines in blocks:
        current: list[Line] = []
        for line in lines:
            if current:
                previous = current[-1]
                height = max(previous.y1 - previous.y0, 1.0)
                new_style = (
                    line.mono != previous.mono
                    or line.bold != previous.bold
                    or abs(line.size - previous.size) > 0.1 * previous.size
                )
                gap = line.y0 - previous.y1 > 0.6 * height
                label = line.margin_label or previous.margin_label
                if new_style or gap or label or (not line.mono and starts_item(line.text)):
                    paragraphs.append(Paragraph(tuple(current)))
                    current = []
            current.append(line)
        if current:
            paragraphs.append(Paragraph(tuple(current)))
    return paragraphs
