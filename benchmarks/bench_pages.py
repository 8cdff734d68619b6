"""CPU of extraction alone (the `pages` step's work), per corpus, and a digest of what it produced.

    python benchmarks/bench_pages.py                          # corpus, corpus-regs, corpus-wild, refman
    python benchmarks/bench_pages.py --save digests.json      # keep each PDF's output digest
    python benchmarks/bench_pages.py --compare digests.json   # and say which PDFs now extract differently
    python benchmarks/bench_pages.py --repeat 3 ../shared/corpus-regs   # any folders or PDFs; best of 3
    python benchmarks/bench_pages.py --no-ocr                 # without OCR of pages that have no text layer

Every PDF is extracted in this one process (`extract_pages`, one worker, so a long PDF is not split
over processes), the way a `pages` worker does it. Per corpus it prints the CPU seconds of extraction,
of its scan part (`_scans`: text dictionary, table pre-filter, `find_tables`) and of the floor
(plain `page.get_text()` of the same pages), each the best of `--repeat` runs. The digest of a
PDF is the SHA-256 of its page records as the stage writes them (`to_dict`), so two digests agree
exactly when the `pages` Parquet file would; PDFs that fail extraction digest their error.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pymupdf

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import pocket_assets.core.extract as extract  # noqa: E402
from pocket_assets.core.errors import PdfError  # noqa: E402
from pocket_assets.core.records import to_dict  # noqa: E402

SHARED = REPO.parent / "shared"
DEFAULT_SOURCES = [
    SHARED / "corpus",
    SHARED / "corpus-regs",
    SHARED / "corpus-wild",
    SHARED / "corpus-scale" / "refman.pdf",
]


@dataclass
class CorpusTimes:
    pdfs: int = 0
    pages: int = 0
    extraction: float = float("inf")
    scan: float = float("inf")
    floor: float = float("inf")


def pdf_paths(source: Path) -> list[Path]:
    return [source] if source.is_file() else sorted(source.rglob("*.pdf"))


def extract_once(paths: list[Path], options: extract.ExtractionOptions) -> tuple[float, float, dict[str, str]]:
    """(CPU of extraction, CPU of its scans, digest per PDF) for one pass over `paths`.

    OCR runs inside Tesseract's threads, which process CPU time counts too."""
    scan_seconds = 0.0
    real_scans = extract._scans

    def timed_scans(*args: object, **kwargs: object) -> object:
        nonlocal scan_seconds
        start = time.process_time()
        try:
            return real_scans(*args, **kwargs)
        finally:
            scan_seconds += time.process_time() - start

    extract._scans = timed_scans  # type: ignore[assignment]
    digests: dict[str, str] = {}
    try:
        start = time.process_time()
        for path in paths:
            try:
                rows = [to_dict(page) for page in extract.extract_pages(path, options)]
                data = json.dumps(rows, sort_keys=True, ensure_ascii=False)
            except PdfError as error:
                data = f"error: {error}"
            digests[str(path.resolve())] = hashlib.sha256(data.encode("utf-8")).hexdigest()
        total = time.process_time() - start
    finally:
        extract._scans = real_scans  # type: ignore[assignment]
    return total, scan_seconds, digests


def floor_once(paths: list[Path]) -> tuple[float, int]:
    """CPU of plain `get_text()` on every page of the readable PDFs, and the page count."""
    pages = 0
    start = time.process_time()
    for path in paths:
        try:
            with pymupdf.open(path) as document:
                if document.needs_pass:
                    continue
                for page in document:
                    page.get_text()
                    pages += 1
        except Exception:  # unreadable PDFs fail the build too; they have no floor
            continue
    return time.process_time() - start, pages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sources", nargs="*", type=Path, default=DEFAULT_SOURCES, help="folders or PDFs")
    parser.add_argument("--repeat", type=int, default=1, help="runs per corpus; the least CPU is kept")
    parser.add_argument("--save", type=Path, help="write every PDF's digest to this JSON file")
    parser.add_argument("--compare", type=Path, help="name the PDFs whose digest differs from this JSON file")
    parser.add_argument("--no-ocr", action="store_true", help="leave pages without a text layer unread (OCR off)")
    args = parser.parse_args()
    options = extract.ExtractionOptions(ocr=not args.no_ocr)
    digests: dict[str, str] = {}
    print(f"{'corpus':<28} {'pdfs':>5} {'pages':>6} {'extract s':>10} {'scan s':>8} {'floor s':>8} {'ms/page':>8} {'x floor':>8}")
    totals = CorpusTimes(extraction=0.0, scan=0.0, floor=0.0)
    for source in args.sources:
        paths = pdf_paths(source)
        times = CorpusTimes(pdfs=len(paths))
        for _ in range(args.repeat):
            total, scan, found = extract_once(paths, options)
            floor, times.pages = floor_once(paths)
            times.extraction, times.scan, times.floor = min(times.extraction, total), min(times.scan, scan), min(times.floor, floor)
            digests.update(found)
        _print_row(source.name, times)
        for field in ("pdfs", "pages", "extraction", "scan", "floor"):
            setattr(totals, field, getattr(totals, field) + getattr(times, field))
    _print_row("all", totals)
    if args.save:
        args.save.write_text(json.dumps(digests, indent=1, sort_keys=True), encoding="utf-8")
    if args.compare:
        reference = json.loads(args.compare.read_text(encoding="utf-8"))
        differing = sorted(path for path, digest in digests.items() if reference.get(path) != digest)
        print(f"differing from {args.compare}: {len(differing)} of {len(digests)} PDFs")
        for path in differing:
            print(f"  {path}")


def _print_row(name: str, times: CorpusTimes) -> None:
    per_page = 1000 * times.extraction / max(times.pages, 1)
    ratio = times.extraction / times.floor if times.floor else float("nan")
    print(
        f"{name:<28} {times.pdfs:>5} {times.pages:>6} {times.extraction:>10.2f} {times.scan:>8.2f} "
        f"{times.floor:>8.2f} {per_page:>8.2f} {ratio:>8.1f}",
        flush=True,
    )


if __name__ == "__main__":
    main()
