"""One PDF through the per-PDF stages, in whichever process builds it; the gates' suite over many PDFs at once.

`build_pdf` runs the stages a run selected for one PDF: it reads each stage's input
from the stage store, calls the core library, writes the output and its manifest,
and says how each stage went in a `PdfOutcome` (small: it crosses processes). Any
error while building a PDF is that PDF's failure: its manifest says why, its last
good files stay, the stages after it are skipped, and the other PDFs go on. An error
the core library expects (`PdfError`: unreadable file, broken page, table that cannot
be summarized) is one sentence; anything else is a crash and carries its traceback.

The Great Expectations suite costs ~0.2 s a validation whatever its size, so the gates
run in two halves: the schema and coverage gates with the PDF's build (`judge`), the
suite in the run's process over a batch of PDFs (`SuiteBatches`), which then writes each
PDF's `validated_chunks` and its export piece (`runstate.export_pieces`), or records its findings.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from pocket_assets.core.chunking.chunker import chunk_document
from pocket_assets.core.chunking.slice_counts import PieceCounter, PieceTokens
from pocket_assets.core.errors import PdfError
from pocket_assets.core.extract import ExtractionOptions, extract_pages
from pocket_assets.core.extract.scan import IMAGE_ONLY_WARNING, UNREADABLE_WARNING
from pocket_assets.core.json_schema import Validator
from pocket_assets.core.pdf import inspect_pdf
from pocket_assets.core.policy import ChunkPolicy
from pocket_assets.core.quality.chunk_stats import (
    chunks_per_type,
    pages_without_chunks,
    preview_markdown,
    token_histogram,
)
from pocket_assets.core.quality.expectation_batches import expectations_for_batch
from pocket_assets.core.quality.gate_findings import GateFinding, findings_to_json, gate_findings
from pocket_assets.core.quality.report import write_report_html
from pocket_assets.core.quality.validation import (
    FRAME_COLUMNS,
    GateReport,
    Gates,
    check_without_expectations,
    table_columns,
    with_expectations,
)
from pocket_assets.core.raw_folder import sha256_file
from pocket_assets.core.records import (
    CHUNK_PLACE_FIELDS,
    ChunkRecord,
    PageRecord,
    PdfIdentity,
    chunk_from_dict,
    chunk_place_from_dict,
    pdf_identity_from_dict,
    to_dict,
)
from pocket_assets.core.tables.cache import SummaryCache
from pocket_assets.core.tables.summaries import Summarizer, has_table_blocks, summarize_tables
from pocket_assets.core.tokenizer import TokenCounter
from pocket_assets.runstate.export_pieces import write_export_piece
from pocket_assets.runstate.output_folder import inside
from pocket_assets.runstate.page_records import read_pages
from pocket_assets.runstate.pdf_notes import pages_without_text, text_warning
from pocket_assets.runstate.sources import file_stamp
from pocket_assets.runstate.stages import (
    CHILDREN,
    CHUNK_STAGES,
    PAGES,
    PARENTS,
    RAW_PDF,
    SOURCE,
    TABLE_SUMMARIES,
    VALIDATED_CHUNKS,
    Setting,
    Stage,
)
from pocket_assets.runstate.staleness import SETTINGS
from pocket_assets.runstate.storage import (
    STATUS_FAILED,
    STATUS_OK,
    STATUS_SKIPPED,
    PartitionManifest,
    PartitionStore,
    UpstreamNotReady,
    stage_file_stem,
)

# A stage not built because its PDF is a copy of another (no manifest is written: the copy has no stage files).
STATUS_DUPLICATE = "duplicate"
# Chunks per suite validation: ~0.2 s a validation plus ~0.2 ms a chunk; bounds the rows the run's process holds.
SUITE_BATCH_CHUNKS = 4000
FINDINGS = "gate_failures"  # the `validated_chunks` manifest's `extra` entry holding a PDF's findings
# A page whose content stream MuPDF could not read is not an "empty page": its own warning says so.
UNREADABLE_PREFIX = UNREADABLE_WARNING.split("(")[0]
# How many warnings a materialization lists (the manifest keeps them all).
LISTED_WARNINGS = 20
# The validated chunks' preview: a few SDK lines spread over the PDF, each cut short (the metadata stays small).
PREVIEW_LINES = 3
PREVIEW_CHARS = 400


class Markdown(str):
    """A metadata value to show as Markdown (the Dagster layer maps it; a plain str is shown as text)."""


@dataclass(frozen=True)
class BuildPlan:
    """What every PDF of a run is built with: loaded once in the run's process, inherited by its workers."""

    store: PartitionStore
    raw_dir: Path
    corpora: tuple[str, ...]
    stages: tuple[Stage, ...]  # the selected stages, in lineage order
    versions: Mapping[Stage, str | None]
    settings: Mapping[str, Setting]  # what the versions are made of: recorded, so a stale reason names the change
    run_id: str
    extraction: ExtractionOptions
    counter: TokenCounter
    policy: ChunkPolicy
    summarizer: Summarizer
    summary_cache: Path | None  # an LLM's summaries are cached there; None: no cache
    chunk_schema: Validator
    reports_dir: Path
    export_schemas: Path  # the chunk and HEPilot schemas a PDF's export piece is validated against
    duplicates: Mapping[str, str] = field(default_factory=dict)  # a copy's key -> the PDF built in its place


@dataclass(frozen=True)
class StageResult:
    """How one stage went for one PDF, and the numbers its materialization shows."""

    stage: Stage
    status: str
    reason: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    source_sha256: str | None = None  # the PDF's sha256 a good output was built from

    @property
    def ok(self) -> bool:
        return self.status == STATUS_OK


@dataclass(frozen=True)
class Judged:
    """A PDF whose schema and coverage gates ran, waiting for the suite: what the suite reads of its chunks."""

    frame: pa.Table  # FRAME_COLUMNS of its parents, children and table summaries
    report: GateReport  # schema and coverage results
    metadata: Mapping[str, Any]


@dataclass(frozen=True)
class PdfOutcome:
    """What building one PDF gave: a result per stage it got to, the seconds it took, and for a crash its
    traceback (to log); `judged` when its `validated_chunks` waits for the suite."""

    key: str
    results: tuple[StageResult, ...]
    seconds: float = 0.0
    traceback: str | None = None
    judged: Judged | None = None

    @property
    def failure(self) -> StageResult | None:
        """The first stage that did not succeed, if any (a copy of another PDF, not built, did not fail)."""
        return next((result for result in self.results if not result.ok and result.status != STATUS_DUPLICATE), None)


@dataclass(frozen=True)
class StageOutput:
    rows: list[dict[str, Any]] | pa.Table
    metadata: Mapping[str, Any] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)  # kept in the manifest


Builder = Callable[[BuildPlan, str], Mapping[Stage, StageOutput]]


def build_pdf(plan: BuildPlan, key: str) -> PdfOutcome:
    """Every selected stage of one PDF, in lineage order; see the module docstring. A partition key that leaves
    the raw folder (`fr/../../x.pdf`, added by hand through the API) is refused before anything is read or written;
    a copy of another PDF of its corpus is not built (skipped, naming the PDF built in its place)."""
    refusal = key_refusal(key, plan.raw_dir)
    if refusal is not None:
        return PdfOutcome(key, tuple(StageResult(stage, STATUS_FAILED, refusal) for stage in plan.stages))
    if key in plan.duplicates:
        why = f"not built: a copy of {plan.duplicates[key]} (the same bytes in the same corpus), built in its place"
        return PdfOutcome(key, tuple(StageResult(stage, STATUS_DUPLICATE, why) for stage in plan.stages))
    started = time.perf_counter()
    results: list[StageResult] = []
    judged: Judged | None = None
    crash: str | None = None
    blocked: str | None = None  # why the stages after a failed one are skipped
    for step in _steps(plan.stages):
        if blocked is not None:
            results += [_record(plan, stage, key, STATUS_SKIPPED, blocked) for stage in step]
            continue
        try:
            if step == (VALIDATED_CHUNKS,):
                judged = judge(plan, key)
                continue
            outputs = BUILDERS[step](plan, key)
            results += [_store(plan, stage, key, outputs[stage]) for stage in step]
        except Exception as error:
            status = STATUS_SKIPPED if isinstance(error, UpstreamNotReady) else STATUS_FAILED
            if not isinstance(error, (PdfError, UpstreamNotReady)):
                crash = traceback.format_exc()
            reason = _sentence(error)
            results += [_record(plan, stage, key, status, reason) for stage in step]
            blocked = f"not built: {step[-1]} failed for this PDF"
    return PdfOutcome(key, tuple(results), round(time.perf_counter() - started, 3), crash, judged)


# The computations that make the stages, in lineage order: parents and children come from one chunking pass.
STEPS: tuple[tuple[Stage, ...], ...] = ((RAW_PDF,), (PAGES,), (PARENTS, CHILDREN), (TABLE_SUMMARIES,), (VALIDATED_CHUNKS,))


def record_death(plan: BuildPlan, key: str, why: str) -> PdfOutcome:
    """The failure of a PDF whose building process died (a crash inside native code): every selected stage
    failed, recorded in its manifests like any other failure."""
    reason = str(PdfError(key, why))
    return PdfOutcome(key, tuple(_record(plan, stage, key, STATUS_FAILED, reason) for stage in plan.stages))


def key_refusal(key: str, raw_dir: Path) -> str | None:
    """Why a partition key cannot name a PDF of the raw folder (absolute, or climbing out of it); None if it can."""
    try:
        inside(raw_dir, key)
    except ValueError as error:
        return f"refused: the partition key {error}; a PDF is built only from inside the raw folder"
    return None


def _steps(stages: Sequence[Stage]) -> list[tuple[Stage, ...]]:
    """The computations the selected stages need (selecting parents alone still chunks, and writes both)."""
    return [step for step in STEPS if any(stage in stages for stage in step)]


def _sentence(error: Exception) -> str:
    if isinstance(error, (PdfError, UpstreamNotReady)):
        return str(error)
    return f"crashed while building it ({type(error).__name__}: {error}); this is a bug, please report it"


# --- the stages ------------------------------------------------------------------------------------


def _raw_pdf(plan: BuildPlan, key: str) -> dict[Stage, StageOutput]:
    stamp = file_stamp(plan.raw_dir / key) if (plan.raw_dir / key).is_file() else {}
    identity = inspect_pdf(plan.raw_dir / key, key, plan.corpora)
    metadata = {"page_count": identity.page_count, "size_bytes": identity.size_bytes, "sha256": identity.sha256}
    if identity.metadata.get("title"):
        metadata["title"] = identity.metadata["title"][:200]
    return {RAW_PDF: StageOutput([to_dict(identity)], metadata, stamp)}


def _pages(plan: BuildPlan, key: str) -> dict[Stage, StageOutput]:
    path = plan.raw_dir / key
    recorded = plan.store.source_sha256(key)
    records = extract_pages(path, plan.extraction)
    if sha256_file(path) != recorded:
        raise PdfError(key, "the file changed while it was being built; build it again")
    blank = [page for page in records if not page.text.strip()]
    unread = [page.page for page in blank if any(warning.startswith(UNREADABLE_PREFIX) for warning in page.warnings)]
    textless = pages_without_text(
        [page.page for page in blank if IMAGE_ONLY_WARNING in page.warnings],
        [page.page for page in blank if IMAGE_ONLY_WARNING not in page.warnings and page.page not in unread],
    )
    warnings = [f"p{page.page}: {warning}" for page in records for warning in page.warnings]
    blocks = [block.kind for page in records for block in page.blocks]
    note = text_warning(textless, len(records))
    metadata: dict[str, Any] = {
        "pages": len(records),
        "characters": sum(len(page.text) for page in records),
        "empty_pages": len(blank),
        "headings": blocks.count("heading"),
        "tables": blocks.count("table"),
        "warnings": len(warnings),
    }
    if note or warnings:
        metadata["warnings_list"] = Markdown(_bullets(([note] if note else []) + warnings))
    return {PAGES: StageOutput([to_dict(page) for page in records], metadata, textless)}


def _chunks(plan: BuildPlan, key: str) -> dict[Stage, StageOutput]:
    identity = _identity(plan, key)
    pages = read_pages(plan.store, key)
    chunked = chunk_document(identity, pages, plan.policy, plan.counter, PieceTokens(plan.counter))
    return {
        PARENTS: _chunk_output(chunked.parents),
        CHILDREN: _chunk_output(chunked.children, chunked.warnings),
    }


def _table_summaries(plan: BuildPlan, key: str) -> dict[Stage, StageOutput]:
    identity = _identity(plan, key)
    pages = read_pages(plan.store, key)
    parents, children = [], []
    if has_table_blocks(pages):  # where the chunks are, to link each summary to its parent
        parents = [chunk_place_from_dict(row) for row in plan.store.read(PARENTS, key, CHUNK_PLACE_FIELDS)]
        children = [chunk_place_from_dict(row) for row in plan.store.read(CHILDREN, key, CHUNK_PLACE_FIELDS)]
    cache = SummaryCache(plan.summary_cache) if plan.summary_cache is not None else None
    counter = PieceCounter(PieceTokens(plan.counter))
    batch = summarize_tables(identity, pages, parents, plan.policy, counter, plan.summarizer, cache, children=children)
    stats = batch.stats
    output = _chunk_output(batch.chunks, [f"table summary fell back to extractive: {why}" for why in stats.fallbacks])
    metadata = {**output.metadata, "tables": stats.tables, "llm_calls": stats.llm_calls, "fallbacks": len(stats.fallbacks)}
    return {TABLE_SUMMARIES: StageOutput(output.rows, metadata, output.extra)}


BUILDERS: dict[tuple[Stage, ...], Builder] = {
    (RAW_PDF,): _raw_pdf,
    (PAGES,): _pages,
    (PARENTS, CHILDREN): _chunks,
    (TABLE_SUMMARIES,): _table_summaries,
}


def _identity(plan: BuildPlan, key: str) -> PdfIdentity:
    return pdf_identity_from_dict(plan.store.read(SOURCE, key)[0])


def _chunk_output(chunks: Sequence[ChunkRecord], warnings: Sequence[str] = ()) -> StageOutput:
    metadata: dict[str, Any] = {"chunks": len(chunks)}
    histogram = token_histogram(chunks)
    if histogram is not None:
        metadata.update(
            tokens_min=histogram.minimum,
            tokens_median=histogram.median,
            tokens_p95=histogram.p95,
            tokens_max=histogram.maximum,
        )
    if warnings:
        metadata.update(warnings=len(warnings), warnings_list=Markdown(_bullets(warnings)))
    extra = {"policy_hash": chunks[0].policy_hash if chunks else None, "warnings": list(warnings)}
    return StageOutput([to_dict(chunk) for chunk in chunks], metadata, extra)


def _bullets(lines: Sequence[str]) -> str:
    shown = [f"- {line}" for line in lines[:LISTED_WARNINGS]]
    if len(lines) > LISTED_WARNINGS:
        shown.append(f"- … and {len(lines) - LISTED_WARNINGS} more (in the stage's manifest)")
    return "\n".join(shown)


# --- the gates -------------------------------------------------------------------------------------


def judge(plan: BuildPlan, key: str) -> Judged:
    """The schema and coverage gates over the PDF's chunk stages; the suite comes later, in a batch."""
    table = chunk_table(plan.store, key)
    rows = table.to_pylist()
    chunks = [chunk_from_dict(row) for row in rows]
    pages = read_pages(plan.store, key)
    report = check_without_expectations(plan.chunk_schema, key, chunks, pages, plan.policy, records=rows)
    return Judged(table.select(list(FRAME_COLUMNS)), report, validated_metadata(chunks, pages))


def validated_metadata(chunks: Sequence[ChunkRecord], pages: Sequence[PageRecord]) -> dict[str, Any]:
    """What a maintainer reads of a PDF's validated chunks, small (issue 31): counts per type, the token
    figures of what the phone embeds, pages with text and no chunk, and a short preview of SDK lines."""
    embedded = [chunk for chunk in chunks if chunk.chunk_type != "parent"]
    uncovered = pages_without_chunks(chunks, [page.page for page in pages if page.text.strip()])
    metadata: dict[str, Any] = {
        "chunks": len(chunks),
        **{f"chunks_{kind}": count for kind, count in chunks_per_type(chunks).items()},
        "pages_without_chunks": len(uncovered),
    }
    histogram = token_histogram(embedded)
    if histogram is not None:
        metadata.update(
            tokens_min=histogram.minimum, tokens_median=histogram.median, tokens_p95=histogram.p95, tokens_max=histogram.maximum
        )
    warned = [page.page for page in pages if page.warnings]
    metadata["preview"] = Markdown(preview_markdown(embedded, warned, PREVIEW_LINES, PREVIEW_CHARS))
    return metadata


def chunk_table(store: PartitionStore, key: str) -> pa.Table:
    """A PDF's parents, children and table summaries, as their stage files hold them."""
    return pa.concat_tables([store.read_table(stage, key) for stage in CHUNK_STAGES])


class SuiteBatches:
    """The partition suite over PDFs gathered in batches of about `batch_chunks` chunks, each PDF's verdict its
    own (`expectations_for_batch`); then `validated_chunks` written for those that passed, findings recorded
    for those that did not. `add` an outcome as it comes; the verdicts come back as outcomes too."""

    def __init__(self, plan: BuildPlan, gates: Gates, batch_chunks: int | None = None) -> None:
        self._plan = plan
        self._gates = gates
        self._batch_chunks = batch_chunks or SUITE_BATCH_CHUNKS
        self._waiting: dict[str, Judged] = {}

    def add(self, outcome: PdfOutcome) -> list[PdfOutcome]:
        if outcome.judged is not None:
            self._waiting[outcome.key] = outcome.judged
        if sum(judged.frame.num_rows for judged in self._waiting.values()) >= self._batch_chunks:
            return self.flush()
        return []

    def flush(self) -> list[PdfOutcome]:
        if not self._waiting:
            return []
        batch, self._waiting = self._waiting, {}
        policy = self._plan.policy
        verdicts = expectations_for_batch(
            self._gates,
            {key: table_columns(judged.frame) for key, judged in batch.items()},
            policy.parent_tokens,
            policy.max_tokens,
        )
        return [self._verdict(key, judged, with_expectations(judged.report, verdicts[key])) for key, judged in batch.items()]

    def _verdict(self, key: str, judged: Judged, report: GateReport) -> PdfOutcome:
        plan = self._plan
        started = time.perf_counter()
        target = plan.reports_dir / f"{stage_file_stem(key)}.html"
        write_report_html(target, [report], f"Validation report, {key}")
        findings = _findings(plan.store, report)
        metadata = {**judged.metadata, "gate_report": target}
        extra = {FINDINGS: findings_to_json(findings)}
        if findings:
            reason = _failure_sentence(key, findings)
            _record(plan, VALIDATED_CHUNKS, key, STATUS_FAILED, reason, extra)
            result = StageResult(VALIDATED_CHUNKS, STATUS_FAILED, reason, {**metadata, "gate_failures": len(findings)})
        else:
            result = _store(plan, VALIDATED_CHUNKS, key, StageOutput(chunk_table(plan.store, key), metadata, extra))
            write_export_piece(plan.store, key, plan.export_schemas)  # what the export copies (issue 31)
        return PdfOutcome(key, (result,), round(time.perf_counter() - started, 3))


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


# --- stage files -------------------------------------------------------------------------------------


def _store(plan: BuildPlan, stage: Stage, key: str, output: StageOutput) -> StageResult:
    rows = output.rows.num_rows if isinstance(output.rows, pa.Table) else len(output.rows)
    sha256 = plan.store.source_sha256(key) if stage is not SOURCE else output.metadata["sha256"]
    plan.store.write(
        stage,
        key,
        output.rows,
        PartitionManifest(
            asset=stage.name,
            partition_key=key,
            status=STATUS_OK,
            rows=rows,
            source_sha256=sha256,
            code_version=plan.versions.get(stage),
            run_id=plan.run_id,
            extra={**output.extra, SETTINGS: _recorded_settings(plan, stage)},
        ),
    )
    return StageResult(stage, STATUS_OK, None, {"dagster/row_count": rows, **output.metadata}, sha256)


def _record(
    plan: BuildPlan, stage: Stage, key: str, status: str, reason: str, extra: Mapping[str, Any] | None = None
) -> StageResult:
    """The manifest says how this attempt ended; the last good file, if any, stays."""
    previous = plan.store.manifest(stage, key)
    plan.store.write_manifest(
        PartitionManifest(
            asset=stage.name,
            partition_key=key,
            status=status,
            reason=reason,
            source_sha256=previous.source_sha256 if previous else None,
            code_version=plan.versions.get(stage),
            run_id=plan.run_id,
            extra={**(extra or {}), SETTINGS: _recorded_settings(plan, stage)},
        )
    )
    return StageResult(stage, status, reason)


def _recorded_settings(plan: BuildPlan, stage: Stage) -> dict[str, Any]:
    return {name: plan.settings[name].value for name in stage.setting_names() if name in plan.settings}


def page_counts(store: PartitionStore, keys: Sequence[str]) -> dict[str, int]:
    """Each PDF's page count as `raw_pdf` last recorded it (0 when it has none, or it cannot be read): the
    order that keeps every worker busy to the end starts with the longest."""
    counts = {}
    for key in keys:
        try:
            identity = store.read_last_good(SOURCE, key, ["page_count"])
        except (ValueError, OSError):  # a key that leaves the store, a damaged file: that PDF's build says so
            identity = None
        counts[key] = identity.column(0)[0].as_py() or 0 if identity is not None and identity.num_rows else 0
    return counts
