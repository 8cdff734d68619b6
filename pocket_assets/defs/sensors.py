"""The deployment's watchers: the raw folder (`pdf_folder_sensor`, `build_changed_pdfs`) and the export.

`pdf_folder_sensor` (on by default) keeps what Dagster shows equal to the folder, building
nothing: a PDF dropped in becomes a partition, a removed one (or a copy of another PDF of its
corpus, or a key typed by hand that names no PDF) is deleted with its stage files, each file is
observed as `pdf_file` with its sha256 (so an edited PDF turns its partitions stale), and the
plan's verdict (`up_to_date` on `validated_chunks`) is recorded whenever it changes. When it
deleted a partition the export shipped, it requests the export, unless a run of the PDFs or of
the export is queued or running (`corpus_export_sensor` exports after it).

`build_changed_pdfs` (off by default) also builds: every tick, the PDFs the plan says are missing,
changed, failed or built with other settings, in ranges of PDFs.

`corpus_export_sensor` runs the export once the PDFs of a build or a backfill are done: when no
run of the per-PDF stages or of the export is queued or running, and the stage files no longer
match what the last export was made from, or a file it published is missing or changed
(`export.fingerprint`). A file dropped into the folder changes nothing until it is built.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone

from dagster import (
    AssetKey,
    DagsterInstance,
    DagsterRunStatus,
    DefaultSensorStatus,
    RunRecord,
    RunRequest,
    RunsFilter,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    sensor,
)

from pocket_assets.defs.jobs import BUILD_CORPUS, EXPORT_CORPUS, build_corpus_job, export_corpus_job
from pocket_assets.defs.partition_sync import sync_partitions
from pocket_assets.defs.partitions import pdf_partitions, range_size
from pocket_assets.defs.planning import plan_digest, plan_folder, up_to_date_evaluation
from pocket_assets.defs.provenance import observed_sha256, pdf_file_observation
from pocket_assets.defs.ranges import run_requests
from pocket_assets.defs.resources import CorpusPaths, environment_versions
from pocket_assets.defs.scan_cursor import decode_digests, dumps, encode_digests, loads
from pocket_assets.export.fingerprint import ExportState, export_behind, export_fingerprint, read_export_state
from pocket_assets.stages.registry import STAGES, VALIDATED_CHUNKS
from pocket_assets.stages.sources import recorded_by_build
from pocket_assets.stages.staleness import build_fingerprint

# Runs not finished yet, whatever launched them: a backfill from the asset graph runs under Dagster's hidden asset job
# (its run names the assets it builds), while a run a sensor or the schedule requests for a whole job carries no asset
# selection at all (its job's name says what it builds).
_UNFINISHED = RunsFilter(
    statuses=[
        DagsterRunStatus.QUEUED,
        DagsterRunStatus.NOT_STARTED,
        DagsterRunStatus.STARTING,
        DagsterRunStatus.STARTED,
        DagsterRunStatus.CANCELING,
    ]
)
_FINISHED = [DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED]
EXPORT_QUIET_ENV = "POCKET_ASSETS_EXPORT_QUIET_SECONDS"
DEFAULT_EXPORT_QUIET_SECONDS = 90
_BUILT_OR_EXPORTED = frozenset({AssetKey(stage.name) for stage in STAGES} | {AssetKey("android_export")})
_BUILDING_OR_EXPORTING_JOBS = frozenset({BUILD_CORPUS, EXPORT_CORPUS})


def export_quiet_seconds(environ: Mapping[str, str] = os.environ) -> float:
    """How long after the last run of the PDFs or the export the export sensor waits: `POCKET_ASSETS_EXPORT_QUIET_SECONDS`,
    else `DEFAULT_EXPORT_QUIET_SECONDS`."""
    configured = environ.get(EXPORT_QUIET_ENV, "").strip()
    if not configured:
        return DEFAULT_EXPORT_QUIET_SECONDS
    seconds = float(configured)
    if seconds < 0:
        raise ValueError(f"{EXPORT_QUIET_ENV} must be a number of seconds (0 or more), got {configured!r}")
    return seconds


def _builds_or_exports(instance: DagsterInstance, filters: RunsFilter) -> list[RunRecord]:
    return [
        record
        for record in instance.get_run_records(filters=filters)
        if record.dagster_run.job_name in _BUILDING_OR_EXPORTING_JOBS
        or (record.dagster_run.asset_selection or frozenset()) & _BUILT_OR_EXPORTED
    ]


def _unfinished_builds_or_exports(instance: DagsterInstance) -> list[str]:
    """The runs queued or running that build PDFs or export: the export waits for them."""
    return [record.dagster_run.run_id for record in _builds_or_exports(instance, _UNFINISHED)]


def _recent_builds_or_exports(instance: DagsterInstance, seconds: float) -> list[str]:
    """The runs that build PDFs or export and ended less than `seconds` ago: more of their backfill may follow."""
    if seconds <= 0:
        return []
    since = time.time() - seconds
    # The storage compares update times as naive timestamps; a day's margin keeps that query safe whatever the
    # database's time zone, and each run's own end time decides.
    window = RunsFilter(statuses=_FINISHED, updated_after=datetime.now(timezone.utc) - timedelta(days=1))
    return [
        record.dagster_run.run_id
        for record in _builds_or_exports(instance, window)
        if record.end_time is not None and record.end_time >= since
    ]


@sensor(
    job=export_corpus_job,
    minimum_interval_seconds=30,
    default_status=DefaultSensorStatus.RUNNING,
    description="Keeps the partitions equal to the raw folder, building nothing: a new PDF becomes a partition, a "
    "removed one (or a copy of another PDF of its corpus, or a key that names no PDF) is deleted with its stage "
    "files, each file is observed as pdf_file with its sha256 (an edited PDF turns stale), and the PDFs to build "
    "are listed in the up_to_date check of validated_chunks. Requests the export when it deleted a partition the export shipped.",
)
def pdf_folder_sensor(context: SensorEvaluationContext, paths: CorpusPaths) -> SensorResult:
    cursor = loads(context.cursor)
    known = decode_digests(cursor.get("files", {}))
    plan, digests = plan_folder(paths, known)
    store = paths.store()
    added, removed = sync_partitions(context.instance, store, plan, log=context.log.info)
    partitions = set(plan.partition_keys)
    # A file its raw_pdf recorded as it is now was observed by that build: neither observed again nor kept in the cursor.
    unbuilt = {key: digest for key, digest in digests.items() if not recorded_by_build(store, key, digest)}
    observations = [
        pdf_file_observation(key, digest.sha256)
        for key, digest in sorted(unbuilt.items())
        if key in partitions
        and (
            known[key].sha256 != digest.sha256
            if key in known
            else observed_sha256(context.instance, key) != digest.sha256
        )
    ]
    verdicts = plan_digest(plan)
    events = [*observations, *([up_to_date_evaluation(plan)] if cursor.get("verdicts") != verdicts else [])]
    requests = []
    last = read_export_state(paths.output_path)
    fingerprint = export_fingerprint(store, plan, paths.corpus_names, paths.export_strict)
    # A PDF the export shipped is gone; a run queued or running will be followed by corpus_export_sensor's export.
    if (
        removed
        and last is not None
        and fingerprint != last.fingerprint
        and not _unfinished_builds_or_exports(context.instance)
    ):
        requests.append(RunRequest(run_key=export_run_key(fingerprint, last)))
    summary = (
        f"{len(partitions)} PDF(s) in {paths.raw_path}: {len(added)} added, {len(removed)} removed, "
        f"{len(observations)} new or changed, {len(plan.to_build)} to build"
    )
    return SensorResult(
        run_requests=requests,
        asset_events=events,
        skip_reason=None if requests else summary,
        cursor=dumps({"files": encode_digests(unbuilt), "verdicts": verdicts}),
    )


@sensor(
    job=build_corpus_job,
    minimum_interval_seconds=30,
    description="Builds, every tick, the PDFs that are missing, changed (sha256), failed or built with other settings, "
    "in ranges of PDFs, after making the partitions equal to the raw folder as pdf_folder_sensor does. Off by "
    "default: building stays a choice (the UI), or the nightly corpus_refresh schedule's.",
)
def build_changed_pdfs(context: SensorEvaluationContext, paths: CorpusPaths) -> SensorResult | SkipReason:
    plan, _ = plan_folder(paths)
    sync_partitions(context.instance, paths.store(), plan, log=context.log.info)
    to_build = plan.to_build
    if not to_build:
        return SkipReason(f"all {len(plan.partition_keys)} PDF(s) up to date")
    versions = environment_versions()
    fingerprints = {pdf.key: build_fingerprint(pdf.sha256, versions) for pdf in to_build}
    ordered = context.instance.get_dynamic_partitions(pdf_partitions.name)
    return SensorResult(run_requests=run_requests(ordered, fingerprints, range_size(), BUILD_CORPUS))


@sensor(
    job=export_corpus_job,
    minimum_interval_seconds=30,
    default_status=DefaultSensorStatus.RUNNING,
    description="Runs android_export once the PDFs of a build or backfill are done: when no run of the per-PDF "
    "stages or of the export is queued or running and the export is behind the stage files, or a file it published "
    "is missing or changed.",
)
def corpus_export_sensor(context: SensorEvaluationContext, paths: CorpusPaths) -> RunRequest | SkipReason:
    busy = _unfinished_builds_or_exports(context.instance)
    if busy:
        return SkipReason(f"{len(busy)} run(s) of the PDFs or the export not finished; the export waits for them")
    quiet = export_quiet_seconds()
    recent = _recent_builds_or_exports(context.instance, quiet)
    if recent:
        return SkipReason(
            f"{len(recent)} run(s) of the PDFs or the export ended less than {quiet:g} s ago; the export waits until "
            "none has for that long (a backfill submits its runs over several daemon passes)"
        )
    plan, _ = plan_folder(paths)
    keys = plan.partition_keys
    store = paths.store()
    last = read_export_state(paths.output_path)
    if last is None and not any(store.manifest(VALIDATED_CHUNKS, key) is not None for key in keys):
        # A deployment's first start: an export now would publish empty files, every PDF "never built".
        return SkipReason(f"none of the {len(keys)} PDF(s) built yet and no export made: nothing to export")
    behind = export_behind(store, plan, paths.corpus_names, paths.export_strict, paths.output_path)
    if behind is None:
        return SkipReason(f"the export is up to date with the {len(keys)} PDF(s)")
    context.log.info(f"the export is behind: {behind}")
    return RunRequest(
        run_key=export_run_key(export_fingerprint(store, plan, paths.corpus_names, paths.export_strict), last)
    )


def export_run_key(fingerprint: str, last: ExportState | None) -> str:
    """One export run per state of the stage files and of the last export: a file of that export damaged is
    repaired once (the repair records another export), and an export refused is not retried every tick."""
    return f"export@{fingerprint}" + (f"@{last.run_id}" if last is not None else "")
