"""Ruled tables: a cheap vector-drawing test first, `find_tables()` only on the pages it keeps.

`find_tables()` costs 40-200x plain text extraction; a page without at least a
few straight lines or rectangles cannot hold a ruled table, and that test costs
less than reading the text (PERFORMANCE.md: it keeps ~4-11% of pages).
"""

from __future__ import annotations

from dataclasses import dataclass

import pymupdf

from pocket_assets.core.extract.cleanup import clean_text, collapse_spaces
from pocket_assets.core.records import TableCells

MIN_RULE_ITEMS = 4  # line or rectangle drawing items a ruled table needs at least


@dataclass(frozen=True, slots=True)
class FoundTable:
    """A table located on the page, with its cells already cleaned."""

    bbox: tuple[float, float, float, float]
    cells: TableCells

    def contains(self, x0: float, y0: float, x1: float, y1: float) -> bool:
        """True when the centre of a text line lies inside the table."""
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        return self.bbox[0] <= cx <= self.bbox[2] and self.bbox[1] <= cy <= self.bbox[3]


def may_hold_table(page: pymupdf.Page) -> bool:
    """The pre-filter: enough straight rules among the page's vector drawings."""
    count = 0
    for path in page.get_cdrawings():
        for item in path.get("items", ()):
            if item[0] in ("l", "re"):
                count += 1
                if count >= MIN_RULE_ITEMS:
                    return True
    return False


def _cell_text(value: str | None) -> str:
    return collapse_spaces(clean_text(value or "").replace("\n", " "))


def find_page_tables(page: pymupdf.Page) -> list[FoundTable]:
    """Tables of at least 2 rows and 2 columns with some text, in top-to-bottom order."""
    found = []
    for table in page.find_tables(use_layout=False).tables:
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
