"""The nightly corpus refresh: make the partitions equal to the raw folder, then build only what the plan says.

What to build comes from the plan (`defs.planning`): PDFs missing, changed, failed, built with
other settings, or whose stage file is missing or damaged, never a copy of another PDF. The PDFs
to build become runs over ranges (`ranges`); the export follows them (`corpus_export_sensor`).
"""

from __future__ import annotations

import os
from typing import Mapping

from dagster import DefaultScheduleStatus, RunRequest, ScheduleEvaluationContext, SkipReason, schedule

from pocket_assets.defs.jobs import build_corpus_job
from pocket_assets.defs.partition_sync import sync_partitions
from pocket_assets.defs.partitions import pdf_partitions, range_size
from pocket_assets.defs.planning import plan_folder
from pocket_assets.defs.ranges import run_requests
from pocket_assets.defs.resources import CorpusPaths, environment_versions
from pocket_assets.stages.planner import describe
from pocket_assets.stages.staleness import build_fingerprint

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
    "partitions equal to the deployment's raw folder (new PDFs added, removed ones deleted with their stage files), "
    "then builds only the PDFs that are missing or stale (changed sha256, chunker or policy bump, last attempt "
    "failed, stage file damaged), in ranges of PDFs; the export follows.",
)
def corpus_refresh(context: ScheduleEvaluationContext, paths: CorpusPaths) -> list[RunRequest] | SkipReason:
    plan, _ = plan_folder(paths)
    sync_partitions(context.instance, paths.store(), plan, log=context.log.info)
    to_build = plan.to_build
    if not to_build:
        return SkipReason(f"all {len(plan.partition_keys)} PDF(s) up to date")
    context.log.info(f"{len(to_build)} PDF(s) to build:\n{describe(to_build)}")
    versions = environment_versions()
    fingerprints = {pdf.key: build_fingerprint(pdf.sha256, versions) for pdf in to_build}
    ordered = context.instance.get_dynamic_partitions(pdf_partitions.name)
    return run_requests(ordered, fingerprints, range_size(), build_corpus_job.name)
