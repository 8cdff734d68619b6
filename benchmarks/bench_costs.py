"""The cost table: what each load, stage and library call of a build costs, per page and per build, per corpus.

One command, one machine, one run (`bench_build.py --costs` runs it; `--before CHECKOUT` measures another
checkout too, one measure after the other for both, so that the machine's drift hits them alike):

- imports: each heavy library alone in a fresh process (CPU s, wall s, MiB of resident memory it adds);
  and the one-PDF build's own imports by package (`-X importtime` self times, summed per top-level package);
- loads: the tokenizer, the gates (Great Expectations' import, context and suites), the first and a warm
  suite validation, the Dagster instance, in a fresh process each;
- the build command (`pocket-assets build`, fresh DAGSTER_HOME and output folder) on one 4-page PDF (median
  of `--fixed-runs`) and on each corpus: wall, CPU of the whole tree (wait4), peak PSS of the tree, the load
  average; the command's own process timed part by part from inside (imports, the instance, the
  definitions, each run's Dagster work and resource set-up, the stages when they run there, the suite,
  export pieces and the export), the workers' CPU being the rest of the tree's;
- the library run: the same stages without Dagster, in one process, every PDF of the corpus one after the
  other (`build_pdf` then the suite batches, as a run's process and its workers do), loads and a warm-up PDF
  before the clock, with each library call that matters timed where it is made (PyMuPDF's text layer,
  `dict` conversion, drawings, images, `find_tables`, OCR; the tokenizer; the chunker; the summaries;
  the JSON Schema and coverage gates; the Great Expectations validation; Parquet; the export pieces):
  CPU ms per page, self time (a call inside another timed call counts for the inner one only; what
  PyMuPDF does inside `find_tables` and OCR counts for them);
- the floor: plain `page.get_text()` of every page plus one Gemma 3 `encode_batch` over the texts, warm;
  the marginal cost per page of the build command ((corpus build - one-PDF build) / (pages - 4)) over it.

Timers wrap functions from outside (this file), never in the product's code; each wrapped call costs
~1-2 us of timer overhead, counted in its caller.

    .venv/bin/python benchmarks/bench_costs.py                                  # this checkout, every corpus
    .venv/bin/python benchmarks/bench_costs.py --before ../before --corpora regs    # and another checkout
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_build import (  # noqa: E402 - the sibling benchmark's runner, sampler, corpus copier and floor
    DEFAULT_CORPUS,
    DEFAULT_REFMAN,
    DEFAULT_REGS,
    DEFAULT_WILD,
    SMALL_PDF,
    copy_corpus,
    differing_outputs,
    floor_seconds,
    measure,
)

HERE = Path(__file__).resolve()
REPORT_ENV = "BENCH_COSTS_REPORT"  # where a child writes its JSON
CORPORA = {"corpus": "corpus", "regs": "corpus-regs", "wild": "corpus-wild", "scale": "corpus-scale"}
IMPORTS = ("pymupdf", "tokenizers", "pyarrow", "pandas", "jsonschema_rs", "dagster", "great_expectations")
# The command's own imports, as `pocket-assets build` makes them before its first run.
COMMAND_IMPORTS = ("pocket_assets.cli.main", "pocket_assets.cli.build")
IMPORT_RUNS = 3


# --- timers wrapped around functions, from outside -------------------------------------------------


class Clock:
    """Self CPU time and call counts per name. A call inside another timed call counts for the inner one only;
    inside an opaque call (a library call whose own insides are its cost: `find_tables`, OCR), nothing else is
    timed."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self._stack: list[list[float]] = []
        self._opaque = 0
        self.on = True

    def wrap(self, name: str | Callable[..., str], function: Callable[..., Any], opaque: bool = False) -> Callable[..., Any]:
        clock = self

        @functools.wraps(function)
        def timed(*args: Any, **kwargs: Any) -> Any:
            if clock._opaque or not clock.on:
                return function(*args, **kwargs)
            label = name(*args) if callable(name) else name
            start = time.process_time()
            clock._stack.append([0.0])
            clock._opaque += opaque
            try:
                return function(*args, **kwargs)
            finally:
                clock._opaque -= opaque
                elapsed = time.process_time() - start
                inner = clock._stack.pop()[0]
                clock.seconds[label] += elapsed - inner
                clock.calls[label] += 1
                if clock._stack:
                    clock._stack[-1][0] += elapsed

        timed.__wrapped_by_clock__ = True  # type: ignore[attr-defined]
        return timed

    def reset(self) -> None:
        self.seconds.clear()
        self.calls.clear()


def instrument(clock: Clock, targets: list[tuple[str, str | Callable[..., str], bool]]) -> list[str]:
    """Wrap each `module:attr` or `module:Class.method` target; a function is replaced wherever the package's
    modules refer to it (module globals, and dicts in them such as a table of stage builders). Returns the
    targets that do not exist in this checkout."""
    missing = []
    for path, name, opaque in targets:
        module_name, _, attribute = path.partition(":")
        try:
            module = importlib.import_module(module_name)
            owner, _, method = attribute.rpartition(".")
            holder = functools.reduce(getattr, owner.split("."), module) if owner else module
            original = getattr(holder, method)
        except (ImportError, AttributeError):
            missing.append(path)
            continue
        wrapped = clock.wrap(name, original, opaque)
        if owner:
            setattr(holder, method, wrapped)
            continue
        for loaded in list(sys.modules.values()):
            if not getattr(loaded, "__name__", "").startswith("pocket_assets"):
                continue
            for key, value in list(vars(loaded).items()):
                if value is original:
                    setattr(loaded, key, wrapped)
                elif isinstance(value, dict):
                    for entry, item in list(value.items()):
                        if item is original:
                            value[entry] = wrapped
    return missing


def _job_run(job: Any, *args: Any) -> str:
    return f"dagster: run of {job.name} (Dagster's own work)"


# What the build command's own process is timed by (the stages run there for one PDF, in workers otherwise).
COMMAND_TARGETS: list[tuple[str, str | Callable[..., str], bool]] = [
    ("pocket_assets.cli.instance_lock:open_instance", "dagster: instance open", False),
    ("pocket_assets.defs.assembly:build_definitions", "dagster: definitions", False),
    ("dagster:JobDefinition.execute_in_process", _job_run, False),
    ("pocket_assets.defs.resources:TokenizerResource.setup_for_execution", "resource set-up: tokenizer", False),
    ("pocket_assets.defs.resources:GatesResource.setup_for_execution", "resource set-up: gates", False),
    ("pocket_assets.core.tokenizer:load_tokenizer", "load: tokenizer", False),
    ("pocket_assets.core.quality.suites:load_gates", "load: gates (GE import + context + suites)", False),
    ("pocket_assets.defs.partition_sync:register_pdfs", "command: register partitions", False),
    ("pocket_assets.defs.resources:CorpusPaths.sources", "command: source stamps", False),
    ("pocket_assets.defs.resources:SettingResources.staleness", "command: staleness", False),
    ("pocket_assets.cli.build:summarize_pdf", "command: summary", False),
    ("pocket_assets.stages.pdf_build.builders:_raw_pdf", "stage: raw_pdf", False),
    ("pocket_assets.stages.pdf_build.builders:_pages", "stage: pages", False),
    ("pocket_assets.stages.pdf_build.builders:_chunks", "stage: parents + children", False),
    ("pocket_assets.stages.pdf_build.builders:_table_summaries", "stage: table_summaries", False),
    ("pocket_assets.stages.pdf_build.gates:check_before_suite", "stage: validated_chunks (schema + coverage)", False),
    ("pocket_assets.core.quality.expectation_batches:expectations_for_batch", "GE: partition suite validation", False),
    ("pocket_assets.export.kept_pieces:write_export_piece", "export piece", False),
    ("pocket_assets.core.quality.report:write_report_html", "gate report (HTML)", False),
    ("pocket_assets.stages.store:PartitionStore.write", "stage files: write", False),
    ("pocket_assets.export.publish:_read_validated_files", "export: read validated files", False),
    ("pocket_assets.core.quality.suites:corpus_ids_on_columns", "GE: corpus suite validation", False),
    ("pocket_assets.export.publish:_write_corpus", "export: write corpus files", False),
]

# The library calls inside the stages (the library run).
LIBRARY_TARGETS: list[tuple[str, str | Callable[..., str], bool]] = [
    ("pymupdf:open", "pymupdf: open", False),
    ("pymupdf:Document.load_page", "pymupdf: load_page", False),
    ("pymupdf:Page.get_textpage", "pymupdf: text layer (get_textpage)", False),
    ("pymupdf:Page.get_text", "pymupdf: get_text (dict / words from the text layer)", False),
    ("pymupdf:Page.get_cdrawings", "pymupdf: get_cdrawings", False),
    ("pymupdf:Page.get_images", "pymupdf: get_images", False),
    ("pymupdf:Page.find_tables", "pymupdf: find_tables", True),
    ("pymupdf:Page.get_textpage_ocr", "OCR (Tesseract via get_textpage_ocr)", True),
    ("pocket_assets.core.pdf:inspect_pdf", "inspect_pdf (page tree, metadata)", False),
    ("pocket_assets.core.raw_folder:sha256_file", "sha256 of the file", False),
    ("pocket_assets.core.extract.tables:may_hold_table", "table pre-filter (crossing rules)", False),
    ("pocket_assets.core.extract.tables:find_page_tables", "ruled tables: cells from words", False),
    ("pocket_assets.core.extract.tables:aligned_candidates", "unruled tables: pre-filter", False),
    ("pocket_assets.core.extract.tables:find_aligned_tables", "unruled tables: columns", False),
    ("pocket_assets.core.extract.reading_order:read_lines", "reading order (read_lines)", False),
    ("pocket_assets.core.extract.scan:scan_page", "scan: rest of scan_page", False),
    ("pocket_assets.core.extract.ocr:shows_ink", "OCR gate: ink test (50 dpi grey render)", True),
    ("pocket_assets.core.extract.markdown:render_page", "render: Markdown of a page", False),
    ("pocket_assets.core.extract:extract_pages", "extract: document-wide decisions, page assembly", False),
    ("pocket_assets.core.tokenizer:TokenCounter.encode_batch", "tokenizer: encode_batch", True),
    ("pocket_assets.core.tokenizer:TokenCounter.count", "tokenizer: encode (one string)", True),
    ("pocket_assets.core.chunking.chunker:chunk_document", "chunker (chunk_document, tokenizer aside)", False),
    ("pocket_assets.core.tables.summaries:summarize_tables", "table summaries", False),
    ("pocket_assets.core.quality.schema_gate:check_schema", "gate: JSON Schema", False),
    ("pocket_assets.core.quality.coverage:check_coverage", "gate: coverage", False),
    ("pocket_assets.core.quality.expectation_batches:expectations_for_batch", "GE: partition suite validation", False),
    ("pocket_assets.core.quality.report:write_report_html", "gate report (HTML)", False),
    ("pocket_assets.export.kept_pieces:write_export_piece", "export piece", False),
    ("pocket_assets.stages.store:PartitionStore.write", "stage files: write", False),
    ("pocket_assets.stages.store:PartitionStore.read_table", "stage files: read", False),
    ("pocket_assets.stages.pdf_build.runner:build_pdf", "stages: the rest (records, metadata, manifests)", False),
    ("pocket_assets.stages.pdf_build.gates:BatchedSuiteGate._verdict", "stages: the rest (records, metadata, manifests)", False),
]


def _rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _report(data: dict[str, Any]) -> None:
    Path(os.environ[REPORT_ENV]).write_text(json.dumps(data), encoding="utf-8")


# --- children: each measure in a fresh process -------------------------------------------------------


def child_import(module: str) -> None:
    """One module's import: CPU, wall and the resident memory it adds."""
    rss, cpu, wall = _rss_mib(), time.process_time(), time.perf_counter()
    importlib.import_module(module)
    _report({"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall, "mib": _rss_mib() - rss})


def child_loads(raw: str, home: str) -> None:
    """The loads a build pays once per process, each after its own imports: tokenizer, gates, the suite's
    first and a warm validation, the Dagster instance."""
    loads: dict[str, dict[str, float]] = {}

    def timed(name: str, call: Callable[[], Any]) -> Any:
        rss, cpu, wall = _rss_mib(), time.process_time(), time.perf_counter()
        value = call()
        loads[name] = {"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall, "mib": _rss_mib() - rss}
        return value

    from pocket_assets.core.quality import suites
    from pocket_assets.core.tokenizer import load_tokenizer

    timed("tokenizer load (Gemma 3, vendored)", lambda: load_tokenizer("gemma3"))
    timed("import great_expectations", lambda: importlib.import_module("great_expectations"))
    gates = timed("gates load (GE context + suites + schema)", lambda: suites.load_gates(suites.PACKAGED_EXPECTATIONS))
    columns = _small_pdf_columns(Path(raw))
    for name in ("GE validation of one PDF's chunks, first", "GE validation of one PDF's chunks, warm"):
        timed(name, lambda: suites.expectations_on_columns(gates, columns, 1024, 512))
    timed("import dagster", lambda: importlib.import_module("dagster"))
    from dagster import DagsterInstance

    os.environ["DAGSTER_HOME"] = home
    Path(home).mkdir(parents=True, exist_ok=True)
    timed("Dagster instance (fresh SQLite home)", lambda: DagsterInstance.get())
    _report(loads)


def _small_pdf_columns(raw: Path) -> dict[str, list[Any]]:
    """The suite's frame columns of the small PDF's chunks (extracted and chunked outside the timings)."""
    from pocket_assets.core.chunking.chunker import chunk_document
    from pocket_assets.core.chunking.slice_counts import PieceTokens
    from pocket_assets.core.extract import extract_pages
    from pocket_assets.core.pdf import inspect_pdf
    from pocket_assets.core.policy import ChunkPolicy
    from pocket_assets.core.quality.suites import frame_columns
    from pocket_assets.core.tokenizer import load_tokenizer

    counter = load_tokenizer("gemma3")
    path = raw / SMALL_PDF
    chunked = chunk_document(inspect_pdf(path, SMALL_PDF), extract_pages(path), ChunkPolicy(), counter, PieceTokens(counter))
    return frame_columns([*chunked.parents, *chunked.children])


def child_command(raw: str, out: str, timed_calls: bool) -> None:
    """The build command in this process, its imports and (`timed_calls`) its parts timed."""
    cpu, wall = time.process_time(), time.perf_counter()
    for module in COMMAND_IMPORTS:
        importlib.import_module(module)
    imports = {"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall}
    clock = Clock()
    missing = instrument(clock, COMMAND_TARGETS) if timed_calls else []
    from pocket_assets.cli.main import main

    code = main(["build", "--raw-dir", raw, "--output-dir", out])
    usage, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    _report(
        {
            "imports": imports,
            "seconds": dict(clock.seconds),
            "calls": dict(clock.calls),
            "process_cpu": usage.ru_utime + usage.ru_stime,
            "children_cpu": children.ru_utime + children.ru_stime,  # workers, Dagster's log tails, reaped so far
            "missing": missing,
            "code": code,
        }
    )
    sys.exit(code)


def child_library(raw: str, out: str, warm: str) -> None:
    """Every PDF of `raw` through the stages in this process, as a run's process and its workers build them."""
    from functools import partial

    from pocket_assets.defs.resources import CorpusPaths, SettingResources
    from pocket_assets.export import kept_pieces
    from pocket_assets.stages.pdf_build.gates import BatchedSuiteGate
    from pocket_assets.stages.pdf_build.plan import BuildPlan
    from pocket_assets.stages.pdf_build.runner import build_pdf
    from pocket_assets.stages.registry import STAGES

    settings = SettingResources.from_environment()
    tokenizer, gates_resource = settings.tokenizer, settings.gates
    policy = settings.chunk_policy.policy(tokenizer, settings.device)
    gates = gates_resource.gates()

    def build_all(raw_dir: Path, out_dir: Path) -> int:
        paths = CorpusPaths(raw_dir=str(raw_dir), output_dir=str(out_dir))
        plan = BuildPlan(
            store=paths.store(),
            raw_dir=paths.raw_path,
            corpora=paths.corpus_names,
            stages=tuple(STAGES),
            versions=settings.versions(),
            settings=settings.settings(),
            run_id="bench-costs",
            extraction=settings.extraction.options(),
            counter=tokenizer.counter(),
            policy=policy,
            summarizer=settings.summarizer.summarizer(tokenizer.counter(), policy.summary_tokens),
            summary_cache=None,
            chunk_schema=gates.chunk_schema,
            reports_dir=paths.output_path / "reports" / "validation",
        )
        keep_piece = partial(kept_pieces.write_export_piece, plan.store, schema_dir=gates_resource.expectations_path)
        suite = BatchedSuiteGate(plan, gates, keep_piece)
        failed = 0
        for key in paths.scan().keys:
            outcome = build_pdf(plan, key)
            failed += outcome.failure is not None
            suite.add(outcome)
        suite.flush()
        return failed

    clock = Clock()
    missing = instrument(clock, LIBRARY_TARGETS)
    clock.on = False
    build_all(Path(warm), Path(out) / "warm")  # one-time costs (first validation, caches) before the clock
    clock.on = True
    cpu, wall = time.process_time(), time.perf_counter()
    failed = build_all(Path(raw), Path(out) / "build")
    _report(
        {
            "cpu": time.process_time() - cpu,
            "wall": time.perf_counter() - wall,
            "seconds": dict(clock.seconds),
            "calls": dict(clock.calls),
            "failed": failed,
            "missing": missing,
        }
    )


def run_child(python: str, args: list[str], env: dict[str, str] | None = None, timeout: float | None = None) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        report = Path(handle.name)
    try:
        environment = {**os.environ, **(env or {}), REPORT_ENV: str(report)}
        subprocess.run([python, str(HERE), "--child", *args], env=environment, check=True, capture_output=True, timeout=timeout)
        return json.loads(report.read_text(encoding="utf-8"))
    except subprocess.CalledProcessError as error:
        raise SystemExit(f"child {args} failed:\n{error.stderr.decode(errors='replace')[-3000:]}") from None
    finally:
        report.unlink(missing_ok=True)


# --- the parent: corpora, builds, the table ------------------------------------------------------------


def prepare(work: Path, which: str) -> Path:
    """A raw folder (fr/, intl/) holding the corpus `which`, as `bench_build` lays them out."""
    raw = work / f"raw-{which}"
    if raw.exists():
        return raw
    if which == "small":
        (raw / "fr").mkdir(parents=True)
        shutil.copyfile(DEFAULT_REGS / SMALL_PDF, raw / SMALL_PDF)
    elif which == "corpus":
        copy_corpus(DEFAULT_CORPUS, raw)
    elif which == "regs":
        copy_corpus(DEFAULT_REGS, raw)
    elif which == "wild":
        shutil.copytree(DEFAULT_WILD, raw / "intl" / "wild", ignore=shutil.ignore_patterns("*.md"))
    elif which == "scale":
        (raw / "intl").mkdir(parents=True)
        shutil.copyfile(DEFAULT_REFMAN, raw / "intl" / "refman.pdf")
    return raw


def pages_of(raw: Path) -> tuple[int, int]:
    """PDFs and the pages of those PyMuPDF opens unencrypted (what the floor reads)."""
    import pymupdf

    pdfs = pages = 0
    for path in sorted(raw.rglob("*.pdf")):
        pdfs += 1
        try:
            with pymupdf.open(path) as document:
                pages += 0 if document.needs_pass else document.page_count
        except Exception:  # a broken file: the build refuses it too
            pass
    return pdfs, pages


def command_build(python: str, work: Path, raw: Path, name: str, timed_calls: bool) -> dict[str, Any]:
    """The build command, instrumented from inside, measured from outside (wall, tree CPU, tree PSS)."""
    home, out = work / name / "home", work / name / "out"
    shutil.rmtree(work / name, ignore_errors=True)
    home.mkdir(parents=True)
    report = work / name / "report.json"
    env = {**os.environ, "DAGSTER_HOME": str(home), "POCKET_ASSETS_KEEP_DUPLICATES": "1", REPORT_ENV: str(report)}
    command = [python, str(HERE), "--child", "command", str(raw), str(out), "timed" if timed_calls else "plain"]
    print(f"  build {name} ...", file=sys.stderr, flush=True)
    result = measure(command, env)
    inside = json.loads(report.read_text(encoding="utf-8"))
    print(f"    {result.wall:.1f} s wall (load {result.load:.1f}), {result.cpu:.1f} s cpu, {result.tree_peak_mib:.0f} MiB", file=sys.stderr)
    return {
        "wall": result.wall,
        "cpu": result.cpu,
        "peak": result.tree_peak_mib,
        "largest": result.process_peak_mib,
        "load": result.load,
        "code": result.returncode,
        "out": str(out),
        **inside,
    }


def _package_of(python: str) -> str:
    """Where `python` imports pocket_assets from, and that checkout's commit when it is a git checkout."""
    code = "import pocket_assets, pathlib; print(pathlib.Path(pocket_assets.__file__).parents[1])"
    folder = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True, cwd="/").stdout.strip()
    commit = subprocess.run(["git", "-C", folder, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    return f"{folder} ({commit or 'not a git checkout'})"


def import_costs(python: str) -> dict[str, dict[str, float]]:
    """Each library alone, then the command's imports, in fresh processes: the median of IMPORT_RUNS each."""
    costs = {}
    for module in (*IMPORTS, "pocket_assets.core.pdf", "pocket_assets.cli.build"):
        runs = [run_child(python, ["import", module]) for _ in range(IMPORT_RUNS)]
        costs[module] = {key: statistics.median(run[key] for run in runs) for key in ("cpu", "wall", "mib")}
    return costs


def importtime_by_package(python: str, work: Path, raw: Path) -> dict[str, float]:
    """`-X importtime` of the one-PDF build: self seconds summed per top-level package (wall clock)."""
    home = work / "importtime" / "home"
    shutil.rmtree(work / "importtime", ignore_errors=True)
    home.mkdir(parents=True)
    env = {**os.environ, "DAGSTER_HOME": str(home), "POCKET_ASSETS_KEEP_DUPLICATES": "1"}
    done = subprocess.run(
        [python, "-X", "importtime", "-m", "pocket_assets.cli", "build", "--raw-dir", str(raw), "--output-dir", str(work / "importtime" / "out")],
        env=env,
        capture_output=True,
        text=True,
        cwd=Path(python).absolute().parents[2],
    )
    packages: dict[str, float] = defaultdict(float)
    for line in done.stderr.splitlines():
        found = re.match(r"import time:\s+(\d+) \|\s+\d+ \|(\s*)(\S+)", line)
        if found:
            packages[found.group(3).lstrip(".").split(".")[0]] += int(found.group(1)) / 1e6
    return dict(sorted(packages.items(), key=lambda item: -item[1]))


def measure_checkouts(pythons: dict[str, str], work: Path, corpora: list[str], fixed_runs: int) -> dict[str, dict[str, Any]]:
    """Every measure for each checkout (`pythons`: label -> its interpreter), one measure after the other for
    all checkouts in turn, so that the machine's drift hits them alike."""
    results: dict[str, dict[str, Any]] = {}
    for label, python in pythons.items():
        results[label] = {"python": python, "package": _package_of(python), "corpora": {}}
        print(f"{label}: {results[label]['package']}", file=sys.stderr)
    folders = {label: work / label.replace(" ", "-") for label in pythons}

    def each(step: str, measure_one: Callable[[str, str, Path], Any]) -> None:
        for label, python in pythons.items():
            print(f"  {step}, {label} ...", file=sys.stderr, flush=True)
            results[label][step] = measure_one(label, python, folders[label])

    each("imports", lambda label, python, folder: import_costs(python))
    each("command_imports_by_package", lambda label, python, folder: importtime_by_package(python, folder, prepare(folder, "small")))
    each("loads", lambda label, python, folder: run_child(python, ["loads", str(prepare(folder, "small")), str(folder / "loads-home")]))
    for label in pythons:
        results[label]["small"] = []
    for run in range(fixed_runs):
        for label, python in pythons.items():
            results[label]["small"].append(command_build(python, folders[label], prepare(folders[label], "small"), f"small{run}", True))
    for which in corpora:
        for label, python in pythons.items():
            results[label]["corpora"][which] = {"build": command_build(python, folders[label], prepare(folders[label], which), which, True)}
        for label, python in pythons.items():
            folder = folders[label]
            print(f"  library run {which}, {label} ...", file=sys.stderr, flush=True)
            args = ["library", str(prepare(folder, which)), str(folder / f"lib-{which}"), str(prepare(folder, "small"))]
            results[label]["corpora"][which]["library"] = run_child(python, args)
            shutil.rmtree(folder / f"lib-{which}", ignore_errors=True)
    return results


# --- the table -------------------------------------------------------------------------------------------


def print_tables(checkouts: dict[str, dict[str, Any]], floors: dict[str, dict[str, float]], pages: dict[str, tuple[int, int]]) -> None:
    labels = list(checkouts)
    print("### Imports (fresh process each, median of 3): CPU s / wall s / MiB resident added\n")
    print("| module | " + " | ".join(labels) + " |")
    print("|---|" + "---|" * len(labels))
    for module in next(iter(checkouts.values()))["imports"]:
        cells = [_triple(results["imports"].get(module)) for results in checkouts.values()]
        print(f"| `{module}` | " + " | ".join(cells) + " |")
    print("\n### The one-PDF build's imports by package (`-X importtime` self times summed, wall s)\n")
    for label, results in checkouts.items():
        shown = [f"{name} {seconds:.2f}" for name, seconds in results["command_imports_by_package"].items() if seconds >= 0.02]
        total = sum(results["command_imports_by_package"].values())
        print(f"- {label}: total {total:.2f}; " + ", ".join(shown))
    print("\n### Loads (fresh process, after their imports): CPU s / wall s / MiB resident added\n")
    print("| load | " + " | ".join(labels) + " |")
    print("|---|" + "---|" * len(labels))
    for name in next(iter(checkouts.values()))["loads"]:
        print(f"| {name} | " + " | ".join(_triple(results["loads"].get(name)) for results in checkouts.values()) + " |")
    print("\n### One 4-page PDF, the build command (median of the runs): the command's process part by part, CPU s\n")
    print("| part | " + " | ".join(labels) + " |")
    print("|---|" + "---|" * len(labels))
    smalls = {label: results["small"] for label, results in checkouts.items()}
    for key, title in (("wall", "wall s"), ("cpu", "CPU s, whole tree"), ("peak", "peak MiB, tree PSS")):
        print(f"| **{title}** | " + " | ".join(f"**{statistics.median(r[key] for r in runs):.2f}**" for runs in smalls.values()) + " |")
    print("| load average (1 min) at start | " + " | ".join(", ".join(f"{r['load']:.1f}" for r in runs) for runs in smalls.values()) + " |")
    print("| imports of the command | " + " | ".join(f"{statistics.median(r['imports']['cpu'] for r in runs):.2f}" for runs in smalls.values()) + " |")
    parts = sorted({name for runs in smalls.values() for run in runs for name in run["seconds"]})
    for name in parts:
        print(f"| {name} | " + " | ".join(f"{statistics.median(r['seconds'].get(name, 0.0) for r in runs):.2f}" for runs in smalls.values()) + " |")
    print("| the command's process, not timed above (interpreter, the command's own work) | " + " | ".join(
        f"{statistics.median(r['process_cpu'] - r['imports']['cpu'] - sum(r['seconds'].values()) for r in runs):.2f}" for runs in smalls.values()) + " |")
    print("| its child processes (Dagster's compute-log `tail -F` and watcher, two per run) | " + " | ".join(
        f"{statistics.median(r['children_cpu'] for r in runs):.2f}" for runs in smalls.values()) + " |")
    print("| the command's exit (tree CPU less the above: freeing what was loaded) | " + " | ".join(
        f"{statistics.median(r['cpu'] - r['process_cpu'] - r['children_cpu'] for r in runs):.2f}" for runs in smalls.values()) + " |")
    fixed = {label: (statistics.median(r["cpu"] for r in runs), statistics.median(r["wall"] for r in runs)) for label, runs in smalls.items()}
    for which in next(iter(checkouts.values()))["corpora"]:
        pdfs, page_count = pages[which]
        floor = floors[which]
        floor_ms = 1000 * (floor["text"] + floor["tokens"]) / floor["pages"]
        print(f"\n### `{CORPORA[which]}`: {pdfs} PDFs, {page_count} pages; floor {floor_ms:.2f} ms/page CPU "
              f"(text {1000 * floor['text'] / floor['pages']:.2f}, tokens {1000 * floor['tokens'] / floor['pages']:.2f})\n")
        print("| | " + " | ".join(labels) + " |")
        print("|---|" + "---|" * len(labels))
        builds = {label: results["corpora"][which]["build"] for label, results in checkouts.items()}
        libraries = {label: results["corpora"][which]["library"] for label, results in checkouts.items()}
        print("| **build command: wall s (load) / CPU s / peak MiB (tree / largest)** | " + " | ".join(
            f"**{b['wall']:.1f} ({b['load']:.1f}) / {b['cpu']:.1f} / {b['peak']:.0f} / {b['largest']:.0f}**" for b in builds.values()) + " |")
        print("| marginal CPU ms/page ((build - one PDF) / (pages - 4)); / floor | " + " | ".join(
            f"{_marginal(b['cpu'], fixed[label][0], page_count):.2f}; {_marginal(b['cpu'], fixed[label][0], page_count) / floor_ms:.1f}x"
            for label, b in builds.items()) + " |")
        print("| marginal wall ms/page; / floor | " + " | ".join(
            f"{_marginal(b['wall'], fixed[label][1], page_count):.2f}; {_marginal(b['wall'], fixed[label][1], page_count) / floor_ms:.1f}x"
            for label, b in builds.items()) + " |")
        print("| the command's process, CPU s (workers: the rest of the tree) | " + " | ".join(
            f"{b['process_cpu']:.1f} (workers {b['cpu'] - b['process_cpu']:.1f})" for b in builds.values()) + " |")
        command_parts = sorted({name for b in builds.values() for name in b["seconds"] if b["seconds"][name] >= 0.05})
        for name in command_parts:
            print(f"| command: {name}, s | " + " | ".join(f"{b['seconds'].get(name, 0.0):.2f}" for b in builds.values()) + " |")
        print("| **library run (no Dagster, one process, warm): CPU s, ms/page** | " + " | ".join(
            f"**{lib['cpu']:.1f}, {1000 * lib['cpu'] / page_count:.2f}**" for lib in libraries.values()) + " |")
        names = sorted({name for lib in libraries.values() for name in lib["seconds"]},
                       key=lambda name: -max(lib["seconds"].get(name, 0.0) for lib in libraries.values()))
        for name in names:
            print(f"| {name} | " + " | ".join(
                f"{1000 * lib['seconds'].get(name, 0.0) / page_count:.3f} ms/page ({lib['calls'].get(name, 0)} calls)" for lib in libraries.values()) + " |")
        untimed = {label: lib["cpu"] - sum(lib["seconds"].values()) for label, lib in libraries.items()}
        print("| not timed above (the loop, suite batches' bookkeeping) | " + " | ".join(f"{1000 * value / page_count:.3f} ms/page" for value in untimed.values()) + " |")


def _marginal(value: float, fixed: float, pages: int) -> float:
    return 1000 * (value - fixed) / max(pages - 4, 1)


def _triple(entry: dict[str, float] | None) -> str:
    return "-" if entry is None else f"{entry['cpu']:.2f} / {entry['wall']:.2f} / {entry['mib']:.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", nargs="+", choices=list(CORPORA), default=list(CORPORA))
    parser.add_argument("--before", type=Path, help="another checkout (with its own .venv) measured the same way, first")
    parser.add_argument("--fixed-runs", type=int, default=3)
    parser.add_argument("--output", type=Path, default=HERE.parent / "results" / "bench_costs.json")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folders")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        if kind == "import":
            child_import(rest[0])
        elif kind == "loads":
            child_loads(*rest)
        elif kind == "command":
            child_command(rest[0], rest[1], rest[2] == "timed")
        elif kind == "library":
            child_library(*rest)
        return
    run_costs(args.corpora, args.before, args.fixed_runs, args.output, args.keep)


def run_costs(corpora: list[str], before: Path | None, fixed_runs: int, output: Path, keep: bool) -> None:
    """The cost table on `corpora` for this checkout (and `before`, measured first), printed in Markdown."""
    work = Path(tempfile.mkdtemp(prefix="bench-costs-"))
    pythons = {}
    if before:
        pythons["before"] = str(before.absolute() / ".venv" / "bin" / "python")
    pythons["this checkout"] = sys.executable
    pages = {which: pages_of(prepare(work, which)) for which in corpora}
    floors = {which: floor_seconds(prepare(work, which)) for which in corpora}
    checkouts = measure_checkouts(pythons, work, corpora, fixed_runs)
    print(f"{os.cpu_count()} cores, shared; load average now {os.getloadavg()[0]:.1f}")
    for label, results in checkouts.items():
        print(f"- {label}: {results['package']}")
    print()
    print_tables(checkouts, floors, pages)
    if before:
        print("\n### Stage files and exports, before against this checkout (`generated` aside)\n")
        for which in corpora:
            differing = differing_outputs(
                Path(checkouts["before"]["corpora"][which]["build"]["out"]),
                Path(checkouts["this checkout"]["corpora"][which]["build"]["out"]),
            )
            print(f"- {CORPORA[which]}: " + (f"{len(differing)} differ: {', '.join(differing)}" if differing else "byte-identical"))
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps({"checkouts": checkouts, "floors": floors, "pages": pages}, indent=1), encoding="utf-8")
    if not keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
