"""Structure of documents: headings, article numbers, running headers/footers, tables, outlines.

The truth is split once into a tuning half and a checking half (`structure_split.json`: per corpus-regs
house style and per kind of PDF with an outline); rules are tuned on the first, and the second is the
measure. Both halves are reported, then each half's figures against the targets (`TARGET_*`).

Four measures, taken with the core library alone (`extract_pages`, then `chunk_document` with the
vendored tokenizer and `ChunkPolicy()`):

- corpus-regs (French regulations with truth files, `truth/*.truth.json`):
  heading recall and precision (text and page), level-aware recall (the heading's parent, the
  nearest heading above it of a lower level, is the truth's parent too), article recall (each truth
  article's number is the `article_num` of a child cited on the article's page: what an arbiter's
  "Article 10, page 7" needs), `article_num` accuracy per child (the truth article in force at the
  child's filing offset: after the heading lines its text opens with, else its first character),
  running header/footer leakage (children holding a line that is the running header or the footer
  pattern), truth tables found (a table block on the table's page whose header row matches the
  truth's) and ms/page.
- outlines: every PDF of ../shared with an outline (`get_toc()`): entries of levels 1-2 seen on their
  page found in the `section_path` of some child on that page. The halves hold those of the split
  file; the others (refman's 2,415 pages) are reported apart, in neither half (`--no-scale` skips
  corpus-scale).
- corpus-wild: table precision and recall on a sample of pages labelled by eye
  (`table_labels_wild.json`: per page, how many tables a reader sees there).

Run: .venv/bin/python benchmarks/bench_structure.py [--shared DIR] [--half tuning|checking] [--only regs|outline|wild]
     [--no-scale] [--outside PDF ...] [-v]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pymupdf

sys.path[:0] = [str(Path(__file__).resolve().parent.parent), str(Path(__file__).resolve().parent)]
from bench_extraction import normalized_title, section_number  # noqa: E402  (bench_extraction's title matching)

from pocket_assets.core.chunking.chunker import chunk_document  # noqa: E402
from pocket_assets.core.extract import extract_pages  # noqa: E402
from pocket_assets.core.pdf import inspect_pdf  # noqa: E402
from pocket_assets.core.policy import ChunkPolicy  # noqa: E402
from pocket_assets.core.records import PageRecord  # noqa: E402
from pocket_assets.core.tokenizer import TokenCounter, load_tokenizer  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
LABELS = Path(__file__).resolve().parent / "table_labels_wild.json"
SPLIT = Path(__file__).resolve().parent / "structure_split.json"
HALVES = ("tuning", "checking")
# The targets a structure change must keep, on both halves.
TARGET_HEADING_RECALL = 0.95
TARGET_HEADING_PRECISION = 0.95
TARGET_ARTICLE_RECALL = 0.95
TARGET_OUTLINE_RECALL = 0.95
OUTLINE_LEVELS = 2
NUMBERED_PARAGRAPH = "numbered_paragraph"  # a truth article that is no heading: `1.1.2. La date de sa création ;`
_WORD = re.compile(r"\w+")
_HEADING_MARKS = re.compile(r"^\s*#{1,6}\s*")
# What may stand around a leaked margin line in the Markdown: heading marks, an escape, a page number.
_LINE_LEAD = r"^[#\s\\]*"
_LINE_TAIL = r"[\s\d/|–-]*$"


def key(text: str) -> str:
    """Text compared without case, accents' encoding, punctuation or spacing."""
    return "".join(_WORD.findall(unicodedata.normalize("NFKC", text).lower()))


@dataclass(frozen=True)
class Heading:
    text: str
    page: int
    level: int
    offset: int = 0


def extracted_headings(pages: Sequence[PageRecord]) -> list[Heading]:
    found = []
    for page in pages:
        for block in page.blocks:
            if block.kind == "heading":
                text = _HEADING_MARKS.sub("", page.text[block.char_start : block.char_end])
                found.append(Heading(text, page.page, block.level, page.char_start + block.char_start))
    return found


def parents(headings: Sequence[Heading]) -> list[str | None]:
    """Each heading's parent: the nearest heading before it of a lower level (its key), None at the top."""
    result: list[str | None] = []
    for index, heading in enumerate(headings):
        parent = next((key(h.text) for h in reversed(headings[:index]) if h.level < heading.level), None)
        result.append(parent)
    return result


@dataclass
class RegsScores:
    name: str
    pages: int
    seconds: float
    truth_headings: int
    found: int
    found_level: int
    emitted: int
    correct: int
    children: int
    article_ok: int
    articles: int  # truth articles set as headings (`Article 10`, `1.2.`)
    articles_found: int
    paragraphs: int  # truth articles that are numbered paragraphs (`1.1.2. La date de sa création ;`)
    paragraphs_found: int
    leaks: int
    truth_tables: int
    tables_found: int
    table_blocks: int
    missed: tuple[str, ...]
    extra: tuple[str, ...]
    wrong_articles: tuple[str, ...]
    lost_articles: tuple[str, ...]
    leaked: tuple[str, ...]


def heading_scores(truth: list[dict], headings: list[Heading]) -> tuple[int, int, int, list[str], list[str]]:
    """(found, found with the truth's parent, correct emitted, missed, extra)."""
    truth_headings = [Heading(item["text"], item["page"], item["level"]) for item in truth]
    truth_parents = parents(truth_headings)
    our_parents = parents(headings)
    ours = {(key(h.text), h.page): index for index, h in enumerate(headings)}
    theirs = {(key(h.text), h.page) for h in truth_headings}
    found = found_level = 0
    missed = []
    for heading, parent in zip(truth_headings, truth_parents):
        index = ours.get((key(heading.text), heading.page))
        if index is None:
            missed.append(f"p{heading.page} L{heading.level} {heading.text}")
            continue
        found += 1
        if our_parents[index] == parent:
            found_level += 1
        else:
            missed.append(f"(level) p{heading.page} L{heading.level} {heading.text}: parent {our_parents[index]}")
    extra = [f"p{h.page} L{h.level} {h.text}" for h in headings if (key(h.text), h.page) not in theirs]
    return found, found_level, len(headings) - len(extra), missed, extra


def article_offsets(articles: list[dict], pages: Sequence[PageRecord]) -> list[tuple[int, str]]:
    """Where each truth article starts in the canonical text, searched in order from the previous one."""
    located: list[tuple[int, str]] = []
    cursor = 0
    by_number = {page.page: page for page in pages}
    for article in articles:
        label = article.get("label") or f"{article['num']}."
        words = r"\s+".join(re.escape(word) for word in label.split())
        pattern = re.compile(rf"^[# \\]*{words}(?=[\s.:]|$)", re.IGNORECASE | re.MULTILINE)
        for number in (article["page"], article["page"] + 1):
            page = by_number.get(number)
            if page is None:
                continue
            start = max(cursor - page.char_start, 0)
            match = pattern.search(page.text, start) if start <= len(page.text) else None
            if match:
                cursor = page.char_start + match.start()
                located.append((cursor, article["num"]))
                break
    return located


def article_in_force(located: list[tuple[int, str]], offset: int) -> str | None:
    number = None
    for start, num in located:
        if start > offset:
            break
        number = num
    return number


def filing_offset(text: str, start: int) -> int:
    """Where a chunk starting at `start` is filed: the start of the last Markdown heading line of those its
    text opens with (blank lines aside), else `start`. A first stretch shorter than the chunker's
    `min_chars` before a heading line (a stray line above a title) does not count: it could not be a
    passage of its own, and is filed with the section it opens."""
    lines = text.splitlines(keepends=True)
    first_heading = next((index for index, line in enumerate(lines) if line.lstrip().startswith("#")), None)
    skip = 0
    if first_heading and len("".join(lines[:first_heading]).strip()) < ChunkPolicy().min_chars:
        skip = first_heading
    filing = start
    position = sum(len(line) for line in lines[:skip])
    for line in lines[skip:]:
        if line.strip():
            if not line.lstrip().startswith("#"):
                break
            filing = start + position + len(line) - len(line.lstrip())
        position += len(line)
    return filing


def carries(child_article: str | None, number: str) -> bool:
    """`child_article` names article `number`: it is that article or one inside it (`9.1` is in article 9)."""
    return child_article is not None and (child_article == number or child_article.startswith(number + "."))


def articles_carried(articles: list[dict], children: Sequence) -> list[str]:
    """The truth articles that no child cited on the article's page carries (`carries`)."""
    by_page: dict[int, list[str | None]] = {}
    for child in children:
        by_page.setdefault(child.page, []).append(child.article_num)
    return [
        f"p{article['page']} {article['num']} ({article['kind']})" for article in articles
        if not any(carries(number, article["num"]) for number in by_page.get(article["page"], ()))
    ]
def margin_patterns(truth: dict) -> list[re.Pattern[str]]:
    """A line that is the running header, the footer (its text, its counter) or both."""
    patterns = []
    header = truth.get("running_header")
    if header:
        patterns.append(re.compile(_LINE_LEAD + re.escape(header) + _LINE_TAIL, re.MULTILINE))
    footer = truth.get("footer_pattern")
    if footer:
        counter = r"\d{1,4}"
        parts = [part.strip() for part in footer.split("|")]
        full = r"\s*\|?\s*".join(re.escape(part).replace(r"\{n\}", counter).replace(r"\{N\}", counter) for part in parts)
        patterns.append(re.compile(_LINE_LEAD + full + r"\s*$", re.MULTILINE))
        for part in parts:
            escaped = re.escape(part).replace(r"\{n\}", counter).replace(r"\{N\}", counter)
            patterns.append(re.compile(_LINE_LEAD + escaped + r"\s*$", re.MULTILINE))
    return patterns


def table_found(table: dict, pages: Sequence[PageRecord]) -> bool:
    """A table block on the truth's page (or the next: a table may start at a page foot) with its header row."""
    header = [key(cell) for cell in table["header"]]
    for page in pages:
        if page.page not in (table["page"], table["page"] + 1):
            continue
        for block in page.blocks:
            if block.kind != "table" or block.table is None:
                continue
            rows = [block.table.header, *block.table.rows]
            if any([key(cell) for cell in row] == header for row in rows[:2]):
                return True
    return False


def score_regulation(pdf: Path, truth: dict, counter: TokenCounter) -> RegsScores:
    started = time.process_time()
    pages = extract_pages(pdf)
    seconds = time.process_time() - started
    children = chunk_document(inspect_pdf(pdf, f"{pdf.parent.name}/{pdf.name}"), pages, ChunkPolicy(), counter).children
    headings = extracted_headings(pages)
    found, found_level, correct, missed, extra = heading_scores(truth["headings"], headings)
    located = article_offsets(truth["articles"], pages)
    wrong = []
    for child in children:
        expected = article_in_force(located, filing_offset(child.text, child.char_start))
        if child.article_num != expected:
            wrong.append(f"p{child.page} want {expected} got {child.article_num}: {child.text[:50]!r}")
    lost = articles_carried(truth["articles"], children)
    paragraphs = sum(article["kind"] == NUMBERED_PARAGRAPH for article in truth["articles"])
    paragraphs_lost = sum(item.endswith(f"({NUMBERED_PARAGRAPH})") for item in lost)
    patterns = margin_patterns(truth)
    leaked = [f"p{child.page}: {leak!r}" for child in children if (leak := first_leak(child.text, patterns))]
    tables = sum(table_found(table, pages) for table in truth["tables"])
    table_blocks = sum(block.kind == "table" for page in pages for block in page.blocks)
    article_ok = len(children) - len(wrong)
    unlocated = len(truth["articles"]) - len(located)
    if unlocated:
        wrong.insert(0, f"({unlocated} truth articles not located in the text)")
    return RegsScores(
        pdf.name, len(pages), seconds, len(truth["headings"]), found, found_level, len(headings), correct,
        len(children), article_ok, len(truth["articles"]) - paragraphs, len(truth["articles"]) - paragraphs
        - (len(lost) - paragraphs_lost), paragraphs, paragraphs - paragraphs_lost, len(leaked),
        len(truth["tables"]), tables, table_blocks, tuple(missed), tuple(extra), tuple(wrong), tuple(lost), tuple(leaked),
    )


def first_leak(text: str, patterns: list[re.Pattern[str]]) -> str:
    """The first line of `text` that is a running header or footer, else ""."""
    for pattern in patterns:
        match = pattern.search(text)
        if match:
            return match.group(0).strip()
    return ""


def ratio(part: int, whole: int) -> str:
    return f"{part / whole:.2f}" if whole else "-"


@dataclass
class HalfFigures:
    """What is measured on one half of the split."""

    truth_headings: int = 0
    found: int = 0
    emitted: int = 0
    correct: int = 0
    articles: int = 0
    articles_found: int = 0
    paragraphs: int = 0
    paragraphs_found: int = 0
    outline_recalls: dict[str, float | None] = field(default_factory=dict)


def run_regs(pdfs: Sequence[Path], truth_folder: Path, counter: TokenCounter, verbose: bool) -> HalfFigures:
    print("| document | pages | ms/page | heading recall | precision | level-aware recall | article recall "
          "| numbered paragraphs | child article_num | leaks | tables |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    totals = [0] * 15
    for pdf in pdfs:
        truth = json.loads((truth_folder / pdf.name.replace(".pdf", ".truth.json")).read_text(encoding="utf-8"))
        s = score_regulation(pdf, truth, counter)
        print(
            f"| {s.name[:34]} | {s.pages} | {1000 * s.seconds / s.pages:.1f} | {ratio(s.found, s.truth_headings)} "
            f"| {ratio(s.correct, s.emitted)} | {ratio(s.found_level, s.truth_headings)} "
            f"| {ratio(s.articles_found, s.articles)} | {ratio(s.paragraphs_found, s.paragraphs)} "
            f"| {ratio(s.article_ok, s.children)} | {s.leaks}/{s.children} "
            f"| {s.tables_found}/{s.truth_tables} ({s.table_blocks} blocks) |"
        )
        values = (s.pages, s.seconds, s.truth_headings, s.found, s.found_level, s.emitted, s.correct,
                  s.children, s.article_ok, s.articles, s.articles_found, s.paragraphs, s.paragraphs_found, s.leaks,
                  s.tables_found)
        totals = [a + b for a, b in zip(totals, values)]
        if verbose:
            for title, items in (("missed", s.missed), ("extra", s.extra), ("article", s.wrong_articles),
                                 ("lost article", s.lost_articles), ("leak", s.leaked)):
                for item in items[:25]:
                    print(f"    {s.name[:2]} {title}: {item}", file=sys.stderr)
    (pages, seconds, truth_h, found, found_level, emitted, correct, children, article_ok, articles, articles_found,
     paragraphs, paragraphs_found, leaks, tables) = totals
    print(
        f"| **all** | {pages} | {1000 * seconds / max(pages, 1):.1f} | {ratio(found, truth_h)} | {ratio(correct, emitted)} "
        f"| {ratio(found_level, truth_h)} | {ratio(articles_found, articles)} | {ratio(paragraphs_found, paragraphs)} "
        f"| {ratio(article_ok, children)} "
        f"| {leaks}/{children} | {tables}/{len(pdfs)} |"
    )
    return HalfFigures(truth_h, found, emitted, correct, articles, articles_found, paragraphs, paragraphs_found)


def _plain(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


def page_edge_rows(page: pymupdf.Page) -> list[tuple[str, int, str]]:
    """The page's top and bottom rows of text that stand off the rest: (band, height, text), by PyMuPDF alone.

    A row is the text lines sharing a height (within 1 pt), left to right; the topmost row counts
    when it sits in the top tenth of the page and the next row starts at least its own height below
    it (the bottommost likewise, in the bottom tenth).
    """
    lines = sorted(
        (line["bbox"][1], line["bbox"][3], line["bbox"][0], "".join(span["text"] for span in line["spans"]))
        for block in page.get_text("dict")["blocks"] if block["type"] == 0 for line in block["lines"]
    )
    rows: list[list[tuple[float, float, float, str]]] = []
    for line in lines:
        if line[3].strip():
            if rows and abs(rows[-1][0][0] - line[0]) <= 1:
                rows[-1].append(line)
            else:
                rows.append([line])
    found = []
    if len(rows) > 1:
        top, below = rows[0], rows[1]
        height = page.rect.height
        if top[0][1] <= height * 0.1 and below[0][0] - max(r[1] for r in top) >= top[0][1] - top[0][0]:
            found.append(("top", top))
        bottom, above = rows[-1], rows[-2]
        if bottom[0][0] >= height * 0.9 and bottom[0][0] - max(r[1] for r in above) >= bottom[0][1] - bottom[0][0]:
            found.append(("bottom", bottom))
    return [
        (band, round(row[0][0]), _plain(" ".join(part[3] for part in sorted(row, key=lambda part: part[2]))))
        for band, row in found
    ]


def manual_leaks(document: pymupdf.Document, children: Sequence) -> list[str]:
    """Children holding a line that is a running line of the document.

    Running lines: edge rows (`page_edge_rows`) with a letter, at a height where edge rows stand on
    three pages or more (the page template's place, whatever the text says there).
    """
    rows = [row for page in document for row in page_edge_rows(page)]
    places = Counter((band, height) for band, height, _ in rows)
    running = {
        text for band, height, text in rows
        if re.search(r"[^\W\d_]", text) and sum(places[(band, height + shift)] for shift in (-1, 0, 1)) >= 3
    }
    leaked = []
    for child in children:
        hit = next((line for line in child.text.splitlines() if _plain(_HEADING_MARKS.sub("", line)) in running), None)
        if hit is not None:
            leaked.append(f"p{child.page}: {hit.strip()!r}")
    return leaked


def outline_recall(pdf: Path, counter: TokenCounter) -> tuple[int, int, list[str], int, list[str]]:
    """Outline entries found, entries, misses; children, and the children leaking a running line."""
    pages = extract_pages(pdf)
    corpus = pdf.parent.name if pdf.parent.name in ("fr", "intl") else "intl"  # corpus-wild's folders name no corpus
    children = chunk_document(inspect_pdf(pdf, f"{corpus}/{pdf.name}"), pages, ChunkPolicy(), counter).children
    with pymupdf.open(pdf) as document:
        toc = [
            entry for entry in document.get_toc()
            if entry[0] <= OUTLINE_LEVELS and 1 <= entry[2] <= document.page_count
            and key(entry[1]) and key(entry[1]) in key(document[entry[2] - 1].get_text())
        ]
        leaked = manual_leaks(document, children)
    on_page: dict[int, set[tuple[str, str]]] = {}
    for child in children:
        for title in child.section_path:
            on_page.setdefault(child.page, set()).add((normalized_title(title), section_number(title)))
    found = 0
    missed = []
    for _, title, page in toc:
        wanted = (normalized_title(title), section_number(title))
        if any(wanted[0] == got[0] or (wanted[1] and wanted[1] == got[1]) for got in on_page.get(page, ())):
            found += 1
        else:
            missed.append(f"p{page} {title}")
    return found, len(toc), missed, len(children), leaked


def run_outlines(pdfs: Sequence[Path], counter: TokenCounter, verbose: bool) -> dict[str, float | None]:
    """Outline recall per PDF (None: no entry a reader sees on its page), with the running-line leaks."""
    print("| document | entries | recall | leaks |")
    print("|---|---|---|---|")
    recalls: dict[str, float | None] = {}
    for pdf in pdfs:
        found, entries, missed, children, leaked = outline_recall(pdf, counter)
        recalls[pdf.name] = found / entries if entries else None
        print(f"| {pdf.name[:60]} | {entries or '-'} | {ratio(found, entries)} | {len(leaked)}/{children} |")
        if verbose:
            for item in missed[:15]:
                print(f"    missed {pdf.name}: {item}", file=sys.stderr)
            for item in leaked[:10]:
                print(f"    leak {pdf.name}: {item}", file=sys.stderr)
    return recalls


def split_halves(split_file: Path, shared: Path) -> dict[str, dict[str, list[Path]]]:
    """{half: {"regs": PDFs with a truth file, "outline": PDFs with an outline}} from the split file."""
    strata = json.loads(split_file.read_text(encoding="utf-8"))["strata"]
    halves: dict[str, dict[str, list[Path]]] = {half: {"regs": [], "outline": []} for half in HALVES}
    for name, members in strata.items():
        kind = "regs" if name.startswith("regs") else "outline"
        for half in HALVES:
            halves[half][kind].extend(shared / path for path in members[half])
    return halves


def outlined_elsewhere(shared: Path, halves: dict[str, dict[str, list[Path]]], scale: bool) -> list[Path]:
    """The PDFs of `shared` with an outline that neither half holds (corpus-scale's only when `scale`)."""
    held = {pdf for half in halves.values() for pdf in half["outline"]}
    found = []
    for pdf in sorted(shared.rglob("*.pdf")):
        if pdf in held or (not scale and "corpus-scale" in pdf.relative_to(shared).parts):
            continue
        try:
            with pymupdf.open(pdf) as document:
                if not document.needs_pass and document.get_toc():
                    found.append(pdf)
        except (pymupdf.FileDataError, RuntimeError):
            continue
    return found


def verdict(value: float | None, target: float) -> str:
    if value is None:
        return "-"
    return f"{value:.2f} ({'met' if value >= target else 'NOT met'}: >= {target:.2f})"


def print_targets(half: str, figures: HalfFigures) -> None:
    """The half's figures against the targets (which bind both halves)."""
    outlines = [value for value in figures.outline_recalls.values() if value is not None]
    print(f"\n### {half}: the targets\n")
    print(f"- heading recall: {verdict(figures.found / figures.truth_headings if figures.truth_headings else None, TARGET_HEADING_RECALL)}")
    print(f"- heading precision: {verdict(figures.correct / figures.emitted if figures.emitted else None, TARGET_HEADING_PRECISION)}")
    print(f"- article_num recall: {verdict(figures.articles_found / figures.articles if figures.articles else None, TARGET_ARTICLE_RECALL)}")
    if figures.paragraphs:
        print(f"  (numbered paragraphs, no target: {figures.paragraphs_found / figures.paragraphs:.2f})")
    print(f"- outline recall, lowest of {len(outlines)} PDFs: {verdict(min(outlines, default=None), TARGET_OUTLINE_RECALL)}")
    low = [f"{name} {value:.2f}" for name, value in figures.outline_recalls.items() if value is not None and value < TARGET_OUTLINE_RECALL]
    if low:
        print(f"  under the target: {', '.join(low)}")


def run_wild(folder: Path, labels_file: Path, verbose: bool) -> None:
    """Precision and recall of table blocks on the labelled pages of corpus-wild."""
    labels = json.loads(labels_file.read_text(encoding="utf-8"))["pages"]
    found_total = real_total = right = 0
    by_file: dict[str, list[dict]] = {}
    for label in labels:
        by_file.setdefault(label["file"], []).append(label)
    for name, items in sorted(by_file.items()):
        pages = extract_pages(folder / name)
        for item in items:
            page = pages[item["page"] - 1]
            found = sum(block.kind == "table" for block in page.blocks)
            real = item["tables"]
            found_total += found
            real_total += real
            right += min(found, real)
            if verbose and found != real:
                print(f"    wild {name} p{item['page']}: found {found}, real {real} ({item.get('note', '')})",
                      file=sys.stderr)
    print("\n## tables on labelled corpus-wild pages\n")
    print("| pages | real tables | table blocks | precision | recall |")
    print("|---|---|---|---|---|")
    print(f"| {len(labels)} | {real_total} | {found_total} | {ratio(right, found_total)} | {ratio(right, real_total)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=SHARED, help="the folder holding corpus-regs, corpus, corpus-wild")
    parser.add_argument("--split", type=Path, default=SPLIT)
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--half", choices=HALVES, help="one half only (default: both)")
    parser.add_argument("--outside", type=Path, nargs="*", default=[],
                        help="PDFs with an outline outside ../shared, in neither half (e.g. /usr/share/doc/*/*.pdf)")
    parser.add_argument("--only", choices=("regs", "outline", "wild"))
    parser.add_argument("--no-scale", action="store_true", help="leave out corpus-scale (refman, 2,415 pages)")
    parser.add_argument("-v", "--verbose", action="store_true", help="misses, extras and leaks on stderr")
    arguments = parser.parse_args()
    counter = load_tokenizer()
    halves = split_halves(arguments.split, arguments.shared)
    figures: dict[str, HalfFigures] = {}
    for half in (arguments.half,) if arguments.half else HALVES:
        figures[f"{half} half"] = HalfFigures()
        if arguments.only in (None, "regs"):
            print(f"\n## corpus-regs, {half} half\n")
            figures[f"{half} half"] = run_regs(halves[half]["regs"], arguments.shared / "corpus-regs" / "truth",
                                               counter, arguments.verbose)
        if arguments.only in (None, "outline"):
            print(f"\n## outlines, {half} half (levels 1-2 seen on their page, in some child's section_path there; "
                  "running-line leaks)\n")
            figures[f"{half} half"].outline_recalls = run_outlines(halves[half]["outline"], counter, arguments.verbose)
    if not arguments.half and arguments.only in (None, "outline"):
        print("\n## outlines of the other PDFs of ../shared (in neither half)\n")
        figures["neither half"] = HalfFigures()
        figures["neither half"].outline_recalls = run_outlines(
            outlined_elsewhere(arguments.shared, halves, not arguments.no_scale), counter, arguments.verbose
        )
    if arguments.outside and arguments.only in (None, "outline"):
        print("\n## outlines of PDFs outside ../shared (in neither half)\n")
        run_outlines(arguments.outside, counter, arguments.verbose)
    if arguments.only in (None, "wild"):
        run_wild(arguments.shared / "corpus-wild", arguments.labels, arguments.verbose)
    for half, values in figures.items():
        print_targets(half, values)


if __name__ == "__main__":
    main()
