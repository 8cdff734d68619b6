"""OCR of pages without a text layer (on by default): scans of pages of known text, a real scanned table,
and what happens without Tesseract.

The scans are rendered by the tests from typeset pages, so what OCR should read is known and its
character error rate (CER: edit distance over the length of the truth) is measured, with a loose bound:
Tesseract's exact output changes with its version, the bound says it reads clean print.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pymupdf
import pytest

from pocket_assets.core.extract import ExtractionOptions, extract_pages
from pocket_assets.core.extract.ocr import INSTALL
from pocket_assets.core.extract.scan import IMAGE_ONLY_WARNING, OCR_WARNING
from pocket_assets_tests.ocr_quality import character_error_rate, edit_distance
from pocket_assets_tests.pdf_factory import ARTICLE_EN, ARTICLE_FR, oversized_scan_pdf, scanned_pdf, text_pdf

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
CLEAN_PRINT_CER = 0.1
READ_BY_OCR = OCR_WARNING.format("fra+eng")


@pytest.fixture(scope="module", autouse=True)
def tesseract() -> None:
    """Skipped where Tesseract is not installed, except under CI (`.ci/run` installs it): there it fails."""
    if shutil.which("tesseract") is None and not os.environ.get("TESSDATA_PREFIX"):
        reason = f"Tesseract is not installed ({INSTALL})"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI installs Tesseract, but {reason}")
        pytest.skip(reason)


def test_character_error_rate_counts_edits_over_the_truth() -> None:
    assert edit_distance("kitten", "sitting") == 3 and edit_distance("", "abc") == 3 and edit_distance("abc", "") == 3
    assert character_error_rate("## Règle   du jeu", "Règle du jeu") == 0.0
    assert character_error_rate("Regle du jeu", "Règle du jeu") == 1 / 12


def _typeset(tmp_path: Path) -> Path:
    return text_pdf(tmp_path / "typeset.pdf", [ARTICLE_FR * 2 + ARTICLE_EN])


@pytest.mark.parametrize("rotation", [0, 90, 270])
def test_a_scanned_page_is_read_by_ocr_with_few_errors(tmp_path: Path, rotation: int) -> None:
    """A scan stored turned and shown upright by its /Rotate reads in order too."""
    typeset = _typeset(tmp_path)
    (truth,) = extract_pages(typeset)
    (scanned,) = extract_pages(scanned_pdf(tmp_path / "scan.pdf", typeset, rotation=rotation))
    cer = character_error_rate(scanned.text, truth.text)
    print(f"CER of OCR on a page scanned at 150 dpi, stored turned {rotation}°: {cer:.4f}")
    assert cer < CLEAN_PRINT_CER, scanned.text
    assert scanned.warnings == (READ_BY_OCR,)
    assert "présent règlement" in scanned.text and "Scope." in scanned.text


def test_a_scanned_two_column_page_is_read_column_by_column(tmp_path: Path) -> None:
    """MuPDF groups the OCR's words into lines across the gutter; read so, a two-column regulation mixes
    its columns line by line (CER ~0.7): the columns are told apart again."""
    with pymupdf.open(REAL / "regs-two-column.pdf") as document, pymupdf.open() as page:
        page.insert_pdf(document, from_page=1, to_page=1)
        page.save(tmp_path / "typeset.pdf")
    (truth,) = extract_pages(tmp_path / "typeset.pdf", ExtractionOptions(ocr=False))
    (scanned,) = extract_pages(scanned_pdf(tmp_path / "scan.pdf", tmp_path / "typeset.pdf", dpi=200))
    cer = character_error_rate(scanned.text, truth.text)
    print(f"CER of OCR on a two-column page scanned at 200 dpi: {cer:.4f}")
    assert cer < CLEAN_PRINT_CER, scanned.text


# Each row's label and first value, top to bottom (read from the scan by eye).
SCANNED_ROWS = ["L Arm", "197.82", "R Arm", "211.89", "L Ribs", "143.14", "Subtotal", "1896.58", "Total", "2131.39"]


def _rows_in_order(text: str) -> bool:
    positions = [text.find(cell) for cell in SCANNED_ROWS]
    return -1 not in positions and positions == sorted(positions)


def test_a_scanned_table_is_read_row_by_row() -> None:
    """A real scan (camelot's image.pdf, its table cut out): every value of the table is read, in row order."""
    (page,) = extract_pages(REAL / "scanned-table.pdf")
    assert page.warnings == (READ_BY_OCR,)
    assert _rows_in_order(page.text), page.text
    assert page.text.startswith("DXA Results Summary")


def test_ruled_tables_of_a_scanned_page_are_read_from_the_ocr_not_from_its_empty_text_layer(tmp_path: Path) -> None:
    """Rules drawn over a scan (a form scanned then filled in, a grid added by an editor) pass the ruled-table
    pre-filter, but the page's own text layer is empty: its cells are read from the OCR, never as a table
    of empty cells nor left out."""
    with pymupdf.open(REAL / "scanned-table.pdf") as document:
        page = document[0]
        for start, end in [((7, 14), (297, 14)), ((7, 40), (297, 40)), ((7, 211), (297, 211)), ((7, 14), (7, 211)),
                           ((62, 14), (62, 211)), ((297, 14), (297, 211))]:
            page.draw_line(start, end)
        document.save(tmp_path / "ruled-scan.pdf")
    (read,) = extract_pages(tmp_path / "ruled-scan.pdf")
    assert read.warnings == (READ_BY_OCR,)
    assert _rows_in_order(read.text), read.text
    tables = [block.table for block in read.blocks if block.kind == "table"]
    assert all(all(any(row) for row in (table.header, *table.rows)) for table in tables)


def test_a_photograph_s_shapes_read_as_letters_are_no_text() -> None:
    """Tesseract reads a few letters in a photograph (py-pdf's cmyk-image.pdf: "SS a . = L a d nt"):
    fewer than three words of three letters is no text, and the page stays image-only, out of the chunks."""
    (page,) = extract_pages(REAL / "photo-without-text.pdf")
    assert page.text == "" and page.warnings == (IMAGE_ONLY_WARNING,)


def test_without_ocr_an_image_only_page_is_told_not_read(tmp_path: Path) -> None:
    scan = scanned_pdf(tmp_path / "scan.pdf", _typeset(tmp_path))
    (page,) = extract_pages(scan, ExtractionOptions(ocr=False))
    assert page.text == "" and page.warnings == (IMAGE_ONLY_WARNING,)


@pytest.mark.parametrize(
    ("setting", "told"),
    [
        ("no Tesseract", f"OCR needs Tesseract, which is not installed (Debian: {INSTALL})"),
        ("no language data", "Tesseract lacks the OCR language(s) fra, eng (Debian: apt-get install tesseract-ocr-fra"),
    ],
)
def test_without_tesseract_the_pdf_is_built_and_told_once_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str, told: str
) -> None:
    typeset = text_pdf(tmp_path / "typeset.pdf", [ARTICLE_FR, ARTICLE_EN, ARTICLE_FR])
    scan = scanned_pdf(tmp_path / "scan.pdf", typeset)
    if setting == "no Tesseract":
        monkeypatch.delenv("TESSDATA_PREFIX", raising=False)
        monkeypatch.setenv("PATH", str(tmp_path / "no-programs-here"))
    else:
        (tmp_path / "tessdata").mkdir()
        monkeypatch.setenv("TESSDATA_PREFIX", str(tmp_path / "tessdata"))
    pages = extract_pages(scan)
    assert [page.text for page in pages] == ["", "", ""]
    notices = [warning for page in pages for warning in page.warnings if warning != IMAGE_ONLY_WARNING]
    assert len(notices) == 1 and told in notices[0]
    assert all(IMAGE_ONLY_WARNING in page.warnings for page in pages)


@pytest.mark.parametrize(
    ("size", "told"),
    [
        ((14400, 14400), "OCR failed: the page image (60000 x 60000 pixels at 300 dpi) is too large to render for OCR"),
        ((8000, 200), "OCR failed: Tesseract refuses the page image (33333 x 833 pixels at 300 dpi): it reads images of "
         "up to 32767 pixels a side"),
    ],
    ids=["more-than-mupdf-renders", "wider-than-tesseract-reads"],
)
def test_a_page_image_ocr_cannot_take_is_told_with_what_failed(tmp_path: Path, size: tuple[int, int], told: str) -> None:
    """A page too large to render at OCR's resolution (MuPDF's "Overly large image") or wider than Tesseract reads
    (its "Image too large") is an OCR failure named with the image's size, not a picture without text."""
    (page,) = extract_pages(oversized_scan_pdf(tmp_path / "plan.pdf", *size))
    assert page.text == ""
    assert any(warning.startswith(told) and "split or crop the page" in warning for warning in page.warnings), page.warnings
