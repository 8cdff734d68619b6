"""The nightly corpus refresh: rescan the raw folder, then build only what is missing or stale.

Staleness comes from the project's manifests (source sha256 and code version of
every stage), not from Dagster's partition staleness. Each request's run key is
the fingerprint of what it would build from, and a key this schedule already
launched is not launched again, so a second evaluation with nothing changed
launches nothing (a PDF that keeps failing is retried when it or the code
changes, or by hand with `pocket-assets build --stale`).
"""

from __future__ import annotations

import hashlib
import os
from typing import Mapping

from dagster import (
    AssetKey,
    DagsterInstance,
    DefaultScheduleStatus,
    RunRequest,
    RunsFilter,
    ScheduleEvaluationContext,
    SkipReason,
    schedule,
)
# Private on purpose: Dagster 1.13 has no public name for the run-key and schedule tags it sets on the
# runs a schedule launches, and finding those runs is how run keys are deduplicated across ticks.
from dagster._core.storage.tags import RUN_KEY_TAG, SCHEDULE_NAME_TAG

from pocket_assets.runstate.staleness import build_fingerprint, describe
from pocket_assets.defs.jobs import build_corpus_job
from pocket_assets.defs.partition_ranges import run_requests_for
from pocket_assets.defs.partition_sync import sync_partitions
from pocket_assets.defs.partitions import pdf_partitions
from pocket_assets.defs.resources import CorpusPaths
from pocket_assets.defs.resources import environment_versions
from pocket_assets.defs.staleness import current_sources, pdf_staleness

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
    description=f"Nightly corpus refresh (cron ${REFRESH_CRON_VARIABLE}, default '{DEFAULT_REFRESH_CRON}'): "
    "adds and removes partitions to match the raw folder, then builds only the PDFs that are missing or "
    "stale (changed sha256, chunker or policy bump, last attempt failed), in as few runs as possible.",
)
def corpus_refresh(context: ScheduleEvaluationContext, paths: CorpusPaths) -> list[RunRequest] | SkipReason:
    instance = context.instance
    before = instance.get_dynamic_partitions(pdf_partitions.name)
    keys = sync_partitions(instance, paths, log=context.log.info)
    removed = sorted(set(before) - set(keys))
    sources = current_sources(paths.raw_path, keys)
    versions = environment_versions()
    stale = [verdict for verdict in pdf_staleness(paths, sources, versions) if verdict.stale]
    ordered = instance.get_dynamic_partitions(pdf_partitions.name)
    requests = run_requests_for(
        ordered,
        {verdict.partition_key: build_fingerprint(sources[verdict.partition_key], versions) for verdict in stale},
    )
    if removed and not stale:
        requests.append(_export_request(keys, sources))
    new_requests = [request for request in requests if not _already_launched(instance, request.run_key)]
    if new_requests:
        if stale:
            context.log.info(f"{len(stale)} PDF(s) to build:\n{describe(stale)}")
        return new_requests
    if stale:
        return SkipReason(
            f"{len(stale)} stale PDF(s) already tried with these files and code versions:\n{describe(stale)}"
        )
    return SkipReason(f"all {len(keys)} PDF(s) up to date")


def _export_request(keys: list[str], sources: Mapping[str, str]) -> RunRequest:
    """Only the export: a removed PDF must leave the exports even when nothing else needs building."""
    corpus = hashlib.sha256("\n".join(f"{key}@{sources[key]}" for key in keys).encode()).hexdigest()[:16]
    return RunRequest(run_key=f"android_export@{corpus}", asset_selection=[AssetKey("android_export")])


def _already_launched(instance: DagsterInstance, run_key: str | None) -> bool:
    """Schedules dedupe run keys within one tick only; this makes them hold across ticks."""
    if run_key is None:
        return False
    tags = {RUN_KEY_TAG: run_key, SCHEDULE_NAME_TAG: SCHEDULE_NAME}
    return bool(instance.get_run_records(filters=RunsFilter(tags=tags), limit=1))
