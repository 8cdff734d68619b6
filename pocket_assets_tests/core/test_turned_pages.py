"""Turned pages read in reading order: a page turned by its /Rotate, or text drawn turned on a page that is
not, gives the text of the same page upright, text lines and table cells alike.

The upright page is made with PyMuPDF (`Page.remove_rotation` draws a turned page's content upright on an
unturned page); turned pages are made from upright ones by `set_rotation`, and by `set_rotation` then
`remove_rotation` for text drawn turned.
"""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from pocket_assets.core.extract import ExtractionOptions, extract_pages
from pocket_assets.core.records import PageRecord
from pocket_assets_tests.pdf_factory import draw_ruled_table

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
NO_OCR = ExtractionOptions(ocr=False)
BODY = "The arbiter records the result on the score sheet and signs it at the end of the game."


def _read(path: Path) -> PageRecord:
    (page,) = extract_pages(path, NO_OCR)
    return page


def _copy(source: Path, path: Path, rotation: int, drawn: bool) -> Path:
    """`source`'s page shown turned by `rotation` more; `drawn`: its content drawn turned on an unturned page."""
    with pymupdf.open(source) as document:
        page = document[0]
        page.set_rotation((page.rotation + rotation) % 360)
        if drawn:
            page.remove_rotation()
        document.save(path)
    return path


def _upright_page(tmp_path: Path) -> Path:
    """A page with what reading order must keep: a heading, paragraphs, a list, a ruled table and a footer."""
    document = pymupdf.open()
    page = document.new_page()
    page.insert_text((72, 80), "Chapter 3 Forfeits", fontsize=18, fontname="hebo")
    y = 110
    for _ in range(3):
        page.insert_text((72, y), BODY[:70], fontsize=11, fontname="helv")
        y += 14
    for item in ("- a player who arrives late loses the game", "- a team without five players forfeits"):
        page.insert_text((90, y + 10), item, fontsize=11, fontname="helv")
        y += 14
    cells = [["Round", "White", "Black"], ["1", "Carlsen", "Caruana"], ["2", "Ding", "Nepomniachtchi"]]
    y = draw_ruled_table(page, cells, 72, y + 30, width=140) + 30
    for _ in range(2):
        page.insert_text((72, y), BODY[:70], fontsize=11, fontname="helv")
        y += 14
    path = tmp_path / "upright.pdf"
    document.save(path)
    return path


def _structure(page: PageRecord) -> list[tuple[str, str]]:
    """The page's headings, lists and tables with their text: what a paragraph break cannot change."""
    return [
        (block.kind, page.text[block.char_start : block.char_end]) for block in page.blocks if block.kind != "paragraph"
    ]


@pytest.mark.parametrize("drawn", [False, True], ids=["page-rotated", "text-drawn-turned"])
@pytest.mark.parametrize("rotation", [90, 180, 270])
def test_a_turned_page_reads_as_the_upright_page(tmp_path: Path, rotation: int, drawn: bool) -> None:
    """Word for word, with the same headings, list and table. MuPDF may group a turned page's lines
    into other blocks than the upright page's (it does for text drawn at 270°), so paragraph breaks
    may differ; where its blocks are the same, so is the whole text."""
    upright = _read(_upright_page(tmp_path))
    turned = _read(_copy(tmp_path / "upright.pdf", tmp_path / "turned.pdf", rotation, drawn))
    assert turned.text.split() == upright.text.split()
    assert _structure(turned) == _structure(upright)
    assert turned.warnings == ()
    assert "| 2 | Ding | Nepomniachtchi |" in turned.text
    if not (drawn and rotation == 270):
        assert turned.text == upright.text


# (fixture, rotation a reader turns it by, a row of its ruled table as it reads)
REAL_TURNED = [
    # /Rotate 90 (tabula_schools.pdf): scrambled into "| 18, 55108 55118 55116 ..." before
    ("turned-page-ruled-table.pdf", 0, "| Lidstad | Dick & Peg | 62 Mississippi River Blvd N | Saint Paul | MN | 55104 |"),
    # text drawn running upwards on an unturned page (anticlockwise_table_1.pdf)
    ("turned-text-ruled-table.pdf", 90, "|  |  | Kerala | 5738 | 6633 | 8864 | 8297 | 245 | 2161 | 3195 | 1645 | 2391 |"),
    # /Rotate 180 and text drawn running downwards (clockwise_table_1.pdf)
    ("ruled-table-upside-down.pdf", 90, "|  |  | Kerala | 5738 | 6633 | 8864 | 8297 | 245 | 2161 | 3195 | 1645 | 2391 |"),
]


@pytest.mark.parametrize(("name", "rotation", "row"), REAL_TURNED)
def test_real_turned_pages_read_as_their_upright_copy(tmp_path: Path, name: str, rotation: int, row: str) -> None:
    """Word for word: MuPDF may cut the same lines into other blocks (so paragraphs) once upright."""
    turned = _read(REAL / name)
    upright = _read(_copy(REAL / name, tmp_path / "upright.pdf", rotation, drawn=True))
    assert turned.text.split() == upright.text.split()
    assert row in turned.text
    assert turned.warnings == ()
    assert [block.kind for block in turned.blocks].count("table") == 1


def test_a_turned_ruled_table_keeps_its_header_and_cells() -> None:
    turned = _read(REAL / "turned-page-ruled-table.pdf")
    (table,) = [block.table for block in turned.blocks if block.kind == "table"]
    assert table.header == (
        "Last Name", "First Name", "Address", "City", "State", "Zip", "Occupation", "Employer", "Date", "Amount",
    )
    assert table.rows[0] == (
        "Lidstad", "Dick & Peg", "62 Mississippi River Blvd N", "Saint Paul", "MN", "55104", "retired", "",
        "10/12/2012", "60.00",
    )
    assert not any(block.kind == "heading" for block in turned.blocks)


def test_text_in_two_directions_is_warned(tmp_path: Path) -> None:
    """Half the page's text runs upwards beside the rest: no rotation puts both in order, and the page says so."""
    document = pymupdf.open()
    page = document.new_page()
    for index in range(8):
        page.insert_text((72, 100 + 14 * index), BODY[:70], fontsize=11, fontname="helv")
        page.insert_text((120 + 14 * index, 760), BODY[:40], fontsize=11, fontname="helv", rotate=90)
    document.save(tmp_path / "mixed.pdf")
    page_read = _read(tmp_path / "mixed.pdf")
    (warning,) = page_read.warnings
    assert warning.startswith("text set in several directions (")
    assert BODY[:40] in page_read.text


def test_text_set_askew_is_warned(tmp_path: Path) -> None:
    upright = _upright_page(tmp_path)
    document = pymupdf.open()
    page = document.new_page()
    page.show_pdf_page(page.rect, pymupdf.open(upright), 0, rotate=30)
    document.save(tmp_path / "askew.pdf")
    assert _read(tmp_path / "askew.pdf").warnings == ("text set at an angle: its lines may be out of reading order",)
