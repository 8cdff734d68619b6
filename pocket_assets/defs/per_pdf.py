"""Run one stage over every PDF of a run, so that one broken PDF fails only itself.

Dagster cannot mark a single partition of a multi-partition (single-run backfill)
step as failed (dagster issue 17836). So each stage catches a PDF's error,
records it in that partition's manifest (keeping its last good output), skips
the PDF downstream, and goes on with the others. Only errors about the PDF are
caught so (`defs.pdf_errors`); a bug fails the step whatever the number of
PDFs. A run of one PDF that fails still fails its step, so the UI shows the red
partition; a run of many reports the failures in metadata and through the
build command's exit code.
"""

from __future__ import annotations

import logging
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetExecutionContext,
    AssetObservation,
    Failure,
    MaterializeResult,
    MetadataValue,
)

from pocket_assets.defs.pdf_errors import PER_PDF_ERRORS
from pocket_assets.runstate.stages import Stage, stage_named
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
    """What a stage made of one PDF: rows to store (in the stage's schema), and numbers to show in the UI."""

    rows: list[dict[str, Any]]
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
    stage = stage_named(context.asset_key.to_user_string())
    built = _build_all(context, store, (stage,), lambda key: {stage: build(key)}, {stage: code_version}, workers)
    outcomes = built[stage]
    return _stage_result(stage, outcomes, summarize, checks, fail_when_all_fail)


def run_per_pdf_stages(
    context: AssetExecutionContext,
    store: PartitionStore,
    stages: Sequence[Stage],
    build: Callable[[str], Mapping[Stage, StageOutput]],
    versions: Mapping[Stage, str | None],
    summarize: Callable[[list[Outcome]], dict[str, Any]] | None = None,
    workers: int = 1,
) -> Iterator[MaterializeResult]:
    """`run_per_pdf` for a step that makes several stages of a PDF at once (a multi-asset):
    one `build` per PDF gives every stage's output; one result per stage."""
    outcomes = _build_all(context, store, stages, build, versions, workers)
    for stage in stages:
        yield _stage_result(stage, outcomes[stage], summarize, None, True)


def _stage_result(
    stage: Stage,
    outcomes: list[Outcome],
    summarize: Callable[[list[Outcome]], dict[str, Any]] | None,
    checks: Callable[[list[Outcome]], Sequence[AssetCheckResult]] | None,
    fail_when_all_fail: bool,
) -> MaterializeResult:
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
    return MaterializeResult(asset_key=stage.name, metadata=metadata, check_results=check_results)


def _build_all(
    context: AssetExecutionContext,
    store: PartitionStore,
    stages: Sequence[Stage],
    build: Callable[[str], Mapping[Stage, StageOutput]],
    versions: Mapping[Stage, str | None],
    workers: int,
) -> dict[Stage, list[Outcome]]:
    outcomes: dict[Stage, list[Outcome]] = {stage: [] for stage in stages}
    for key, built in build_in_workers(build, sorted(context.partition_keys), workers):
        for stage, outcome in _build_one(context, store, stages, key, built, versions).items():
            outcomes[stage].append(outcome)
    return outcomes


def _build_one(
    context: AssetExecutionContext,
    store: PartitionStore,
    stages: Sequence[Stage],
    key: str,
    build: Callable[[str], Mapping[Stage, StageOutput]],
    versions: Mapping[Stage, str | None],
) -> dict[Stage, Outcome]:
    """Errors about the PDF (`PER_PDF_ERRORS`) are recorded for it; any other error fails the step."""
    run_id = context.run.run_id
    try:
        outputs = build(key)
    except UpstreamNotReady as reason:
        return {
            stage: _record(context, store, stage, key, STATUS_SKIPPED, f"skipped: {reason}", versions[stage], run_id)
            for stage in stages
        }
    except PER_PDF_ERRORS as error:
        context.log.debug(traceback.format_exc())
        return {
            stage: _record(context, store, stage, key, STATUS_FAILED, str(error), versions[stage], run_id)
            for stage in stages
        }
    return {stage: _store(context, store, stage, key, outputs[stage], versions[stage], run_id) for stage in stages}


def _store(
    context: AssetExecutionContext,
    store: PartitionStore,
    stage: Stage,
    key: str,
    output: StageOutput,
    code_version: str | None,
    run_id: str,
) -> Outcome:
    store.write(
        stage,
        key,
        output.rows,
        PartitionManifest(
            asset=stage.name,
            partition_key=key,
            status=STATUS_OK,
            rows=len(output.rows),
            source_sha256=output.source_sha256,
            code_version=code_version,
            run_id=run_id,
            extra=output.extra,
        ),
    )
    metadata = {"path": MetadataValue.path(str(store.data_path(stage, key))), **output.metadata}
    context.log_event(AssetObservation(asset_key=stage.name, partition=key, metadata=metadata))
    context.log.info(f"{stage} {key}: {len(output.rows)} rows")
    return Outcome(key, STATUS_OK, None, output.metadata)


def _record(
    context: AssetExecutionContext,
    store: PartitionStore,
    stage: Stage,
    key: str,
    status: str,
    reason: str,
    code_version: str | None,
    run_id: str,
) -> Outcome:
    previous = store.manifest(stage, key)
    store.write_manifest(
        PartitionManifest(
            asset=stage.name,
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
    context.log.log(level, f"{stage} {key} {status}: {reason}")
    context.log_event(
        AssetObservation(asset_key=stage.name, partition=key, metadata={"status": status, "reason": reason})
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
