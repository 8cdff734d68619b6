"""Build the development corpus from the CLI, and the same work through the core library alone.

Dagster's share = (CLI wall - library wall) / library wall, both measured as whole
processes (imports, tokenizer and Great Expectations loads included) on a private
copy of the corpus. The library path does what the assets do, per PDF:
inspect_pdf, extract_pages, chunk_document, summarize_tables, validate_partition,
the validation report, then write_corpus_exports per corpus; it also writes each
stage through PartitionStore (Parquet + manifest), as the assets do, timed apart.
The CLI run's step durations are read back from its Dagster instance.

    .venv/bin/python benchmarks/bench_build.py                        # /work/shared/corpus, 1 round
    .venv/bin/python benchmarks/bench_build.py --corpus data/raw --rounds 2
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO_ROOT.parent / "shared" / "corpus"
PYTHON = sys.executable


def library_build(raw_dir: Path, out_dir: Path) -> dict[str, float]:
    """The assets' work without Dagster; returns seconds per phase."""
    phases: dict[str, float] = defaultdict(float)
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        phases[name] += now - clock
        clock = now

    from pocket_assets.core.chunking.chunker import chunk_document
    from pocket_assets.core.export.corpus_files import write_corpus_exports
    from pocket_assets.core.extract import extract_pages
    from pocket_assets.core.pdf import discover_pdfs, inspect_pdf
    from pocket_assets.core.policy import ChunkPolicy
    from pocket_assets.core.records import CORPORA, to_dict
    from pocket_assets.core.chunking.slice_counts import PieceTokens
    from pocket_assets.runstate.stages import CHILDREN, PAGES, PARENTS, RAW_PDF, TABLE_SUMMARIES, VALIDATED_CHUNKS, Stage
    from pocket_assets.runstate.storage import STATUS_OK, PartitionManifest, PartitionStore
    from pocket_assets.core.tables.summaries import ExtractiveSummarizer, summarize_tables
    from pocket_assets.core.tables.cache import SummaryCache
    from pocket_assets.core.tokenizer import load_tokenizer
    from pocket_assets.core.quality.validation import load_gates, validate_corpus_ids, validate_partition
    from pocket_assets.core.quality.report import write_report_html

    lap("imports")
    counter = load_tokenizer("gemma3")
    policy = ChunkPolicy(tokenizer="gemma3")
    lap("tokenizer_load")
    gates = load_gates(REPO_ROOT / "expectations")
    lap("gates_load")
    store = PartitionStore(out_dir / "stages")
    cache = SummaryCache(out_dir / "cache")
    summarizer = ExtractiveSummarizer(counter, target_tokens=policy.summary_tokens)

    def save(stage: Stage, key: str, rows: list, sha: str) -> None:
        store.write(stage, key, rows, PartitionManifest(stage.name, key, STATUS_OK, rows=len(rows), source_sha256=sha))
        lap("store_writes")

    validated, reports, page_total = [], [], 0
    piece_tokens = PieceTokens(counter)  # as the chunking assets share one per step
    for key in discover_pdfs(raw_dir):
        identity = inspect_pdf(raw_dir / key, key)
        lap("inspect_pdf")
        save(RAW_PDF, key, [to_dict(identity)], identity.sha256)
        pages = extract_pages(raw_dir / key)
        page_total += len(pages)
        lap("extract_pages")
        save(PAGES, key, [to_dict(page) for page in pages], identity.sha256)
        chunked = chunk_document(identity, pages, policy, counter, piece_tokens)
        lap("chunk_document")
        save(PARENTS, key, [to_dict(c) for c in chunked.parents], identity.sha256)
        save(CHILDREN, key, [to_dict(c) for c in chunked.children], identity.sha256)
        batch = summarize_tables(
            identity, pages, chunked.parents, policy, counter, summarizer, cache, children=chunked.children
        )
        lap("summarize_tables")
        save(TABLE_SUMMARIES, key, [to_dict(c) for c in batch.chunks], identity.sha256)
        chunks = [*chunked.parents, *chunked.children, *batch.chunks]
        report = validate_partition(gates, key, chunks, pages, policy)
        reports.append(report)
        lap("validate_partition")
        if report.passed:
            validated.extend(chunks)
            save(VALIDATED_CHUNKS, key, [to_dict(c) for c in chunks], identity.sha256)
    write_report_html(out_dir / "reports" / "validation.html", reports, "Validation report")
    lap("validation_report")
    assert validate_corpus_ids(gates, validated).passed
    for corpus in CORPORA:
        write_corpus_exports(
            corpus,
            [c for c in validated if c.corpus == corpus],
            out_dir,
            "2026-01-01T00:00:00Z",
            REPO_ROOT / "expectations",
        )
    lap("exports")
    return {**phases, "pages": page_total, "pdfs_failed": sum(not report.passed for report in reports)}


def _cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(command: list[str], env: dict[str, str]) -> tuple[float, float, str, int]:
    """Wall and CPU seconds, stdout and exit code; a build whose PDFs fail a gate still did (nearly) all the work.

    CPU seconds hold better than wall time on a shared machine.
    """
    start, cpu_start = time.perf_counter(), _cpu_of_children()
    done = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - start, _cpu_of_children() - cpu_start
    if done.returncode not in (0, 1):
        raise SystemExit(
            f"{' '.join(command)} crashed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
    return wall, cpu, done.stdout, done.returncode


def _step_seconds(dagster_home: Path) -> dict[str, float]:
    from dagster import DagsterInstance

    os.environ["DAGSTER_HOME"] = str(dagster_home)
    with DagsterInstance.get() as instance:
        (record,) = instance.get_run_records(limit=1)
        run_seconds = record.end_time - record.start_time
        steps = {
            stat.step_key: stat.end_time - stat.start_time
            for stat in instance.get_run_step_stats(record.dagster_run.run_id)
        }
    return {"run (start to end)": run_seconds, **steps}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="folder with fr/ and intl/ PDFs")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--library-only", nargs=2, metavar=("RAW", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.library_only:
        print(json.dumps(library_build(Path(args.library_only[0]), Path(args.library_only[1]))))
        return

    work = Path(tempfile.mkdtemp(prefix="bench-build-"))
    raw = work / "raw"
    for corpus in ("fr", "intl"):
        shutil.copytree(args.corpus / corpus, raw / corpus)
    for path in raw.rglob("*.pdf"):
        path.chmod(0o644)
    for round_number in range(1, args.rounds + 1):
        lib_out, cli_out, home = work / f"lib{round_number}", work / f"cli{round_number}", work / f"home{round_number}"
        home.mkdir()
        env = {**os.environ, "DAGSTER_HOME": str(home)}
        lib_wall, lib_cpu, lib_stdout, _ = _timed([PYTHON, __file__, "--library-only", str(raw), str(lib_out)], env)
        phases = json.loads(lib_stdout.strip().splitlines()[-1])
        cli_wall, cli_cpu, cli_stdout, cli_code = _timed(
            [str(Path(PYTHON).parent / "pocket-assets"), "build", "--raw-dir", str(raw), "--output-dir", str(cli_out)],
            env,
        )
        pages = phases.pop("pages")
        print(
            f"round {round_number}: {pages} pages, {len(list(raw.rglob('*.pdf')))} PDFs, "
            f"{phases.pop('pdfs_failed')} failing their gates"
        )
        if cli_code:
            print("  the CLI build exited 1 (a PDF failed its gates, so android_export did not run):")
            print("    " + "\n    ".join(line for line in cli_stdout.splitlines() if "FAILED" in line))
        for label, wall, cpu in (("library process", lib_wall, lib_cpu), ("CLI (Dagster)  ", cli_wall, cli_cpu)):
            print(
                f"  {label}  wall {wall:6.1f} s ({1000 * wall / pages:5.1f} ms/page)  cpu {cpu:6.1f} s ({1000 * cpu / pages:5.1f} ms/page)"
            )
        print(
            f"  Dagster adds     wall {cli_wall - lib_wall:+6.1f} s ({100 * (cli_wall - lib_wall) / lib_wall:+.0f}%)  "
            f"cpu {cli_cpu - lib_cpu:+6.1f} s ({100 * (cli_cpu - lib_cpu) / lib_cpu:+.0f}%) of the library's own time"
        )
        print("  library phases (s): " + ", ".join(f"{name} {seconds:.2f}" for name, seconds in phases.items()))
        print("  Dagster run and steps (s): " + ", ".join(f"{name} {s:.2f}" for name, s in _step_seconds(home).items()))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
