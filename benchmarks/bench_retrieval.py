"""Retrieval on what the phone embeds, for every context header setting, on both gold sets.

For each gold set and each `context_header` (none, title, title+section), the corpus is built
the way the assets build it, through the core library: inspect_pdf, extract_pages (once per PDF,
shared by the settings), chunk_document, summarize_tables (extractive), validate_partition (a PDF
that fails a gate is left out, as the export does) and write_corpus_exports; then the SDK files
are read back (passages_from_export) and ranked for the gold questions. A hit is a line citing an
expected page of an expected document. BM25 always, with the evaluation's tokenizer (`bm25`:
Snowball stems, accents folded) and with bm25s's default one (`bm25-plain`: `\w\w+`, no stemming,
a check that a setting's gain is not the stemmer's); dense (the small offline model of the
[embed] extra) and hybrid (RRF of both) with --dense.

Gold sets: data/gold/sample_gold.jsonl over the sample corpus data/raw, and
data/gold/regs_gold.jsonl over ../shared/corpus-regs (its fr/ copied into a temp raw folder).

    .venv/bin/python benchmarks/bench_retrieval.py
    .venv/bin/python benchmarks/bench_retrieval.py --dense --json /tmp/retrieval.json
    .venv/bin/python benchmarks/bench_retrieval.py --context-max-tokens 40 60 80
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # the checkout's package, not an installed one

from pocket_assets.core.chunking.chunker import chunk_document  # noqa: E402
from pocket_assets.core.evaluation.retrieval import (  # noqa: E402
    BM25_TOKENIZERS,
    GoldQuestion,
    RetrievalReport,
    bm25_rankings,
    evaluate_bm25,
    evaluate_rankings,
    fuse_rankings,
    load_gold,
    passages_from_export,
)
from pocket_assets.core.export.corpus_files import write_corpus_exports  # noqa: E402
from pocket_assets.core.extract import extract_pages  # noqa: E402
from pocket_assets.core.pdf import inspect_pdf  # noqa: E402
from pocket_assets.core.raw_folder import discover_pdfs
from pocket_assets.core.policy import CONTEXT_HEADERS, ChunkPolicy  # noqa: E402
from pocket_assets.core.quality.validation import Gates, load_gates, validate_partition  # noqa: E402
from pocket_assets.core.records import CORPORA, ChunkRecord, PageRecord, PdfIdentity  # noqa: E402
from pocket_assets.core.tables.summaries import ExtractiveSummarizer, summarize_tables  # noqa: E402
from pocket_assets.core.tokenizer import TokenCounter, load_tokenizer  # noqa: E402

EXPECTATIONS = REPO_ROOT / "pocket_assets" / "expectations"
GENERATED = "2026-01-01T00:00:00Z"
METRICS = ("hit@1", "hit@5", "hit@10", "mrr")


@dataclass(frozen=True)
class GoldSet:
    name: str
    raw_dir: Path
    gold_path: Path


def extract_corpus(raw_dir: Path) -> list[tuple[PdfIdentity, tuple[PageRecord, ...]]]:
    return [(inspect_pdf(raw_dir / key, key), tuple(extract_pages(raw_dir / key))) for key in discover_pdfs(raw_dir)]


def build_export(
    documents: list[tuple[PdfIdentity, tuple[PageRecord, ...]]],
    policy: ChunkPolicy,
    counter: TokenCounter,
    gates: Gates,
    out_dir: Path,
) -> list[str]:
    """The assets' chunking, gates and export for one policy; returns the PDFs a gate left out."""
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
        write_corpus_exports(corpus, [c for c in validated if c.corpus == corpus], out_dir, GENERATED, EXPECTATIONS)
    return failed


def evaluate(out_dir: Path, questions: tuple[GoldQuestion, ...], dense: bool) -> list[RetrievalReport]:
    passages = [passage for corpus in CORPORA for passage in passages_from_export(out_dir, corpus)]
    reports = [evaluate_bm25(passages, questions, tokenizer=name) for name in BM25_TOKENIZERS]
    if dense:
        from pocket_assets.core.evaluation.embeddings import (
            DEFAULT_EMBEDDING_MODEL,
            DEFAULT_MODEL_DIM,
            dense_rankings,
            embed_passages,
        )

        store = out_dir / "embeddings.parquet"
        embed_passages(passages, DEFAULT_EMBEDDING_MODEL, DEFAULT_MODEL_DIM, store)
        vectors = dense_rankings(passages, questions, store, DEFAULT_EMBEDDING_MODEL)
        reports += [
            evaluate_rankings(vectors, questions, reports[0].k_values, method="dense"),
            evaluate_rankings(
                fuse_rankings([bm25_rankings(passages, questions), vectors]), questions, reports[0].k_values, "hybrid"
            ),
        ]
    return reports


def run(
    gold_sets: list[GoldSet], settings: tuple[str, ...], bounds: tuple[int, ...], dense: bool, work: Path
) -> list[dict]:
    """One row per gold set, setting, header bound (`none` once), method and corpus."""
    counter = load_tokenizer()
    gates = load_gates(EXPECTATIONS)
    policies = [
        ChunkPolicy(context_header=setting, context_max_tokens=bound)
        for setting in settings
        for bound in (bounds[:1] if setting == "none" else bounds)
    ]
    rows = []
    for gold_set in gold_sets:
        questions = load_gold(gold_set.gold_path)
        documents = extract_corpus(gold_set.raw_dir)
        for policy in policies:
            setting = policy.context_header
            if setting != "none":
                setting += f" ≤{policy.context_max_tokens}"
            out_dir = work / gold_set.name / f"{policy.context_header.replace('+', '_')}_{policy.context_max_tokens}"
            failed = build_export(documents, policy, counter, gates, out_dir)
            for report in evaluate(out_dir, questions, dense):
                for warning in report.warnings if report.method == "bm25" else ():
                    print(f"  warning ({gold_set.name}, {setting}): {warning}", file=sys.stderr)
                per_corpus = sorted(report.corpus_metrics.items())
                for corpus, metrics in per_corpus + ([("all", report.metrics)] if len(per_corpus) > 1 else []):
                    rows.append(
                        {
                            "gold": gold_set.name,
                            "setting": setting,
                            "method": report.method,
                            "corpus": corpus,
                            "questions": int(metrics["questions"]),
                            **{name: round(metrics[name], 3) for name in METRICS},
                            "pdfs_failed": failed,
                        }
                    )
    return rows


def print_table(rows: list[dict]) -> None:
    header = f"| gold | corpus | method | context_header | questions | {' | '.join(METRICS)} |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    methods = list(dict.fromkeys(row["method"] for row in rows))
    golds = list(dict.fromkeys(row["gold"] for row in rows))
    for row in sorted(rows, key=lambda row: (golds.index(row["gold"]), methods.index(row["method"]))):
        values = " | ".join(f"{row[name]:.3f}" for name in METRICS)
        print(f"| {row['gold']} | {row['corpus']} | {row['method']} | {row['setting']} | {row['questions']} | {values} |")
    failed = sorted({key for row in rows for key in row["pdfs_failed"]})
    if failed:
        print(f"\nPDFs left out by a gate: {failed}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sample-raw", type=Path, default=REPO_ROOT / "data" / "raw")
    parser.add_argument("--sample-gold", type=Path, default=REPO_ROOT / "data" / "gold" / "sample_gold.jsonl")
    parser.add_argument("--corpus", type=Path, default=REPO_ROOT.parent / "shared" / "corpus-regs")
    parser.add_argument("--regs-gold", type=Path, default=REPO_ROOT / "data" / "gold" / "regs_gold.jsonl")
    parser.add_argument("--settings", nargs="+", choices=CONTEXT_HEADERS, default=list(CONTEXT_HEADERS))
    parser.add_argument(
        "--context-max-tokens", type=int, nargs="+", default=[ChunkPolicy.context_max_tokens],
        help="header bounds to compare (default: the policy's)",
    )
    parser.add_argument("--dense", action="store_true", help="also dense and hybrid (needs the [embed] extra)")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench_retrieval_") as temp:
        work = Path(temp)
        gold_sets = [GoldSet("sample", args.sample_raw, args.sample_gold)]
        if args.regs_gold.is_file() and (args.corpus / "fr").is_dir():
            regs_raw = work / "regs_raw"
            shutil.copytree(args.corpus / "fr", regs_raw / "fr")
            gold_sets.append(GoldSet("regs", regs_raw, args.regs_gold))
        else:
            print(f"skipping the regs gold set: {args.regs_gold} or {args.corpus / 'fr'} is missing", file=sys.stderr)
        rows = run(gold_sets, tuple(args.settings), tuple(args.context_max_tokens), args.dense, work)
    print_table(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
