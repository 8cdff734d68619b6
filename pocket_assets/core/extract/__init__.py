"""PDF pages to canonical Markdown: headings, paragraphs, lists, tables and code, with spans.

Two stages. The scan reads each page once (`get_text("dict")`, the table
pre-filter, `find_tables()` on candidates) and keeps only lines and tables.
Then the document-wide decisions (running headers and footers, the heading
scale) are taken and every page is rendered. Pages are loaded one at a time,
so memory follows the text of the document, not its page objects. The scan of
each page depends on that page alone, so a long PDF's is run over page ranges on
the cores other work leaves idle (`page_ranges`) and the rest is unchanged: the same output.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from pocket_assets.core.cyclic_gc import paused_cyclic_gc
from pocket_assets.core.document import assemble_pages
from pocket_assets.core.extract.cleanup import out_of_step, running_in_slots, running_signatures, scattered
from pocket_assets.core.extract.headings import HeadingScale, StyleCensus, forget_wordings
from pocket_assets.core.extract.reading_order import document_column_lefts
from pocket_assets.core.extract.markdown import (
    RenderedPage,
    margin_lines,
    page_paragraphs,
    render_page,
)
from pocket_assets.core.extract.ocr import OcrUnavailableError, tessdata_folder
from pocket_assets.core.extract.page_ranges import SPLIT_PAGES, scan_in_ranges
from pocket_assets.core.extract.scan import PageScan, scan_pages
from pocket_assets.core.idle_cores import AllCores, CoreLender
from pocket_assets.core.memory import return_freed_memory
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

# Bump when the same PDF gives other page text or blocks: the `pages` asset's code version, so every
# PDF extracted before is stale (v2: unruled tables, margin-label headings, equation blocks; v3: labelled
# headings and their nesting, small capitals, office tables, short-document running lines, TeX accents;
# v4: running headers whose text changes with the chapter, "Chapter 1: Introduction 2").
EXTRACTOR_VERSION = "pocket-extract-v4"


@dataclass(frozen=True)
class ExtractionOptions:
    """How pages are read; the defaults suit born-digital PDFs."""

    ocr: bool = False  # OCR pages without a text layer (needs Tesseract)
    ocr_language: str = "fra+eng"  # Tesseract languages, joined with "+"
    detect_tables: bool = True  # ruled tables as pipe tables (pre-filtered find_tables)


def iter_rendered_pages(
    path: Path,
    options: ExtractionOptions | None = None,
    workers: int = 1,
    split_pages: int = SPLIT_PAGES,
    cores: CoreLender | None = None,
) -> Iterator[RenderedPage]:
    """Each page's content and the margin lines removed from it (what benchmarks need too).

    A PDF of `split_pages` pages or more has its pages scanned in up to `workers` processes
    (`page_ranges`), the extra ones on the idle cores `cores` lends (all `workers - 1` when
    None: this PDF alone); the output is the same whatever `workers` and `cores`.
    """
    lender = cores if cores is not None else AllCores(workers - 1)
    scans = _scans(path, options or ExtractionOptions(), workers, split_pages, lender)
    # The pages' text dictionaries are freed; glibc keeps their pages (~40 MiB on a 2,400-page manual) unless told.
    return_freed_memory()
    column_lefts = document_column_lefts([scan.column_left for scan in scans])
    census = StyleCensus()
    for scan, column_left in zip(scans, column_lefts):
        for paragraph in page_paragraphs(scan, frozenset(), column_left)[0]:
            census.add_paragraph(paragraph, scan.number, in_margin=scan.margin_position(paragraph.first) is not None)
    candidates = [margin_lines(scan) for scan in scans]
    running = running_signatures(([line.signature for line in lines] for lines in candidates), len(scans))
    flat = [line for lines in candidates for line in lines]
    running -= out_of_step(flat, running) | scattered(flat, running)
    running |= running_in_slots(flat, len(scans), running, census.heading_titles())
    scale = HeadingScale.from_census(census)
    section_level = 0
    after_bare_label = False
    try:
        for scan, column_left in zip(scans, column_lefts):
            rendered = render_page(scan, running, scale, column_left, section_level, after_bare_label)
            section_level = rendered.section_level
            after_bare_label = rendered.ends_with_bare_label
            yield rendered
    finally:
        forget_wordings()


def extract_pages(
    path: Path,
    options: ExtractionOptions | None = None,
    workers: int = 1,
    split_pages: int = SPLIT_PAGES,
    cores: CoreLender | None = None,
) -> tuple[PageRecord, ...]:
    """Every page of the PDF as a PageRecord, spans and line numbers placed by `assemble_pages`;
    `workers`, `split_pages` and `cores` as in `iter_rendered_pages`.

    Raises PdfError when the file or one of its pages cannot be read; page-level
    problems (empty, scanned, table failure) are warnings on the page instead.
    """
    with paused_cyclic_gc():
        return assemble_pages(
            rendered.content for rendered in iter_rendered_pages(path, options, workers, split_pages, cores)
        )


def _scans(
    path: Path, options: ExtractionOptions, workers: int, split_pages: int, cores: CoreLender
) -> list[PageScan]:
    """Every page's scan in page order: in this process, or over page ranges here and on idle cores."""
    tessdata = tessdata_folder(options.ocr_language) if options.ocr else None
    scan_range = partial(
        scan_pages,
        detect_tables=options.detect_tables,
        ocr_language=options.ocr_language if options.ocr else None,
        tessdata=tessdata,
    )
    with open_pdf(path) as document:
        if workers > 1 and document.page_count >= split_pages:
            return scan_in_ranges(path, document, scan_range, workers, cores)
        return scan_range(document, path.name, None)
