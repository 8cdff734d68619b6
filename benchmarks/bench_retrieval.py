"""Retrieval as the phone retrieves: each device preset's lines, read through the embedder's window, on both gold sets.

For each gold set and each build (`line-only`: a baseline counting the line alone, children 450/68,
header <=60, 512 tokens without the embedder's prompt or special tokens; `embeddinggemma-N`: the
lines built for that device preset, with its sizes or those given), the corpus is built the way the
assets build it, through the core library: inspect_pdf, extract_pages (once per PDF, shared by the
builds), chunk_document, summarize_tables (extractive), validate_partition (a PDF that fails a gate
is left out, as the export does; its window gate proves every line fits) and write_corpus_exports.
The SDK files are then read back (passages_from_export) as the phone's embedder reads them:
EmbeddingGemma's document prompt in front, cut to the window with the Gemma 3 tokenizer (special
tokens counted), for each window asked (`whole`: no cut), and ranked for the gold questions. A hit
is a line citing an expected page of an expected document. hit@3 (the lines the phone hands its
LLM) comes first, then hit@1/5/10 and MRR@10. BM25 always (`bm25`: the evaluation's Snowball
reading; `--plain` adds bm25s's default one), dense (the small offline model of the [embed] extra,
a stand-in for EmbeddingGemma that itself reads at most 256 word pieces) and hybrid (RRF of both)
with --dense. A second table gives each build's lines in the phone's tokens (prompt and special
tokens included).

Gold sets: data/gold/sample_gold.jsonl over the sample corpus data/raw, and
data/gold/regs_gold.jsonl over ../shared/corpus-regs (its fr/ copied into a temp raw folder).

    .venv/bin/python benchmarks/bench_retrieval.py --dense              # every preset and line-only, 3 windows
    .venv/bin/python benchmarks/bench_retrieval.py --builds embeddinggemma-256 --windows 256 \\
        --child-tokens 120 160 200 --child-overlap 0 24 --context-max-tokens 30 45 60   # a sweep, BM25
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import shutil
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # the checkout's package, not an installed one

from pocket_assets.core.chunking.chunker import chunk_document  # noqa: E402
from pocket_assets.core.device import DEFAULT_PRESET, PRESETS, DeviceProfile  # noqa: E402
from pocket_assets.core.evaluation.bm25 import bm25_rankings, evaluate_bm25  # noqa: E402
from pocket_assets.core.evaluation.fusion import fuse_rankings  # noqa: E402
from pocket_assets.core.evaluation.gold import GoldQuestion, load_gold  # noqa: E402
from pocket_assets.core.evaluation.passages import Passage  # noqa: E402
from pocket_assets.core.evaluation.scoring import RetrievalReport, evaluate_rankings, k_values_for, metric_names  # noqa: E402
from pocket_assets.core.extract import extract_pages  # noqa: E402
from pocket_assets.core.pdf import inspect_pdf  # noqa: E402
from pocket_assets.core.policy import CONTEXT_HEADERS, ChunkPolicy  # noqa: E402
from pocket_assets.core.quality.partition_gates import validate_partition  # noqa: E402
from pocket_assets.core.quality.suites import Gates, load_gates  # noqa: E402
from pocket_assets.core.raw_folder import discover_pdfs  # noqa: E402
from pocket_assets.core.records import CORPORA, ChunkRecord, PageRecord, PdfIdentity  # noqa: E402
from pocket_assets.core.tables.extractive import ExtractiveSummarizer  # noqa: E402
from pocket_assets.core.tables.summaries import summarize_tables  # noqa: E402
from pocket_assets.core.tokenizer import TokenCounter, load_tokenizer  # noqa: E402
from pocket_assets.export.read_back import passages_from_export  # noqa: E402
from pocket_assets.export.writer import write_corpus_exports  # noqa: E402

EXPECTATIONS = REPO_ROOT / "expectations"
GENERATED = "2026-01-01T00:00:00Z"
LINE_ONLY = "line-only"
WHOLE = "whole"
# The phone that reads the lines: EmbeddingGemma's prompt and special tokens, top-k 3; the window varies.
PHONE = PRESETS[DEFAULT_PRESET]
METRICS = metric_names(PHONE)
# A baseline blind to what the phone's embedder adds: a 512-token cap on the line alone, no prompt, no special tokens.
LINE_ONLY_DEVICE = DeviceProfile(embed_max_tokens=512, document_prompt="", special_tokens=0)
LINE_ONLY_SIZES = {"child_tokens": 450, "child_overlap": 68, "context_max_tokens": 60}


@dataclass(frozen=True)
class GoldSet:
    name: str
    raw_dir: Path
    gold_path: Path


@dataclass(frozen=True)
class Build:
    label: str
    policy: ChunkPolicy


def extract_corpus(raw_dir: Path) -> list[tuple[PdfIdentity, tuple[PageRecord, ...]]]:
    return [(inspect_pdf(raw_dir / key, key), tuple(extract_pages(raw_dir / key))) for key in discover_pdfs(raw_dir)]


def builds_for(
    names: list[str],
    child: list[int | None],
    overlap: list[int | None],
    header: list[int | None],
    settings: list[str],
) -> list[Build]:
    """`line-only` once; every preset with each combination of the sizes given (None: the preset's own)."""
    builds = []
    for name in names:
        for setting in settings:
            if name == LINE_ONLY:
                policy = ChunkPolicy(device=LINE_ONLY_DEVICE, context_header=setting, **LINE_ONLY_SIZES)
                builds.append(Build(f"{LINE_ONLY} 450/68/60 ({setting})", policy))
                continue
            for child_tokens, child_overlap, context_max_tokens in itertools.product(child, overlap, header):
                policy = ChunkPolicy.for_device(
                    PRESETS[name],
                    child_tokens=child_tokens,
                    child_overlap=child_overlap,
                    context_max_tokens=context_max_tokens,
                    context_header=setting,
                )
                sizes = f"{policy.child_tokens}/{policy.child_overlap}/{policy.context_max_tokens}"
                builds.append(Build(f"{name} {sizes} ({setting})", policy))
    return builds


def build_export(
    documents: list[tuple[PdfIdentity, tuple[PageRecord, ...]]],
    policy: ChunkPolicy,
    counter: TokenCounter,
    gates: Gates,
    out_dir: Path,
) -> tuple[list[str], list[int]]:
    """The assets' chunking, gates and export for one policy; the PDFs a gate left out, and every exported
    line's tokens as the phone's embedder counts them (`embedded_tokens` under the phone's prompt)."""
    summarizer = ExtractiveSummarizer(counter, target_tokens=policy.summary_tokens)
    validated: list[ChunkRecord] = []
    failed = []
    for identity, pages in documents:
        chunked = chunk_document(identity, pages, policy, counter)
        summaries = summarize_tables(
            identity, pages, chunked.parents, policy, counter, summarizer, children=chunked.children
        )
        chunks = [*chunked.parents, *chunked.children, *summaries.chunks]
        if validate_partition(gates, identity.partition_key, chunks, pages, policy).passed:
            validated.extend(chunks)
        else:
            failed.append(identity.partition_key)
    for corpus in CORPORA:
        write_corpus_exports(
            corpus, [c for c in validated if c.corpus == corpus], out_dir, GENERATED, EXPECTATIONS, device=policy.device
        )
    whole = [passage for corpus in CORPORA for passage in passages_from_export(out_dir, corpus, PHONE)]
    return failed, [count + PHONE.special_tokens for count in counter.count_batch([p.text for p in whole])]


def read_through(out_dir: Path, window: str, counter: TokenCounter) -> list[Passage]:
    """The exported lines as the phone's embedder of this window reads them (`whole`: not cut)."""
    if window == WHOLE:
        return [passage for corpus in CORPORA for passage in passages_from_export(out_dir, corpus, PHONE)]
    device = dataclasses.replace(PHONE, embed_max_tokens=int(window))
    return [passage for corpus in CORPORA for passage in passages_from_export(out_dir, corpus, device, counter)]


def evaluate(
    passages: list[Passage], questions: tuple[GoldQuestion, ...], dense: bool, plain: bool, store: Path
) -> list[RetrievalReport]:
    k_values = k_values_for(PHONE)
    reports = [evaluate_bm25(passages, questions, k_values)]
    if plain:
        reports.append(evaluate_bm25(passages, questions, k_values, tokenizer="plain"))
    if dense:
        from pocket_assets.core.evaluation.embeddings import (
            DEFAULT_EMBEDDING_MODEL,
            DEFAULT_MODEL_DIM,
            dense_rankings,
            embed_passages,
        )

        embed_passages(passages, DEFAULT_EMBEDDING_MODEL, DEFAULT_MODEL_DIM, store)
        vectors = dense_rankings(passages, questions, store, DEFAULT_EMBEDDING_MODEL)
        reports += [
            evaluate_rankings(vectors, questions, k_values, method="dense"),
            evaluate_rankings(
                fuse_rankings([bm25_rankings(passages, questions), vectors]), questions, k_values, method="hybrid"
            ),
        ]
    return reports


def run(
    gold_sets: list[GoldSet], builds: list[Build], windows: list[str], dense: bool, plain: bool, work: Path
) -> tuple[list[dict], list[dict]]:
    """One row per gold set, build, window, method and corpus; one line-statistics row per gold set and build."""
    counter = load_tokenizer()
    gates = load_gates(EXPECTATIONS)
    rows, line_rows = [], []
    for gold_set in gold_sets:
        questions = load_gold(gold_set.gold_path)
        documents = extract_corpus(gold_set.raw_dir)
        for number, build in enumerate(builds):
            out_dir = work / gold_set.name / str(number)
            failed, tokens = build_export(documents, build.policy, counter, gates, out_dir)
            print(f"{gold_set.name}: {build.label}: {len(tokens)} lines", file=sys.stderr)
            line_rows.append(
                {
                    "gold": gold_set.name,
                    "build": build.label,
                    "lines": len(tokens),
                    "median": statistics.median(tokens),
                    "p95": sorted(tokens)[int(0.95 * (len(tokens) - 1))],
                    "max": max(tokens),
                    "over_256": round(sum(count > 256 for count in tokens) / len(tokens), 3),
                    "over_512": round(sum(count > 512 for count in tokens) / len(tokens), 3),
                }
            )
            for window in windows:
                passages = read_through(out_dir, window, counter)
                store = out_dir / f"embeddings_{window}.parquet"
                for report in evaluate(passages, questions, dense, plain, store):
                    per_corpus = sorted(report.corpus_metrics.items())
                    for corpus, metrics in per_corpus + ([("all", report.metrics)] if len(per_corpus) > 1 else []):
                        rows.append(
                            {
                                "gold": gold_set.name,
                                "build": build.label,
                                "window": window,
                                "method": report.method,
                                "corpus": corpus,
                                "questions": int(metrics["questions"]),
                                **{name: round(metrics[name], 3) for name in METRICS},
                                "pdfs_failed": failed,
                            }
                        )
    return rows, line_rows


def print_tables(rows: list[dict], line_rows: list[dict]) -> None:
    header = f"| gold | corpus | method | build (child/overlap/header) | window | {' | '.join(METRICS)} |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    methods = list(dict.fromkeys(row["method"] for row in rows))
    golds = list(dict.fromkeys(row["gold"] for row in rows))
    for row in sorted(rows, key=lambda row: (golds.index(row["gold"]), methods.index(row["method"]))):
        values = " | ".join(f"{row[name]:.3f}" for name in METRICS)
        print(f"| {row['gold']} | {row['corpus']} | {row['method']} | {row['build']} | {row['window']} | {values} |")
    print("\nLines as the phone's embedder counts them (EmbeddingGemma's prompt and special tokens included):\n")
    print("| gold | build | lines | median | p95 | max | > 256 | > 512 |")
    print("|---|---|---|---|---|---|---|---|")
    for row in line_rows:
        print(
            f"| {row['gold']} | {row['build']} | {row['lines']} | {row['median']:g} | {row['p95']} | {row['max']} "
            f"| {row['over_256']:.0%} | {row['over_512']:.0%} |"
        )
    failed = sorted({key for row in rows for key in row["pdfs_failed"]})
    if failed:
        print(f"\nPDFs left out by a gate: {failed}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sample-raw", type=Path, default=REPO_ROOT / "data" / "raw")
    parser.add_argument("--sample-gold", type=Path, default=REPO_ROOT / "data" / "gold" / "sample_gold.jsonl")
    parser.add_argument("--corpus", type=Path, default=REPO_ROOT.parent / "shared" / "corpus-regs")
    parser.add_argument("--regs-gold", type=Path, default=REPO_ROOT / "data" / "gold" / "regs_gold.jsonl")
    parser.add_argument("--builds", nargs="+", choices=[LINE_ONLY, *PRESETS], default=[LINE_ONLY, *PRESETS])
    parser.add_argument("--windows", nargs="+", default=["256", "512", WHOLE], help="embedder windows, or 'whole'")
    parser.add_argument("--child-tokens", type=int, nargs="+", default=[None], help="child targets (default: preset's)")
    parser.add_argument(
        "--child-overlap", type=int, nargs="+", default=[None], help="child overlaps (default: preset's)"
    )
    parser.add_argument(
        "--context-max-tokens", type=int, nargs="+", default=[None], help="header bounds (default: preset's)"
    )
    parser.add_argument("--settings", nargs="+", choices=CONTEXT_HEADERS, default=[ChunkPolicy.context_header])
    parser.add_argument("--dense", action="store_true", help="also dense and hybrid (needs the [embed] extra)")
    parser.add_argument("--plain", action="store_true", help="also BM25 with bm25s's default tokenizer")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    for window in args.windows:
        if window != WHOLE and not window.isdigit():
            parser.error(f"a window is a number of tokens or '{WHOLE}', got {window!r}")

    builds = builds_for(args.builds, args.child_tokens, args.child_overlap, args.context_max_tokens, args.settings)
    with tempfile.TemporaryDirectory(prefix="bench_retrieval_") as temp:
        work = Path(temp)
        gold_sets = [GoldSet("sample", args.sample_raw, args.sample_gold)]
        if args.regs_gold.is_file() and (args.corpus / "fr").is_dir():
            regs_raw = work / "regs_raw"
            shutil.copytree(args.corpus / "fr", regs_raw / "fr")
            gold_sets.append(GoldSet("regs", regs_raw, args.regs_gold))
        else:
            print(f"skipping the regs gold set: {args.regs_gold} or {args.corpus / 'fr'} is missing", file=sys.stderr)
        rows, line_rows = run(gold_sets, builds, args.windows, args.dense, args.plain, work)
    print_tables(rows, line_rows)
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "lines": line_rows}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
