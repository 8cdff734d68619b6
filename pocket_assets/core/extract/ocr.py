"""OCR of pages without a text layer, through PyMuPDF and Tesseract (on by default).

A scanned regulation is as much a part of the corpus as a typeset one, so OCR is on;
it runs only on pages with no text layer whose picture shows ink (`shows_ink`), so
born-digital PDFs and the blank pages of a scanned book never pay for it. Tesseract is a system install: where it (or one of the
languages) is missing, the build goes on without reading those pages and says once
per PDF how to install it, not once per page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pocket_assets.core.extract.reading_order import text_dict
from pocket_assets.core.extract.turn import transformed_text
from pocket_assets.core.mupdf import pymupdf
from pocket_assets.core.pdf import MUPDF_ERRORS

# Rendered for Tesseract at 300 dpi: French and English pages read with fewer character errors than at 200 dpi,
# for a little more CPU (benchmarks/bench_ocr.py).
OCR_DPI = 300
DEFAULT_LANGUAGE = "fra+eng"
INSTALL = "apt-get install tesseract-ocr tesseract-ocr-fra tesseract-ocr-eng"
# The ink test: the page rendered at INK_DPI in grey shows ink when some pixel is INK_CONTRAST levels (of 255)
# darker than its lightest. Print of 6 pt and light-grey text stay well above it at that resolution; the
# paper of a blank scan (JPEG noise, specks) and white boxes stay below.
INK_DPI = 50
INK_CONTRAST = 48


def shows_ink(page: pymupdf.Page) -> bool:
    """Whether the page as shown holds anything but paper, which OCR could read as text.

    A blank page of a scanned book is an image all the same, and an office export's empty
    page a white rectangle: both would cost a 300 dpi render and a Tesseract pass to read
    nothing. The page rendered small in grey costs a fraction of that. A page that cannot be
    rendered counts as ink, so OCR tries it and says what failed.
    """
    try:
        samples = page.get_pixmap(dpi=INK_DPI, colorspace=pymupdf.csGRAY, alpha=False).samples
    except MUPDF_ERRORS:
        return True
    return max(samples) - min(samples) >= INK_CONTRAST


# Tesseract refuses an image wider or taller than this (its "Image too large" check; MuPDF then says only
# "OCR recognise failed").
TESSERACT_MAX_SIDE = 32767


class OcrUnavailableError(RuntimeError):
    """Tesseract or one of the requested languages is not installed; the message says how to install it."""


class OcrFailedError(RuntimeError):
    """OCR could not read one page; the message says what failed (the page image too large to render, Tesseract
    refusing it, or MuPDF's own error), so that the page is not taken for a picture without text."""


def tessdata_folder(language: str) -> str:
    """Tesseract's language folder, checked to hold every language of `fra+eng`."""
    try:
        folder = pymupdf.get_tessdata()
    except RuntimeError:
        raise OcrUnavailableError(
            f"pages without a text layer are not read: OCR needs Tesseract, which is not installed "
            f"(Debian: {INSTALL})"
        ) from None
    missing = [name for name in language.split("+") if not (Path(folder) / f"{name}.traineddata").is_file()]
    if missing:
        packages = " ".join(f"tesseract-ocr-{name}" for name in missing)
        raise OcrUnavailableError(
            f"pages without a text layer are not read: Tesseract lacks the OCR language(s) "
            f"{', '.join(missing)} (Debian: apt-get install {packages}), or change the OCR languages"
        )
    return folder


@dataclass
class PageOcr:
    """OCR for the pages of one PDF that need it; Tesseract is looked for at the first such page only.

    `missing`: why OCR cannot run (Tesseract or a language not installed), once looked for.
    `dpi`: the resolution the page is rendered at for Tesseract.
    """

    language: str
    dpi: int = OCR_DPI
    _tessdata: str | None = field(default=None, init=False)
    missing: str | None = field(default=None, init=False)
    _told: bool = field(default=False, init=False)

    def first_notice(self) -> str | None:
        """`missing` the first time it is asked for, then None: the PDF says how to install Tesseract once."""
        if self._told:
            return None
        self._told = True
        return self.missing

    def text(self, page: pymupdf.Page) -> dict[str, Any] | None:
        """The text dictionary Tesseract reads on the page as shown, on the unrotated page like any text
        dictionary of it; None when OCR cannot run (`missing` says why).

        Raises OcrFailedError, saying what failed, when the page cannot be rendered or recognized. A turned page is
        read from an upright copy (`Page.remove_rotation`) and its words put back on the page with
        `page.derotation_matrix`: PyMuPDF 2.0's `get_textpage_ocr` maps the words of a page turned
        270° off the page and drops them all.
        """
        if self._tessdata is None and self.missing is None:
            try:
                self._tessdata = tessdata_folder(self.language)
            except OcrUnavailableError as error:
                self.missing = str(error)
        if self._tessdata is None:
            return None
        if not page.rotation:
            return text_dict(page, self._recognized(page))
        with pymupdf.open() as copy:
            copy.insert_pdf(page.parent, from_page=page.number, to_page=page.number)
            upright = copy[0]
            upright.remove_rotation()
            shown = text_dict(upright, self._recognized(upright))
        return transformed_text(shown, page.derotation_matrix, page.rect * page.derotation_matrix)

    def _recognized(self, page: pymupdf.Page) -> pymupdf.TextPage:
        try:
            return page.get_textpage_ocr(language=self.language, dpi=self.dpi, full=True, tessdata=self._tessdata)
        except MUPDF_ERRORS as error:
            raise OcrFailedError(self._failure(page, error)) from None

    def _failure(self, page: pymupdf.Page, error: Exception) -> str:
        """What failed, in words: the image size is what a user can act on (crop or split the page, lower the dpi)."""
        scale = self.dpi / 72
        width, height = round(page.rect.width * scale), round(page.rect.height * scale)
        size = f"the page image ({width} x {height} pixels at {self.dpi} dpi)"
        if isinstance(error, pymupdf.mupdf.FzErrorLimit):
            return f"{size} is too large to render for OCR (MuPDF: {error}); split or crop the page"
        if max(width, height) > TESSERACT_MAX_SIDE:
            return (
                f"Tesseract refuses {size}: it reads images of up to {TESSERACT_MAX_SIDE} pixels a side "
                f"(MuPDF: {error}); split or crop the page"
            )
        return f"{size} could not be read by Tesseract (MuPDF: {error})"
