"""Optional OCR of scanned pages through PyMuPDF and Tesseract (off by default).

OCR is slow (seconds per page) and needs a system install, so it runs only when
asked for, and only on pages without a text layer; asking for it without
Tesseract fails at once with the fix, not after hours of silent empty pages.
"""

from __future__ import annotations

from pathlib import Path

import pymupdf

OCR_DPI = 300


class OcrUnavailableError(RuntimeError):
    """OCR was requested but Tesseract or one of its languages is not installed."""


def tessdata_folder(language: str) -> str:
    """Tesseract's language folder, checked to hold every language of `fra+eng`."""
    try:
        folder = pymupdf.get_tessdata()
    except RuntimeError:
        raise OcrUnavailableError(
            "OCR was requested but Tesseract is not installed; install it (Debian: "
            "apt-get install tesseract-ocr tesseract-ocr-fra) or turn OCR off"
        ) from None
    missing = [name for name in language.split("+") if not (Path(folder) / f"{name}.traineddata").is_file()]
    if missing:
        raise OcrUnavailableError(
            f"OCR was requested for {language!r} but Tesseract lacks {', '.join(missing)} in {folder}; "
            f"install them (Debian: tesseract-ocr-{missing[0]}) or change the OCR language"
        )
    return folder


def ocr_textpage(page: pymupdf.Page, language: str, tessdata: str) -> pymupdf.TextPage:
    """A text page recognized from the page image, readable with `get_text("dict")`."""
    return page.get_textpage_ocr(language=language, dpi=OCR_DPI, full=True, tessdata=tessdata)
