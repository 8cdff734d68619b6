"""The gates of `validated_chunks`: schema and coverage with each PDF's build, the suite over batches of PDFs.

The Great Expectations suite costs about the same per validation whatever its size, so the gates run in
two halves: the schema and coverage gates with the PDF's build (`check_before_suite`, in whichever process
builds it), the suite in the run's process over a batch of PDFs (`BatchedSuiteGate`), which then writes
each PDF's `validated_chunks` (and tells the caller, which keeps the PDF's export piece), or records its
findings.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import pyarrow as pa

from pocket_assets.core.quality.expectation_batches import expectations_for_batch
from pocket_assets.core.quality.gate_findings import GateFinding, findings_to_json, gate_findings
from pocket_assets.core.quality.gate_results import GateReport
from pocket_assets.core.quality.partition_gates import check_without_expectations, with_expectations
from pocket_assets.core.quality.report import write_report_html
from pocket_assets.core.quality.suites import FRAME_COLUMNS, Gates, table_columns
from pocket_assets.core.records import chunk_from_dict
from pocket_assets.stages.page_records import read_pages
from pocket_assets.stages.pdf_build.manifests import record_attempt, store_output
from pocket_assets.stages.pdf_build.metadata import validated_metadata
from pocket_assets.stages.pdf_build.outcomes import AwaitingSuite, PdfOutcome, StageOutput, StageResult
from pocket_assets.stages.pdf_build.plan import BuildPlan
from pocket_assets.stages.registry import CHUNK_STAGES, VALIDATED_CHUNKS
from pocket_assets.stages.store import STATUS_FAILED, STATUS_SKIPPED, PartitionStore, UpstreamNotReady, stage_file_stem

# Chunks per suite validation: a validation's fixed cost is paid once per batch; bounds the rows the run's
# process holds.
SUITE_BATCH_CHUNKS = 4000
FINDINGS = "gate_failures"  # the `validated_chunks` manifest's `extra` entry holding a PDF's findings


def check_before_suite(plan: BuildPlan, key: str) -> AwaitingSuite:
    """The schema and coverage gates over the PDF's chunk stages; the suite comes later, in a batch."""
    table = chunk_table(plan.store, key)
    rows = table.to_pylist()
    chunks = [chunk_from_dict(row) for row in rows]
    pages = read_pages(plan.store, key)
    report = check_without_expectations(plan.chunk_schema, key, chunks, pages, plan.policy, records=rows)
    return AwaitingSuite(table.select(list(FRAME_COLUMNS)), report, validated_metadata(chunks, pages))


def chunk_table(store: PartitionStore, key: str) -> pa.Table:
    """A PDF's parents, children and table summaries, as their stage files hold them."""
    return pa.concat_tables([store.read_table(stage, key) for stage in CHUNK_STAGES])


class BatchedSuiteGate:
    """The partition suite over PDFs gathered in batches of about `batch_chunks` chunks, each PDF's verdict its
    own (`expectations_for_batch`); then `validated_chunks` written for those that passed (each then handed to
    `on_validated`), findings recorded for those that did not. `add` an outcome as it comes; the verdicts come
    back as outcomes too."""

    def __init__(
        self, plan: BuildPlan, gates: Gates, on_validated: Callable[[str], None], batch_chunks: int | None = None
    ) -> None:
        self._plan = plan
        self._gates = gates
        self._on_validated = on_validated
        self._batch_chunks = batch_chunks or SUITE_BATCH_CHUNKS
        self._waiting: dict[str, AwaitingSuite] = {}

    def add(self, outcome: PdfOutcome) -> list[PdfOutcome]:
        if outcome.awaiting_suite is not None:
            self._waiting[outcome.key] = outcome.awaiting_suite
        if sum(waiting.frame.num_rows for waiting in self._waiting.values()) >= self._batch_chunks:
            return self.flush()
        return []

    def flush(self) -> list[PdfOutcome]:
        if not self._waiting:
            return []
        batch, self._waiting = self._waiting, {}
        policy = self._plan.policy
        verdicts = expectations_for_batch(
            self._gates,
            {key: table_columns(waiting.frame) for key, waiting in batch.items()},
            policy.parent_tokens,
            policy.max_tokens,
        )
        return [self._verdict(key, waiting, with_expectations(waiting.report, verdicts[key])) for key, waiting in batch.items()]

    def _verdict(self, key: str, waiting: AwaitingSuite, report: GateReport) -> PdfOutcome:
        """The PDF's `validated_chunks`, or its findings; a PDF whose stage files went away since its gates ran
        (`pocket-assets forget` during the build) is skipped alone, the others of its batch go on."""
        started = time.perf_counter()
        try:
            result = self._write_verdict(key, waiting, report)
        except UpstreamNotReady as error:
            result = record_attempt(self._plan, VALIDATED_CHUNKS, key, STATUS_SKIPPED, str(error))
        return PdfOutcome(key, (result,), round(time.perf_counter() - started, 3))

    def _write_verdict(self, key: str, waiting: AwaitingSuite, report: GateReport) -> StageResult:
        plan = self._plan
        target = plan.reports_dir / f"{stage_file_stem(key)}.html"
        write_report_html(target, [report], f"Validation report, {key}")
        findings = _findings(plan.store, report)
        metadata = {**waiting.metadata, "gate_report": target}
        extra = {FINDINGS: findings_to_json(findings)}
        if findings:
            reason = _failure_sentence(key, findings)
            record_attempt(plan, VALIDATED_CHUNKS, key, STATUS_FAILED, reason, extra)
            result = StageResult(VALIDATED_CHUNKS, STATUS_FAILED, reason, {**metadata, "gate_failures": len(findings)})
        else:
            result = store_output(plan, VALIDATED_CHUNKS, key, StageOutput(chunk_table(plan.store, key), metadata, extra))
            self._on_validated(key)
        return result


def _findings(store: PartitionStore, report: GateReport) -> list[GateFinding]:
    """The report's findings, the offenders' texts read again from the stage files (a passing PDF has none)."""
    if report.passed:
        return []
    key = report.partition_key
    chunks = [chunk_from_dict(row) for row in chunk_table(store, key).to_pylist()]
    return gate_findings(report, chunks, read_pages(store, key))


def _failure_sentence(key: str, findings: Sequence[GateFinding]) -> str:
    first = findings[0]
    where = ", ".join(f"{offender.label} (page {offender.page})" for offender in first.offenders[:3])
    return (
        f"{key} failed {len(findings)} gate expectation(s), first {first.gate}/{first.expectation}: "
        f"{first.count} offending{': ' + where if where else ''}; fix the PDF or the chunk policy and build it "
        "again (its previous validated chunks are kept)"
    )
