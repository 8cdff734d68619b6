"""Opening a PDF safely: identity, validity checks, and page-by-page reading.

Every failure is a `PdfError` naming the file (and page), so one broken PDF
fails only its own partition with a message a maintainer can act on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from pocket_assets.core.errors import PdfError
from pocket_assets.core.mupdf import pymupdf
from pocket_assets.core.raw_folder import corpus_of, sha256_file, source_name
from pocket_assets.core.records import CORPORA, PdfIdentity

PDF_MAGIC = b"%PDF-"
# What MuPDF raises on a malformed file, object or content stream (its own errors, and RuntimeError
# from PyMuPDF's C++ layer): a problem of the PDF, never of this code.
MUPDF_ERRORS = (RuntimeError, pymupdf.mupdf.FzErrorBase)
# Told on the first page of a PDF that MuPDF had to repair (`Document.is_repaired`).
REPAIRED_WARNING = (
    "the file is damaged (its cross-reference table is broken) and was repaired on opening; "
    "pages or text may be missing, check them against the file or replace it"
)


def open_pdf(path: Path) -> pymupdf.Document:
    """Open and refuse what cannot be read: not a PDF, unopenable, encrypted, no countable page.

    A file whose cross-reference table is broken is opened all the same: MuPDF rebuilds
    the table from the objects it finds (`document.is_repaired`), as every PDF viewer
    does, so the pages it reads are built and the repair is told (`REPAIRED_WARNING`);
    only a file with no page left is refused.
    """
    source = path.name
    if not path.is_file():
        raise PdfError(source, f"file not found at {path}")
    with path.open("rb") as handle:
        head = handle.read(1024)
    if PDF_MAGIC not in head:
        raise PdfError(source, "not a PDF (no %PDF- header); remove it or replace it with the real file")
    try:
        document = pymupdf.open(path, filetype="pdf")
    except Exception as error:
        raise PdfError(source, f"corrupt or truncated PDF, PyMuPDF cannot open it ({error})") from None
    try:
        encrypted = document.needs_pass or document.is_encrypted
        page_count = 0 if encrypted else document.page_count
    except MUPDF_ERRORS as error:
        document.close()
        raise PdfError(
            source, f"its page tree is malformed ({error}), so its pages cannot be counted; re-save it with a PDF editor"
        ) from None
    if encrypted:
        document.close()
        raise PdfError(source, "encrypted PDF (password required); provide an unencrypted copy")
    if page_count == 0:
        repaired = document.is_repaired
        listed = _page_tree_top(document)
        document.close()
        if repaired:
            raise PdfError(source, "damaged or truncated PDF: MuPDF repaired it but found no page; replace the file")
        if listed is not None and listed[1]:
            count, kids = listed
            raise PdfError(
                source,
                f"its page tree is malformed (its /Count is {count}, not the number of the {kids} page(s) it lists), "
                "so its pages cannot be counted; re-save it with a PDF editor",
            )
        raise PdfError(source, "the PDF has zero pages")
    return document


def _page_tree_top(document: pymupdf.Document) -> tuple[str, int] | None:
    """The page tree root's /Count as written and how many kids it lists; None when it cannot be read."""
    try:
        kind, pages = document.xref_get_key(document.pdf_catalog(), "Pages")
        if kind != "xref":
            return None
        root = int(pages.split()[0])
        count = document.xref_get_key(root, "Count")[1]
        kind, kids = document.xref_get_key(root, "Kids")
    except (ValueError, *MUPDF_ERRORS):
        return None
    return count, kids.count(" R") if kind == "array" else 0


def load_page(document: pymupdf.Document, number: int, source: str) -> pymupdf.Page:
    """Page `number` (1-based) of an open PDF; a page MuPDF cannot load is a `PdfError` naming `source` and it."""
    try:
        return document.load_page(number - 1)
    except (ValueError, *MUPDF_ERRORS) as error:  # ValueError: "page not in document", a page tree that lies
        raise PdfError(source, f"the page cannot be loaded ({error})", page=number) from None


def inspect_pdf(path: Path, partition_key: str, corpora: Sequence[str] = CORPORA) -> PdfIdentity:
    """The `raw_pdf` record; also proves that some page can be loaded (a page that cannot is the
    extraction's warning, a PDF none of whose pages can is refused here)."""
    corpus = corpus_of(partition_key, corpora)
    with open_pdf(path) as document:
        page_count = document.page_count
        first_problem = None
        for number in range(1, page_count + 1):
            try:
                load_page(document, number, path.name)
                break
            except PdfError as error:
                first_problem = first_problem or error.reason
        else:
            raise no_readable_page(path.name, page_count, first_problem)
        metadata = {key: str(value) for key, value in sorted((document.metadata or {}).items()) if value}
    return PdfIdentity(
        partition_key=partition_key,
        corpus=corpus,
        source=source_name(partition_key),
        sha256=sha256_file(path),
        size_bytes=path.stat().st_size,
        page_count=page_count,
        metadata=metadata,
    )


def no_readable_page(source: str, page_count: int, first_reason: str | None) -> PdfError:
    """The refusal of a PDF none of whose `page_count` pages can be read, with the first page's reason."""
    why = f" (page 1: {first_reason})" if first_reason else ""
    return PdfError(source, f"none of its {page_count} page(s) can be read{why}; replace the file")
