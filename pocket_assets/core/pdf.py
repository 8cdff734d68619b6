"""Opening a PDF safely: identity, validity checks, and page-by-page reading.

Every failure is a `PdfError` naming the file (and page), so one broken PDF
fails only its own partition with a message a maintainer can act on.
"""

from __future__ import annotations

import hashlib
from pathlib import Path, PurePosixPath
from typing import Iterator

import pymupdf

from pocket_assets.core.errors import PdfError
from pocket_assets.core.records import CORPORA, PdfIdentity

PDF_MAGIC = b"%PDF-"


def corpus_of(partition_key: str) -> str:
    """`fr/x.pdf` -> `fr`; the first folder under the raw root names the corpus."""
    parts = PurePosixPath(partition_key).parts
    if len(parts) < 2 or parts[0] not in CORPORA:
        raise PdfError(
            PurePosixPath(partition_key).name,
            f"{partition_key!r} is not under a corpus folder; put it in one of {', '.join(CORPORA)}",
        )
    return parts[0]


def discover_pdfs(raw_dir: Path) -> list[str]:
    """Partition keys of every PDF under the corpus folders, sorted (the corpus registry)."""
    keys = []
    for corpus in CORPORA:
        folder = raw_dir / corpus
        if folder.is_dir():
            keys.extend(
                path.relative_to(raw_dir).as_posix()
                for path in folder.rglob("*")
                if path.is_file() and path.suffix.lower() == ".pdf"
            )
    return sorted(keys)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def open_pdf(path: Path) -> pymupdf.Document:
    """Open and refuse what cannot be read: not a PDF, corrupt, encrypted or empty."""
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
    if document.needs_pass or document.is_encrypted:
        document.close()
        raise PdfError(source, "encrypted PDF (password required); provide an unencrypted copy")
    if document.is_repaired:
        # MuPDF had to rebuild a broken cross-reference table: a truncated or damaged file.
        # Pages may be missing, so refuse rather than publish a partial document.
        document.close()
        raise PdfError(source, "damaged or truncated PDF (its cross-reference table is broken); replace the file")
    if document.page_count == 0:
        document.close()
        raise PdfError(source, "the PDF has zero pages")
    return document


def inspect_pdf(path: Path, partition_key: str) -> PdfIdentity:
    """The `raw_pdf` record; also proves every page can be loaded."""
    corpus = corpus_of(partition_key)
    with open_pdf(path) as document:
        for page_number in range(document.page_count):
            try:
                document.load_page(page_number)
            except Exception as error:
                raise PdfError(path.name, f"page cannot be read ({error})", page=page_number + 1) from None
        metadata = {key: str(value) for key, value in sorted((document.metadata or {}).items()) if value}
        page_count = document.page_count
    return PdfIdentity(
        partition_key=partition_key,
        corpus=corpus,
        source=path.name,
        sha256=sha256_file(path),
        size_bytes=path.stat().st_size,
        page_count=page_count,
        metadata=metadata,
    )


def iter_pdf_pages(path: Path) -> Iterator[tuple[int, pymupdf.Page]]:
    """Yield (1-based number, page) one at a time, so memory stays bounded on huge PDFs."""
    with open_pdf(path) as document:
        for index in range(document.page_count):
            try:
                page = document.load_page(index)
            except Exception as error:
                raise PdfError(path.name, f"page cannot be read ({error})", page=index + 1) from None
            yield index + 1, page
