"""Run one stage over every PDF of a run, so that one broken PDF fails only itself.

Dagster cannot mark a single partition of a multi-partition (single-run backfill)
step as failed (dagster issue 17836). So each stage catches a PDF's error,
records it in that partition's manifest (keeping its last good output), skips
the PDF downstream, and goes on with the others. A run of one PDF that fails
still fails its step, so the UI shows the red partition; a run of many reports
the failures in metadata and through the build command's exit code.
"""

from __future__ import annotations

import logging
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

import pyarrow as pa
from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetExecutionContext,
    AssetObservation,
    Failure,
    MaterializeResult,
    MetadataValue,
)

from pocket_assets.defs.pdf_workers import build_in_workers
from pocket_assets.runstate.storage import (
    STATUS_FAILED,
    STATUS_OK,
    STATUS_SKIPPED,
    PartitionManifest,
    PartitionStore,
    UpstreamNotReady,
)


@dataclass(frozen=True)
class StageOutput:
    """What a stage made of one PDF: rows to store, and numbers to show in the UI."""

    rows: list[dict[str, Any]]
    schema: pa.Schema
    source_sha256: str | None
    metadata: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Outcome:
    partition_key: str
    status: str
    reason: str | None
    metadata: dict[str, Any]


def run_per_pdf(
    context: AssetExecutionContext,
    store: PartitionStore,
    build: Callable[[str], StageOutput],
    code_version: str | None = None,
    summarize: Callable[[list[Outcome]], dict[str, Any]] | None = None,
    checks: Callable[[list[Outcome]], Sequence[AssetCheckResult]] | None = None,
    fail_when_all_fail: bool = True,
    workers: int = 1,
) -> MaterializeResult:
    """Build, store and report every partition of the run; see the module docstring.

    `checks` (called after every PDF was tried) gives the asset's check results.
    An asset whose checks judge the PDFs (the gates) sets `fail_when_all_fail=False`:
    its failed PDFs show as failed checks, which block what is downstream.
    A `build` without side effects may run in `workers` processes (`pdf_workers`).
    """
    asset = context.asset_key.to_user_string()
    keys = sorted(context.partition_keys)
    outcomes = [
        _build_one(context, store, asset, key, built, code_version)
        for key, built in build_in_workers(build, keys, workers)
    ]
    failed = [outcome for outcome in outcomes if outcome.status != STATUS_OK]
    if failed and len(failed) == len(outcomes) and fail_when_all_fail:
        raise Failure(
            description=" / ".join(f"{outcome.partition_key}: {outcome.reason}" for outcome in failed),
            metadata={"failed_partitions": MetadataValue.md(_failure_table(failed))},
        )
    metadata: dict[str, Any] = {
        "partitions": len(outcomes),
        "partitions_failed": len(failed),
    }
    if failed:
        metadata["failed_partitions"] = MetadataValue.md(_failure_table(failed))
    check_results = list(checks(outcomes)) if checks is not None else []
    if summarize is not None:
        metadata.update(summarize([outcome for outcome in outcomes if outcome.status == STATUS_OK]))
    return MaterializeResult(metadata=metadata, check_results=check_results)


def _build_one(
    context: AssetExecutionContext,
    store: PartitionStore,
    asset: str,
    key: str,
    build: Callable[[str], StageOutput],
    code_version: str | None,
) -> Outcome:
    run_id = context.run.run_id
    try:
        output = build(key)
    except UpstreamNotReady as reason:
        return _record(context, store, asset, key, STATUS_SKIPPED, f"skipped: {reason}", code_version, run_id)
    except Exception as error:  # one PDF's failure, whatever it is, must not stop the others
        context.log.debug(traceback.format_exc())
        return _record(context, store, asset, key, STATUS_FAILED, str(error), code_version, run_id)
    store.write(
        asset,
        key,
        output.rows,
        output.schema,
        PartitionManifest(
            asset=asset,
            partition_key=key,
            status=STATUS_OK,
            rows=len(output.rows),
            source_sha256=output.source_sha256,
            code_version=code_version,
            run_id=run_id,
            extra=output.extra,
        ),
    )
    metadata = {"path": MetadataValue.path(str(store.data_path(asset, key))), **output.metadata}
    context.log_event(AssetObservation(asset_key=context.asset_key, partition=key, metadata=metadata))
    context.log.info(f"{asset} {key}: {len(output.rows)} rows")
    return Outcome(key, STATUS_OK, None, output.metadata)


def _record(
    context: AssetExecutionContext,
    store: PartitionStore,
    asset: str,
    key: str,
    status: str,
    reason: str,
    code_version: str | None,
    run_id: str,
) -> Outcome:
    previous = store.manifest(asset, key)
    store.write_manifest(
        PartitionManifest(
            asset=asset,
            partition_key=key,
            status=status,
            reason=reason,
            rows=0,
            source_sha256=previous.source_sha256 if previous else None,
            code_version=code_version,
            run_id=run_id,
        )
    )
    level = logging.WARNING if status == STATUS_SKIPPED else logging.ERROR
    context.log.log(level, f"{asset} {key} {status}: {reason}")
    context.log_event(
        AssetObservation(asset_key=context.asset_key, partition=key, metadata={"status": status, "reason": reason})
    )
    return Outcome(key, status, reason, {})


def failed_pdfs_check(check_name: str) -> Callable[[list[Outcome]], list[AssetCheckResult]]:
    """A check that passes when every PDF of the run went through, and lists those that did not."""

    def check(outcomes: list[Outcome]) -> list[AssetCheckResult]:
        failed = [outcome for outcome in outcomes if outcome.status != STATUS_OK]
        return [
            AssetCheckResult(
                check_name=check_name,
                passed=not failed,
                severity=AssetCheckSeverity.ERROR,
                metadata={
                    "pdfs_checked": len(outcomes),
                    "pdfs_failed": len(failed),
                    "failures": MetadataValue.md(_failure_table(failed) if failed else "none"),
                },
            )
        ]

    return check


def _failure_table(outcomes: Iterable[Outcome]) -> str:
    lines = ["| PDF | status | reason |", "|---|---|---|"]
    lines += [f"| {o.partition_key} | {o.status} | {(o.reason or '').replace('|', '/')} |" for o in outcomes]
    return "\n".join(lines)
