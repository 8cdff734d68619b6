"""Does every SDK line fit the phone? Every device preset over whole folders of PDFs.

Each PDF is read once (inspect_pdf, extract_pages); then, for each preset, chunked and its tables
summarized with that preset's policy (chunk_document, summarize_tables: what the assets run), and
every child and table summary's line is counted again from scratch as the phone's embedder reads
it: the preset's document prompt + the line (`text_to_embed`) with the vendored Gemma 3 tokenizer,
plus the special tokens. Per folder and preset it prints the lines, the largest count against the
window, the lines over it (must be 0) and records whose `embedded_tokens` disagree with the recount
(must be 0), and the LLM check of the export (`llm_overflow`: the top-k longest lines of each corpus
and the question budget against the LLM's context). A PDF that inspect_pdf refuses (encrypted,
broken) is counted as refused, as a build refuses it.

    .venv/bin/python benchmarks/bench_device_fit.py          # ../shared/corpus, corpus-regs, corpus-wild, corpus-scale
    .venv/bin/python benchmarks/bench_device_fit.py some/folder --presets embeddinggemma-256
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pocket_assets.core.chunking.chunker import chunk_document  # noqa: E402
from pocket_assets.core.chunking.embed_text import count_embedded, text_to_embed  # noqa: E402
from pocket_assets.core.device import PRESETS, llm_overflow  # noqa: E402
from pocket_assets.core.errors import PdfError  # noqa: E402
from pocket_assets.core.extract import extract_pages  # noqa: E402
from pocket_assets.core.pdf import inspect_pdf  # noqa: E402
from pocket_assets.core.policy import ChunkPolicy  # noqa: E402
from pocket_assets.core.tables.extractive import ExtractiveSummarizer  # noqa: E402
from pocket_assets.core.tables.summaries import summarize_tables  # noqa: E402
from pocket_assets.core.tokenizer import load_tokenizer  # noqa: E402

SHARED = REPO.parent / "shared"
FOLDERS = [SHARED / name for name in ("corpus", "corpus-regs", "corpus-wild", "corpus-scale")]


@dataclass
class Fit:
    """One folder under one preset."""

    pdfs: int = 0
    lines: int = 0
    largest: int = 0
    over: int = 0
    miscounted: int = 0
    failed: list[str] = field(default_factory=list)
    lines_by_corpus: dict[str, list[tuple[str, int]]] = field(default_factory=lambda: defaultdict(list))


def check_folder(folder: Path, presets: list[str]) -> tuple[dict[str, Fit], int]:
    counter = load_tokenizer()
    policies = {name: ChunkPolicy.for_device(PRESETS[name]) for name in presets}
    fits = {name: Fit() for name in presets}
    refused = 0
    for path in sorted(folder.rglob("*")):
        if path.suffix.lower() != ".pdf" or not path.is_file():
            continue
        key = path.relative_to(folder).as_posix()
        corpus = key.split("/")[0] if key.split("/")[0] in ("fr", "intl") else "intl"
        key = key if key.startswith(("fr/", "intl/")) else f"intl/{key}"
        try:
            identity = inspect_pdf(path, key)
            pages = tuple(extract_pages(path))
        except PdfError:
            refused += 1
            continue
        for name, policy in policies.items():
            fit = fits[name]
            fit.pdfs += 1
            try:
                chunked = chunk_document(identity, pages, policy, counter)
                summarizer = ExtractiveSummarizer(counter, target_tokens=policy.summary_tokens)
                summaries = summarize_tables(
                    identity, pages, chunked.parents, policy, counter, summarizer, children=chunked.children
                )
            except ValueError as error:  # a PDF the chunker cannot fit: what the check is for
                fit.failed.append(f"{key}: {error}")
                continue
            lines = [*chunked.children, *summaries.chunks]
            strings = [
                text_to_embed(line.text, line.source, line.page, policy.device.document_prompt, line.context)
                for line in lines
            ]
            counts = count_embedded(counter, strings, policy.device)
            fit.lines += len(lines)
            fit.largest = max([fit.largest, *counts])
            fit.over += sum(count > policy.max_tokens for count in counts)
            fit.miscounted += sum(count != line.embedded_tokens for count, line in zip(counts, lines))
            fit.lines_by_corpus[corpus].extend((line.id, count) for line, count in zip(lines, counts))
        print(f"{folder.name}: {key}", file=sys.stderr)
    return fits, refused


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="*", type=Path, default=FOLDERS)
    parser.add_argument("--presets", nargs="+", choices=sorted(PRESETS), default=list(PRESETS))
    args = parser.parse_args()
    columns = ("folder", "preset", "PDFs (refused)", "lines", "largest / window", "over the window", "miscounted")
    print(f"| {' | '.join(columns)} | LLM: top-k + question / context |")
    print("|---" * (len(columns) + 1) + "|")
    for folder in args.folders:
        fits, refused = check_folder(folder, args.presets)
        for name, fit in fits.items():
            device = PRESETS[name]
            llm = []
            for corpus, lines in sorted(fit.lines_by_corpus.items()):
                overflow = llm_overflow(lines, device)
                top = sorted((count for _, count in lines), reverse=True)[: device.top_k]
                needed = sum(count - device.special_tokens for count in top) + device.question_tokens
                llm.append(f"{corpus} {needed} / {device.llm_context_tokens}{' OVERFLOW' if overflow else ''}")
            print(
                f"| {folder.name} | {name} | {fit.pdfs} ({refused}) | {fit.lines} | {fit.largest} / "
                f"{device.embed_max_tokens} | {fit.over} | {fit.miscounted} | {'; '.join(llm)} |"
            )
            for failure in fit.failed:
                print(f"|  | {name} failed | {failure} |||||")


if __name__ == "__main__":
    main()
