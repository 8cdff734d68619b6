"""PDF pages to canonical Markdown: headings, paragraphs, lists, tables and code, with spans.

Two stages. The scan reads each page once (`get_text("dict")`, the table
pre-filter, `find_tables()` on candidates) and keeps only lines and tables.
Then the document-wide decisions (running headers and footers, the heading
scale) are taken and every page is rendered. Pages are loaded one at a time,
so memory follows the text of the document, not its page objects.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pocket_assets.core.document import assemble_pages
from pocket_assets.core.extract.cleanup import MarginLine, out_of_step, running_in_slots, running_signatures, scattered
from pocket_assets.core.extract.headings import HeadingScale, StyleCensus, forget_wordings
from pocket_assets.core.extract.markdown import (
    Flow,
    RenderedPage,
    margin_lines,
    outline_matches,
    page_paragraphs,
    render_page,
)
from pocket_assets.core.extract.ocr import DEFAULT_LANGUAGE, OcrUnavailableError
from pocket_assets.core.extract.reading_order import document_column_lefts
from pocket_assets.core.extract.scan import PageScan, scan_pages
from pocket_assets.core.pdf import open_pdf
from pocket_assets.core.records import PageRecord

__all__ = [
    "EXTRACTOR_VERSION",
    "ExtractionOptions",
    "OcrUnavailableError",
    "RenderedPage",
    "extract_pages",
    "iter_rendered_pages",
]

# Bump when the same PDF gives other page text or blocks: it is the `pages` asset's code version, so every
# PDF extracted with another version is stale and extracted again.
EXTRACTOR_VERSION = "pocket-extract-v8"


@dataclass(frozen=True)
class ExtractionOptions:
    """How pages are read; the defaults suit born-digital PDFs and scans alike."""

    ocr: bool = True  # OCR pages without a text layer (needs Tesseract; without it they are told, not read)
    ocr_language: str = DEFAULT_LANGUAGE  # Tesseract languages, joined with "+"
    detect_tables: bool = True  # ruled tables as pipe tables (pre-filtered find_tables)


def iter_rendered_pages(path: Path, options: ExtractionOptions | None = None) -> Iterator[RenderedPage]:
    """Each page's content and the margin lines removed from it (what benchmarks need too)."""
    scans = _scans(path, options or ExtractionOptions())
    column_lefts = document_column_lefts([scan.column_left for scan in scans])
    census = StyleCensus()
    for scan, column_left in zip(scans, column_lefts):
        paragraphs = page_paragraphs(scan, frozenset(), column_left)[0]
        for paragraph in paragraphs:
            census.add_paragraph(paragraph, scan.number, in_margin=scan.margin_position(paragraph.first) is not None)
        for match in outline_matches(scan, paragraphs).values() if scan.outline else ():
            census.add_outline(paragraphs[match.first], match.level)
    candidates = [margin_lines(scan) for scan in scans]
    # A line runs from page to page over text that changes: on a page holding nothing else it does not
    # vote (a document whose every page shows one same line keeps it).
    running = running_signatures(
        ([line.signature for line in lines] for lines, scan in zip(candidates, scans) if _holds_more(scan, lines)),
        len(scans),
    )
    flat = [line for lines in candidates for line in lines]
    running -= out_of_step(flat, running) | scattered(flat, running)
    running |= running_in_slots(flat, len(scans), running, census.heading_titles())
    scale = HeadingScale.from_census(census)
    flow = Flow()
    try:
        for scan, column_left in zip(scans, column_lefts):
            rendered = render_page(scan, running, scale, column_left, flow)
            flow = rendered.flow
            yield rendered
    finally:
        forget_wordings()


def _holds_more(scan: PageScan, margin: tuple[MarginLine, ...]) -> bool:
    """The page holds text beyond its `margin` lines (a table counts)."""
    return bool(scan.tables) or sum(len(block) for block in scan.blocks) > len(margin)


def extract_pages(path: Path, options: ExtractionOptions | None = None) -> tuple[PageRecord, ...]:
    """Every page of the PDF as a PageRecord, spans and line numbers placed by `assemble_pages`.

    Raises PdfError when the file or one of its pages cannot be read; page-level
    problems (empty, scanned, table failure) are warnings on the page instead.
    """
    return assemble_pages(rendered.content for rendered in iter_rendered_pages(path, options))


def _scans(path: Path, options: ExtractionOptions) -> list[PageScan]:
    """Every page's scan, in page order."""
    with open_pdf(path) as document:
        return scan_pages(
            document,
            path.name,
            detect_tables=options.detect_tables,
            ocr_language=options.ocr_language if options.ocr else None,
        )
