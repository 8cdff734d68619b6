"""What the build command costs: fixed cost, marginal cost per page against a floor, memory, cores, determinism.

One command prints one Markdown table (progress on stderr), every figure from the same run:

- fixed: the build command (`python -m pocket_assets.cli build`, fresh DAGSTER_HOME and output folder) on
  one small PDF (4 pages), median of `--fixed-runs` runs;
- marginal: the build command on `../shared/corpus` + `../shared/corpus-regs` + `../shared/corpus-wild` (the
  wild PDFs under `intl/wild/`: 187 PDFs, 1,026 pages); marginal cost per page = (big build - one-PDF
  build) / (pages - 4), in CPU and in wall seconds;
- floor: in one process, PyMuPDF's plain `page.get_text()` of every page of the same corpus plus one
  `encode_batch` pass of the Gemma 3 tokenizer over the text (loads not counted; the median of three runs);
- cores (`--one-core`): the same big build pinned to one core (`taskset -c 0`) against both cores;
- serial vs parallel: the big build with `POCKET_ASSETS_WORKERS=1` against the default; every stage Parquet
  file and every export compared byte for byte (the exports' `generated` stamp aside);
- memory: peak RSS of the process tree (the sum over the build process and its workers, sampled every
  0.2 s, proportional set size so pages shared after fork count once) and the largest single process
  (`ru_maxrss` from wait4), on the big corpus and (`--copies N`) on corpus + corpus-regs copied N times under
  other names plus refman.pdf (2,415 pages): flat means the same peak whatever the number of PDFs.

With no arguments it measures exactly the bounded figures (printed under "Bounds:", each met or NOT met): the fixed
cost, the marginal cost per page against the floor and the peak memory on the scale corpus (`--copies 5`:
4,935 pages, the memory corpus) and on the 187 PDFs, serial = parallel outputs; ~5-10 min
on a quiet machine. The load average (1 min) when each build started is printed beside its wall time.

CPU seconds (user + sys of the whole process tree) hold better than wall time on a shared machine; the
machine this runs on has 2 cores shared with others, so wall times are noisy.

    .venv/bin/python benchmarks/bench_build.py                 # the bounded figures (~5-10 min here)
    .venv/bin/python benchmarks/bench_build.py --one-core      # also the 187 PDFs pinned to one core
    .venv/bin/python benchmarks/bench_build.py --copies 0      # without the scale build
    .venv/bin/python benchmarks/bench_build.py --dagster-share # the older library-vs-CLI comparison
    .venv/bin/python benchmarks/bench_build.py --costs [--before CHECKOUT]   # the cost table (bench_costs.py)

`--costs` prints the cost table instead: what each load, stage and library call costs per page and per build
on each corpus of ../shared, the floor and the marginal cost over it; with `--before`, another checkout (its own
`.venv`) measured the same way in the same run, and the two builds' stage files and exports compared.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = REPO_ROOT.parent / "shared"
DEFAULT_CORPUS = SHARED / "corpus"
DEFAULT_REGS = SHARED / "corpus-regs"
DEFAULT_WILD = SHARED / "corpus-wild"
DEFAULT_REFMAN = SHARED / "corpus-scale" / "refman.pdf"
SMALL_PDF = "fr/04_reglement-disciplinaire-type-2004.pdf"  # 4 pages, in corpus-regs
PYTHON = sys.executable
MIB = 1024 * 1024
CORPORA = ("fr", "intl")
FLOOR_RUNS = 3
SAMPLE_SECONDS = 0.2  # a peak lasts seconds; sampling faster slows the build it measures


@dataclass(frozen=True)
class Measure:
    """One build command: wall and CPU seconds, peak memory (MiB) and what it printed."""

    wall: float
    cpu: float
    tree_peak_mib: float
    process_peak_mib: float
    load: float  # 1-minute load average when it started
    returncode: int
    stdout: str
    written_mib: float = 0.0  # what the tree wrote (write_bytes of every process, workers once reaped: ru_oublock)


def _tree_pids(pid: int) -> list[int]:
    """A process and its descendants, from the kernel's per-thread `children` lists (no scan of all of /proc)."""
    pids, pending = [], [pid]
    while pending:
        current = pending.pop()
        pids.append(current)
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{current}/task/{task}/children") as children:
                    pending.extend(int(child) for child in children.read().split())
            except OSError:
                pass
    return pids


def _tree_pss(pid: int) -> int:
    """Proportional set size of a process and its descendants (bytes); 0 once it is gone.

    Each read makes the kernel walk the process's page tables (CPU that grows with the process's size), so the
    sampler is kept light: it reads `smaps_rollup` directly, every `SAMPLE_SECONDS`."""
    return sum(process_pss(member) for member in _tree_pids(pid))


def process_pss(pid: int) -> int:
    """Proportional set size of one process (bytes), from its `smaps_rollup`; 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as rollup:
            for line in rollup:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def measure(command: list[str], env: dict[str, str], tree_size: Callable[[int], int] = _tree_pss) -> Measure:
    """Run a command to its end; its rusage comes from wait4 (it includes the workers it reaped). `tree_size`
    gives the memory of the tree under a pid, sampled every `SAMPLE_SECONDS` (the peak is kept)."""
    load = os.getloadavg()[0]
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(SAMPLE_SECONDS):
            peak[0] = max(peak[0], tree_size(process.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    output: list[bytes] = []
    reader = threading.Thread(target=lambda: output.append(process.stdout.read()), daemon=True)
    reader.start()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    reader.join()
    process.returncode = os.waitstatus_to_exitcode(status)
    stdout = b"".join(output).decode("utf-8", "replace")
    if process.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} crashed ({process.returncode}):\n{stdout[-4000:]}")
    return Measure(
        wall=wall,
        cpu=usage.ru_utime + usage.ru_stime,
        tree_peak_mib=peak[0] / MIB,
        process_peak_mib=usage.ru_maxrss * 1024 / MIB,
        load=load,
        returncode=process.returncode,
        stdout=stdout,
        written_mib=usage.ru_oublock * 512 / MIB,
    )


def build_command(work: Path, raw: Path, name: str, pin_one_core: bool = False, **env_extra: str) -> Measure:
    """The build command with a fresh DAGSTER_HOME and output folder under `work/name`."""
    home, out = work / name / "home", work / name / "out"
    shutil.rmtree(work / name, ignore_errors=True)
    home.mkdir(parents=True)
    # Every PDF built, copies included (the scale corpus is copies): a build skips a PDF with another's bytes.
    env = {**os.environ, "DAGSTER_HOME": str(home), "POCKET_ASSETS_KEEP_DUPLICATES": "1", **env_extra}
    command = [PYTHON, "-m", "pocket_assets.cli", "build", "--raw-dir", str(raw), "--output-dir", str(out)]
    if pin_one_core:
        command = ["taskset", "-c", "0", *command]
    print(f"  build {name} ...", file=sys.stderr, flush=True)
    result = measure(command, env)
    print(
        f"    {result.wall:.1f} s wall (load {result.load:.1f}), {result.cpu:.1f} s cpu, {result.tree_peak_mib:.0f} MiB",
        file=sys.stderr,
    )
    return result


def floor_seconds(raw: Path) -> dict[str, float]:
    """CPU seconds of plain text for every page plus one batch tokenizer pass, loads excluded (run in a child):
    the median of `FLOOR_RUNS` runs, as the host's speed drifts from one run to the next."""
    code = f"""
import json, time, pymupdf
from pathlib import Path
from pocket_assets.core.tokenizer import load_tokenizer
counter = load_tokenizer("gemma3")
start = time.process_time()
texts = []
for path in sorted(Path({str(raw)!r}).rglob("*.pdf")):
    with pymupdf.open(path) as document:
        if not document.needs_pass:  # encrypted PDFs fail the build too
            texts.extend(page.get_text() for page in document)
read = time.process_time()
counter.encode_batch(texts)
done = time.process_time()
print(json.dumps({{"pages": len(texts), "text": read - start, "tokens": done - read}}))
"""
    runs = []
    for _ in range(FLOOR_RUNS):
        done = subprocess.run([PYTHON, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True)
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return sorted(runs, key=lambda run: run["text"] + run["tokens"])[len(runs) // 2]


def copy_corpus(source: Path, target: Path, suffix: str = "") -> None:
    """`source/{fr,intl}/*.pdf` into `target/{fr,intl}/`, file names given `suffix` (so copies are new PDFs)."""
    for corpus in CORPORA:
        folder = source / corpus
        if not folder.is_dir():
            continue
        for pdf in sorted(folder.rglob("*.pdf")):
            destination = target / corpus / pdf.relative_to(folder).with_name(f"{pdf.stem}{suffix}.pdf")
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(pdf, destination)


def differing_outputs(left: Path, right: Path) -> list[str]:
    """Stage Parquet files and exports that differ between two output folders (exports' `generated` aside)."""
    names = sorted(
        {p.relative_to(left).as_posix() for p in left.rglob("*.parquet")}
        | {p.relative_to(right).as_posix() for p in right.rglob("*.parquet")}
        | {p.name for folder in (left, right) for p in folder.glob("chunks_*")}
        | {p.name for folder in (left, right) for p in folder.glob("id_redirects_*")}
    )
    return [name for name in names if _comparable(left / name) != _comparable(right / name)]


def _comparable(path: Path) -> bytes | None:
    if not path.is_file():
        return None
    data = path.read_bytes()
    if path.suffix == ".json" and not path.name.endswith(".schema.json"):
        document = json.loads(data)
        document["metadata"].pop("generated", None)
        return json.dumps(document, sort_keys=True).encode("utf-8")
    return data


def page_count(raw: Path) -> int:
    import pymupdf

    total = 0
    for path in raw.rglob("*.pdf"):
        with pymupdf.open(path) as document:
            total += document.page_count
    return total


def run_benchmark(args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="bench-build-"))
    small, big, scale = work / "raw-small", work / "raw-big", work / "raw-scale"
    (small / "fr").mkdir(parents=True)
    shutil.copyfile(args.regs / SMALL_PDF, small / SMALL_PDF)
    copy_corpus(args.corpus, big)
    copy_corpus(args.regs, big)
    if args.wild:
        shutil.copytree(Path(args.wild), big / "intl" / "wild", ignore=shutil.ignore_patterns("*.md"))
    small_pages, big_pages = page_count(small), page_count(big)
    big_pdfs = len(list(big.rglob("*.pdf")))
    print(f"corpus: {big_pdfs} PDFs, {big_pages} pages; small: {small_pages} pages", file=sys.stderr)

    fixed = [build_command(work, small, f"small{run}") for run in range(args.fixed_runs)]
    floor = floor_seconds(big)
    both = build_command(work, big, "big")
    serial = build_command(work, big, "big-serial", POCKET_ASSETS_WORKERS="1")
    one_core = build_command(work, big, "big-one-core", pin_one_core=True) if args.one_core else None
    differing = differing_outputs(work / "big" / "out", work / "big-serial" / "out")
    scaled = None
    if args.copies:
        for copy in range(1, args.copies + 1):
            copy_corpus(args.corpus, scale, f"-copy{copy}")
            copy_corpus(args.regs, scale, f"-copy{copy}")
        (scale / "intl").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(args.refman, scale / "intl" / "refman.pdf")
        scale_pages, scale_pdfs = page_count(scale), len(list(scale.rglob("*.pdf")))
        scaled = (scale_pdfs, scale_pages, build_command(work, scale, "scale"), floor_seconds(scale))

    fixed_cpu = statistics.median(m.cpu for m in fixed)
    fixed_wall = statistics.median(m.wall for m in fixed)
    floor_page = (floor["text"] + floor["tokens"]) / floor["pages"]
    extra_pages = big_pages - small_pages

    def marginal(m: Measure) -> tuple[float, float]:
        return (m.cpu - fixed_cpu) / extra_pages, (m.wall - fixed_wall) / extra_pages

    rows = [("what", "wall s (load)", "cpu s", "peak MiB (tree / largest process)", "per page, marginal (ms)")]
    for number, m in enumerate(fixed, 1):
        rows.append((f"one 4-page PDF, run {number}", _wall(m), f"{m.cpu:.1f}", _peaks(m), "-"))
    for label, m in (
        (f"{big_pdfs} PDFs, {big_pages} pages, both cores (default workers)", both),
        ("same, POCKET_ASSETS_WORKERS=1", serial),
        *([("same, pinned to one core (taskset -c 0)", one_core)] if one_core else []),
    ):
        cpu_ms, wall_ms = (1000 * value for value in marginal(m))
        rows.append((label, _wall(m), f"{m.cpu:.1f}", _peaks(m), f"cpu {cpu_ms:.2f}, wall {wall_ms:.2f}"))
    if scaled is not None:
        pdfs, pages, m, _ = scaled
        label = f"scale: {pdfs} PDFs ({args.copies} copies + refman), {pages} pages"
        cpu_ms, wall_ms = (1000 * (value - fixed_value) / (pages - small_pages) for value, fixed_value in (
            (m.cpu, fixed_cpu), (m.wall, fixed_wall)))
        rows.append((label, _wall(m), f"{m.cpu:.1f}", _peaks(m), f"cpu {cpu_ms:.2f}, wall {wall_ms:.2f}"))
    rows.append(
        (
            f"floor: plain get_text + one encode_batch, {floor['pages']} pages",
            "-",
            f"{floor['text'] + floor['tokens']:.2f}",
            "-",
            f"cpu {1000 * floor_page:.2f} (text {1000 * floor['text'] / floor['pages']:.2f}, "
            f"tokens {1000 * floor['tokens'] / floor['pages']:.2f})",
        )
    )
    if scaled is not None:
        scale_floor = scaled[3]
        rows.append(
            (
                f"floor on the scale corpus, {scale_floor['pages']} pages",
                "-",
                f"{scale_floor['text'] + scale_floor['tokens']:.2f}",
                "-",
                f"cpu {1000 * (scale_floor['text'] + scale_floor['tokens']) / scale_floor['pages']:.2f}",
            )
        )
    print("| " + " | ".join(rows[0]) + " |")
    print("|" + "---|" * len(rows[0]))
    for row in rows[1:]:
        print("| " + " | ".join(row) + " |")
    print()
    print("Bounds:")
    print(f"- one small PDF: median {fixed_wall:.1f} s wall, {fixed_cpu:.1f} s cpu (<= 6 s wall): {_met(fixed_wall <= 6)}")
    if scaled is not None:
        _, pages, m, scale_floor = scaled
        scale_floor_page = (scale_floor["text"] + scale_floor["tokens"]) / scale_floor["pages"]
        scale_cpu, scale_wall = ((value - fixed_value) / (pages - small_pages) / scale_floor_page for value, fixed_value in (
            (m.cpu, fixed_cpu), (m.wall, fixed_wall)))
        print(
            f"- scale corpus ({pages} pages, the memory corpus): marginal per page / its own floor per page "
            f"{scale_wall:.1f}x in wall (<= 3x): {_met(scale_wall <= 3)}; {scale_cpu:.1f}x in CPU; "
            f"peak {m.tree_peak_mib:.0f} MiB tree PSS (<= 600 MiB): {_met(m.tree_peak_mib <= 600)}"
        )
    cpu_ratio = marginal(both)[0] / floor_page
    wall_ratio = marginal(both)[1] / floor_page
    print(
        f"- {big_pdfs} PDFs ({big_pages} pages): marginal per page / floor per page {wall_ratio:.1f}x in wall (<= 3x): "
        f"{_met(wall_ratio <= 3)}; {cpu_ratio:.1f}x in CPU; peak {both.tree_peak_mib:.0f} MiB tree PSS (<= 600 MiB): "
        f"{_met(both.tree_peak_mib <= 600)}"
    )
    print(
        "- serial vs parallel outputs: "
        + (f"byte-identical: {_met(True)}" if not differing else f"{len(differing)} differ: {', '.join(differing[:10])}: {_met(False)}")
        + f" ({len(list((work / 'big' / 'out').rglob('*.parquet')))} Parquet files + exports compared)"
    )
    print()
    print("Also:")
    print(f"- both cores vs POCKET_ASSETS_WORKERS=1: wall {serial.wall / both.wall:.2f}x faster, cpu {both.cpu / serial.cpu:.2f}x")
    if one_core:
        print(f"- both cores vs one core: wall {one_core.wall / both.wall:.2f}x faster, cpu {both.cpu / one_core.cpu:.2f}x")
    failed = [m for m in (*fixed, both, serial, one_core) if m and m.returncode]
    if failed:
        print(f"- {len(failed)} build(s) exited 1 (a PDF failed its gates); their work was still done")
    print(f"- machine: {os.cpu_count()} cores, shared with other work (load average {os.getloadavg()[0]:.1f})")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"- outputs kept in {work}")


def _met(met: bool) -> str:
    return "met" if met else "NOT met"


def _wall(m: Measure) -> str:
    return f"{m.wall:.1f} ({m.load:.1f})"


def _peaks(m: Measure) -> str:
    return f"{m.tree_peak_mib:.0f} / {m.process_peak_mib:.0f}"


# --- the older comparison: the CLI against the same work through the core library alone -------------


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
    from pocket_assets.core.chunking.slice_counts import PieceTokens
    from pocket_assets.core.extract import extract_pages
    from pocket_assets.core.pdf import inspect_pdf
    from pocket_assets.core.policy import ChunkPolicy
    from pocket_assets.core.quality.partition_gates import validate_partition
    from pocket_assets.core.quality.report import write_report_html
    from pocket_assets.core.quality.suites import load_gates, validate_corpus_ids
    from pocket_assets.core.raw_folder import discover_pdfs
    from pocket_assets.core.records import CORPORA as RECORD_CORPORA
    from pocket_assets.core.records import to_dict
    from pocket_assets.core.tables.cache import SummaryCache
    from pocket_assets.core.tables.extractive import ExtractiveSummarizer
    from pocket_assets.core.tables.summaries import summarize_tables
    from pocket_assets.core.tokenizer import load_tokenizer
    from pocket_assets.export.writer import write_corpus_exports
    from pocket_assets.stages.registry import (
        CHILDREN,
        PAGES,
        PARENTS,
        RAW_PDF,
        TABLE_SUMMARIES,
        VALIDATED_CHUNKS,
        Stage,
    )
    from pocket_assets.stages.store import STATUS_OK, PartitionManifest, PartitionStore

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
    for corpus in RECORD_CORPORA:
        write_corpus_exports(
            corpus,
            [c for c in validated if c.corpus == corpus],
            out_dir,
            "2026-01-01T00:00:00Z",
            REPO_ROOT / "expectations",
        )
    lap("exports")
    return {**phases, "pages": page_total, "pdfs_failed": sum(not report.passed for report in reports)}


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


def dagster_share(corpus: Path) -> None:
    """Dagster's share = (CLI - library) / library, both whole processes, on a private copy of `corpus`."""
    work = Path(tempfile.mkdtemp(prefix="bench-build-"))
    raw = work / "raw"
    copy_corpus(corpus, raw)
    lib_out, cli_out, home = work / "lib", work / "cli", work / "home"
    home.mkdir()
    env = {**os.environ, "DAGSTER_HOME": str(home)}
    library = measure([PYTHON, __file__, "--library-only", str(raw), str(lib_out)], env)
    phases = json.loads(library.stdout.strip().splitlines()[-1])
    cli = measure([PYTHON, "-m", "pocket_assets.cli", "build", "--raw-dir", str(raw), "--output-dir", str(cli_out)], env)
    pages = phases.pop("pages")
    print(f"{pages} pages, {len(list(raw.rglob('*.pdf')))} PDFs, {phases.pop('pdfs_failed')} failing their gates")
    for label, m in (("library process", library), ("CLI (Dagster)  ", cli)):
        print(f"  {label}  wall {m.wall:6.1f} s  cpu {m.cpu:6.1f} s ({1000 * m.cpu / pages:5.1f} ms/page)")
    print(f"  Dagster adds cpu {cli.cpu - library.cpu:+6.1f} s ({100 * (cli.cpu - library.cpu) / library.cpu:+.0f}%)")
    print("  library phases (s): " + ", ".join(f"{name} {seconds:.2f}" for name, seconds in phases.items()))
    print("  Dagster run and steps (s): " + ", ".join(f"{name} {s:.2f}" for name, s in _step_seconds(home).items()))
    shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="folder with fr/ and intl/ PDFs")
    parser.add_argument("--regs", type=Path, default=DEFAULT_REGS, help="second folder with fr/ PDFs (holds the small PDF)")
    parser.add_argument("--wild", default=str(DEFAULT_WILD), help="real-world PDFs (any depth); '' for none")
    parser.add_argument("--refman", type=Path, default=DEFAULT_REFMAN, help="large PDF added to the scale build")
    parser.add_argument("--copies", type=int, default=5, help="copies of corpus + regs in the scale build (0: none)")
    parser.add_argument("--fixed-runs", type=int, default=3)
    parser.add_argument("--one-core", action="store_true", help="also the big build pinned to one core (taskset -c 0)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folders")
    parser.add_argument("--dagster-share", action="store_true", help="the library-vs-CLI comparison on --corpus")
    parser.add_argument("--library-only", nargs=2, metavar=("RAW", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--costs", action="store_true", help="the cost table per load, stage and library call (bench_costs.py)")
    parser.add_argument("--before", type=Path, help="with --costs: another checkout measured the same way, first")
    args = parser.parse_args()
    if args.costs:
        from bench_costs import CORPORA as COST_CORPORA
        from bench_costs import run_costs

        output = REPO_ROOT / "benchmarks" / "results" / "bench_costs.json"
        run_costs(list(COST_CORPORA), args.before, args.fixed_runs, output, args.keep)
    elif args.library_only:
        print(json.dumps(library_build(Path(args.library_only[0]), Path(args.library_only[1]))))
    elif args.dagster_share:
        dagster_share(args.corpus)
    else:
        run_benchmark(args)


if __name__ == "__main__":
    main()
