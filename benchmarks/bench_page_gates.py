"""What the page gates spare and whether they lose anything, on every PDF of ../shared.

Every PDF is extracted twice in this process (`extract_pages`, OCR on, as the `pages` stage does):
with the gates, and with each gate opened (its test answering yes everywhere):

- the table pre-filter (`tables.may_hold_table`): `find_tables()` only on pages whose drawings hold
  crossing rules; opened, it runs on every page with text;
- the ink test (`ocr.shows_ink`): OCR only on pages without a text layer whose picture shows ink;
  opened, every page without a text layer that shows an image or a drawing is read by OCR.

Per corpus it prints the pages, the calls each gate spared, the CPU seconds both ways, and every page
whose record (as the `pages` stage writes it) differs; none may.

    .venv/bin/python benchmarks/bench_page_gates.py                       # corpus, corpus-regs, corpus-wild, refman
    .venv/bin/python benchmarks/bench_page_gates.py ../shared/corpus-regs   # any folders or PDFs
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pocket_assets.core.errors import PdfError  # noqa: E402
from pocket_assets.core.extract import extract_pages, scan  # noqa: E402
from pocket_assets.core.extract.ocr import PageOcr  # noqa: E402
from pocket_assets.core.mupdf import pymupdf  # noqa: E402
from pocket_assets.core.records import to_dict  # noqa: E402

SHARED = REPO.parent / "shared"
DEFAULT_SOURCES = [SHARED / "corpus", SHARED / "corpus-regs", SHARED / "corpus-wild", SHARED / "corpus-scale"]


@dataclass
class Pass:
    """One extraction of a corpus: CPU seconds, library calls made, each PDF's page records."""

    cpu: float = 0.0
    calls: dict[str, int] = field(default_factory=lambda: {"find_tables": 0, "ocr": 0})
    pages: dict[str, list[str]] = field(default_factory=dict)


def _counting(counts: dict[str, int], name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    def counted(*args: Any, **kwargs: Any) -> Any:
        counts[name] += 1
        return function(*args, **kwargs)

    return counted


def extract_corpus(paths: list[Path], opened: bool) -> Pass:
    """Every PDF through `extract_pages`, the gates `opened` or not."""
    result = Pass()
    find_tables, ocr_text = pymupdf.Page.find_tables, PageOcr.text
    gates = scan.may_hold_table, scan.shows_ink
    pymupdf.Page.find_tables = _counting(result.calls, "find_tables", find_tables)  # type: ignore[method-assign]
    PageOcr.text = _counting(result.calls, "ocr", ocr_text)  # type: ignore[method-assign]
    if opened:
        scan.may_hold_table = lambda drawings, quarter_turned=False: True  # type: ignore[assignment]
        scan.shows_ink = lambda page: True  # type: ignore[assignment]
    try:
        start = time.process_time()
        for path in paths:
            try:
                result.pages[str(path)] = [json.dumps(to_dict(page), sort_keys=True) for page in extract_pages(path)]
            except PdfError as error:
                result.pages[str(path)] = [f"error: {error}"]
        result.cpu = time.process_time() - start
    finally:
        pymupdf.Page.find_tables, PageOcr.text = find_tables, ocr_text  # type: ignore[method-assign]
        scan.may_hold_table, scan.shows_ink = gates  # type: ignore[assignment]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sources", nargs="*", type=Path, default=DEFAULT_SOURCES, help="folders or PDFs")
    args = parser.parse_args()
    print("| corpus | PDFs | pages | find_tables: gated / opened | OCR: gated / opened | CPU s: gated / opened | pages differing |")
    print("|---|---|---|---|---|---|---|")
    lost = []
    for source in args.sources:
        paths = [source] if source.is_file() else sorted(source.rglob("*.pdf"))
        gated, opened = extract_corpus(paths, opened=False), extract_corpus(paths, opened=True)
        differing = [
            (path, number)
            for path in gated.pages
            for number, (mine, theirs) in enumerate(zip(gated.pages[path], opened.pages[path]), 1)
            if mine != theirs
        ] + [(path, 0) for path in gated.pages if len(gated.pages[path]) != len(opened.pages[path])]
        lost += differing
        pages = sum(len(records) for records in gated.pages.values())
        print(
            f"| {source.name} | {len(paths)} | {pages} | {gated.calls['find_tables']} / {opened.calls['find_tables']} | "
            f"{gated.calls['ocr']} / {opened.calls['ocr']} | {gated.cpu:.1f} / {opened.cpu:.1f} | {len(differing)} |",
            flush=True,
        )
    for path, number in lost:
        print(f"- differs: {path} page {number or '(page count)'}")


if __name__ == "__main__":
    main()
