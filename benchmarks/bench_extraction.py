"""Quality and speed of `extract_pages` on the development corpus (`../shared/corpus` by default).

Per document: heading recall / precision / level agreement against the PDF's
own outline (`doc.get_toc()`), tables found (and what the drawing pre-filter
misses, for the table documents), share of `page.get_text()` words kept, and
ms/page against plain `page.get_text()`. Precision is given strictly and in the
outline's scope: only headings of a kind (margin label, numbered, unnumbered)
that the outline lists at least once, since authors bookmark kinds as a whole.
Then every table a reader sees in the table documents (TABLE_INVENTORY, taken by
eye from the rendered pages) with the block it became, and every table block
found elsewhere (to judge as false positives). `--extras` lists the headings
that are no outline entry; `--scale` extracts refman.pdf (`../shared/corpus-scale/` by default) and reports
peak RSS instead.

Run: .venv/bin/python benchmarks/bench_extraction.py [--extras] [--scale] [--corpus DIR] [--scale-pdf PDF]
"""

from __future__ import annotations

import argparse
import re
import resource
import statistics
import time
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pymupdf

from pocket_assets.core.extract import ExtractionOptions, iter_rendered_pages
from pocket_assets.core.extract.cleanup import clean_text
from pocket_assets.core.extract.reading_order import text_dict
from pocket_assets.core.extract.scan import scan_page
from pocket_assets.core.extract.tables import aligned_candidates, may_hold_table

SHARED = Path(__file__).resolve().parents[2] / "shared"  # the corpora beside the repository
TABLE_DOCUMENTS = ("f-array.pdf", "R-data.pdf")
# (document, page, what the reader sees, rows x columns, expected block kind, a word only that table holds).
# Printed R output inside a code listing (right under or above a command) is expected as code: the
# listing is kept whole. f-array p. 5's nested tabulars demonstrate alignment and are not counted.
TABLE_INVENTORY = (
    ("f-array.pdf", 2, "ruled: preamble options (find_tables reads 9x2)", "~15x2", "table", "inchangées"),
    ("f-array.pdf", 9, "unruled: classes of preamble tokens", "11x6", "table", "@-arg"),
    ("R-data.pdf", 9, "file excerpt, header + 1 row", "2x4", "table", "Greenmantle"),
    ("R-data.pdf", 16, "printed data frame after prose", "8x6", "table", "56271"),
    ("R-data.pdf", 17, "stack() result after prose", "9x5", "table", "X11"),
    ("R-data.pdf", 17, "reshape() output in a listing", "10x6", "code", "2.2"),
    ("R-data.pdf", 18, "ftable() output in a listing", "6x9", "code", "Rejected"),
    ("R-data.pdf", 25, "data frame output in a listing", "5x5", "code", "UrbanPop"),
    ("R-data.pdf", 26, "sqlTables() output in a listing", "2x5", "code", "TABLE_QUALIFIER"),
    ("R-data.pdf", 27, "sqlFetch() output in a listing", "8x3", "code", "Florida"),
)
REPEATS = 3  # timing runs per page; the fastest is kept
_WORD = re.compile(r"\w+")
# Both sides of the match drop what outlines and pages spell differently: the section word
# ("Appendix A", "Chapitre 2"), the numbering ("3.2.1", "A.1", "A "), case and spacing
# ("MacOSX" in an outline for "Mac OS X" on the page). The words of the title must still agree.
_SECTION_WORD = re.compile(r"^(?:appendix|annexe|chapter|chapitre)\s+", re.IGNORECASE)
_LEADING_NUMBER = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[A-Z](?:\.\d+)*\.?|[IVXLC]+\.)\s+")
_NUMBERED = re.compile(r"^(?:\d+(?:\.\d+)*|[A-Z](?:\.\d+)+)\.?(?:\s|$)")
_SECTION_NUMBER = re.compile(r"^((?:\d+|[A-Z])(?:\.\d+)+)\.?(?:\s|$)")
_HYPHEN_BREAK = re.compile(r"(?<=[^\W\d_])-\n\s*(?=[a-z])")


def normalized_title(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lstrip("# ").strip()
    text = _SECTION_WORD.sub("", text)
    while _LEADING_NUMBER.match(text):  # "4.3 R interface" and "R interface" must both lose the "R"
        text = _LEADING_NUMBER.sub("", text, count=1)
    return "".join(_WORD.findall(text.lower()))


def words(text: str) -> Counter[str]:
    return Counter(_WORD.findall(text.lower()))


@dataclass(frozen=True)
class HeadingScores:
    entries: int  # outline entries on a page
    found: int  # entries found as a heading on their page
    agree: int  # found entries whose heading has the outline's level (capped at 4)
    emitted: int  # headings extracted
    matching: int  # headings that are an outline entry of their page
    in_scope: int  # headings of a kind the outline lists (see heading_kind)
    in_scope_matching: int
    extras: tuple[str, ...]  # "p.N [kind] heading" for each heading that is no outline entry


def heading_kind(text: str, is_label: bool) -> str:
    """'margin label', 'numbered' or 'unnumbered': kinds an author bookmarks or not as a whole.

    LaTeX puts numbered sections in the outline and leaves starred (unnumbered)
    ones out unless asked; command references bookmark their margin labels or not.
    """
    if is_label:
        return "margin label"
    text = _SECTION_WORD.sub("", unicodedata.normalize("NFKC", text).lstrip("# ").strip())
    return "numbered" if _NUMBERED.match(text) else "unnumbered"


def section_number(text: str) -> str:
    """`1.2.1` of "1.2.1 \\frenchsetup{options}": two levels or more, which name one section of a document."""
    match = _SECTION_NUMBER.match(_SECTION_WORD.sub("", unicodedata.normalize("NFKC", text).lstrip("# ").strip()))
    return match.group(1) if match else ""


def _same_section(entry: tuple[str, str], heading: tuple[str, str]) -> bool:
    """Same normalized title, or the same section number (outlines drop a title's macro arguments)."""
    return entry[0] == heading[0] or bool(entry[1]) and entry[1] == heading[1]


def heading_scores(toc: list, rendered: list) -> HeadingScores:
    """Outline entries found on their page, and headings that are outline entries, strictly and in scope."""
    headings: dict[int, list[tuple[tuple[str, str], int, str, str]]] = {}
    for page in rendered:
        text = page.content.text
        found_headings = []
        for index, block in enumerate(page.content.blocks):
            if block.kind == "heading":
                raw = text[block.char_start : block.char_end]
                key = (normalized_title(raw), section_number(raw))
                found_headings.append((key, block.level, heading_kind(raw, index in page.label_headings), raw))
        headings[page.content.page] = found_headings
    entries = [
        (level, (normalized_title(title), section_number(title)), page) for level, title, page, *_ in toc if page >= 1
    ]
    found = agree = 0
    scope: set[str] = set()
    for level, key, page in entries:
        matches = [
            (heading_level, kind)
            for heading, heading_level, kind, _ in headings.get(page, [])
            if _same_section(key, heading)
        ]
        if matches:
            found += 1
            agree += min(level, 4) in [heading_level for heading_level, _ in matches]
            scope.update(kind for _, kind in matches)
    keys_by_page: dict[int, list[tuple[str, str]]] = {}
    for _, key, page in entries:
        keys_by_page.setdefault(page, []).append(key)
    emitted = matching = in_scope = in_scope_matching = 0
    extras = []
    for page, items in headings.items():
        for heading, _, kind, raw in items:
            is_entry = any(_same_section(key, heading) for key in keys_by_page.get(page, []))
            emitted += 1
            matching += is_entry
            if kind in scope:
                in_scope += 1
                in_scope_matching += is_entry
            if not is_entry:
                extras.append(f"p.{page} [{kind}{'' if kind in scope else ', out of scope'}] {raw[:90]}")
    return HeadingScores(len(entries), found, agree, emitted, matching, in_scope, in_scope_matching, tuple(extras))


def word_share(document: pymupdf.Document, rendered: list) -> float:
    kept = total = 0
    for page, result in zip(document, rendered):
        reference = words(_HYPHEN_BREAK.sub("", clean_text(page.get_text())))
        reference -= words("\n".join(result.removed_lines))
        total += sum(reference.values())
        kept += sum((reference & words(result.content.text)).values())
    return kept / total if total else 1.0


def timings(document: pymupdf.Document) -> tuple[list[float], list[float]]:
    """Per page (plain get_text ms, scan ms) on pages where no table was found.

    CPU time of this process, not wall time: on a shared, loaded machine wall time
    mostly measures the wait for a core (the same page's wall time varies several-fold). Each page
    is timed REPEATS times, plain and scan interleaved, and the fastest run of each
    is kept, so the first (cold, font-loading) call counts against neither.
    """
    plain_ms, scan_ms = [], []
    for number, page in enumerate(document, start=1):
        plain = elapsed = float("inf")
        for _ in range(REPEATS):
            start = time.process_time()
            page.get_text()
            plain = min(plain, time.process_time() - start)
            start = time.process_time()
            scan = scan_page(page, number, detect_tables=True, ocr=None)
            elapsed = min(elapsed, time.process_time() - start)
            if scan.tables:
                break
        if not scan.tables:
            plain_ms.append(plain * 1000)
            scan_ms.append(elapsed * 1000)
    return plain_ms, scan_ms


def prefilter_misses(document: pymupdf.Document) -> int:
    """Tables that `find_tables()` with its layout model (default, 200x plain) sees on pages neither pre-filter keeps."""
    return sum(
        len(page.find_tables().tables)
        for page in document
        if not may_hold_table(page.get_cdrawings()) and not aligned_candidates(text_dict(page))
    )


def block_kind_holding(page, word: str) -> str:
    """Kind of the first block of the rendered page whose text holds `word`, or "lost"."""
    text = page.content.text
    for block in page.content.blocks:
        if word in text[block.char_start : block.char_end]:
            return block.kind
    return "lost"


def table_shape(cells) -> str:
    return f"{1 + len(cells.rows)}x{max(len(row) for row in (cells.header, *cells.rows))}"


def report_tables(rendered_by_document: dict[str, list]) -> None:
    """Each inventoried table with the block it became, then every other table block in the corpus."""
    print("\ntable inventory (document page: what | seen | expected -> got)")
    inventoried = set()
    hits = 0
    for document, number, what, shape, expected, word in TABLE_INVENTORY:
        page = rendered_by_document[document][number - 1]
        inventoried.add((document, number))
        got = block_kind_holding(page, word)
        hits += got == expected
        shapes = [table_shape(block.table) for block in page.content.blocks if block.table is not None]
        verdict = "found" if got == expected else "MISSED"
        print(f"  {document} p{number}: {what} | {shape} | {expected} -> {got} {verdict} (tables on page: {shapes})")
    print(f"  {hits}/{len(TABLE_INVENTORY)} as expected")
    print("table blocks outside the inventory (judge each):")
    for document, pages in rendered_by_document.items():
        for page in pages:
            if (document, page.content.page) in inventoried:
                continue
            for block in page.content.blocks:
                if block.table is not None:
                    print(f"  {document} p{page.content.page}: {table_shape(block.table)} {block.table.header}")


def run_corpus(corpus: Path, show_extras: bool) -> None:
    print(
        f"{'document':16} {'pages':>5} {'toc':>4} {'recall':>6} {'prec':>5} {'scope':>5} {'level':>5} "
        f"{'tables':>6} {'eqs':>4} {'words':>6} {'ms/pg':>6} {'plain':>6} {'ratio':>5}"
    )
    all_plain, all_scan, all_total = [], [], []
    rendered_by_document: dict[str, list] = {}
    for path in sorted(corpus.glob("*/*.pdf")):
        start = time.perf_counter()
        rendered = list(iter_rendered_pages(path, ExtractionOptions()))
        rendered_by_document[path.name] = rendered
        total_ms = (time.perf_counter() - start) * 1000 / len(rendered)
        with pymupdf.open(path) as document:
            toc = document.get_toc()
            scores = heading_scores(toc, rendered)
            share = word_share(document, rendered)
            plain_ms, scan_ms = timings(document)
            tables = sum(block.kind == "table" for page in rendered for block in page.content.blocks)
            equations = sum(block.kind == "equation" for page in rendered for block in page.content.blocks)
            misses = prefilter_misses(document) if path.name in TABLE_DOCUMENTS else None
        all_plain += plain_ms
        all_scan += scan_ms
        all_total.append(total_ms)
        recall = f"{scores.found / scores.entries:.2f}" if scores.entries else "-"
        precision = f"{scores.matching / scores.emitted:.2f}" if scores.entries and scores.emitted else "-"
        scoped = f"{scores.in_scope_matching / scores.in_scope:.2f}" if scores.entries and scores.in_scope else "-"
        level = f"{scores.agree / scores.found:.2f}" if scores.found else "-"
        table_note = f"{tables}" + (f"/-{misses}" if misses is not None else "")
        print(
            f"{path.name:16} {len(rendered):5} {scores.entries:4} {recall:>6} {precision:>5} {scoped:>5} {level:>5} "
            f"{table_note:>6} {equations:4} {share:6.4f} {total_ms:6.1f} {statistics.median(plain_ms):6.2f} "
            f"{statistics.median(scan_ms) / statistics.median(plain_ms):5.1f}"
        )
        if show_extras and scores.entries:
            print("".join(f"    {extra}\n" for extra in scores.extras), end="")
    print(
        f"median ms/page, pages without tables: scan {statistics.median(all_scan):.2f}, "
        f"plain get_text {statistics.median(all_plain):.2f}, "
        f"ratio {statistics.median(all_scan) / statistics.median(all_plain):.2f}x"
    )
    print(
        "tables column: table blocks found / -tables the layout model of find_tables() sees on pages both pre-filters skip"
    )
    print(
        "prec: headings that are outline entries; scope: the same among headings of a kind (margin label, "
        "numbered, unnumbered) the outline lists at least once"
    )
    report_tables(rendered_by_document)


def run_scale(scale_pdf: Path) -> None:
    start = time.perf_counter()
    pages = 0
    characters = 0
    for rendered in iter_rendered_pages(scale_pdf, ExtractionOptions()):
        pages += 1
        characters += len(rendered.content.text)
    elapsed = time.perf_counter() - start
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{scale_pdf.name}: {pages} pages, {characters} characters, {elapsed:.1f} s "
        f"({elapsed * 1000 / pages:.1f} ms/page), peak RSS {peak_mib:.0f} MiB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", action="store_true", help="extract refman.pdf and report peak RSS")
    parser.add_argument("--extras", action="store_true", help="list the headings that are no outline entry")
    parser.add_argument("--corpus", type=Path, default=SHARED / "corpus", help="a folder of corpus folders of PDFs")
    parser.add_argument("--scale-pdf", type=Path, default=SHARED / "corpus-scale" / "refman.pdf", help="the PDF --scale reads")
    arguments = parser.parse_args()
    run_scale(arguments.scale_pdf) if arguments.scale else run_corpus(arguments.corpus, arguments.extras)


if __name__ == "__main__":
    main()
