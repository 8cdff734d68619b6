"""`table_chars` gives PyMuPDF's table finder the very characters `pymupdf.table.make_chars` gives it."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pymupdf.table
import pytest

from pocket_assets.core.extract.table_chars import fast_table_chars, table_chars
from pocket_assets.core.extract.tables import find_page_tables, may_hold_table

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
# (fixture, 0-based page, tables the page holds): TeX and office ruled tables, a table printed upside
# down (find_tables turns the page and reads its header from the characters), crossing rules around
# no table at all (the pre-filter's false alarm, which find_tables must still be asked about).
TABLE_PAGES = [
    ("tex-table-cells-words.pdf", 0, 1),
    ("regs-serif-small-capitals.pdf", 2, 1),
    ("ruled-table-upside-down.pdf", 0, 1),
    ("crossing-rules-without-table.pdf", 0, 0),
]


def _chars(page: pymupdf.Page, make_chars) -> list[dict]:
    """CHARS as find_tables() fills them (small glyph heights on, as it sets them)."""
    pymupdf.table._CHARS_VAR.set([])
    small = bool(pymupdf.TOOLS.set_small_glyph_heights())
    pymupdf.TOOLS.set_small_glyph_heights(True)
    try:
        make_chars(page)
    finally:
        pymupdf.TOOLS.set_small_glyph_heights(small)
    return list(pymupdf.table.CHARS)


@pytest.mark.parametrize(("name", "index", "tables"), TABLE_PAGES)
def test_same_characters_as_pymupdf_to_the_last_bit(name: str, index: int, tables: int) -> None:
    with pymupdf.open(REAL / name) as document:
        page = document[index]
        theirs = _chars(page, pymupdf.table.make_chars)
        ours = _chars(page, table_chars)
    assert len(theirs) > 100
    assert repr(ours) == repr(theirs)  # repr: -0.0 and 0.0 told apart, floats to the last digit


@pytest.mark.parametrize(("name", "index", "tables"), TABLE_PAGES)
def test_tables_found_as_before(name: str, index: int, tables: int) -> None:
    """The pre-filter lets every page through; find_tables finds the same grids with either character list."""
    with pymupdf.open(REAL / name) as document:
        page = document[index]
        assert may_hold_table(page.get_cdrawings())
        theirs = [(tuple(t.bbox), [row.cells for row in t.rows]) for t in page.find_tables(use_layout=False).tables]
        with fast_table_chars():
            ours = [(tuple(t.bbox), [row.cells for row in t.rows]) for t in page.find_tables(use_layout=False).tables]
        found = find_page_tables(page)
    assert ours == theirs
    assert len(found) == tables


def test_other_page_matrices_are_left_to_pymupdf() -> None:
    """A media box off the origin moves the page matrix: the characters are PyMuPDF's own then."""
    document = pymupdf.open()
    page = document.new_page(width=300, height=200)
    page.insert_text((40, 60), "Name  Value", fontsize=11)
    page.insert_text((40, 80), "alpha  1", fontsize=11)
    page.set_mediabox(pymupdf.Rect(10, 20, 290, 190))
    page = document.reload_page(page)
    assert tuple(page.transformation_matrix) == (1.0, 0.0, 0.0, -1.0, -10.0, 190.0)
    ours = _chars(page, table_chars)
    assert ours
    assert repr(ours) == repr(_chars(page, pymupdf.table.make_chars))


def test_pymupdf_make_chars_put_back_even_after_an_error() -> None:
    original = pymupdf.table.make_chars
    with pytest.raises(RuntimeError), fast_table_chars():
        assert pymupdf.table.make_chars is table_chars
        raise RuntimeError("table finder failed")
    assert pymupdf.table.make_chars is original
