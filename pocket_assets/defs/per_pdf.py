"""Run one stage over every PDF of a run, so that one broken PDF fails only itself, and show each PDF's own state.

Dagster 1.13 gives user code no way to materialize only some partitions of a
multi-partition (single-run backfill) step: a yielded result materializes every
partition of the run (dagster issue 17836). What it does compute per partition
(`_core/storage/partition_status_cache.py`): a partition whose latest event is a
planned materialization, with no materialization after it, in a run that ended
FAILED, is failed; `assetPartitionStatuses` then lists it among the failed
partitions and not the materialized ones, and a later materialization turns it
green again. So each stage:

1. builds every PDF of the run in turn (`[i/N] key` in the run log), stores each
   good output and records a failure in the PDF's manifest, keeping its last
   good file; a crash's traceback goes to the run log at ERROR;
2. yields one result whose materialization of each partition carries that PDF's
   own numbers (`add_asset_metadata(..., partition_key=...)`): row count, column
   schema, seconds and the stage's figures; run totals go to the run log;
3. plans each failed PDF again after its materialization (`mark_failed`), so the
   run's failure makes Dagster show exactly that partition failed;
4. fails the run: the `every_pdf_built` check does it after the export, so the
   other PDFs still ship; in a run without that check, the run's last per-PDF
   stage fails its step (earlier ones must not: their good PDFs go on).
"""

from __future__ import annotations

import logging
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Sequence

import pyarrow as pa
from dagster import (
    AssetCheckKey,
    AssetCheckResult,
    AssetCheckSeverity,
    AssetExecutionContext,
    AssetKey,
    Failure,
    MaterializeResult,
    MetadataValue,
    TableColumn,
    TableSchema,
)
from dagster._core.events import AssetMaterializationPlannedData, DagsterEvent, DagsterEventType

from pocket_assets.runstate.storage import (
    STATUS_FAILED,
    STATUS_OK,
    STATUS_SKIPPED,
    PartitionManifest,
    PartitionStore,
    UpstreamNotReady,
)

# The check that fails a run in which any PDF failed, once the export has shipped the others.
EVERY_PDF_BUILT = AssetCheckKey(AssetKey("android_export"), "every_pdf_built")
_NOT_ADDED = ("dagster/", "tokens_")


@dataclass(frozen=True)
class StageOutput:
    """What a stage made of one PDF: rows to store, and numbers to show in the UI."""

    rows: list[dict[str, Any]]
    schema: pa.Schema
    source_sha256: str | None
    metadata: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


class PdfRejected(Exception):
    """A stage's verdict on a PDF (not a crash): logged without a traceback, with what it found.

    `extra` is kept in the PDF's manifest (e.g. the gates' findings, for the corpus-level
    checks); `metadata` goes onto the PDF's materialization.
    """

    def __init__(self, sentence: str, metadata: dict[str, Any], extra: dict[str, Any]) -> None:
        super().__init__(sentence)
        self.metadata = metadata
        self.extra = extra


@dataclass(frozen=True)
class Outcome:
    """How one PDF fared in this step; `extra` is what its manifest now holds beyond the status."""

    partition_key: str
    status: str
    reason: str | None
    metadata: dict[str, Any]
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == STATUS_OK


def run_per_pdf(
    context: AssetExecutionContext,
    store: PartitionStore,
    build: Callable[[str], StageOutput],
    code_version: str | None = None,
    checks: Callable[[Sequence[Outcome]], Sequence[AssetCheckResult]] | None = None,
) -> Iterator[MaterializeResult]:
    """Build, store and report every partition of the run; see the module docstring.

    `checks`, called once every PDF was tried, gives the asset's check results.
    """
    asset = context.asset_key.to_user_string()
    keys = sorted(context.partition_keys)
    outcomes = [
        _build_one(context, store, asset, key, build, code_version, f"[{index}/{len(keys)}]")
        for index, key in enumerate(keys, start=1)
    ]
    for outcome in outcomes:
        context.add_asset_metadata(outcome.metadata, partition_key=outcome.partition_key)
    failed = [outcome for outcome in outcomes if not outcome.ok]
    context.log.info(run_totals(asset, outcomes))
    yield MaterializeResult(check_results=list(checks(outcomes)) if checks is not None else [])
    if not failed:
        return
    mark_failed(context, [outcome.partition_key for outcome in failed])
    if not _failure_reported_later(context):
        raise Failure(
            description=f"{len(failed)} of {len(outcomes)} PDF(s) failed {asset}: "
            + " / ".join(f"{outcome.partition_key}: {outcome.reason}" for outcome in failed),
            metadata={"failed_partitions": MetadataValue.md(failure_table(failed))},
        )


def _failure_reported_later(context: AssetExecutionContext) -> bool:
    """Whether something after this step in the run fails the run for this step's failed PDFs: the
    `every_pdf_built` check, or a later per-PDF stage (which finds them skipped, and so on)."""
    layer = context.job_def.asset_layer
    if EVERY_PDF_BUILT in layer.asset_graph.asset_check_keys:
        return True
    in_run = layer.selected_asset_keys
    later = layer.asset_graph.get(context.asset_key).child_keys
    return any(key in in_run and layer.asset_graph.get(key).partitions_def is not None for key in later)


def mark_failed(context: AssetExecutionContext, partition_keys: Sequence[str]) -> None:
    """Plan these partitions again after their materialization: once the run fails, Dagster shows them failed.

    The framework's own planned events are made the same way (`run_domain.py`); this one
    only comes later in the run, so it is each partition's latest event.
    """
    step_key = context.op_execution_context.get_step_execution_context().step.key
    asset = context.asset_key.to_user_string()
    for key in partition_keys:
        event = DagsterEvent(
            event_type_value=DagsterEventType.ASSET_MATERIALIZATION_PLANNED.value,
            job_name=context.run.job_name,
            message=f"{asset} {key} failed in this run: planned again with no materialization, so it shows failed",
            event_specific_data=AssetMaterializationPlannedData(context.asset_key, partition=key),
            step_key=step_key,
        )
        context.instance.report_dagster_event(event, context.run.run_id, logging.WARNING)


def run_totals(asset: str, outcomes: Sequence[Outcome]) -> str:
    """One log line: how many PDFs went through, and their counts summed (token statistics do not add)."""
    built = [outcome for outcome in outcomes if outcome.ok]
    totals: dict[str, float] = {}
    for outcome in built:
        for name, value in outcome.metadata.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) and not name.startswith(_NOT_ADDED):
                totals[name] = totals.get(name, 0) + value
    figures = ", ".join(f"{name} {round(value, 3)}" for name, value in sorted(totals.items()))
    return f"{asset}: {len(built)} of {len(outcomes)} PDF(s) built" + (f"; totals: {figures}" if figures else "")


def column_schema(schema: pa.Schema) -> TableSchema:
    return TableSchema(columns=[TableColumn(name=f.name, type=str(f.type)) for f in schema])


def _build_one(
    context: AssetExecutionContext,
    store: PartitionStore,
    asset: str,
    key: str,
    build: Callable[[str], StageOutput],
    code_version: str | None,
    progress: str,
) -> Outcome:
    context.log.info(f"{asset} {progress} {key}")
    started = time.perf_counter()
    try:
        output = build(key)
    except UpstreamNotReady as reason:
        return _record(context, store, asset, key, STATUS_SKIPPED, str(reason), code_version)
    except PdfRejected as rejection:
        return _record(context, store, asset, key, STATUS_FAILED, str(rejection), code_version, rejection)
    except Exception as error:  # one PDF's failure, whatever it is, must not stop the others
        context.log.error(f"{asset} {key} raised:\n{traceback.format_exc()}")
        return _record(context, store, asset, key, STATUS_FAILED, str(error), code_version)
    seconds = round(time.perf_counter() - started, 3)
    path = store.write(
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
            run_id=context.run.run_id,
            extra=output.extra,
        ),
    )
    metadata = {
        "status": STATUS_OK,
        "dagster/row_count": len(output.rows),
        "dagster/column_schema": column_schema(output.schema),
        "seconds": seconds,
        **output.metadata,
        "path": MetadataValue.path(str(path)),
    }
    context.log.info(f"{asset} {progress} {key}: {len(output.rows)} rows in {seconds} s")
    return Outcome(key, STATUS_OK, None, metadata, output.extra)


def _record(
    context: AssetExecutionContext,
    store: PartitionStore,
    asset: str,
    key: str,
    status: str,
    reason: str,
    code_version: str | None,
    rejection: PdfRejected | None = None,
) -> Outcome:
    """The manifest says how this attempt ended; the last good file, if any, stays (and is named)."""
    previous = store.manifest(asset, key)
    extra = rejection.extra if rejection else {}
    store.write_manifest(
        PartitionManifest(
            asset=asset,
            partition_key=key,
            status=status,
            reason=reason,
            rows=0,
            source_sha256=previous.source_sha256 if previous else None,
            code_version=code_version,
            run_id=context.run.run_id,
            extra=extra,
        )
    )
    level = logging.WARNING if status == STATUS_SKIPPED else logging.ERROR
    context.log.log(level, f"{asset} {key} {status}: {reason}")
    metadata: dict[str, Any] = {"status": status, "reason": MetadataValue.text(reason)}
    if rejection:
        metadata.update(rejection.metadata)
    kept = store.data_path(asset, key)
    if kept.is_file():
        metadata["kept_file"] = MetadataValue.path(str(kept))
    return Outcome(key, status, reason, metadata, extra)


def failed_pdfs_check(check_name: str) -> Callable[[Sequence[Outcome]], list[AssetCheckResult]]:
    """A check that passes when every PDF of the run went through, and lists those that did not."""

    def check(outcomes: Sequence[Outcome]) -> list[AssetCheckResult]:
        failed = [outcome for outcome in outcomes if not outcome.ok]
        return [
            AssetCheckResult(
                check_name=check_name,
                passed=not failed,
                severity=AssetCheckSeverity.ERROR,
                metadata={
                    "pdfs_checked": len(outcomes),
                    "pdfs_failed": len(failed),
                    "failures": MetadataValue.md(failure_table(failed) if failed else "none"),
                },
            )
        ]

    return check


def failure_table(outcomes: Iterable[Outcome]) -> str:
    lines = ["| PDF | status | reason |", "|---|---|---|"]
    lines += [f"| {o.partition_key} | {o.status} | {(o.reason or '').replace('|', '/')} |" for o in outcomes]
    return "\n".join(lines)
