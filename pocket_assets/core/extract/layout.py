"""Reading a page's text layer into lines and paragraphs in reading order.

`get_text("dict")` gives blocks in content-stream order, which is not always
reading order, and `sort=True` is 15-20x slower than plain extraction; so the
blocks are ordered here: full-width blocks cut the page into bands, and inside
a band a left column is read before a right one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from operator import itemgetter
from typing import Any

import pymupdf

from pocket_assets.core.extract.cleanup import clean_text

# Ligatures are expanded by MuPDF when TEXT_PRESERVE_LIGATURES is off; images are not needed here.
DICT_FLAGS = pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_MEDIABOX_CLIP

_BOLD_FONT = re.compile(r"bold|black|heavy|semibold|demi|medi|-bd|cmbx|cmb\d", re.IGNORECASE)
_MONO_FONT = re.compile(r"mono|courier|typewriter|consol|menlo|cmtt|sftt|lmtt|\btt", re.IGNORECASE)
_FLAG_MONOSPACED = 8
_FLAG_BOLD = 16
_SPAN_FIELDS = itemgetter("text", "font", "flags", "size")
SPREAD_GAP = 2.0  # in em: a wider gap between pieces of one line is a tab stop, not a word space


@dataclass(frozen=True, slots=True)
class Line:
    """One visual line with the style that decides its role (heading, code, body)."""

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
    text = clean_text("".join([span["text"] for span in spans]))
    if not text.strip():
        return None
    # Font expansion (microtype) and word spacing give every word its own span: tally
    # characters per (font, flags, size) first, then look at the few distinct styles.
    runs: dict[tuple[str, int, float], list[int]] = {}  # style -> [visible characters, non-digit spans]
    for span_text, font, flags, raw_size in map(_SPAN_FIELDS, spans):
        visible = span_text.strip()
        if visible:
            run = runs.get((font, flags, raw_size))
            if run is None:
                run = runs[(font, flags, raw_size)] = [0, 0]
            run[0] += len(visible)
            if not visible.isdigit():
                run[1] += 1
    weights: dict[float, int] = {}
    bold = True
    any_mono = False
    other_spans = 0
    for (font, flags, raw_size), (characters, words) in runs.items():
        size = round(raw_size, 1)
        weights[size] = weights.get(size, 0) + characters
        span_bold, span_mono = font_style(font, flags)
        bold = bold and span_bold
        if span_mono:
            any_mono = True
        else:
            other_spans += words  # listings number their lines in another font: digits do not count
    size = max(sorted(weights), key=lambda key: weights[key])
    lead = "" if bold or len(runs) == 1 else _bold_lead(spans, text)
    mono = any_mono and other_spans == 0
    return Line(text, bbox[0], bbox[1], bbox[2], bbox[3], size, bold, mono, lead, spread)


def _block_lines(block: dict[str, Any]) -> list[Line]:
    """A block's lines, with pieces on the same baseline merged into one line."""
    rows: list[tuple[list[dict[str, Any]], list[float], list[bool]]] = []
    for raw in block["lines"]:
        x0, y0, x1, y1 = raw["bbox"]
        spans = [span for span in raw["spans"] if span["text"]]
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
        rows.append((list(spans), [x0, y0, x1, y1], [False]))
    lines = []
    for spans, box, spread in rows:
        line = _make_line(spans, (box[0], box[1], box[2], box[3]), spread[0])
        if line is not None:
            lines.append(line)
    return lines


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
    ordered = sorted(blocks, key=lambda item: (round(item[0][1], 1), item[0][0]))
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
    """Cut blocks into paragraphs at style changes, vertical gaps and list markers.

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
                if new_style or gap or (not line.mono and starts_item(line.text)):
                    paragraphs.append(Paragraph(tuple(current)))
                    current = []
            current.append(line)
        if current:
            paragraphs.append(Paragraph(tuple(current)))
    return paragraphs
