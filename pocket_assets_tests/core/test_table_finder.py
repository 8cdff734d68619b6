"""`table_finder` finds the very grids `page.find_tables(use_layout=False)` finds, from the pre-filter's drawings."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pymupdf.table
import pytest

from pocket_assets.core.extract.table_finder import find_ruled_grids
from pocket_assets.core.extract.tables import _pymupdf_grids, find_page_tables

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"


def _theirs(page: pymupdf.Page) -> str:
    """PyMuPDF's grids, in the form `find_ruled_grids` gives them; repr tells -0.0 from 0.0 and every last digit."""
    return repr([(tuple(bbox), cells) for bbox, cells in _pymupdf_grids(page, use_layout=False)])


def _ruled_page() -> pymupdf.Page:
    """A page of the shapes the "lines" strategy reads: stroked lines, cell rectangles, thin filled rules,
    a shaded box around text, rules that almost meet (snapped and joined), and a grid without text."""
    document = pymupdf.open()
    page = document.new_page(width=595, height=842)
    # A grid of stroked lines, some pieces left 1.5 pt apart or 1 pt off their line.
    for y in (80, 100, 120.8, 140):
        page.draw_line((60, y), (200, y))
        page.draw_line((201.5, y + (1 if y == 100 else 0)), (330, y))
    for x in (60, 150, 240, 330):
        page.draw_line((x, 80), (x, 140.5))
    for row, y in enumerate((95, 115, 135)):
        for column, x in enumerate((65, 155, 245)):
            page.insert_text((x, y), f"r{row} c{column}", fontsize=9)
    # A table of one rectangle per cell, one cell spanning two columns.
    for x0, x1, y0, y1 in ((60, 200, 200, 220), (200, 330, 200, 220), (60, 330, 220, 240), (60, 200, 240, 260)):
        page.draw_rect((x0, y0, x1, y1), width=0.5)
        page.insert_text((x0 + 4, y1 - 6), f"{x0}-{y0}", fontsize=8)
    page.draw_rect((200, 240, 330, 260), width=0.5)
    # Thin filled rectangles drawn as rules (office suites), around two columns.
    shape = page.new_shape()
    for y in (300, 320, 340):
        shape.draw_rect((60, y - 0.4, 330, y + 0.4))
    for x in (60, 190, 330):
        shape.draw_rect((x - 0.4, 300, x + 0.4, 340))
    shape.finish(fill=(0, 0, 0), color=None)
    shape.commit()
    for y in (315, 335):
        page.insert_text((70, y), "label", fontsize=9)
        page.insert_text((200, y), "12.5", fontsize=9)
    # A shaded box holding text: its border becomes edges through the joined graphics boxes.
    page.draw_rect((60, 400, 330, 440), color=None, fill=(0.9, 0.9, 0.9))
    page.draw_line((195, 400), (195, 440))
    page.draw_line((60, 420), (330, 420))
    page.insert_text((70, 415), "shaded", fontsize=9)
    page.insert_text((200, 435), "cell", fontsize=9)
    # A grid without any text: no table.
    for y in (500, 520, 540):
        page.draw_line((60, y), (330, y))
    for x in (60, 200, 330):
        page.draw_line((x, 500), (x, 540))
    return document.reload_page(page)


def test_built_page_same_grids_as_find_tables() -> None:
    page = _ruled_page()
    ours = find_ruled_grids(page, page.get_cdrawings())
    assert ours is not None
    assert repr(ours) == _theirs(page)
    assert len(ours) >= 3  # the line grid, the rectangle cells, the filled rules (the empty grid is dropped)
    assert not any(bbox[1] >= 500 for bbox, _ in ours)


@pytest.mark.parametrize(
    ("name", "index"),
    [("tex-table-cells-words.pdf", 0), ("regs-serif-small-capitals.pdf", 2), ("crossing-rules-without-table.pdf", 0)],
)
def test_real_pages_same_grids_as_find_tables(name: str, index: int) -> None:
    with pymupdf.open(REAL / name) as document:
        page = document[index]
        ours = find_ruled_grids(page, page.get_cdrawings())
        assert ours is not None
        assert repr(ours) == _theirs(page)


def test_drawings_left_unchanged() -> None:
    """The scan reads the drawings once and hands the same list to the pre-filter and the finder."""
    page = _ruled_page()
    drawings = page.get_cdrawings()
    before = repr(drawings)
    find_ruled_grids(page, drawings)
    assert repr(drawings) == before


def test_turned_pages_left_to_pymupdf() -> None:
    """find_tables() turns a rotated page before reading it: only it can say what it finds there."""
    with pymupdf.open(REAL / "ruled-table-upside-down.pdf") as document:
        page = document[0]
        if not page.rotation:
            page.set_rotation(90)
        assert find_ruled_grids(page, page.get_cdrawings()) is None
        assert find_page_tables(page, drawings=page.get_cdrawings()) == find_page_tables(page)


def test_turned_pages_tables_read_without_their_headers() -> None:
    """The header find_tables() reads eagerly on a turned page is never read; the cells stay the same."""
    with pymupdf.open(REAL / "ruled-table-upside-down.pdf") as document:
        page = document[0]
        tables = page.find_tables(use_layout=False).tables
        theirs = [(tuple(table.bbox), [row.cells for row in table.rows]) for table in tables]
        read_header = pymupdf.table.Table._get_header
        ours = _pymupdf_grids(page, use_layout=False)
        assert pymupdf.table.Table._get_header is read_header
    assert ours == theirs
    assert len(ours) == 1


def test_media_box_off_the_origin() -> None:
    """The page matrix then shifts x too; find_tables() flips only the characters' y, which stays the same."""
    document = pymupdf.open()
    document.insert_pdf(_ruled_page().parent)
    page = document[0]
    page.set_mediabox(pymupdf.Rect(12, 20, 590, 835))
    page = document.reload_page(page)
    assert tuple(page.transformation_matrix)[4:] == (-12.0, 835.0)
    ours = find_ruled_grids(page, page.get_cdrawings())
    assert ours
    assert repr(ours) == _theirs(page)
