"""Ruled tables found as `page.find_tables(use_layout=False)` finds them, from drawings already read.

`find_tables()` reads the page's drawings again through the slow Python
`get_drawings()`, fills a dict per character and per edge and runs pdfplumber's
"lines" strategy on them: on table pages that is most of extraction's time. The
same algorithm on the drawings the pre-filter read and on tuples (`table_edges`,
`table_grid`) gives the same cells at a fraction of the cost. Pages that
`find_tables()` turns first (rotated) or whose matrix does more than flip y are
left to it (None), as are characters whose box MuPDF leaves unordered (a media box
off the origin only shifts the flipped x, which the finder never reads).
"""

from __future__ import annotations

import itertools
from typing import Any

import pymupdf

from pocket_assets.core.extract.table_edges import Box, page_edges, read_chars
from pocket_assets.core.extract.table_grid import Cell, grid_tables

Grid = tuple[Box, list[list[Cell | None]]]  # a table's bbox and its rows, None where a cell spans the slot


def _rows(cells: list[Cell]) -> list[list[Cell | None]]:
    """`Table.rows`: cells by row (same top), one slot per distinct left edge of the table."""
    lefts = sorted({cell[0] for cell in cells})
    rows = []
    for _, row in itertools.groupby(sorted(cells, key=lambda cell: (cell[1], cell[0])), key=lambda cell: cell[1]):
        by_left = {cell[0]: cell for cell in row}
        rows.append([by_left.get(left) for left in lefts])
    return rows


def _bbox(cells: list[Cell]) -> Box:
    return (
        min(cell[0] for cell in cells),
        min(cell[1] for cell in cells),
        max(cell[2] for cell in cells),
        max(cell[3] for cell in cells),
    )


def find_ruled_grids(page: pymupdf.Page, drawings: list[dict[str, Any]]) -> list[Grid] | None:
    """The tables `find_tables(use_layout=False)` finds, top to bottom; None where only it can tell.

    `drawings`: the page's `get_cdrawings()`, left unchanged.
    """
    a, b, c, d, _, height = tuple(page.transformation_matrix)  # a media box off the origin shifts x only:
    if page.rotation or (a, b, c, d) != (1.0, 0.0, 0.0, -1.0):  # the finder reads no flipped x
        return None
    small = bool(pymupdf.TOOLS.set_small_glyph_heights())
    pymupdf.TOOLS.set_small_glyph_heights(True)  # as find_tables() reads the characters
    try:
        chars = read_chars(page, height)
    finally:
        pymupdf.TOOLS.set_small_glyph_heights(small)
    if chars is None:
        return None
    x0, y0, x1, y1 = page.rect
    edges = page_edges(drawings, (x0, y0, x1, y1), chars)
    return [(_bbox(cells), _rows(cells)) for cells in grid_tables(edges, chars.any_text_overlapping)]
