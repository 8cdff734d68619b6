"""The build command's body: sync partitions with the folder, run, and summarize."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Collection, Sequence

from dagster import AssetKey, DagsterInstance

from pocket_assets.core.pdf import RawFolderScan, printable_name
from pocket_assets.defs.build import build_definitions
from pocket_assets.defs.instance_lock import open_instance
from pocket_assets.defs.jobs import build_corpus_job
from pocket_assets.defs.partition_ranges import contiguous_ranges, range_run_tags
from pocket_assets.defs.partition_sync import sync_partitions
from pocket_assets.defs.partitions import pdf_partitions
from pocket_assets.defs.resources import CorpusPaths, default_paths
from pocket_assets.runstate.pdf_notes import EXPORT, pdf_warnings
from pocket_assets.runstate.stages import SOURCE, STAGES, Stage
from pocket_assets.runstate.staleness import NOT_OK, first_problem
from pocket_assets.runstate.storage import STATUS_OK, PartitionManifest, PartitionStore

CONSOLE_INFO = {"loggers": {"console": {"config": {"log_level": "INFO"}}}}


@dataclass(frozen=True)
class PdfSummary:
    partition_key: str
    rows: dict[Stage, int]
    failure: str | None  # one sentence: the first failed stage, or how the export left the PDF out
    warnings: tuple[str, ...] = ()


def run_build(pdfs: Sequence[str], select: Sequence[str], raw_dir: str | None, output_dir: str | None) -> int:
    """Entering the instance makes it the process's current one (which resolving the job's
    definitions reads) and disposes of it at the end."""
    with open_instance() as instance:
        return _build(instance, cli_paths(raw_dir, output_dir), pdfs, select)


def register_partitions(raw_dir: str | None, output_dir: str | None) -> list[str]:
    """The folder's PDFs as partitions of the instance, as a build registers them (and the partitions
    of vanished files removed), without building: what `pocket-assets ui` does before the UI starts."""
    paths = cli_paths(raw_dir, output_dir)
    with open_instance() as instance:
        keys = sync_partitions(instance, paths)
    print(f"{len(keys)} PDF(s) of {paths.raw_path} registered as partitions (DAGSTER_HOME={instance.root_directory})")
    return keys


def _build(instance: DagsterInstance, paths: CorpusPaths, pdfs: Sequence[str], select: Sequence[str]) -> int:
    scan = paths.scan()
    keys = sync_partitions(instance, paths)
    try:
        wanted = [_partition_key(paths.raw_path, pdf, scan) for pdf in pdfs] or keys
    except PdfArgumentError as error:
        print(error)
        return 2
    ordered = instance.get_dynamic_partitions(pdf_partitions.name)
    job = build_definitions(paths).resolve_job_def(build_corpus_job.name)
    selection = [AssetKey(name) for name in select] or None
    print(
        f"building {len(wanted)} PDF(s) from {paths.raw_path} into {paths.output_path} (DAGSTER_HOME={instance.root_directory})"
    )
    runs_ok = True
    run_ids: set[str] = set()
    for start, end in contiguous_ranges(ordered, wanted):
        run_keys = ordered[ordered.index(start) : ordered.index(end) + 1]
        result = job.execute_in_process(
            instance=instance,
            tags=range_run_tags(run_keys),
            run_config=CONSOLE_INFO,
            asset_selection=selection,
            raise_on_error=False,
        )
        runs_ok = runs_ok and result.success
        run_ids.add(result.run_id)
        what = start if len(run_keys) == 1 else f"{len(run_keys)} PDFs, {start} .. {end}"
        print(f"run {result.run_id} {'succeeded' if result.success else 'FAILED'} for {what}")
    store = ManifestsReadOnce(paths.store().root)
    summaries = [summarize_pdf(store, key, run_ids) for key in wanted]
    not_built = () if pdfs else scan.refused
    print_summary(summaries, paths, not_built, () if pdfs else scan.ignored)
    clean = runs_ok and not not_built and not any(summary.failure for summary in summaries)
    return 0 if clean else 1


class PdfArgumentError(ValueError):
    """A `--pdf` that names no buildable PDF of the raw folder; the message says why, in one sentence."""


@dataclass(frozen=True)
class ManifestsReadOnce(PartitionStore):
    """The store as the summary reads it, after the run: each manifest read from disk once (a PDF's
    summary asks for each of its manifests ~4 times: rows, failure, warnings)."""

    manifests: dict[tuple[str, str], PartitionManifest | None] = field(default_factory=dict, compare=False)

    def manifest(self, stage: Stage, partition_key: str) -> PartitionManifest | None:
        key = (stage.name, partition_key)
        if key not in self.manifests:
            self.manifests[key] = super().manifest(stage, partition_key)
        return self.manifests[key]


def summarize_pdf(store: PartitionStore, key: str, run_ids: Collection[str] = ()) -> PdfSummary:
    """Rows per good stage; a failure is a stage whose last attempt failed or was skipped (a stage
    never built is no failure: `--select` may have left it out), or how the export of `run_ids`
    left the PDF out; and the warnings the stages and the export recorded."""
    rows: dict[Stage, int] = {}
    for stage in STAGES:
        manifest = store.manifest(stage, key)
        if manifest is not None and manifest.status == STATUS_OK:
            rows[stage] = manifest.rows
    built = [stage for stage in STAGES if store.manifest(stage, key) is not None]
    problem = first_problem(store, key, stages=built)
    failure = problem.sentence if problem is not None and problem.kind == NOT_OK else None
    warnings = pdf_warnings(store, key, STAGES)
    export = store.manifest(EXPORT, key)
    if export is not None and export.run_id in run_ids:
        warnings.extend(export.extra.get("warnings", ()))
        if export.status != STATUS_OK:
            outcome = "its last good chunks ship, listed as stale" if export.status == "stale" else "left out of the export"
            failure = export.reason if failure is None else f"{failure}; {outcome}"
    return PdfSummary(key, rows, failure, tuple(warnings))


def print_summary(
    summaries: Sequence[PdfSummary],
    paths: CorpusPaths,
    refused: Sequence[tuple[str, str]] = (),
    ignored: Sequence[tuple[str, str]] = (),
) -> None:
    print("\nsummary")
    for summary in summaries:
        counts = ", ".join(f"{stage} {count}" for stage, count in summary.rows.items() if stage is not SOURCE)
        state = f"FAILED ({summary.failure})" if summary.failure else "ok"
        print(f"  {summary.partition_key}: {'; '.join(part for part in (state, counts) if part)}")
    totals = {stage: sum(s.rows.get(stage, 0) for s in summaries) for stage in STAGES if stage is not SOURCE}
    failed = [s for s in summaries if s.failure]
    not_built = f", {len(refused)} not built (file name)" if refused else ""
    print(f"  {len(summaries)} PDFs, {len(failed)} failed{not_built}; " + ", ".join(f"{a} {n}" for a, n in totals.items()))
    print(f"  stages: {paths.store().root}")
    exports = sorted(p.name for p in paths.output_path.glob("chunks_*"))
    if exports:
        print(f"  exports in {paths.output_path}: {', '.join(exports)}")
    problems = [f"{s.partition_key}: {s.failure}" for s in failed] + [why for _, why in refused]
    if problems:
        print(f"\n{len(problems)} PDF(s) with a problem (the others are exported):")
        for line in problems:
            print(f"  - {line}")
    warnings = [f"{s.partition_key}: {w}" for s in summaries for w in s.warnings]
    warnings += [why for _, why in ignored]
    if warnings:
        print(f"\n{len(warnings)} warning(s):")
        for line in warnings:
            print(f"  - {line}")


def cli_paths(raw_dir: str | None, output_dir: str | None) -> CorpusPaths:
    """The environment's paths and settings, as the code location `dagster dev` loads reads them (the
    corpora too: a partition of a corpus the command did not know would be removed with its stages),
    with the folders the command line names."""
    defaults = default_paths()
    return CorpusPaths(
        raw_dir=raw_dir or defaults.raw_dir,
        output_dir=output_dir or defaults.output_dir,
        expectations_dir=defaults.expectations_dir,
        corpora=defaults.corpora,
        export_strict=defaults.export_strict,
    )


def _partition_key(raw_dir: Path, pdf: str, scan: RawFolderScan) -> str:
    """The partition key a `--pdf` names (a path or a key), or PdfArgumentError saying why it names none."""
    path = Path(pdf)
    key = pdf
    if path.is_symlink():
        raise PdfArgumentError(
            f"--pdf {pdf}: is a symbolic link; give the PDF's own path under {raw_dir} (or its key, e.g. fr/x.pdf)"
        )
    if path.exists():
        try:
            key = path.resolve().relative_to(raw_dir.resolve()).as_posix()
        except ValueError:
            raise PdfArgumentError(
                f"--pdf {pdf}: is outside the raw folder {raw_dir}; copy it into a corpus folder there first"
            ) from None
    if key in scan.keys:
        return key
    for name, why in scan.refused + scan.ignored:
        if name == printable_name(key):
            raise PdfArgumentError(f"--pdf {pdf}: {why}")
    raise PdfArgumentError(f"--pdf {pdf}: no such PDF in {raw_dir} (give a path or a key such as fr/x.pdf)")
