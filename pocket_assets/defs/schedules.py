"""The nightly corpus refresh: match the partitions to the raw folder, then build only what is missing or stale.

Staleness comes from the project's manifests (source sha256 and code version of every
stage, and whether the last attempt failed), not from Dagster's partition staleness. The
PDFs to build become runs over ranges (`ranges`); the export follows them
(`corpus_export_sensor`), also when PDFs were only removed.
"""

from __future__ import annotations

import os
from typing import Mapping

from dagster import DefaultScheduleStatus, RunRequest, ScheduleEvaluationContext, SkipReason, schedule

from pocket_assets.defs.jobs import build_corpus_job
from pocket_assets.defs.partition_sync import forget_pdfs, register_pdfs, vanished_pdfs
from pocket_assets.defs.partitions import pdf_partitions, range_size
from pocket_assets.defs.ranges import run_requests
from pocket_assets.defs.resources import CorpusPaths, SettingResources, environment_versions
from pocket_assets.stages.duplicates import duplicate_pdfs
from pocket_assets.stages.staleness import build_fingerprint, describe

REFRESH_CRON_VARIABLE = "POCKET_ASSETS_REFRESH_CRON"
REFRESH_TIMEZONE_VARIABLE = "POCKET_ASSETS_REFRESH_TIMEZONE"
DEFAULT_REFRESH_CRON = "0 3 * * *"
SCHEDULE_NAME = "corpus_refresh"


def refresh_cron(environ: Mapping[str, str] = os.environ) -> str:
    return environ.get(REFRESH_CRON_VARIABLE, "").strip() or DEFAULT_REFRESH_CRON


@schedule(
    name=SCHEDULE_NAME,
    job=build_corpus_job,
    cron_schedule=refresh_cron(),
    execution_timezone=os.environ.get(REFRESH_TIMEZONE_VARIABLE, "UTC"),
    default_status=DefaultScheduleStatus.RUNNING,
    description=f"Nightly corpus refresh (cron ${REFRESH_CRON_VARIABLE}, default '{DEFAULT_REFRESH_CRON}'): makes the "
    "partitions match the deployment's raw folder (new PDFs added, removed ones deleted with their stage files), then "
    "builds only the PDFs that are missing or stale (changed sha256, chunker or policy bump, last attempt failed), "
    "in ranges of PDFs; the export follows.",
)
def corpus_refresh(context: ScheduleEvaluationContext, paths: CorpusPaths) -> list[RunRequest] | SkipReason:
    instance = context.instance
    keys = list(paths.scan().keys)
    register_pdfs(instance, keys)
    forget_pdfs(instance, paths.store(), vanished_pdfs(instance, keys), log=context.log.info)
    sources = paths.sources(keys)
    versions = environment_versions()
    duplicates = {} if paths.keep_duplicates else duplicate_pdfs(sources)
    verdicts = SettingResources.from_environment().staleness(paths.store(), sources)
    stale = [verdict for verdict in verdicts if verdict.stale and verdict.partition_key not in duplicates]
    if not stale:
        return SkipReason(f"all {len(keys)} PDF(s) up to date")
    context.log.info(f"{len(stale)} PDF(s) to build:\n{describe(stale)}")
    fingerprints = {verdict.partition_key: build_fingerprint(sources[verdict.partition_key], versions) for verdict in stale}
    ordered = instance.get_dynamic_partitions(pdf_partitions.name)
    return run_requests(ordered, fingerprints, range_size(), build_corpus_job.name)
