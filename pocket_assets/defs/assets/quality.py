"""Quality: every chunk of a PDF passes the gates before it can be exported.

Three blocking checks (Great Expectations suites, the chunk JSON Schema, page
and text coverage) judge each PDF of the run. A PDF that fails keeps its last
good `validated_chunks` file; the checks name the expectation, the count and the
first offending ids with their pages; the other PDFs go on.
"""

from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetExecutionContext,
    MaterializeResult,
    MetadataValue,
)

from pocket_assets.core.records import ChunkRecord, PageRecord, chunk_from_dict, page_from_dict, to_dict
from pocket_assets.core.quality.validation import PARTITION_GATES, GateReport, validate_partition
from pocket_assets.core.quality.report import write_report_html
from pocket_assets.defs.chunk_metadata import chunk_metadata
from pocket_assets.defs.partitions import pdf_asset
from pocket_assets.defs.pdf_errors import GateFailed
from pocket_assets.defs.pdf_workers import BuiltAhead, WorkersResource
from pocket_assets.defs.per_pdf import StageOutput, run_per_pdf
from pocket_assets.defs.resources import (
    ChunkPolicyResource,
    CorpusPaths,
    ExtractionResource,
    GatesResource,
    SummarizerResource,
    TokenizerResource,
    stage_settings,
)
from pocket_assets.defs.summaries import sum_of
from pocket_assets.runstate.stages import CHUNK_STAGES, PAGES, VALIDATED_CHUNKS


@pdf_asset(
    VALIDATED_CHUNKS,
    group_name="quality",
    kinds=("parquet", "great_expectations"),
    check_specs=[
        AssetCheckSpec(gate, asset=VALIDATED_CHUNKS.name, blocking=True, description=description)
        for gate, description in (
            (
                "expectations",
                "Great Expectations suite expectations/chunks.partition.json: unique ids, text "
                "lengths, token caps, pages, sources, parent ids, chunk types and corpora.",
            ),
            (
                "json_schema",
                "Every chunk record valid against the seed's Draft-07 schema expectations/chunk.schema.json.",
            ),
            ("coverage", "Every page with text has a chunk; chunk texts are exact slices; children cover the text."),
        )
    ],
    description="Parents, children and table summaries of a PDF that passed every gate; only these are exported. "
    "A PDF failing a gate keeps its previous good file and blocks the export.",
)
def validated_chunks(
    context: AssetExecutionContext,
    paths: CorpusPaths,
    extraction: ExtractionResource,
    tokenizer: TokenizerResource,
    chunk_policy: ChunkPolicyResource,
    summarizer: SummarizerResource,
    gates: GatesResource,
    workers: WorkersResource,
) -> MaterializeResult:
    store = paths.store()
    policy = chunk_policy.policy(tokenizer)
    settings = stage_settings(extraction=extraction, tokenizer=tokenizer, chunk_policy=chunk_policy, summarizer=summarizer)
    loaded_gates = gates.gates(paths.expectations_path)
    reports: dict[str, GateReport] = {}

    def read(key: str) -> tuple[list[ChunkRecord], list[PageRecord]]:
        chunks = [chunk_from_dict(row) for stage in CHUNK_STAGES for row in store.read(stage, key)]
        return chunks, [page_from_dict(row) for row in store.read(PAGES, key)]

    def validate(key: str) -> GateReport:
        return validate_partition(loaded_gates, key, *read(key), policy)

    # The gates (~0.25 s of Great Expectations per PDF) run on every core.
    validated = BuiltAhead(validate, sorted(context.partition_keys), workers.count())

    def build(key: str) -> StageOutput:
        chunks, page_records = read(key)
        report = reports[key] = validated(key)
        if not report.passed:
            raise GateFailed(_failure_sentence(key, report))
        return StageOutput(
            rows=[to_dict(chunk) for chunk in chunks],
            source_sha256=store.source_sha256(key),
            metadata=chunk_metadata(chunks, page_records),
        )

    def checks(_outcomes: list) -> list[AssetCheckResult]:
        report_path = write_report_html(
            paths.output_path / "reports" / f"validation_{context.run.run_id}.html",
            [reports[key] for key in sorted(reports)],
            f"Validation report, run {context.run.run_id}",
        )
        return [_check_result(gate, reports, str(report_path)) for gate in PARTITION_GATES]

    return run_per_pdf(
        context,
        store,
        build,
        VALIDATED_CHUNKS.version(settings),
        summarize=sum_of("chunks"),
        checks=checks,
        fail_when_all_fail=False,
    )


def _failure_sentence(key: str, report: GateReport) -> str:
    first = report.failures()[0]
    where = ", ".join(f"{chunk_id} (page {page})" for chunk_id, page in first.offending[:3])
    return (
        f"{key} failed {len(report.failures())} expectation(s), first {first.gate}/{first.expectation}: "
        f"{first.unexpected_count} offending{': ' + where if where else ''}. "
        "Fix the PDF or the chunk policy and rebuild; the previous validated chunks are kept."
    )


def _check_result(gate: str, reports: dict[str, GateReport], report_path: str) -> AssetCheckResult:
    failures = [
        (key, result)
        for key, report in sorted(reports.items())
        for result in report.gate_results(gate)
        if not result.passed
    ]
    lines = ["| PDF | expectation | count | first offending (id, page) |", "|---|---|---|---|"]
    lines += [
        f"| {key} | {result.expectation} | {result.unexpected_count} | "
        + ", ".join(f"{chunk_id} (p{page})" for chunk_id, page in result.offending[:10]).replace("|", "/")
        + " |"
        for key, result in failures
    ]
    return AssetCheckResult(
        check_name=gate,
        passed=not failures,
        severity=AssetCheckSeverity.ERROR,
        metadata={
            "pdfs_checked": len(reports),
            "pdfs_failed": len({key for key, _ in failures}),
            "failed_expectations": len(failures),
            "failures": MetadataValue.md("\n".join(lines) if failures else "none"),
            "report": MetadataValue.path(report_path),
        },
    )
