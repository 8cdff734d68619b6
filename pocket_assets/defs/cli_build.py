"""The build command's body: sync partitions with the folder, run, and summarize."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from dagster import AssetKey, DagsterInstance

from pocket_assets.defs.build import build_definitions
from pocket_assets.defs.instance_lock import open_instance
from pocket_assets.defs.jobs import build_corpus_job
from pocket_assets.defs.partition_ranges import contiguous_ranges, range_tags
from pocket_assets.defs.partition_sync import sync_partitions
from pocket_assets.defs.partitions import pdf_partitions
from pocket_assets.defs.resources import CorpusPaths, default_paths
from pocket_assets.runstate.stages import SOURCE, STAGES, Stage
from pocket_assets.runstate.staleness import NOT_OK, first_problem
from pocket_assets.runstate.storage import STATUS_OK, PartitionStore

CONSOLE_INFO = {"loggers": {"console": {"config": {"log_level": "INFO"}}}}


@dataclass(frozen=True)
class PdfSummary:
    partition_key: str
    rows: dict[Stage, int]
    failure: str | None


def run_build(pdfs: Sequence[str], select: Sequence[str], raw_dir: str | None, output_dir: str | None) -> int:
    """Entering the instance makes it the process's current one (which resolving the job's
    definitions reads) and disposes of it at the end."""
    with open_instance() as instance:
        return _build(instance, cli_paths(raw_dir, output_dir), pdfs, select)


def _build(instance: DagsterInstance, paths: CorpusPaths, pdfs: Sequence[str], select: Sequence[str]) -> int:
    keys = sync_partitions(instance, paths)
    wanted = [_partition_key(paths.raw_path, pdf) for pdf in pdfs] or keys
    unknown = sorted(set(wanted) - set(keys))
    if unknown:
        print(f"not in {paths.raw_path}: {', '.join(unknown)}")
        return 2
    ordered = instance.get_dynamic_partitions(pdf_partitions.name)
    job = build_definitions(paths).resolve_job_def(build_corpus_job.name)
    selection = [AssetKey(name) for name in select] or None
    print(
        f"building {len(wanted)} PDF(s) from {paths.raw_path} into {paths.output_path} (DAGSTER_HOME={instance.root_directory})"
    )
    runs_ok = True
    for start, end in contiguous_ranges(ordered, wanted):
        result = job.execute_in_process(
            instance=instance,
            tags=range_tags(start, end),
            run_config=CONSOLE_INFO,
            asset_selection=selection,
            raise_on_error=False,
        )
        runs_ok = runs_ok and result.success
        print(f"run {result.run_id} {'succeeded' if result.success else 'FAILED'} for {start} .. {end}")
    summaries = [summarize_pdf(paths.store(), key) for key in wanted]
    print_summary(summaries, paths)
    return 0 if runs_ok and not any(summary.failure for summary in summaries) else 1


def summarize_pdf(store: PartitionStore, key: str) -> PdfSummary:
    """Rows per good stage; a failure is a stage whose last attempt failed or was skipped (a stage
    never built is no failure: `--select` may have left it out)."""
    rows: dict[Stage, int] = {}
    for stage in STAGES:
        manifest = store.manifest(stage, key)
        if manifest is not None and manifest.status == STATUS_OK:
            rows[stage] = manifest.rows
    built = [stage for stage in STAGES if store.manifest(stage, key) is not None]
    problem = first_problem(store, key, stages=built)
    return PdfSummary(key, rows, problem.sentence if problem is not None and problem.kind == NOT_OK else None)


def print_summary(summaries: Sequence[PdfSummary], paths: CorpusPaths) -> None:
    print("\nsummary")
    for summary in summaries:
        counts = ", ".join(f"{stage} {count}" for stage, count in summary.rows.items() if stage is not SOURCE)
        state = f"FAILED ({summary.failure})" if summary.failure else "ok"
        print(f"  {summary.partition_key}: {state}; {counts}")
    totals = {stage: sum(s.rows.get(stage, 0) for s in summaries) for stage in STAGES if stage is not SOURCE}
    failed = [s for s in summaries if s.failure]
    print(f"  {len(summaries)} PDFs, {len(failed)} failed; " + ", ".join(f"{a} {n}" for a, n in totals.items()))
    print(f"  stages: {paths.store().root}")
    exports = sorted(p.name for p in paths.output_path.glob("chunks_*"))
    if exports:
        print(f"  exports in {paths.output_path}: {', '.join(exports)}")


def cli_paths(raw_dir: str | None, output_dir: str | None) -> CorpusPaths:
    defaults = default_paths()
    return CorpusPaths(
        raw_dir=raw_dir or defaults.raw_dir,
        output_dir=output_dir or defaults.output_dir,
        expectations_dir=defaults.expectations_dir,
    )


def _partition_key(raw_dir: Path, pdf: str) -> str:
    path = Path(pdf)
    if path.exists():
        return path.resolve().relative_to(raw_dir.resolve()).as_posix()
    return pdf
