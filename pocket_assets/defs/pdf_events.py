"""Each PDF's truth told to Dagster: one materialization per stage it built, a failed PDF none.

A run covers a range of PDFs (a multi-run backfill, or one PDF); its step builds them
all. A stage that succeeded for a PDF is reported as a materialization of that
partition, with the PDF's own numbers; a PDF that failed gets no materialization of
the stages it did not pass, and the run fails once every PDF was tried. So Dagster's
own rule gives each PDF its colour: a partition planned by a failed run and not
materialized by it is failed (Assets > Partitions, its badge, and the counts of the
backfill that launched the run), the others are materialized.

The run log gets a line every few seconds naming the PDFs done since (`ProgressLog`),
each failed PDF on a line of its own (a crash with its traceback), and the totals.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from dagster import AssetExecutionContext, AssetMaterialization, Failure, MetadataValue

from pocket_assets.defs.run_progress import ProgressLog
from pocket_assets.stages.pdf_build.metadata import MarkdownMetadata
from pocket_assets.stages.pdf_build.outcomes import PdfOutcome, StageResult
from pocket_assets.stages.registry import Stage
from pocket_assets.stages.store import STATUS_SKIPPED

# Numbers a run's totals add up (token figures are per PDF and do not add).
_ADDED = ("dagster/row_count", "chunks", "pages", "tables", "warnings", "empty_pages", "characters", "llm_calls")


class PdfEvents:
    """Gathers a run's outcomes and reports them to Dagster as they come (see the module docstring)."""

    def __init__(self, context: AssetExecutionContext, stages: Sequence[Stage], total: int) -> None:
        self._context = context
        self._stages = tuple(stages)
        self._progress = ProgressLog("+".join(stage.name for stage in stages), total, context.log.info)
        self._done = 0
        self._results: dict[str, dict[Stage, StageResult]] = {}

    def record(self, outcome: PdfOutcome) -> None:
        """Materializations for the stages this outcome built; a failure logged at once."""
        results = self._results.setdefault(outcome.key, {})
        for result in outcome.results:
            if result.stage not in self._stages:
                continue
            results[result.stage] = result
            if result.ok:
                self._context.log_event(
                    AssetMaterialization(asset_key=result.stage.name, partition=outcome.key, metadata=_metadata(result))
                )
        failure = outcome.failure
        if failure is not None and failure.stage in self._stages:
            self._progress.flush()  # the PDFs done before this one come first in the log
            level = logging.WARNING if failure.status == STATUS_SKIPPED else logging.ERROR
            self._context.log.log(level, f"{outcome.key}: {failure.stage} {failure.status}: {failure.reason}")
            if outcome.traceback:
                self._context.log.error(f"{outcome.key} crashed:\n{outcome.traceback}")
        if outcome.awaiting_suite is None and any(result.stage is self._stages[-1] for result in outcome.results):
            self._done += 1
            rows = ", ".join(f"{r.stage} {r.metadata.get('dagster/row_count', 0)} rows" for r in outcome.results if r.ok)
            self._progress.built(self._done, f"{outcome.key}: {rows or 'nothing built'} in {outcome.seconds} s")

    def failed(self) -> dict[str, StageResult]:
        """Each PDF that did not pass every selected stage: its first stage that did not succeed."""
        failed = {}
        for key, results in sorted(self._results.items()):
            first = next((results[stage] for stage in self._stages if stage in results and not results[stage].ok), None)
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
