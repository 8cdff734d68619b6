"""Each PDF's truth told to Dagster as it comes: a materialization per stage it built, the reason for one it did not.

A run covers a range of PDFs (a multi-run backfill, or one PDF); its step builds them all
and yields each PDF's events as soon as the PDF is done, so the UI's partitions turn green
while the run goes on. A stage that succeeded for a PDF is a materialization of that
partition, with the PDF's own numbers and the version tags Dagster's staleness reads
(`provenance`). A stage a PDF did not pass gets no materialization, so Dagster's own rule
colours it failed once the run fails (Assets > Partitions, the badge, the backfill's counts),
and an observation whose description is the one-sentence reason. The partition's page shows
its entries (status, reason, run_id) under "Run … failed" when the PDF was built before (Dagster
lists the observations that follow the latest materialization); for a PDF never built, only
"View all historical events" has it. The run fails at the end, naming every failed PDF.

The run log gets a line every few seconds naming the PDFs done since, with the counts of PDFs
built and failed so far (`ProgressLog`), each failed PDF on a line of its own (a crash with
its traceback), and the totals.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from dagster import AssetExecutionContext, AssetMaterialization, AssetObservation, Failure, MetadataValue

from pocket_assets.defs.provenance import observed_sha256, pdf_file_observation, provenance_tags
from pocket_assets.defs.run_progress import ProgressLog
from pocket_assets.stages.pdf_build.metadata import MarkdownMetadata
from pocket_assets.stages.pdf_build.outcomes import STATUS_DUPLICATE, PdfOutcome, StageResult
from pocket_assets.stages.registry import RAW_PDF, Stage
from pocket_assets.stages.store import STATUS_SKIPPED

# Numbers a run's totals add up (token figures are per PDF and do not add).
_ADDED = ("dagster/row_count", "chunks", "pages", "tables", "warnings", "empty_pages", "characters", "llm_calls")
Event = AssetMaterialization | AssetObservation


class PdfEvents:
    """Gathers a run's outcomes and turns them into Dagster events as they come (see the module docstring)."""

    def __init__(
        self, context: AssetExecutionContext, stages: Sequence[Stage], total: int, versions: Mapping[Stage, str | None]
    ) -> None:
        self._context = context
        self._stages = tuple(stages)
        self._versions = versions
        self._progress = ProgressLog("+".join(stage.name for stage in stages), total, context.log.info)
        self._results: dict[str, dict[Stage, StageResult]] = {}
        self._done: set[str] = set()

    def record(self, outcome: PdfOutcome) -> Iterator[Event]:
        """The events of this outcome, in lineage order; each is stored before the next one's tags are made."""
        results = self._results.setdefault(outcome.key, {})
        failure = outcome.failure
        for result in outcome.results:
            if result.stage not in self._stages:
                continue
            results[result.stage] = result
            if result.ok and result.source_sha256:
                yield from self._materialization(outcome.key, result)
            elif not result.ok:
                reason = result.reason or result.status
                if failure is not None and result is not failure:
                    reason = f"{reason} ({failure.stage} {failure.status}: {failure.reason})"
                yield AssetObservation(
                    result.stage.name,
                    partition=outcome.key,
                    description=reason,
                    metadata={"status": result.status, "reason": reason, "run_id": self._context.run.run_id},
                )
        if failure is not None and failure.stage in self._stages:
            self._progress.flush()  # the PDFs done before this one come first in the log
            level = logging.WARNING if failure.status == STATUS_SKIPPED else logging.ERROR
            self._context.log.log(level, f"{outcome.key}: {failure.stage} {failure.status}: {failure.reason}")
            if outcome.traceback:
                self._context.log.error(f"{outcome.key} crashed:\n{outcome.traceback}")
        failed = failure is not None and failure.stage in self._stages
        if outcome.key not in self._done:  # its build: the suite's verdict on its chunks may come later
            self._done.add(outcome.key)
            built = ", ".join(f"{r.stage} {r.metadata.get('dagster/row_count', 0)} rows" for r in outcome.results if r.ok)
            reason = outcome.results[0].reason if outcome.results else None  # a copy's: why it was not built
            what = f"FAILED at {failure.stage}" if failed and failure is not None else built or reason or "read back"
            waiting = "; its chunks wait for the gates' suite" if outcome.awaiting_suite is not None else ""
            self._progress.done(f"{outcome.key}: {what} in {outcome.seconds} s{waiting}", failed)
        elif failed:
            self._progress.failed_later()

    def _materialization(self, key: str, result: StageResult) -> Iterator[Event]:
        instance = self._context.instance
        sha256 = result.source_sha256 or ""
        if result.stage is RAW_PDF and observed_sha256(instance, key) != sha256:
            yield pdf_file_observation(key, sha256)  # the file as this build read it: raw_pdf's upstream version
        tags = provenance_tags(instance, result.stage, key, sha256, self._versions, self._context.run.run_id)
        yield AssetMaterialization(asset_key=result.stage.name, partition=key, metadata=_metadata(result), tags=tags)

    def failed(self) -> dict[str, StageResult]:
        """Each PDF that did not pass every selected stage: its first stage that did not succeed."""
        failed = {}
        for key, results in sorted(self._results.items()):
            first = next(
                (
                    results[stage]
                    for stage in self._stages
                    if stage in results and not results[stage].ok and results[stage].status != STATUS_DUPLICATE
                ),
                None,
            )
            if first is not None:
                failed[key] = first
        return failed

    def finish(self, keys: Sequence[str]) -> None:
        """The run's totals in its log; `Failure` naming every PDF that failed, after the others are reported."""
        self._progress.flush()
        for stage in self._stages:
            built = [results[stage] for results in self._results.values() if stage in results and results[stage].ok]
            self._context.log.info(_totals(stage, built, len(keys)))
        failed = self.failed()
        if failed:
            raise Failure(
                description=f"{len(failed)} of {len(keys)} PDF(s) failed: "
                + " / ".join(f"{key}: {result.reason}" for key, result in failed.items()),
                metadata={"failed_pdfs": MetadataValue.md(failure_table(failed))},
                allow_retries=False,
            )


def _metadata(result: StageResult) -> dict[str, Any]:
    return {name: _value(value) for name, value in result.metadata.items()}


def _value(value: Any) -> Any:
    if isinstance(value, MarkdownMetadata):
        return MetadataValue.md(str(value))
    if isinstance(value, Path):
        return MetadataValue.path(str(value))
    return value


def _totals(stage: Stage, built: Iterable[StageResult], total: int) -> str:
    built = list(built)
    sums: Counter[str] = Counter()
    for result in built:
        for name, value in result.metadata.items():
            if name in _ADDED and isinstance(value, (int, float)):
                sums[name] += value
    figures = ", ".join(f"{name} {round(value, 3)}" for name, value in sorted(sums.items()))
    return f"{stage}: {len(built)} of {total} PDF(s) built" + (f"; totals: {figures}" if figures else "")


def failure_table(failed: Mapping[str, StageResult]) -> str:
    lines = ["| PDF | stage | status | reason |", "|---|---|---|---|"]
    lines += [
        f"| {key} | {result.stage} | {result.status} | {(result.reason or '').replace('|', '/')} |"
        for key, result in failed.items()
    ]
    return "\n".join(lines)
