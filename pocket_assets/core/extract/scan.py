"""The single pass over the PDF: each page reduced to ordered lines, tables and warnings.

This is the only place that touches PyMuPDF pages. What it keeps per page is
small (lines with their style and position), so everything that needs the
whole document (running headers, heading levels) runs afterwards without
re-reading the PDF.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, replace
from typing import Any

import pymupdf

from pocket_assets.core.errors import PdfError
from pocket_assets.core.extract.cleanup import is_page_counter
from pocket_assets.core.extract.ocr import PageOcr
from pocket_assets.core.extract.outline import OutlineEntry, has_heading_tags, outline_entries, tagged_headings
from pocket_assets.core.extract.reading_order import DICT_FLAGS, Line, read_lines, text_column_left, text_dict
from pocket_assets.core.extract.tables import (
    FoundTable,
    aligned_candidates,
    find_aligned_tables,
    find_page_tables,
    may_hold_table,
)
from pocket_assets.core.extract.turn import reading_frame, turned, turned_text
from pocket_assets.core.pdf import MUPDF_ERRORS, REPAIRED_WARNING, load_page, no_readable_page
from pocket_assets.core.tables.readable import readable_cells

IMAGE_ONLY_WARNING = "image-only page: no text layer (scanned?)"
EMPTY_WARNING = "empty page"
UNREADABLE_WARNING = "the page's content could not be read fully ({}): text may be missing"
OCR_WARNING = "no text layer: text read by OCR ({})"
# What OCR reads on an image is text when it holds this many words of three letters or more.
MIN_OCR_WORDS = 3
_OCR_WORD = re.compile(r"[^\W\d_]{3,}")
# MuPDF's messages that mean part of a content stream was skipped (it goes on after a syntax
# error, so the page reads as shorter, or as empty); an ICC profile's is about colours only.
_CONTENT_ERROR = re.compile(r"^(?!.*ICC).*(syntax error|stack overflow).*$", re.MULTILINE)
# OCR'd pages' blocks (`_column_blocks`): a blank this many line heights wide may part two columns; a page
# holds two when this many parts lie on each side of its middle, fewer than this share across it, and most
# parts on each side are this share of the page wide.
GUTTER, MIN_COLUMN_LINES, MAX_ACROSS_SHARE, COLUMN_SHARE = 2.0, 5, 0.2, 0.25
SAME_BASELINE = 0.35  # in line heights: pieces whose bottoms differ by less share a baseline
MARGIN_SHARE = 0.1  # top and bottom tenth of the page: where running headers and footers sit
EDGE_SLACK = 2.0  # pt: lines this close to the page's first or last line share its edge (and its place)
# Where a line may run from page to page: (place, in a margin band); ("", False) for a line of the text.
MarginPlace = tuple[str, bool]
_IN_TEXT: MarginPlace = ("", False)


@dataclass(frozen=True, slots=True)
class PageScan:
    """What one page holds, before the document-wide decisions."""

    number: int
    height: float
    blocks: tuple[tuple[Line, ...], ...]  # reading order; lines inside tables left out
    tables: tuple[FoundTable, ...]
    warnings: tuple[str, ...]
    column_left: float | None  # the page's own estimate of its text column's left edge (`text_column_left`)
    margin_places: tuple[tuple[MarginPlace, ...], ...]  # each line's `margin_places`, in the shape of `blocks`
    damage: str | None = None  # MuPDF's reason when it could not load the page or read all of its content
    outline: tuple[OutlineEntry, ...] = ()  # the headings the PDF's outline and heading tags list on this page

    def margin_position(self, line: Line) -> str | None:
        """'top' or 'bottom' when the line sits in a page margin band."""
        return margin_position(line, self.height)


def margin_position(line: Line, height: float) -> str | None:
    """'top' or 'bottom' when the line sits in a margin band of a page `height` high."""
    if line.y1 <= height * MARGIN_SHARE:
        return "top"
    if line.y0 >= height * (1 - MARGIN_SHARE):
        return "bottom"
    return None


def margin_places(blocks: list[list[Line]], height: float) -> tuple[tuple[MarginPlace, ...], ...]:
    """Lines that may be running headers, footers or page counters, in the shape of `blocks`.

    Lines in the top or bottom band are candidates whatever they say. A page counter
    set higher (LaTeX's footer sits at ~85% of an A4 page) is one only as the page's
    first or last line, and it is removed only when the same place holds one on
    several pages, so a lone number in the text is never taken for it. Found once
    per page here: the running-line census, the style census and the render read them.
    """
    lines = [line for block in blocks for line in block]
    if not lines:
        return ()
    top = min(line.y0 for line in lines)
    bottom = max(line.y1 for line in lines)

    def place(line: Line) -> MarginPlace:
        band = margin_position(line, height)
        if band is not None:
            return (band, True)
        if is_page_counter(line.text) and (line.y0 <= top + EDGE_SLACK or line.y1 >= bottom - EDGE_SLACK):
            edge = "top" if line.y0 <= top + EDGE_SLACK else "bottom"
            return (f"{edge}@{round(line.y0 / EDGE_SLACK) * EDGE_SLACK:g}", False)
        return _IN_TEXT

    return tuple(tuple(place(line) for line in block) for block in blocks)


def _page_tables(
    page: pymupdf.Page,
    textpage: pymupdf.TextPage | None,
    data: dict[str, Any],
    drawings: list[dict[str, Any]],
    warnings: list[str],
) -> list[FoundTable]:
    """Ruled tables on pages with crossing rules, then unruled ones on runs of aligned lines elsewhere.

    `page` is shown turned as it is read, `data` is its text dictionary in that frame, `drawings`
    its `get_cdrawings()` (unrotated). `textpage`: the page's own text layer, which `find_tables()`
    and the ruled tables' cells are read from; None on a page read by OCR, whose text layer is
    empty: its tables are read from the OCR's lines only.
    """
    tables: list[FoundTable] = []
    if textpage is not None and may_hold_table(drawings, quarter_turned=page.rotation % 180 != 0):
        try:
            tables = find_page_tables(page, textpage)
        except Exception as error:  # a table failure costs the table, never the page
            warnings.append(f"table detection failed: {error}")
    tables = [table for table in tables if readable_cells(table.cells)]  # a grid of graphics is no table
    candidates = aligned_candidates(data)
    if candidates:
        tables += [
            table
            for table in find_aligned_tables(candidates)
            if readable_cells(table.cells) and not any(table.overlaps(other) for other in tables)
        ]
        tables.sort(key=lambda table: (table.bbox[1], table.bbox[0]))
    return tables


def _has_text(data: dict[str, Any]) -> bool:
    return any(
        span["text"].strip()
        for block in data["blocks"]
        if block.get("type", 0) == 0
        for line in block["lines"]
        for span in line["spans"]
    )


def _content_problem() -> str | None:
    """MuPDF's first message since the last call that says page content was skipped (and forget them all)."""
    found = _CONTENT_ERROR.search(pymupdf.TOOLS.mupdf_warnings(reset=True))
    return found.group(0).strip() if found else None


def _read_text(page: pymupdf.Page) -> tuple[pymupdf.TextPage | None, dict[str, Any], str | None]:
    """The page's text layer and its dictionary, and what MuPDF could not read of its content.

    MuPDF skips what it cannot parse and goes on (a syntax error) or gives up on the page (an
    exception, e.g. 100,000 nested arrays): either way the page's text is short of what it shows,
    which must not pass for an empty page.
    """
    pymupdf.TOOLS.mupdf_warnings(reset=True)
    try:
        textpage = page.get_textpage(flags=DICT_FLAGS)
        data = text_dict(page, textpage)
    except MUPDF_ERRORS as error:
        _content_problem()
        return None, {"blocks": []}, str(error)
    return textpage, data, _content_problem()


def _drawings(page: pymupdf.Page) -> list[dict[str, Any]]:
    """The page's vector drawings (the table pre-filter's and OCR's test); none when MuPDF cannot read them
    (the text reading has then told the page's content problem)."""
    try:
        return page.get_cdrawings()
    except MUPDF_ERRORS:
        return []


def _has_images(page: pymupdf.Page) -> bool:
    try:
        return bool(page.get_images())
    except MUPDF_ERRORS:
        return False


def _ocr_text(page: pymupdf.Page, ocr: PageOcr, warnings: list[str]) -> dict[str, Any] | None:
    """The text dictionary Tesseract reads on the page image, or None (OCR missing or failed, said in `warnings`)."""
    try:
        data = ocr.text(page)
    except MUPDF_ERRORS as error:
        warnings.append(f"OCR failed ({error})")
        return None
    if data is None:
        notice = ocr.first_notice()
        if notice:
            warnings.append(notice)
        return None
    words = sum(
        len(_OCR_WORD.findall(span["text"]))
        for block in data["blocks"]
        for line in block.get("lines", ())
        for span in line["spans"]
    )
    if words < MIN_OCR_WORDS:  # a photograph's shapes read as letters ("a = Fr i"): no text
        return None
    warnings.append(OCR_WARNING.format(ocr.language))
    return _plain_style(data)


def _plain_style(data: dict[str, Any]) -> dict[str, Any]:
    """The OCR's text dictionary in one plain style.

    Tesseract's text layer is set in one glyphless font flagged monospaced: it tells no
    typeface, and read as typewriter every scanned page would become a code block. Its
    sizes are each word's box height, which a table rule or a descender swells: read as
    type sizes they would make headings of table cells. So flags are cleared and every
    size is the page's median: headings of a scan come from their wording (numbering,
    labels, capitals) only.
    """
    spans = [span for block in data["blocks"] for line in block.get("lines", ()) for span in line["spans"]]
    size = statistics.median_low(span["size"] for span in spans)
    for span in spans:
        span["flags"] = 0
        span["size"] = size
    return data


def _height(box: tuple[float, float, float, float]) -> float:
    return max(box[3] - box[1], 1.0)


def _union(boxes: list[tuple[float, float, float, float]]) -> tuple[float, float, float, float]:
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


def _column_blocks(data: dict[str, Any]) -> dict[str, Any]:
    """The OCR's text dictionary (in the frame it is read in) with its lines (MuPDF's pieces of a
    baseline) in blocks that stay inside one column of text: MuPDF groups the OCR's words into
    blocks across the gutter of two columns, which would read a two-column scan line across line.

    Each baseline is cut where a blank wider than GUTTER line heights (the page's median)
    parts two pieces. On a page of two columns of prose (parts on both sides of the middle,
    few across it, and most parts on each side at least COLUMN_SHARE of the page wide, where
    a table's cells are narrow) the parts are kept apart; elsewhere a baseline stays whole,
    so a table reads row by row. Then each part joins the block its column is filling when
    it sits right below it, or opens one; a part across the middle (a title) closes both
    columns' blocks. The reading order puts a column's blocks before the next column's.
    """
    pieces = sorted(
        (line for block in data["blocks"] if block.get("type", 0) == 0 for line in block["lines"]),
        key=lambda line: (line["bbox"][3], line["bbox"][0]),
    )
    height = statistics.median(_height(piece["bbox"]) for piece in pieces)
    rows: list[list[dict[str, Any]]] = []
    for piece in pieces:
        if rows and abs(piece["bbox"][3] - rows[-1][0]["bbox"][3]) < SAME_BASELINE * height:
            rows[-1].append(piece)
        else:
            rows.append([piece])
    cuts: list[list[list[dict[str, Any]]]] = []
    for row in rows:
        row.sort(key=lambda piece: piece["bbox"][0])
        cut = [[row[0]]]
        for piece in row[1:]:
            if piece["bbox"][0] - cut[-1][-1]["bbox"][2] > GUTTER * height:
                cut.append([piece])
            else:
                cut[-1].append(piece)
        cuts.append(cut)
    middle = data.get("width", 0.0) / 2
    sides: dict[str, list[float]] = {"left": [], "right": [], "across": []}
    for cut in cuts:
        for part in cut:
            box = _union([piece["bbox"] for piece in part])
            sides[_side(box, middle)].append(box[2] - box[0])
    two_columns = (
        min(len(sides["left"]), len(sides["right"])) >= MIN_COLUMN_LINES
        and len(sides["across"]) < MAX_ACROSS_SHARE * sum(len(widths) for widths in sides.values())
        and all(statistics.quantiles(sides[side], n=4)[2] >= COLUMN_SHARE * 2 * middle for side in ("left", "right"))
    )
    parts = [part for cut in cuts for part in cut] if two_columns else [sum(cut, []) for cut in cuts]
    blocks: list[dict[str, Any]] = []
    filling: dict[str, dict[str, Any]] = {}  # the block each column is filling
    for part in parts:
        box = _union([piece["bbox"] for piece in part])
        side = _side(box, middle) if two_columns else "across"
        if side == "across":
            filling.clear()
        block = filling.get(side)
        if block is not None and -height / 2 <= box[1] - block["bbox"][3] < height:
            block["lines"] += part
            block["bbox"] = _union([block["bbox"], box])
        else:
            filling[side] = {"type": 0, "bbox": box, "lines": list(part)}
            blocks.append(filling[side])
    return {**data, "blocks": blocks}


def _side(box: tuple[float, float, float, float], middle: float) -> str:
    return "left" if box[2] <= middle else "right" if box[0] >= middle else "across"


def scan_page(page: pymupdf.Page, number: int, detect_tables: bool, ocr: PageOcr | None) -> PageScan:
    """Read one page in the frame its text runs left to right in; OCR it when it has no text layer."""
    warnings: list[str] = []
    textpage, data, problem = _read_text(page)
    has_text = _has_text(data)
    # The drawings serve the table pre-filter on a page with text, and tell OCR a page without shows something.
    drawings = _drawings(page) if problem is None and (detect_tables or not has_text) else []
    images = not has_text and problem is None and _has_images(page)
    # Text may be in an image (a scan) or drawn as outlines: what shows something is read by OCR.
    ocr_data = _ocr_text(page, ocr, warnings) if (images or (drawings and not has_text)) and ocr is not None else None
    if ocr_data is not None:  # the page's own (empty) text layer holds no table cells either
        textpage, data, has_text, images = None, ocr_data, True, False
    if images:
        warnings.append(IMAGE_ONLY_WARNING)
    if problem is not None:
        warnings.append(UNREADABLE_WARNING.format(problem))
    frame = reading_frame(data, page.rotation)
    if frame.warning:
        warnings.append(frame.warning)
    with turned(page, frame.rotation):
        shown = turned_text(data, page)
        if ocr_data is not None:
            shown = _column_blocks(shown)
        rect = page.rect
        blocks = read_lines(shown, rect.width) if has_text else []
        tables = _page_tables(page, textpage, shown, drawings, warnings) if detect_tables and blocks else []
    if tables:
        blocks = [
            [line for line in lines if not any(table.contains(line.x0, line.y0, line.x1, line.y1) for table in tables)]
            for lines in blocks
        ]
        blocks = [lines for lines in blocks if lines]
    return PageScan(
        number=number,
        height=rect.height,
        blocks=tuple(tuple(lines) for lines in blocks),
        tables=tuple(tables),
        warnings=tuple(warnings),
        column_left=text_column_left([line for lines in blocks for line in lines], rect.width),
        margin_places=margin_places(blocks, rect.height),
        damage=problem,
    )


def _unloaded_page(number: int, reason: str) -> PageScan:
    return PageScan(number, 0.0, (), (), (f"{reason}: its text is missing",), None, (), damage=reason)


def scan_pages(document: pymupdf.Document, source: str, detect_tables: bool, ocr_language: str | None) -> list[PageScan]:
    """Scan every page of the open PDF, in order (`ocr_language`: Tesseract's languages, None for no OCR), each with
    the headings the PDF's outline and heading tags list on it.

    A page MuPDF cannot load or read is a page warning; the PDF fails (a `PdfError` naming
    `source`) only when no page can be read at all. A PDF MuPDF had to repair says so on its
    first page.
    """
    ocr = PageOcr(ocr_language) if ocr_language else None
    outline = outline_entries(document)
    tagged = has_heading_tags(document)
    scans: list[PageScan] = []
    for number in range(1, document.page_count + 1):
        try:
            page = load_page(document, number, source)
        except PdfError as error:
            scans.append(_unloaded_page(number, error.reason))
            continue
        scan = scan_page(page, number, detect_tables, ocr)
        listed = outline.get(number, ()) + (tagged_headings(page) if tagged else ())
        scans.append(replace(scan, outline=listed) if listed else scan)
    if all(scan.damage and not scan.blocks and not scan.tables for scan in scans):
        raise no_readable_page(source, len(scans), scans[0].damage)
    if document.is_repaired:
        scans[0] = replace(scans[0], warnings=(REPAIRED_WARNING, *scans[0].warnings))
    return scans
