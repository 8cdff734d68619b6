"""`pocket-assets build`: build what needs building, in runs the UI shows, and tell what happened.

It adds the folder's PDFs as partitions (never removing any: on a shared instance other folders'
PDFs are other people's), picks the PDFs that are missing, changed, failed or built by another
version (all of them with `--all`), and builds them as runs of `build_corpus` over ranges of PDFs,
one after the other in this process, each range's PDFs on the run's own process pool; then the
export, once, if it is behind. The summary says per PDF what happened in this build, in one
sentence, and which step failed as a whole.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from dagster import AssetKey, DagsterInstance, ExecuteInProcessResult

from pocket_assets.cli.console_logger import cli_console
from pocket_assets.cli.failure_cause import cause_sentence
from pocket_assets.cli.folder_lock import holding_output_folder
from pocket_assets.cli.instance_lock import open_instance
from pocket_assets.cli.paths import cli_paths
from pocket_assets.core.raw_folder import RawFolderScan, printable_name
from pocket_assets.defs.assembly import build_definitions
from pocket_assets.defs.jobs import BUILD_CORPUS, EXPORT_CORPUS
from pocket_assets.defs.partition_sync import register_pdfs
from pocket_assets.defs.partitions import pdf_partitions, range_size
from pocket_assets.defs.planning import plan_folder
from pocket_assets.defs.ranges import pdf_ranges, run_tags
from pocket_assets.defs.resources import CorpusPaths
from pocket_assets.export.fingerprint import export_behind
from pocket_assets.stages.output_folder import OutputFolderRefused
from pocket_assets.stages.pdf_notes import EXPORT, pdf_warnings
from pocket_assets.stages.planner import duplicate_sentence
from pocket_assets.stages.registry import RAW_PDF, STAGES, Stage
from pocket_assets.stages.store import STATUS_FAILED, STATUS_OK, PartitionStore

CONSOLE_INFO = {"loggers": {"console": {"config": {"log_level": "INFO"}}}}


class CommandRefused(ValueError):
    """An argument or setting the command cannot act on; the message says why and what to do, in one sentence."""


@dataclass(frozen=True)
class RunVerdict:
    """One run of this build: its id, whether it succeeded, and the sentence of a step that failed as a whole."""

    run_id: str
    success: bool
    step_failure: str | None


@dataclass(frozen=True)
class PdfSummary:
    partition_key: str
    rows: dict[Stage, int]
    failure: str | None  # one sentence: the stage that failed in this build, or how the export left the PDF out
    warnings: tuple[str, ...] = ()


def run_build(
    pdfs: Sequence[str], select: Sequence[str], every: bool, raw_dir: str | None, output_dir: str | None
) -> int:
    """The build, holding the output folder the whole time (a second build waits, saying so); its exit code."""
    try:
        paths = cli_paths(raw_dir, output_dir)
        with holding_output_folder(paths.output_path, "build"), open_instance(capture_logs=False) as instance:
            return _build(instance, paths, pdfs, select, every)
    except (CommandRefused, OutputFolderRefused) as error:
        print(error)
        return 2


def _build(
    instance: DagsterInstance, paths: CorpusPaths, pdfs: Sequence[str], select: Sequence[str], every: bool
) -> int:
    scan = paths.scan()
    plan, _ = plan_folder(paths)
    register_pdfs(instance, plan.partition_keys)
    duplicates = plan.duplicates
    if pdfs:
        wanted, up_to_date = [_partition_key(paths.raw_path, pdf, scan, duplicates) for pdf in pdfs], []
    elif every:
        wanted, up_to_date = plan.partition_keys, []
    else:
        wanted, up_to_date = [pdf.key for pdf in plan.to_build], [pdf.key for pdf in plan.up_to_date]
    stages = tuple(stage for stage in STAGES if not select or stage.name in select)
    exporting = not select or "android_export" in select
    definitions = build_definitions(paths, loggers={"console": cli_console})
    print(
        f"building {len(wanted)} PDF(s) from {paths.raw_path} into {paths.output_path} (DAGSTER_HOME={instance.root_directory})"
    )
    if up_to_date:
        print(f"{len(up_to_date)} PDF(s) up to date, not built again (`--all` rebuilds every PDF)")
    for key, original in sorted(duplicates.items()):
        print(duplicate_sentence(key, original))
    verdicts: list[RunVerdict] = []
    export_state = "the others are exported" if exporting else "the export not run: --select left it out"
    if stages:
        job = definitions.resolve_job_def(BUILD_CORPUS)
        ordered = instance.get_dynamic_partitions(pdf_partitions.name)
        for keys in pdf_ranges(ordered, wanted, range_size()):
            result = job.execute_in_process(
                instance=instance,
                tags=run_tags(keys),
                partition_key=keys[0] if len(keys) == 1 else None,
                asset_selection=[AssetKey(stage.name) for stage in stages],
                run_config=CONSOLE_INFO,
                raise_on_error=False,
            )
            verdicts.append(_verdict(result))
            what = keys[0] if len(keys) == 1 else f"{len(keys)} PDFs, {keys[0]} .. {keys[-1]}"
            print(f"run {result.run_id} {'succeeded' if result.success else 'FAILED'} for {what}")
    store = paths.store()
    behind = (
        export_behind(store, plan, paths.corpus_names, paths.export_strict, paths.output_path) if exporting else None
    )
    if behind and not wanted:
        print(f"the export is behind: {behind}")
    if exporting and (wanted or behind):
        result = definitions.resolve_job_def(EXPORT_CORPUS).execute_in_process(
            instance=instance, run_config=CONSOLE_INFO, raise_on_error=False
        )
        verdicts.append(_verdict(result, "export"))
        print(f"run {result.run_id} {'succeeded' if result.success else 'FAILED'} for the export")
        if not result.success:
            export_state = "and the export failed, see above"
    run_ids = {verdict.run_id for verdict in verdicts}
    crashed = [verdict.step_failure for verdict in verdicts if verdict.step_failure]
    summaries = [summarize_pdf(store, key, stages, run_ids, crashed) for key in wanted]
    # A PDF this build did not build that the export did not ship fresh (its stage files damaged since) is told too;
    # not one whose own last build failed, which a build of other PDFs leaves as it was.
    built = set(wanted)
    others = (
        summarize_pdf(store, key, (), run_ids)
        for key in plan.partition_keys
        if key not in built and not last_build_failed(store, key)
    )
    summaries += [summary for summary in others if summary.failure]
    not_built = () if pdfs else scan.refused
    print_summary(summaries, paths, export_state, crashed, not_built, () if pdfs else scan.ignored)
    clean = all(verdict.success for verdict in verdicts) and not not_built and not any(s.failure for s in summaries)
    return 0 if clean else 1


def _verdict(result: ExecuteInProcessResult, what: str = "the PDFs' stages") -> RunVerdict:
    """A step that failed as a whole (not the PDFs' own failures, which each PDF's manifest tells: those come
    as a `Failure`), in one sentence: the cause of its first error, a resource that did not start included."""
    failures = [
        event
        for event in result.all_events
        if (event.is_step_failure and event.step_failure_data.user_failure_data is None)
        or event.event_type_value == "RESOURCE_INIT_FAILURE"
    ]
    sentence = None
    if failures:
        error = getattr(failures[0].event_specific_data, "error", None)
        cause = cause_sentence(error) if error is not None else "unknown error"
        sentence = f"{what} failed as a whole (step {failures[0].step_key}): {cause}"
    return RunVerdict(result.run_id, result.success, sentence)


def last_build_failed(store: PartitionStore, key: str) -> bool:
    """Whether a stage of the PDF's last build failed (the PDF, not its files since)."""
    return any(
        (manifest := store.manifest(stage, key)) is not None and manifest.status == STATUS_FAILED for stage in STAGES
    )


def summarize_pdf(
    store: PartitionStore, key: str, stages: Sequence[Stage], run_ids: set[str], crashed: Sequence[str] = ()
) -> PdfSummary:
    """What this build did to one PDF: rows per stage it built; the first stage that failed in it; or, for a
    stage this build did not record at all (its step failed as a whole), that step's sentence."""
    rows: dict[Stage, int] = {}
    failure = None
    for stage in stages:
        manifest = store.manifest(stage, key)
        if manifest is None or manifest.run_id not in run_ids:
            failure = f"{stage} not built: " + (crashed[0] if crashed else "its run did not reach it")
            break
        if manifest.status != STATUS_OK:
            failure = f"{stage} {manifest.status}: {manifest.reason}"
            break
        rows[stage] = manifest.rows
    warnings = pdf_warnings(store, key, STAGES)
    export = store.manifest(EXPORT, key)
    if export is not None and export.run_id in run_ids:
        warnings.extend(export.extra.get("warnings", ()))
        if export.status != STATUS_OK:
            outcome = (
                "its last good chunks ship, listed as stale" if export.status == "stale" else "left out of the export"
            )
            failure = export.reason if failure is None else f"{failure}; {outcome}"
    return PdfSummary(key, rows, failure, tuple(warnings))


def print_summary(
    summaries: Sequence[PdfSummary],
    paths: CorpusPaths,
    export_state: str,
    crashed: Sequence[str] = (),
    refused: Sequence[tuple[str, str]] = (),
    ignored: Sequence[tuple[str, str]] = (),
) -> None:
    print("\nsummary")
    for summary in summaries:
        counts = ", ".join(f"{stage} {count}" for stage, count in summary.rows.items() if stage is not RAW_PDF)
        state = f"FAILED ({summary.failure})" if summary.failure else "ok"
        print(f"  {summary.partition_key}: {'; '.join(part for part in (state, counts) if part)}")
    totals = {stage: sum(s.rows.get(stage, 0) for s in summaries) for stage in STAGES if stage is not RAW_PDF}
    failed = [s for s in summaries if s.failure]
    not_built = f", {len(refused)} not built (file name)" if refused else ""
    print(
        f"  {len(summaries)} PDFs, {len(failed)} failed{not_built}; " + ", ".join(f"{a} {n}" for a, n in totals.items())
    )
    print(f"  stages: {paths.store().root}")
    exports = sorted(path.name for path in paths.output_path.glob("chunks_*"))
    if exports:
        print(f"  exports in {paths.output_path}: {', '.join(exports)}")
    for sentence in crashed:
        print(f"\n{sentence}")
    problems = [f"{s.partition_key}: {s.failure}" for s in failed] + [why for _, why in refused]
    if problems:
        print(f"\n{len(problems)} PDF(s) with a problem ({export_state}):")
        for line in problems:
            print(f"  - {line}")
    warnings = [f"{s.partition_key}: {w}" for s in summaries for w in s.warnings] + [why for _, why in ignored]
    if warnings:
        print(f"\n{len(warnings)} warning(s):")
        for line in warnings:
            print(f"  - {line}")


def _partition_key(raw_dir: Path, pdf: str, scan: RawFolderScan, duplicates: Mapping[str, str]) -> str:
    """The partition key a `--pdf` names (a path or a key), or CommandRefused saying why it names none (or a
    duplicate of another PDF)."""
    path = Path(pdf)
    key = pdf
    if path.is_symlink():
        raise CommandRefused(
            f"--pdf {pdf}: is a symbolic link; give the PDF's own path under {raw_dir} (or its key, e.g. fr/x.pdf)"
        )
    if path.exists():
        try:
            key = path.resolve().relative_to(raw_dir.resolve()).as_posix()
        except ValueError:
            raise CommandRefused(
                f"--pdf {pdf}: is outside the raw folder {raw_dir}; copy it into a corpus folder there first"
            ) from None
    if key in duplicates:
        raise CommandRefused(f"--pdf {pdf}: {duplicate_sentence(key, duplicates[key])}")
    if key in scan.keys:
        return key
    for name, why in scan.refused + scan.ignored:
        if name == printable_name(key):
            raise CommandRefused(f"--pdf {pdf}: {why}")
    raise CommandRefused(f"--pdf {pdf}: no such PDF in {raw_dir} (give a path or a key such as fr/x.pdf)")
