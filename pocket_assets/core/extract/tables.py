"""Ruled tables: a cheap vector-drawing test first, `find_tables()` only on the pages it keeps.

`find_tables()` costs 40-200x plain text extraction; a page whose drawings hold
no crossing rules cannot hold a ruled table, and that test costs less than
reading the text.
"""

from __future__ import annotations

from dataclasses import dataclass

import pymupdf

from pocket_assets.core.extract.cleanup import clean_text, collapse_spaces
from pocket_assets.core.records import TableCells

RULE_THICKNESS = 3.0  # a filled rectangle thinner than this is drawn as a rule
CROSSING_MARGIN = 3.0  # a rule this far inside another one crosses it rather than closing a box
RULE_GAP = 2.5  # typesetters leave rules this far apart where they meet


@dataclass(frozen=True, slots=True)
class FoundTable:
    """A table located on the page, with its cells already cleaned."""

    bbox: tuple[float, float, float, float]
    cells: TableCells

    def contains(self, x0: float, y0: float, x1: float, y1: float) -> bool:
        """True when the centre of a text line lies inside the table."""
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        return self.bbox[0] <= cx <= self.bbox[2] and self.bbox[1] <= cy <= self.bbox[3]


Segment = tuple[float, float, float]  # (fixed coordinate, start, end)


def _rules(page: pymupdf.Page) -> tuple[list[Segment], list[Segment]]:
    """Horizontal and vertical rules among the page's lines and rectangles."""
    horizontal: list[Segment] = []
    vertical: list[Segment] = []
    for path in page.get_cdrawings():
        for item in path.get("items", ()):
            if item[0] == "l":
                (x0, y0), (x1, y1) = item[1], item[2]
                if abs(y1 - y0) < 1:
                    horizontal.append((y0, min(x0, x1), max(x0, x1)))
                elif abs(x1 - x0) < 1:
                    vertical.append((x0, min(y0, y1), max(y0, y1)))
            elif item[0] == "re":
                x0, y0, x1, y1 = item[1]
                x0, x1, y0, y1 = min(x0, x1), max(x0, x1), min(y0, y1), max(y0, y1)
                if x1 - x0 < RULE_THICKNESS:
                    vertical.append(((x0 + x1) / 2, y0, y1))
                elif y1 - y0 < RULE_THICKNESS:
                    horizontal.append(((y0 + y1) / 2, x0, x1))
                else:
                    horizontal += [(y0, x0, x1), (y1, x0, x1)]
                    vertical += [(x0, y0, y1), (x1, y0, y1)]
    return horizontal, vertical


def _crosses_inside(inner: Segment, outer: Segment) -> bool:
    """`inner` (perpendicular) meets `outer` strictly inside it, as a column or row separator does."""
    position, start, end = inner
    return (
        outer[1] + CROSSING_MARGIN < position < outer[2] - CROSSING_MARGIN
        and start - RULE_GAP <= outer[0] <= end + RULE_GAP
    )


def may_hold_table(page: pymupdf.Page) -> bool:
    """The pre-filter: a column rule that meets a row rule inside its length.

    Plain boxes (framed code, shaded lines) and lone horizontal rules (footnotes,
    title bars) have none, and are the common false alarms of a plain count.
    """
    horizontal, vertical = _rules(page)
    if len(horizontal) < 2 or not vertical:
        return False
    return any(_crosses_inside(v, h) for v in vertical for h in horizontal)


def _cell_text(value: str | None) -> str:
    return collapse_spaces(clean_text(value or "").replace("\n", " "))


def find_page_tables(page: pymupdf.Page, use_layout: bool = False) -> list[FoundTable]:
    """Tables of at least 2 rows and 2 columns with some text, in top-to-bottom order.

    Extraction finds ruled tables only (`use_layout=False`); the layout model also finds
    unruled ones but costs ~200x plain text extraction per page.
    """
    found = []
    for table in page.find_tables(use_layout=use_layout).tables:
        rows = [tuple(_cell_text(cell) for cell in row) for row in table.extract()]
        rows = [row for row in rows if any(row)]
        if len(rows) < 2 or max(len(row) for row in rows) < 2:
            continue
        # The first extracted row is the header: an "external" header found above the
        # bbox would duplicate text that is already read as a paragraph.
        x0, y0, x1, y1 = (float(value) for value in table.bbox)
        found.append(FoundTable((x0, y0, x1, y1), TableCells(header=rows[0], rows=tuple(rows[1:]))))
    found.sort(key=lambda table: (table.bbox[1], table.bbox[0]))
    return found


def pipe_table(cells: TableCells) -> str:
    """The table as a Markdown pipe table: header row, `|---|` separator, one line per row."""
    width = max([len(cells.header)] + [len(row) for row in cells.rows])

    def render(row: tuple[str, ...]) -> str:
        padded = list(row) + [""] * (width - len(row))
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in padded) + " |"

    separator = "|" + "|".join(["---"] * width) + "|"
    return "\n".join([render(cells.header), separator, *(render(row) for row in cells.rows)])
