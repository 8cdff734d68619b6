"""Robustness benchmark: build whole folders of PDFs with the real build command, report per PDF.

    python benchmarks/bench_corpus.py                      # ../shared/corpus, corpus-regs, corpus-wild
    python benchmarks/bench_corpus.py --with-refman        # + ../shared/corpus-scale/refman.pdf
    python benchmarks/bench_corpus.py some/folder other/   # any folders of PDFs
    python benchmarks/bench_corpus.py --list benchmarks/wild_subset.txt ../shared/corpus-wild  # the CI subset
    python benchmarks/bench_corpus.py --keep-in DIR FOLDER  # keep raw/, out/, build.log, exit_code in DIR

Each folder is built into its own temporary instance (raw folder, output folder, DAGSTER_HOME) by
`python -m pocket_assets.cli build`, exactly as a user would. The folder's `fr/` and `intl/`
are copied as they are; any other PDF is copied into `intl/`, keeping its path under the folder
(`camelot/foo.pdf` -> `intl/camelot/foo.pdf`), since folder names are not corpus names.

Per PDF it prints: status (ok, stale, left out, failed, not built), the failing gate or stage,
pages, chunks per type (parents/children/table summaries), tables, warnings, seconds; then totals
per folder. Seconds per PDF are the time between the manifest writes of consecutive PDFs in each
stage, in the order written (a step on workers writes its PDFs as they complete, longest first),
summed over the stages: the build's own clock, not a separate run per PDF. The exit code of each build is printed too.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pocket_assets.core.records import CORPORA  # noqa: E402
from pocket_assets.stages.pdf_notes import EXPORT, pdf_warnings  # noqa: E402
from pocket_assets.stages.registry import CHUNK_STAGES, PAGES, RAW_PDF, STAGES  # noqa: E402
from pocket_assets.stages.store import STATUS_OK, PartitionStore  # noqa: E402

SHARED = REPO.parent / "shared"
DEFAULT_FOLDERS = [SHARED / "corpus", SHARED / "corpus-regs", SHARED / "corpus-wild"]
REFMAN = SHARED / "corpus-scale" / "refman.pdf"
_GATE = re.compile(r"first (\w+)/(\S+):")


@dataclass
class PdfRow:
    key: str
    status: str
    problem: str = ""
    pages: int = 0
    chunks: dict[str, int] = field(default_factory=dict)
    tables: int = 0
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0


def stage_raw_folder(sources: list[Path], raw: Path, only: set[str] | None) -> int:
    """Copy PDFs into `raw/{fr,intl}/...`; returns how many. `only`: relative paths to keep (a subset list)."""
    count = 0
    for source in sources:
        files = [source] if source.is_file() else sorted(p for p in source.rglob("*") if p.suffix.lower() == ".pdf")
        for path in files:
            relative = path.name if source.is_file() else path.relative_to(source).as_posix()
            if only is not None and relative not in only:
                continue
            first = relative.split("/", 1)[0]
            target = raw / relative if first in CORPORA and "/" in relative else raw / "intl" / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
            count += 1
    return count


@dataclass(frozen=True)
class FolderBuild:
    """One folder built into `work`: `raw/`, `out/`, `home/`, and `build.log` + `exit_code` (read by the CI test)."""

    work: Path
    staged: int
    code: int
    printed: str
    wall: float

    @property
    def raw(self) -> Path:
        return self.work / "raw"

    @property
    def out(self) -> Path:
        return self.work / "out"


def build_folder(folder: Path, work: Path, only: set[str] | None = None) -> FolderBuild:
    """Copy the folder's PDFs into a fresh raw folder under `work` and run the real build command on it."""
    work = work.resolve()  # Dagster refuses a relative DAGSTER_HOME (`--keep-in .ci/wild-subset` is one)
    work.mkdir(parents=True, exist_ok=True)
    staged = stage_raw_folder([folder], work / "raw", only)
    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    env = {**os.environ, "DAGSTER_HOME": str(home), "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "pocket_assets.cli", "build", "--raw-dir", str(work / "raw")]
    started = time.perf_counter()
    done = subprocess.run(
        [*command, "--output-dir", str(work / "out")], cwd=REPO, env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - started
    (work / "build.log").write_text(done.stdout, encoding="utf-8")
    (work / "exit_code").write_text(f"{done.returncode}\n", encoding="utf-8")
    return FolderBuild(work, staged, done.returncode, done.stdout, wall)


def read_list(path: Path) -> set[str]:
    """A subset list: one path (relative to the folder) a line; `#` comments and blank lines ignored."""
    lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    return {line for line in lines if line and not line.startswith("#")}


def pdf_rows(store: PartitionStore, keys: list[str]) -> list[PdfRow]:
    rows = {key: PdfRow(key, "ok") for key in keys}
    stage_start = None  # the previous stage's last write: when this stage began its first PDF
    for stage in STAGES:
        previous_time = stage_start
        paths = {key: store.manifest_path(stage, key) for key in keys}
        # In the order written: a step on workers writes its PDFs as they complete, longest first.
        writes = sorted((path.stat().st_mtime, key) for key, path in paths.items() if path.is_file())
        for written, key in writes:
            if previous_time is not None:
                rows[key].seconds += max(0.0, written - previous_time)
            previous_time = written
        stage_start = previous_time
    for key, row in rows.items():
        _fill(store, row)
    return list(rows.values())


def _fill(store: PartitionStore, row: PdfRow) -> None:
    for stage in STAGES:
        manifest = store.manifest(stage, row.key)
        if manifest is None:
            continue
        if manifest.status != STATUS_OK and not row.problem:
            gate = _GATE.search(manifest.reason or "")
            row.status = "failed"
            row.problem = f"{stage}: {gate.group(1)}/{gate.group(2)}" if gate else f"{stage}: {manifest.reason}"
        elif manifest.status == STATUS_OK and stage is PAGES:
            row.pages = manifest.rows
            row.tables = sum(
                1 for page in store.read(PAGES, row.key) for block in page["blocks"] if block["kind"] == "table"
            )
        elif manifest.status == STATUS_OK and stage in CHUNK_STAGES:
            row.chunks[stage.name] = manifest.rows
    export = store.manifest(EXPORT, row.key)
    if export is not None:
        row.warnings += export.extra.get("warnings", [])
        if export.status != STATUS_OK:
            row.status = {"stale": "stale", "left_out": "left out"}.get(export.status, export.status)
    row.warnings = pdf_warnings(store, row.key, STAGES) + row.warnings


def not_built(printed: str) -> list[PdfRow]:
    """PDFs the scan refused (a name that cannot be a partition key), from the build's summary."""
    return [
        PdfRow(line.split(" is not built", 1)[0].strip("- ").strip(), "not built", line.split(": ", 1)[-1])
        for line in printed.splitlines()
        if " is not built: " in line
    ]


def report(label: str, rows: list[PdfRow], code: int, wall: float) -> None:
    print(f"\n## {label}: exit code {code}, {wall:.0f} s wall\n")
    print("| PDF | status | failing gate / stage | pages | parents/children/summaries | tables | warnings | s |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        chunks = "/".join(str(row.chunks.get(stage, 0)) for stage in ("parents", "children", "table_summaries"))
        warnings = "; ".join(row.warnings)[:160].replace("|", "/")
        problem = row.problem[:120].replace("|", "/")
        print(
            f"| {row.key} | {row.status} | {problem} | {row.pages} | {chunks} | {row.tables} | {warnings} "
            f"| {row.seconds:.1f} |"
        )
    counts = {status: sum(1 for row in rows if row.status == status) for status in sorted({r.status for r in rows})}
    totals = {stage: sum(row.chunks.get(stage, 0) for row in rows) for stage in ("parents", "children", "table_summaries")}
    print(
        f"\n**{label} totals**: {len(rows)} PDFs ("
        + ", ".join(f"{n} {status}" for status, n in counts.items())
        + f"), {sum(r.pages for r in rows)} pages, "
        + ", ".join(f"{n} {stage}" for stage, n in totals.items())
        + f", {sum(r.tables for r in rows)} tables, {sum(1 for r in rows if r.warnings)} PDFs with warnings, "
        f"{sum(r.seconds for r in rows):.0f} s in stages"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", type=Path, help="folders (or PDFs) to build, one instance each")
    parser.add_argument("--with-refman", action="store_true", help=f"also build {REFMAN} alone")
    parser.add_argument("--list", type=Path, help="only the PDFs of this file (paths relative to the folder)")
    parser.add_argument("--keep-in", type=Path, help="build the (single) folder in this directory and keep it")
    args = parser.parse_args()
    folders = args.folders or DEFAULT_FOLDERS
    if args.with_refman:
        folders = [*folders, REFMAN]
    if args.keep_in and len(folders) != 1:
        parser.error("--keep-in takes exactly one folder")
    missing = [str(folder) for folder in folders if not folder.exists()]
    if missing:
        parser.error(f"not found: {', '.join(missing)} (the defaults need ../shared beside the repository)")
    only = read_list(args.list) if args.list else None
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    print(f"commit {commit.stdout.strip()}")
    worst = 0
    for folder in folders:
        work = args.keep_in or Path(tempfile.mkdtemp(prefix=f"bench_corpus_{folder.stem}_"))
        result = build_folder(folder, work, only)
        store = PartitionStore(result.out / "stages")
        keys = sorted(p.relative_to(result.raw).as_posix() for p in result.raw.rglob("*") if p.is_file())
        built_keys = [key for key in keys if store.manifest_path(RAW_PDF, key).is_file()]
        rows = pdf_rows(store, built_keys) + not_built(result.printed)
        report(f"{folder.name} ({result.staged} PDFs)", rows, result.code, result.wall)
        worst = max(worst, result.code)
        if not args.keep_in:
            shutil.rmtree(work, ignore_errors=True)
    return worst


if __name__ == "__main__":
    sys.exit(main())
