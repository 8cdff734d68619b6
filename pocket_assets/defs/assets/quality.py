"""Quality: every chunk of a PDF passes the gates before it can be exported.

Three checks (Great Expectations suites, the chunk JSON Schema, page and text
coverage) judge each PDF. A PDF that fails keeps its last good
`validated_chunks` file, shows failed in the Partitions tab, and carries its
findings on its materialization; the others go on to the export, which ships the failing PDF's last good chunks
as stale (issue 14). Each check
gives the corpus-level view: which PDFs currently fail that gate (whichever run
last judged them), with the offending chunks' ids, pages and the start of their
text. The checks do not block: one PDF must not stop the others' export; the
`every_pdf_built` check fails the run instead.
"""

from concurrent.futures import Future
from pathlib import Path
from typing import Any, Callable, Iterator, NamedTuple, Sequence

import pyarrow as pa

from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetExecutionContext,
    MaterializeResult,
    MetadataValue,
)

from pocket_assets.core.policy import ChunkPolicy
from pocket_assets.core.quality.gate_findings import (
    GateFinding,
    findings_from_json,
    findings_markdown,
    findings_to_json,
    gate_findings,
)
from pocket_assets.core.quality.expectations_process import ExpectationsProcess, prestart
from pocket_assets.core.quality.report import write_report_html
from pocket_assets.core.quality.validation import (
    PARTITION_GATES,
    GateReport,
    GateResult,
    check_without_expectations,
    with_expectations,
)
from pocket_assets.core.records import chunk_from_dict
from pocket_assets.defs.chunk_metadata import chunk_metadata
from pocket_assets.defs.partitions import pdf_asset, pdf_partitions
from pocket_assets.defs.pdf_errors import GateFailed
from pocket_assets.defs.pdf_workers import MadeInBatches
from pocket_assets.defs.per_pdf import Outcome, StageOutput, run_per_pdf
from pocket_assets.defs.resources import (
    ChunkPolicyResource,
    CorpusPaths,
    ExtractionResource,
    GatesResource,
    SummarizerResource,
    TokenizerResource,
    stage_settings,
)
from pocket_assets.runstate.page_records import read_pages
from pocket_assets.runstate.stages import CHUNK_STAGES, VALIDATED_CHUNKS
from pocket_assets.runstate.storage import STATUS_FAILED, STATUS_OK, PartitionStore, stage_file_stem


class Judged(NamedTuple):
    """What the step keeps of a PDF between its judging and its verdict: small beside its records."""

    # Its parents, children and table summaries as the stage files hold them (what it writes if it passes);
    # None for a PDF longer than a batch, read again if it passes: not held while GE judges it.
    chunks: pa.Table | None
    report: GateReport
    metadata: dict[str, Any]  # `chunk_metadata`


# Chunks per Great Expectations validation: ~0.2 s a batch plus ~0.2 ms a chunk; bounds the rows held here
# (as Arrow) and in the Great Expectations process (as a frame). 4000 rather than 2000: the scale corpus's
# suite CPU 2.9 -> 2.4 s (fewer batches, each one's fixed cost), ~15 MiB more at validation's peak (below the export's).
SUITE_BATCH_CHUNKS = 4000
# A run validating more PDFs than this releases the tokenizer first (`release_tokenizers`); a shorter one
# keeps it, so that the next run in the same process (a test session, a UI code location) does not load it again.
KEEP_TOKENIZER_MAX_PDFS = 8
FINDINGS = "gate_failures"  # the manifest's `extra` entry holding a PDF's findings
# What each gate's failures are, for its count in the check metadata.
_FAILED_COUNT_NAMES = {
    "expectations": "expectations_failed",
    "json_schema": "schema_rules_failed",
    "coverage": "coverage_rules_failed",
}


@pdf_asset(
    VALIDATED_CHUNKS,
    group_name="quality",
    kinds=("parquet", "great_expectations"),
    check_specs=[
        AssetCheckSpec(gate, asset=VALIDATED_CHUNKS.name, description=description)
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
    "A PDF failing a gate keeps its previous good file (the export ships it as stale), shows failed with its "
    "findings, and fails the run.",
)
def validated_chunks(
    context: AssetExecutionContext,
    paths: CorpusPaths,
    extraction: ExtractionResource,
    tokenizer: TokenizerResource,
    chunk_policy: ChunkPolicyResource,
    summarizer: SummarizerResource,
    gates: GatesResource,
) -> Iterator[MaterializeResult]:
    store = paths.store()
    policy = chunk_policy.policy(tokenizer)
    settings = stage_settings(extraction=extraction, tokenizer=tokenizer, chunk_policy=chunk_policy, summarizer=summarizer)
    chunk_schema = gates.chunk_schema(paths.expectations_path)
    keys = sorted(context.partition_keys)

    def judge(key: str) -> Judged:
        table = _chunks_table(store, key)
        rows = table.to_pylist()
        chunks = [chunk_from_dict(row) for row in rows]
        page_records = read_pages(store, key)
        report = check_without_expectations(chunk_schema, key, chunks, page_records, policy, records=rows)
        judged = Judged(table if len(rows) <= SUITE_BATCH_CHUNKS else None, report, chunk_metadata(chunks, page_records))
        del table, rows, chunks, page_records
        return judged

    # Schema and coverage run in this process (~5 % of a build's CPU): forked workers here would sit beside
    # the Great Expectations process, at the build's memory peak (~110 MiB more on 187 PDFs, issue 18).
    # The suite runs in the Great Expectations process, once per batch, on the stage files it reads itself:
    # every batch is sent now, so that process judges from the start and runs ahead of this one, which
    # judges a batch, then waits for its verdicts (GE is on the next batch meanwhile), then writes its PDFs.
    # What this process keeps of a judged PDF is its chunks as Arrow (what it writes if the PDF passes; a
    # PDF longer than a batch, read again then), its report and its metadata, not its records.
    batches = _suite_batches(store, keys)
    suites = _sent_suites(store, batches, lambda: gates.expectations(paths.expectations_path), policy)
    judged_in_batches = MadeInBatches(judge, batches)

    def build(key: str) -> StageOutput:
        judged = judged_in_batches(key)
        report = with_expectations(judged.report, suites[key].result()[key])
        report_path = write_report_html(
            paths.output_path / "reports" / "validation" / f"{stage_file_stem(key)}.html", [report], f"Validation report, {key}"
        )
        findings = _findings(store, report)
        metadata = {
            **{f"{gate}_failed": sum(1 for f in findings if f.gate == gate) for gate in PARTITION_GATES},
            "gate_report": MetadataValue.path(str(report_path)),
        }
        extra = {FINDINGS: findings_to_json(findings)}
        if findings:
            metadata["gate_failures"] = MetadataValue.md(findings_markdown([(key, f) for f in findings]))
            raise GateFailed(_failure_sentence(key, findings), metadata, extra)
        return StageOutput(
            rows=judged.chunks if judged.chunks is not None else _chunks_table(store, key),
            source_sha256=store.source_sha256(key),
            metadata={**judged.metadata, **metadata},
            extra=extra,
        )

    def checks(outcomes: Sequence[Outcome]) -> list[AssetCheckResult]:
        judged = _stored_findings(store, context.instance.get_dynamic_partitions(pdf_partitions.name))
        judged.update({o.partition_key: findings_from_json(o.extra.get(FINDINGS, [])) for o in outcomes if FINDINGS in o.extra})
        judged_in_run = sum(1 for outcome in outcomes if FINDINGS in outcome.extra)  # a skipped PDF was not judged
        return [_gate_check(gate, judged, judged_in_run) for gate in PARTITION_GATES]

    try:
        yield from run_per_pdf(context, store, build, VALIDATED_CHUNKS.version(settings), checks=checks)
    finally:
        for suite in suites.values():
            suite.cancel()  # a step that failed leaves no batch queued for the process (one being judged ends)


def prestart_if_validating(context: AssetExecutionContext, expectations_dir: Path) -> None:
    """Start the Great Expectations process now if this process runs `validated_chunks` later in this
    run (the in-process executor runs every step of the run here; the multiprocess one, one step per
    process), so that its seconds of import overlap what comes before validation, on a core that would
    idle. The caller picks the moment: a short run's first step (`raw_pdf`), else `chunks` once its
    workers are gone (the last pool of an extractive build: the process is never held beside one)."""
    plan = context.op_execution_context.get_step_execution_context().execution_plan
    if VALIDATED_CHUNKS.name in plan.step_keys_to_execute:
        prestart(expectations_dir)


def _sent_suites(
    store: PartitionStore, batches: Sequence[Sequence[str]], start: Callable[[], ExpectationsProcess], policy: ChunkPolicy
) -> dict[str, Future[dict[str, tuple[GateResult, ...]]]]:
    """Each PDF's partition-suite verdicts, its batch sent to the Great Expectations process (`_suite_batches`).
    The process is asked for only when there is something to judge: a run whose PDFs were all skipped never starts it."""
    if not batches:
        return {}
    process = start()
    sent: dict[str, Future[dict[str, tuple[GateResult, ...]]]] = {}
    for batch in batches:
        files = {key: [store.data_path(stage, key) for stage in CHUNK_STAGES] for key in batch}
        suite = process.submit_partition_suite(files, policy.parent_tokens, policy.max_tokens)
        sent.update(dict.fromkeys(batch, suite))
    return sent


def _suite_batches(store: PartitionStore, keys: Sequence[str]) -> list[list[str]]:
    """The PDFs whose chunk stages are all good (the others are skipped at their turn), in order, a batch
    closed once its chunks (their manifests' rows) reach `SUITE_BATCH_CHUNKS`."""
    batches: list[list[str]] = [[]]
    rows = 0
    for key in keys:
        manifests = [store.manifest(stage, key) for stage in CHUNK_STAGES]
        if any(manifest is None or manifest.status != STATUS_OK for manifest in manifests):
            continue
        if rows >= SUITE_BATCH_CHUNKS:
            batches.append([])
            rows = 0
        batches[-1].append(key)
        rows += sum(manifest.rows for manifest in manifests)
    return [batch for batch in batches if batch]


def _chunks_table(store: PartitionStore, key: str) -> pa.Table:
    """A PDF's parents, children and table summaries, as their stage files hold them."""
    return pa.concat_tables([store.read_table(stage, key) for stage in CHUNK_STAGES])


def _findings(store: PartitionStore, report: GateReport) -> list[GateFinding]:
    """The report's findings, the offenders' texts read again from the stage files (a passing PDF has none)."""
    if report.passed:
        return []
    key = report.partition_key
    chunks = [chunk_from_dict(row) for stage in CHUNK_STAGES for row in store.read(stage, key)]
    return gate_findings(report, chunks, read_pages(store, key))


def _failure_sentence(key: str, findings: list[GateFinding]) -> str:
    first = findings[0]
    where = ", ".join(f"{o.label} (page {o.page})" for o in first.offenders[:3])
    return (
        f"{key} failed {len(findings)} expectation(s), first {first.gate}/{first.expectation}: "
        f"{first.count} offending{': ' + where if where else ''}. "
        "Fix the PDF or the chunk policy and rebuild; the previous validated chunks are kept."
    )


def _stored_findings(store: PartitionStore, keys: Sequence[str]) -> dict[str, list[GateFinding]]:
    """Every PDF's findings from the last run that judged it (a PDF never judged is left out)."""
    judged = {}
    for key in keys:
        manifest = store.manifest(VALIDATED_CHUNKS, key)
        if manifest is not None and FINDINGS in manifest.extra:
            judged[key] = findings_from_json(manifest.extra[FINDINGS]) if manifest.status == STATUS_FAILED else []
    return judged


def _gate_check(gate: str, judged: dict[str, list[GateFinding]], judged_in_run: int) -> AssetCheckResult:
    """The corpus as it stands: which PDFs currently fail this gate, and with what."""
    rows = [(key, finding) for key, findings in sorted(judged.items()) for finding in findings if finding.gate == gate]
    return AssetCheckResult(
        check_name=gate,
        passed=not rows,
        severity=AssetCheckSeverity.ERROR,
        metadata={
            "pdfs_judged": len(judged),
            "pdfs_judged_in_this_run": judged_in_run,
            "pdfs_failing": len({key for key, _ in rows}),
            _FAILED_COUNT_NAMES[gate]: len(rows),
            "failures": MetadataValue.md(findings_markdown(rows)),
        },
    )
