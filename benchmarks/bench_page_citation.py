"""Which page mode cites the right page more often: page-bounded (`pdf-page-v1`) or spanning (`span`) chunks?

For every PDF of the development corpus, extracted with `extract_pages`, chunk in
`span` and in `pdf-page-v1` mode and report, for the children (what the phone
cites): the share whose text lies entirely on their cited `page`, the mean share
of characters off that page, chunk counts and token statistics, and chunker
speed (pages per second, extraction excluded).

    .venv/bin/python benchmarks/bench_page_citation.py [corpus folder]
"""

from __future__ import annotations

import dataclasses
import statistics
import sys
import time
from pathlib import Path

from pocket_assets.core.chunking.chunker import chunk_document
from pocket_assets.core.extract import extract_pages
from pocket_assets.core.policy import ChunkPolicy
from pocket_assets.core.records import PdfIdentity
from pocket_assets.core.tokenizer import load_tokenizer

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def main(corpus: Path) -> None:
    counter = load_tokenizer()
    documents = []
    for path in sorted(corpus.glob("*/*.pdf")):
        key = path.relative_to(corpus).as_posix()
        pages = extract_pages(path)
        documents.append((PdfIdentity(key, key.split("/")[0], path.name, "", 0, len(pages)), pages))
    page_total = sum(len(pages) for _, pages in documents)
    print(f"{len(documents)} PDFs, {page_total} pages from {corpus}")
    for mode in ("span", "pdf-page-v1"):
        policy = dataclasses.replace(ChunkPolicy(), page_mode=mode)
        started = time.perf_counter()
        results = [chunk_document(identity, pages, policy, counter) for identity, pages in documents]
        elapsed = time.perf_counter() - started
        on_page = 0
        off_shares = []
        children = [child for result in results for child in result.children]
        for (_, pages), result in zip(documents, results):
            spans = {page.page: (page.char_start, page.char_end) for page in pages}
            for child in result.children:
                start, end = spans[child.page]
                inside = max(0, min(end, child.char_end) - max(start, child.char_start))
                off = 1 - inside / (child.char_end - child.char_start)
                off_shares.append(off)
                on_page += off == 0
        tokens = sorted(child.tokens for child in children)
        parents = sum(len(result.parents) for result in results)
        print(
            f"{mode:12s} children={len(children)} parents={parents} "
            f"cited-page-exact={on_page / len(children):.1%} mean-chars-off-page={statistics.fmean(off_shares):.2%} "
            f"child tokens min/median/p95/max={tokens[0]}/{tokens[len(tokens) // 2]}/"
            f"{tokens[int(len(tokens) * 0.95)]}/{tokens[-1]} "
            f"chunker {page_total / elapsed:.0f} pages/s ({elapsed:.2f} s)"
        )


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_CORPUS)
