"""Opening a PDF safely: identity, validity checks, and page-by-page reading.

Every failure is a `PdfError` naming the file (and page), so one broken PDF
fails only its own partition with a message a maintainer can act on.
"""

from __future__ import annotations

import hashlib
import os
import unicodedata
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Sequence

import pymupdf

from pocket_assets.core.errors import PdfError
from pocket_assets.core.raw_folder import pdf_files
from pocket_assets.core.records import CORPORA, PdfIdentity

PDF_MAGIC = b"%PDF-"
# What Dagster refuses in a partition key (dagster/_core/definitions/partitions/utils/base.py).
INVALID_KEY_PARTS = ("...", "\a", "\b", "\f", "\n", "\r", "\t", "\v", "\0")
# What MuPDF raises on a malformed file, object or content stream (its own errors, and RuntimeError
# from PyMuPDF's C++ layer): a problem of the PDF, never of this code.
MUPDF_ERRORS = (RuntimeError, pymupdf.mupdf.FzErrorBase)
# Told on the first page of a PDF that MuPDF had to repair (`Document.is_repaired`).
REPAIRED_WARNING = (
    "the file is damaged (its cross-reference table is broken) and was repaired on opening; "
    "pages or text may be missing, check them against the file or replace it"
)


def corpus_of(partition_key: str, corpora: Sequence[str] = CORPORA) -> str:
    """`fr/x.pdf` -> `fr`; the first folder under the raw root names the corpus."""
    parts = PurePosixPath(partition_key).parts
    if len(parts) < 2 or parts[0] not in corpora:
        raise PdfError(
            PurePosixPath(partition_key).name,
            f"{partition_key!r} is not under a corpus folder; put it in one of {', '.join(corpora)}",
        )
    return parts[0]


def source_name(partition_key: str) -> str:
    """The name chunks cite: the path under the corpus folder, e.g. `faq.pdf` or `sub/faq.pdf`.

    Keeping the subfolder makes `fr/faq.pdf` and `fr/sub/faq.pdf` two sources
    (two sets of ids) instead of one duplicated. The name is made citable
    whatever the file system allowed: Unicode NFC (macOS writes NFD), runs of
    whitespace and control characters folded to one space (a newline would end
    the SDK line), and the extension written `.pdf` (the seed schema's pattern).
    """
    under_corpus = "/".join(PurePosixPath(partition_key).parts[1:]) or partition_key
    folded = " ".join("".join(" " if unicodedata.category(c)[0] == "C" else c for c in under_corpus).split())
    normalized = unicodedata.normalize("NFC", folded)
    stem, dot, suffix = normalized.rpartition(".")
    return f"{stem}.pdf" if dot and suffix.lower() == "pdf" else normalized


@dataclass(frozen=True)
class RawFolderScan:
    """What a look at the raw folder found.

    `keys`: partition keys of the PDFs to build, sorted. `refused`: (name, sentence)
    for PDFs that cannot be a partition (the name cannot be stored), each refused
    alone. `ignored`: (path, sentence) for PDFs outside every corpus folder,
    with what to do.
    """

    keys: tuple[str, ...]
    refused: tuple[tuple[str, str], ...]
    ignored: tuple[tuple[str, str], ...]


def scan_raw_folder(raw_dir: Path, corpora: Sequence[str] = CORPORA) -> RawFolderScan:
    """Every `.pdf` (any case) under `raw_dir`: built, refused alone, or ignored with a reason; never raises."""
    keys: list[str] = []
    refused: list[tuple[str, str]] = []
    ignored: list[tuple[str, str]] = []
    for path in sorted(pdf_files(raw_dir)):
        key = path.relative_to(raw_dir).as_posix()
        shown = printable_name(key)
        problem = partition_key_problem(key)
        if key.split("/", 1)[0] not in corpora or "/" not in key:
            where = "at the top of the raw folder" if "/" not in key else f"in {key.split('/', 1)[0]!r}, not a corpus"
            ignored.append(
                (
                    shown,
                    f"{shown} is {where}, so it is not built; move it into one of "
                    f"{', '.join(corpora)} or add its folder to the corpora (POCKET_ASSETS_CORPORA)",
                )
            )
        elif problem:
            refused.append((shown, f"{shown} is not built: {problem}; rename the file"))
        else:
            keys.append(key)
    return RawFolderScan(tuple(keys), tuple(refused), tuple(ignored))


def discover_pdfs(raw_dir: Path, corpora: Sequence[str] = CORPORA) -> list[str]:
    """Partition keys of every buildable PDF under the corpus folders, sorted (the corpus registry)."""
    return list(scan_raw_folder(raw_dir, corpora).keys)


def partition_key_problem(key: str) -> str | None:
    """Why a path cannot be a Dagster partition key (None when it can)."""
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        return "its name is not valid UTF-8 (bytes from another encoding)"
    if any(part in key for part in INVALID_KEY_PARTS):
        return "its name holds a control character (newline, tab) or '...', which partition keys cannot"
    return None


def printable_name(key: str) -> str:
    """The name as a sentence can show it: undecodable bytes as \\xNN, control characters escaped."""
    raw = os.fsencode(key).decode("utf-8", errors="backslashreplace")
    return "".join(c if unicodedata.category(c)[0] != "C" else repr(c)[1:-1] for c in raw)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


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
