"""OCR of pages without a text layer: cost per page and character error rate (CER), per scan resolution.

    python benchmarks/bench_ocr.py                       # 2 pages of each corpus-regs PDF (French), 8 of corpus/intl
    python benchmarks/bench_ocr.py --pages 1 some.pdf    # the first pages of any PDFs with a text layer
    python benchmarks/bench_ocr.py --scan-dpi 100 150 300 --ocr-dpi 200 300

Each page of a typeset PDF is printed to an image-only PDF at a scan resolution (grey, as a scanner
saves it), then read back by the extractor's page scan (`scan_page`, OCR rendering the page at each
OCR resolution for Tesseract). What the typeset page's own text layer gives to the same scan is the
truth; CER is the edit distance between the two texts (lines in reading order, then table cells),
Markdown marks, dot leaders and whitespace aside, over the truth's length. Cost is CPU seconds of
this process per page (Tesseract's threads included) and wall seconds; the first OCR (which loads
Tesseract's language data) is run once before timing.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import pymupdf

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pocket_assets.core.extract.ocr import DEFAULT_LANGUAGE, OCR_DPI, PageOcr  # noqa: E402
from pocket_assets.core.extract.scan import scan_page  # noqa: E402
from pocket_assets_tests.ocr_quality import character_error_rate, plain  # noqa: E402

SHARED = REPO.parent / "shared"


def default_pages() -> list[tuple[Path, int]]:
    """French regulations (2 pages each) and English manuals (first text pages): accents, numbering, prose."""
    pages = [(path, number) for path in sorted((SHARED / "corpus-regs" / "fr").glob("*.pdf")) for number in (1, 2)]
    pages += [(SHARED / "corpus" / "intl" / "R-intro.pdf", number) for number in (5, 6, 7, 8)]
    pages += [(SHARED / "corpus" / "intl" / "R-FAQ.pdf", number) for number in (3, 4, 5, 6)]
    return [(path, number) for path, number in pages if path.is_file()]


def one_page(path: Path, number: int, folder: Path) -> Path:
    """Page `number` of `path` alone, with its text layer."""
    target = folder / f"{path.stem}-p{number}.pdf"
    with pymupdf.open(path) as document, pymupdf.open() as single:
        single.insert_pdf(document, from_page=number - 1, to_page=number - 1)
        single.save(target)
    return target


def scanned(source: Path, dpi: int, folder: Path) -> Path:
    """`source`'s page as a grey image only, rendered at `dpi`."""
    target = folder / f"{source.stem}-scan{dpi}.pdf"
    with pymupdf.open(source) as document, pymupdf.open() as scan:
        page = document[0]
        pixmap = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
        scan.new_page(width=page.rect.width, height=page.rect.height).insert_image(page.rect, pixmap=pixmap)
        scan.save(target)
    return target


def scanned_text(path: Path, ocr: PageOcr | None) -> str:
    """The page's lines in reading order, then its tables' cells, as the extractor's scan reads them."""
    with pymupdf.open(path) as document:
        scan = scan_page(document[0], 1, detect_tables=True, ocr=ocr)
    lines = [line.text for block in scan.blocks for line in block]
    cells = [cell for table in scan.tables for row in (table.cells.header, *table.cells.rows) for cell in row]
    return "\n".join(lines + cells)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pdfs", nargs="*", type=Path, help="typeset PDFs (default: corpus-regs and corpus/intl pages)")
    parser.add_argument("--pages", type=int, default=2, help="pages of each PDF given on the command line")
    parser.add_argument("--scan-dpi", type=int, nargs="+", default=[150, 300], help="resolutions the pages are scanned at")
    parser.add_argument("--ocr-dpi", type=int, nargs="+", default=[200, OCR_DPI], help="resolutions Tesseract reads at")
    args = parser.parse_args()
    chosen = [(path, n) for path in args.pdfs for n in range(1, args.pages + 1)] if args.pdfs else default_pages()
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        sources = [one_page(path, number, folder) for path, number in chosen]
        truths = {source: scanned_text(source, None) for source in sources}
        sources = [source for source in sources if plain(truths[source])]
        scanned_text(scanned(sources[0], args.scan_dpi[0], folder), PageOcr(DEFAULT_LANGUAGE))  # data loaded
        print(f"{len(sources)} pages, {sum(len(plain(truths[s])) for s in sources)} characters; languages {DEFAULT_LANGUAGE}")
        print(f"{'scan dpi':>8} {'ocr dpi':>8} {'cpu s/page':>11} {'wall s/page':>12} {'CER':>7} {'worst page CER':>15}")
        for scan_dpi in args.scan_dpi:
            scans = {source: scanned(source, scan_dpi, folder) for source in sources}
            for ocr_dpi in args.ocr_dpi:
                ocr = PageOcr(DEFAULT_LANGUAGE, dpi=ocr_dpi)
                cpu = wall = 0.0
                errors = []
                for source, scan in scans.items():
                    start_cpu, start_wall = time.process_time(), time.perf_counter()
                    text = scanned_text(scan, ocr)
                    cpu += time.process_time() - start_cpu
                    wall += time.perf_counter() - start_wall
                    errors.append((character_error_rate(text, truths[source]), len(plain(truths[source]))))
                weighted = sum(cer * length for cer, length in errors) / sum(length for _, length in errors)
                print(
                    f"{scan_dpi:>8} {ocr_dpi:>8} {cpu / len(scans):>11.2f} {wall / len(scans):>12.2f} "
                    f"{weighted:>7.4f} {max(cer for cer, _ in errors):>15.4f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
