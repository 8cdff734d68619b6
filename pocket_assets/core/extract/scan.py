"""The single pass over the PDF: each page reduced to ordered lines, tables and warnings.

This is the only place that touches PyMuPDF pages. What it keeps per page is
small (lines with their style and position), so everything that needs the
whole document (running headers, heading levels) runs afterwards without
re-reading the PDF.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pymupdf

from pocket_assets.core.extract.cleanup import is_page_counter
from pocket_assets.core.extract.reading_order import DICT_FLAGS, Line, read_lines, text_column_left, text_dict
from pocket_assets.core.extract.ocr import ocr_textpage
from pocket_assets.core.pdf import iter_document_pages
from pocket_assets.core.tables.readable import readable_cells
from pocket_assets.core.extract.tables import (
    FoundTable,
    aligned_candidates,
    find_aligned_tables,
    find_page_tables,
    may_hold_table,
)

IMAGE_ONLY_WARNING = "image-only page: no text layer (scanned?)"
EMPTY_WARNING = "empty page"
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
    page: pymupdf.Page, textpage: pymupdf.TextPage, data: dict[str, Any], warnings: list[str]
) -> list[FoundTable]:
    """Ruled tables on pages with crossing rules, then unruled ones on runs of aligned lines elsewhere.
    `textpage`: the page's own text layer, which ruled tables' cells are read from (on a page read by
    OCR, `data` comes from the OCR's text page instead: its cells stay those of the text layer)."""
    tables: list[FoundTable] = []
    drawings = page.get_cdrawings()  # read once: the pre-filter and the table finder both need them
    if may_hold_table(drawings):
        try:
            tables = find_page_tables(page, textpage=textpage, drawings=drawings)
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


def scan_page(
    page: pymupdf.Page, number: int, detect_tables: bool, ocr_language: str | None, tessdata: str | None
) -> PageScan:
    """Read one page; OCR it only when asked and it has no text layer."""
    warnings: list[str] = []
    rect = page.rect
    width, height = rect.width, rect.height
    textpage = page.get_textpage(flags=DICT_FLAGS)  # the cells of a ruled table are read from it too
    data = text_dict(page, textpage)
    blocks = read_lines(data, width)
    if not blocks and ocr_language and tessdata and page.get_images():
        data = text_dict(page, ocr_textpage(page, ocr_language, tessdata))
        blocks = read_lines(data, width)
    if not blocks and page.get_images():
        warnings.append(IMAGE_ONLY_WARNING)
    tables = _page_tables(page, textpage, data, warnings) if detect_tables and blocks else []
    if tables:
        blocks = [
            [line for line in lines if not any(table.contains(line.x0, line.y0, line.x1, line.y1) for table in tables)]
            for lines in blocks
        ]
        blocks = [lines for lines in blocks if lines]
    return PageScan(
        number=number,
        height=height,
        blocks=tuple(tuple(lines) for lines in blocks),
        tables=tuple(tables),
        warnings=tuple(warnings),
        column_left=text_column_left([line for lines in blocks for line in lines], width),
        margin_places=margin_places(blocks, height),
    )


def scan_pages(
    document: pymupdf.Document,
    source: str,
    detect_tables: bool,
    ocr_language: str | None,
    tessdata: str | None,
) -> list[PageScan]:
    """Scan every page of the open PDF, in order. `source` names the file in the error of a page that
    cannot be read."""
    return [
        scan_page(page, number, detect_tables, ocr_language, tessdata)
        for number, page in iter_document_pages(document, source)
    ]
