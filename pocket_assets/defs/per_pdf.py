"""Run one stage over every PDF of a run, so that one broken PDF fails only itself, and show each PDF's own state.

Dagster 1.13 gives user code no way to materialize only some partitions of a
multi-partition (single-run backfill) step: a yielded result materializes every
partition of the run (dagster issue 17836). What it does compute per partition
(`_core/storage/partition_status_cache.py`): a partition whose latest event is a
planned materialization, with no materialization after it, in a run that ended
FAILED, is failed; `assetPartitionStatuses` then lists it among the failed
partitions and not the materialized ones, and a later materialization turns it
green again. So each stage:

1. builds every PDF of the run, stores each good output and records a failure in
   the PDF's manifest, keeping its last good file; the run log gets a progress
   line every few seconds naming the PDFs built since (`[i/N] key`: the i-th PDF
   done, `run_progress`), and each failure at once on its own line (a crash's
   traceback at ERROR). With workers (`pdf_workers`), the longest PDFs start first
   and each worker writes the files of the PDFs it built, so the step's process
   neither waits on a long PDF at the end nor encodes every PDF's Parquet itself;
   what the step reports is then put back in key order, so the run's events are
   the serial build's;
2. yields one result whose materialization of each partition carries that PDF's
   own numbers (`add_asset_metadata(..., partition_key=...)`): row count, seconds
   and the stage's figures (the column schema, the same for every PDF, is the
   asset's: `partitions`); run totals go to the run log;
3. plans each failed PDF again after its materialization (`mark_failed`), so the
   run's failure makes Dagster show exactly that partition failed; a step that
   fails as a whole plans every PDF of the run (`planned_events.mark_crashed`);
4. fails the run: the `every_pdf_built` check does it after the export, so the
   other PDFs still ship; in a run without that check, the run's last per-PDF
   stage fails its step (earlier ones must not: their good PDFs go on).
"""

from __future__ import annotations

import logging
import time
import traceback
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, Sequence

from dagster import (
    AssetCheckKey,
    AssetCheckResult,
    AssetCheckSeverity,
    AssetExecutionContext,
    AssetKey,
    Failure,
    MaterializeResult,
    MetadataValue,
)

if TYPE_CHECKING:
    import pyarrow as pa

# Private, and needed at scale: Dagster 1.13 has no public way to add many partitions' metadata in
# less than quadratic time (see `add_partition_metadata`).
from dagster._core.execution.context.metadata_logging import AssetMetadataHandle, OutputMetadataAccumulator

from pocket_assets.defs.pdf_errors import PER_PDF_ERRORS, PdfRejected
from pocket_assets.defs.pdf_workers import build_in_workers
from pocket_assets.defs.planned_events import mark_crashed, mark_failed
from pocket_assets.defs.run_progress import ProgressLog
from pocket_assets.runstate.stages import SOURCE, Stage, stage_named
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
    """What a stage made of one PDF: rows to store (in the stage's schema), and numbers to show in the UI."""

    rows: list[dict[str, Any]] | pa.Table  # a table: stage files read back (`validated_chunks`), written as they are
    source_sha256: str | None
    metadata: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


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


Checks = Callable[[Sequence[Outcome]], Sequence[AssetCheckResult]]


def run_per_pdf(
    context: AssetExecutionContext,
    store: PartitionStore,
    build: Callable[[str], StageOutput],
    code_version: str | None = None,
    checks: Checks | None = None,
    workers: int = 1,
) -> Iterator[MaterializeResult]:
    """Build, store and report every partition of the run for the step's one stage; see the module docstring.

    `checks`, called once every PDF was tried, gives the asset's check results. A `build`
    without side effects may run in `workers` processes (`pdf_workers`).
    """
    stage = stage_named(context.asset_key.to_user_string())
    yield from run_per_pdf_stages(
        context, store, (stage,), lambda key: {stage: build(key)}, {stage: code_version}, checks, workers
    )


def run_per_pdf_stages(
    context: AssetExecutionContext,
    store: PartitionStore,
    stages: Sequence[Stage],
    build: Callable[[str], Mapping[Stage, StageOutput]],
    versions: Mapping[Stage, str | None],
    checks: Checks | None = None,
    workers: int = 1,
    after_building: Callable[[], None] | None = None,
) -> Iterator[MaterializeResult]:
    """`run_per_pdf` for a step that makes one or several stages of a PDF at once (a multi-asset):
    one `build` per PDF gives every stage's output; one result per stage. `after_building` is called
    once every PDF was tried and the workers are gone, if any PDF was built, before the step reports
    (Dagster then stores its events: seconds of this process alone at scale).

    What the run had loaded when the step started (Dagster, the resources, the tokenizer) is kept out of
    the cyclic collector's full collections while the step runs (`loaded_objects_frozen`): they walked
    it all, several times a step, and found nothing of it to free."""
    if True:
        keys = sorted(context.partition_keys)
        outcomes: dict[Stage, list[Outcome]] = {stage: [] for stage in stages}
        progress = ProgressLog("+".join(stage.name for stage in stages), len(keys), context.log.info)
        stored = _stored(build, store, stages, versions, context.run.run_id)
        started = longest_first(store, keys) if workers > 1 else keys
        materialized: list[AssetKey] = []
        try:
            try:
                for index, (key, built) in enumerate(build_in_workers(stored, started, workers), start=1):
                    built_stages = _build_one(context, store, stages, key, built, versions, progress, index)
                    for stage, outcome in built_stages.items():
                        outcomes[stage].append(outcome)
            finally:
                progress.flush()  # also when the step fails: the PDFs it did build are in the log
            if after_building is not None and any(outcome.ok for outcome in outcomes[stages[-1]]):
                after_building()
            for stage in stages:
                # the run's events in key order, as a serial run gives them
                outcomes[stage].sort(key=lambda outcome: outcome.partition_key)
                add_partition_metadata(context, stage, outcomes[stage])
                context.log.info(run_totals(stage.name, outcomes[stage]))
                check_results = list(checks(outcomes[stage])) if checks is not None else []
                yield MaterializeResult(asset_key=stage.name, check_results=check_results)
                materialized.append(AssetKey(stage.name))
        except Exception:
            made_here = [AssetKey(stage.name) for stage in stages]
            mark_crashed(context, made_here, materialized, keys)  # shown failed, PDF by PDF, once the run fails
            raise
        failed = [outcome for outcome in outcomes[stages[-1]] if not outcome.ok]
        if not failed:
            return
        for stage in stages:
            failed_here = [outcome.partition_key for outcome in outcomes[stage] if not outcome.ok]
            mark_failed(context, AssetKey(stage.name), failed_here, "failed in this run")
        if not _failure_reported_later(context, stages):
            raise Failure(
                description=f"{len(failed)} of {len(keys)} PDF(s) failed {stages[-1]}: "
                + " / ".join(f"{outcome.partition_key}: {outcome.reason}" for outcome in failed),
                metadata={"failed_partitions": MetadataValue.md(failure_table(failed))},
            )


def longest_first(store: PartitionStore, keys: Sequence[str]) -> list[str]:
    """The keys by decreasing page count (what `raw_pdf` recorded; 0 when it has not), ties in key order:
    the order that keeps every worker busy to the end (a long PDF started last runs alone)."""

    def page_count(key: str) -> int:
        identity = store.read_last_good(SOURCE, key, ["page_count"])
        if identity is None or identity.num_rows == 0:
            return 0
        return identity.column(0)[0].as_py() or 0

    counts = {key: page_count(key) for key in keys}
    return sorted(keys, key=lambda key: (-counts[key], key))


def _failure_reported_later(context: AssetExecutionContext, stages: Sequence[Stage]) -> bool:
    """Whether something after this step in the run fails the run for this step's failed PDFs: the
    `every_pdf_built` check, or a later per-PDF stage (which finds them skipped, and so on)."""
    layer = context.job_def.asset_layer
    if EVERY_PDF_BUILT in layer.asset_graph.asset_check_keys:
        return True
    in_run = layer.selected_asset_keys
    made_here = {AssetKey(stage.name) for stage in stages}
    later = {child for key in made_here for child in layer.asset_graph.get(key).child_keys} - made_here
    return any(key in in_run and layer.asset_graph.get(key).partitions_def is not None for key in later)


def add_partition_metadata(context: AssetExecutionContext, stage: Stage, outcomes: Sequence[Outcome]) -> None:
    """Each PDF's own numbers on its partition's materialization, as `context.add_asset_metadata(...,
    partition_key=key)` once per PDF would put them, in one go.

    Private, and needed at scale: Dagster 1.13's `add_asset_metadata` loads every partition key of
    the dynamic partitions from the instance to check the one it is given (`system.py`), and copies
    the step's whole metadata so far, at each call: quadratic in the PDFs of a run (~25 ms a call with
    40 PDFs). The keys are checked here once against the run's; the accumulator is the step's own.
    """
    targeted = set(context.partition_keys)
    unknown = [outcome.partition_key for outcome in outcomes if outcome.partition_key not in targeted]
    if unknown:
        raise ValueError(f"{stage}: metadata for partitions this run does not target: {unknown[:5]}")
    step = context.op_execution_context.get_step_execution_context()
    so_far = step._metadata_accumulator.per_output_metadata  # noqa: SLF001
    added = {}
    for outcome in outcomes:
        handle = AssetMetadataHandle(asset_key=AssetKey(stage.name), partition_key=outcome.partition_key)
        added[handle] = {**so_far.get(handle, {}), **added.get(handle, {}), **outcome.metadata}
    step._metadata_accumulator = OutputMetadataAccumulator(per_output_metadata={**so_far, **added})  # noqa: SLF001


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


def _build_one(
    context: AssetExecutionContext,
    store: PartitionStore,
    stages: Sequence[Stage],
    key: str,
    build: Callable[[str], StoredPdf],
    versions: Mapping[Stage, str | None],
    progress: ProgressLog,
    index: int,
) -> dict[Stage, Outcome]:
    """Errors about the PDF (`PER_PDF_ERRORS`) are recorded for it; any other error fails the step.

    A built PDF goes to the step's progress line (`run_progress`: one line every few seconds, each
    line an event stored in the run's database); a failed one is logged at once, on its own, with
    its place in the run (`[i/N]`) and, for a crash, its traceback at ERROR."""
    label = f"[{index}/{progress.total}] {key}"
    try:
        built = build(key)
    except PER_PDF_ERRORS as error:
        progress.flush()  # the PDFs built before this one come first in the log
        if not isinstance(error, (UpstreamNotReady, PdfRejected)):  # a verdict needs no traceback; a crash does
            context.log.error(f"{progress.names} {label} raised:\n{traceback.format_exc()}")
        status = STATUS_SKIPPED if isinstance(error, UpstreamNotReady) else STATUS_FAILED
        rejection = error if isinstance(error, PdfRejected) else None
        return {
            stage: _record(context, store, stage, label, key, status, str(error), versions[stage], rejection)
            for stage in stages
        }
    progress.built(index, built.summary)
    return {stage: built.outcomes[stage.name] for stage in stages}


@dataclass(frozen=True)
class StoredPdf:
    """A PDF whose stage outputs are written: each stage's outcome (by stage name), and the progress
    line's words for it. Small: this, not the rows, is what a worker sends back."""

    outcomes: Mapping[str, Outcome]
    summary: str


def _stored(
    build: Callable[[str], Mapping[Stage, StageOutput]],
    store: PartitionStore,
    stages: Sequence[Stage],
    versions: Mapping[Stage, str | None],
    run_id: str,
) -> Callable[[str], StoredPdf]:
    """`build`, then its outputs written, in whichever process builds the PDF (a worker encodes its own
    PDFs' Parquet). `seconds` is the build's, on the clock of the process that built it."""

    def build_and_store(key: str) -> StoredPdf:
        started = time.perf_counter()
        outputs = build(key)
        seconds = round(time.perf_counter() - started, 3)
        outcomes = {
            stage.name: _store(store, run_id, stage, key, outputs[stage], versions[stage], seconds) for stage in stages
        }
        rows = ", ".join(f"{stage} {len(outputs[stage].rows)} rows" for stage in stages)
        return StoredPdf(outcomes, f"{key}: {rows} in {seconds} s")

    return build_and_store


def _store(
    store: PartitionStore,
    run_id: str,
    stage: Stage,
    key: str,
    output: StageOutput,
    code_version: str | None,
    seconds: float,
) -> Outcome:
    path = store.write(
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
    metadata = {
        "status": STATUS_OK,
        "dagster/row_count": len(output.rows),
        "seconds": seconds,
        **output.metadata,
        "path": MetadataValue.path(str(path)),
    }
    return Outcome(key, STATUS_OK, None, metadata, output.extra)


def _record(
    context: AssetExecutionContext,
    store: PartitionStore,
    stage: Stage,
    label: str,
    key: str,
    status: str,
    reason: str,
    code_version: str | None,
    rejection: PdfRejected | None = None,
) -> Outcome:
    """The manifest says how this attempt ended; the last good file, if any, stays (and is named)."""
    previous = store.manifest(stage, key)
    extra = rejection.extra if rejection else {}
    store.write_manifest(
        PartitionManifest(
            asset=stage.name,
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
    context.log.log(level, f"{stage} {label} {status}: {reason}")
    metadata: dict[str, Any] = {"status": status, "reason": MetadataValue.text(reason)}
    if rejection:
        metadata.update(rejection.metadata)
    kept = store.data_path(stage, key)
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
