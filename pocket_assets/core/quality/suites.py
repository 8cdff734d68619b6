"""The gates every chunk passes before export (DESIGN.md section 5), as plain results.

Three gates per partition, each a separate verdict so a Dagster check can map one
gate to one blocking asset check:

- `expectations`: the Great Expectations 1.x suite `expectations/chunks.partition.json`.
  The suite is the single source of the numeric rules (lengths, token caps, sets,
  patterns); this module only feeds it a DataFrame and two run-time parameters.
- `json_schema`: the seed's Draft-07 chunk schema on every record as the export writes it.
- `coverage`: every page with text has a chunk, parent and child texts are their
  offsets' slice of the canonical text, and children cover the text outside tables.
  Text the chunking rule leaves out (shorter than `min_chars` with nothing after
  it to join, warned as `text_below_minimum`) is accounted for, not a gap.

`validate_corpus_ids` runs `expectations/chunks.corpus.json` over every exported chunk.

Great Expectations takes seconds to import, so it is imported inside `load_gates`
only: importing this module stays cheap, and a process pays for GE once.
"""

from __future__ import annotations

import bisect
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from pocket_assets.core.chunking.segments import TEXT_BELOW_MINIMUM, TextBelowMinimum, plan_segments
from pocket_assets.core.document import canonical_text
from pocket_assets.core.json_schema import DRAFT_07, Validator, load_validator, schema_rule
from pocket_assets.core.policy import ChunkPolicy
from pocket_assets.core.quality.chunk_stats import pages_without_chunks
from pocket_assets.core.records import ChunkRecord, PageRecord, record_columns, to_dict

if TYPE_CHECKING:
    import pandas
    import pyarrow
    from great_expectations.core import ExpectationSuite
    from great_expectations.core.batch_definition import BatchDefinition
    from great_expectations.data_context import AbstractDataContext

# Gate names: one blocking asset check each.
EXPECTATIONS_GATE = "expectations"
SCHEMA_GATE = "json_schema"
COVERAGE_GATE = "coverage"
CORPUS_IDS_GATE = "corpus_ids"
PARTITION_GATES: tuple[str, ...] = (EXPECTATIONS_GATE, SCHEMA_GATE, COVERAGE_GATE)

# The suites and schemas shipped inside the package (`pocket_assets/expectations/`); a folder setting may
# name another folder holding the same files.
PACKAGED_EXPECTATIONS = Path(__file__).resolve().parents[2] / "expectations"
# Files under `expectations/`.
PARTITION_SUITE_FILE = "chunks.partition.json"
CORPUS_SUITE_FILE = "chunks.corpus.json"
CHUNK_SCHEMA_FILE = "chunk.schema.json"

# Coverage expectations (plain Python, not GE: they compare chunks with the pages).
PAGES_HAVE_CHUNKS = "pages_with_text_have_a_chunk"
TEXT_MATCHES_OFFSETS = "text_is_canonical_slice"
CHILDREN_COVER_TEXT = "children_cover_text_outside_tables"

OFFENDING_LIMIT = 10
# The partition suite's `$PARAMETER`s; anything else in a suite is a configuration error.
SUITE_PARAMETERS: frozenset[str] = frozenset({"parent_ids", "parent_tokens", "max_tokens"})
# Columns the suites may read; the frame holds nothing else, to keep GE's copies small.
FRAME_COLUMNS: tuple[str, ...] = (
    "id",
    "canonical_id",
    "chunk_uid",
    "page",
    "chunk_type",
    "corpus",
    "source",
    "text",
    "tokens",
    "embedded_tokens",
    "parent_id",
)
# What names an offending row in a result (`GateResult.offending`).
IDENTITY_COLUMNS = ["id", "page"]
_RESULT_FORMAT = {
    "result_format": "SUMMARY",
    "unexpected_index_column_names": IDENTITY_COLUMNS,
    "partial_unexpected_count": OFFENDING_LIMIT,
}


@dataclass(frozen=True)
class GateResult:
    """One expectation's verdict. Failures are the results with `passed=False`.

    `expectation` is a short stable name: the suite's `meta.name` for GE, the
    violated schema rule (e.g. `properties/text/minLength`) for the schema, a
    constant of this module for coverage. `detail` says what was checked or,
    when an expectation could not run, the error. `offending` holds the first
    `OFFENDING_LIMIT` (chunk id, page) pairs; coverage results about text rather
    than chunks put a label in place of the chunk id: the partition key for an
    uncovered page, `"<key> chars A-B"` for an uncovered character range (A
    inclusive, B exclusive, offsets in the canonical text).
    """

    gate: str
    expectation: str
    passed: bool
    checked_count: int
    unexpected_count: int
    offending: tuple[tuple[str, int], ...] = ()
    detail: str = ""


@dataclass(frozen=True)
class GateReport:
    partition_key: str
    chunk_count: int
    results: tuple[GateResult, ...]

    @property
    def passed(self) -> bool:
        return all(result.passed for result in self.results)

    def failures(self) -> tuple[GateResult, ...]:
        return tuple(result for result in self.results if not result.passed)

    def gate_results(self, gate: str) -> tuple[GateResult, ...]:
        return tuple(result for result in self.results if result.gate == gate)

    def gate_passed(self, gate: str) -> bool:
        """A gate with no result counts as failed: a check that did not run must not pass."""
        results = self.gate_results(gate)
        return bool(results) and all(result.passed for result in results)


@dataclass(frozen=True)
class Gates:
    """Everything loaded once per process: the GE context and suites, the schema validator."""

    # Kept out of repr: GE's context prints its whole configuration.
    context: AbstractDataContext = field(repr=False)
    batch_definition: BatchDefinition = field(repr=False)
    partition_suite: ExpectationSuite
    corpus_suite: ExpectationSuite
    chunk_schema: Validator = field(repr=False)


def load_gates(expectations_dir: Path) -> Gates:
    """Load the suites and the schema; the only place Great Expectations is imported."""
    import great_expectations as gx
    from great_expectations.core import ExpectationSuite
    from great_expectations.data_context.types.base import (
        DataContextConfig,
        InMemoryStoreBackendDefaults,
        ProgressBarsConfig,
    )

    config = DataContextConfig(
        store_backend_defaults=InMemoryStoreBackendDefaults(init_temp_docs_sites=False),
        progress_bars=ProgressBarsConfig(globally=False),
        analytics_enabled=False,
    )
    context = gx.get_context(mode="ephemeral", project_config=config)
    batch_definition = (
        context.data_sources.add_pandas("chunks")
        .add_dataframe_asset("chunks")
        .add_batch_definition_whole_dataframe("partition")
    )
    suites = {}
    for file_name in (PARTITION_SUITE_FILE, CORPUS_SUITE_FILE):
        suite_json = json.loads((expectations_dir / file_name).read_text(encoding="utf-8"))
        _check_suite_json(file_name, suite_json)
        suites[file_name] = ExpectationSuite(**suite_json)
    return Gates(
        context=context,
        batch_definition=batch_definition,
        partition_suite=suites[PARTITION_SUITE_FILE],
        corpus_suite=suites[CORPUS_SUITE_FILE],
        chunk_schema=load_chunk_schema(expectations_dir),
    )


def load_chunk_schema(expectations_dir: Path) -> Validator:
    """The seed's Draft-07 chunk schema alone: the schema gate needs no Great Expectations."""
    return load_validator(expectations_dir / CHUNK_SCHEMA_FILE, DRAFT_07)


def _check_suite_json(file_name: str, suite_json: Mapping[str, Any]) -> None:
    """Fail at load, not mid-run: results are matched back to expectations by `meta.name`."""
    names = [expectation.get("meta", {}).get("name") for expectation in suite_json["expectations"]]
    if None in names or len(set(names)) != len(names):
        raise ValueError(f"{file_name}: every expectation needs a unique meta.name, got {names}")
    unknown = _parameters_in(suite_json["expectations"]) - SUITE_PARAMETERS
    if unknown:
        raise ValueError(f"{file_name}: unknown $PARAMETER {sorted(unknown)}; known: {sorted(SUITE_PARAMETERS)}")


def _parameters_in(value: Any) -> set[str]:
    if isinstance(value, dict):
        found = {value["$PARAMETER"]} if "$PARAMETER" in value else set()
        return found.union(*(_parameters_in(item) for item in value.values()))
    if isinstance(value, list):
        return set().union(*(_parameters_in(item) for item in value))
    return set()


def validate_partition(
    gates: Gates,
    partition_key: str,
    chunks: Sequence[ChunkRecord],
    pages: Sequence[PageRecord],
    policy: ChunkPolicy,
) -> GateReport:
    """Every partition gate over one PDF's parents, children and table summaries together."""
    local = check_without_expectations(gates.chunk_schema, partition_key, chunks, pages, policy)
    return with_expectations(local, check_expectations(gates, chunks, policy))


def check_without_expectations(
    chunk_schema: Validator,
    partition_key: str,
    chunks: Sequence[ChunkRecord],
    pages: Sequence[PageRecord],
    policy: ChunkPolicy,
    records: Sequence[Mapping[str, Any]] | None = None,
) -> GateReport:
    """The schema and coverage gates: plain Python, run where the records are (any process, no GE).
    `records`: the chunks as `to_dict` gives them, when the caller has them (`check_schema`)."""
    results = check_schema(chunk_schema, chunks, records) + check_coverage(partition_key, chunks, pages, policy)
    return GateReport(partition_key=partition_key, chunk_count=len(chunks), results=results)


def with_expectations(report: GateReport, expectations: tuple[GateResult, ...]) -> GateReport:
    """The whole report: the expectations' results first, as `validate_partition` orders them."""
    return GateReport(report.partition_key, report.chunk_count, expectations + report.results)


def validate_corpus_ids(gates: Gates, chunks: Sequence[ChunkRecord], label: str = "corpus") -> GateReport:
    """Ids unique across every exported chunk: partitions are gated one by one, this joins them."""
    return corpus_ids_on_columns(gates, frame_columns(chunks), label)


def corpus_ids_on_columns(gates: Gates, columns: Columns, label: str = "corpus") -> GateReport:
    results = run_suite(gates, gates.corpus_suite, CORPUS_IDS_GATE, frame(columns), {})
    return GateReport(partition_key=label, chunk_count=len(columns["id"]), results=results)


def check_expectations(gates: Gates, chunks: Sequence[ChunkRecord], policy: ChunkPolicy) -> tuple[GateResult, ...]:
    return expectations_on_columns(gates, frame_columns(chunks), policy.parent_tokens, policy.max_tokens)


Columns = Mapping[str, Sequence[Any]]


def frame_columns(chunks: Sequence[ChunkRecord], names: Sequence[str] = FRAME_COLUMNS) -> dict[str, list[Any]]:
    """What the suites read of a PDF's chunks (`FRAME_COLUMNS`, or fewer): small to send to another process."""
    return record_columns(chunks, names)


def table_columns(table: pyarrow.Table) -> dict[str, list[Any]]:
    """The table's columns as Python lists, what `frame` takes."""
    return {name: table.column(name).to_pylist() for name in table.column_names}


def corpus_frame_columns(expectations_dir: Path) -> tuple[str, ...]:
    """The columns the corpus suite reads (those its expectations name, and the results' identity columns).

    The corpus suite runs over every chunk of a corpus, so its frame holds these columns only (ids, not
    texts): what the build sends to GE then grows by a few bytes per chunk, not by the corpus's text. Read
    from the suite file itself (plain JSON, no GE import), so an expectation added on another column gets it.
    """
    suite = json.loads((expectations_dir / CORPUS_SUITE_FILE).read_text(encoding="utf-8"))
    named: set[str] = set()
    for expectation in suite.get("expectations", []):
        for key, value in expectation.get("kwargs", {}).items():
            if key == "column" or key.startswith("column_"):  # column, column_list, column_A, ...
                named.update([value] if isinstance(value, str) else value)
    unknown = sorted(named - set(FRAME_COLUMNS))
    if unknown:
        raise ValueError(f"{expectations_dir / CORPUS_SUITE_FILE}: columns {unknown} are not chunk frame columns {FRAME_COLUMNS}")
    wanted = named | set(IDENTITY_COLUMNS)
    return tuple(name for name in FRAME_COLUMNS if name in wanted)


def expectations_on_columns(gates: Gates, columns: Columns, parent_tokens: int, max_tokens: int) -> tuple[GateResult, ...]:
    """The partition suite over one PDF's `frame_columns`."""
    parameters = suite_parameters(parent_ids(columns["id"], columns["chunk_type"]), parent_tokens, max_tokens)
    return run_suite(gates, gates.partition_suite, EXPECTATIONS_GATE, frame(columns), parameters)


def parent_ids(ids: Iterable[str], chunk_types: Iterable[str]) -> list[str]:
    """The ids of a PDF's parents, sorted: the partition suite's `parent_ids`."""
    return sorted({id_ for id_, kind in zip(ids, chunk_types) if kind == "parent"})


def suite_parameters(parents: list[str], parent_tokens: int, max_tokens: int) -> dict[str, Any]:
    """The partition suite's `$PARAMETER`s (`SUITE_PARAMETERS`)."""
    return {"parent_ids": parents, "parent_tokens": parent_tokens, "max_tokens": max_tokens}


def frame(columns: Columns) -> pandas.DataFrame:
    import pandas

    table = pandas.DataFrame(dict(columns), columns=list(columns))
    # An empty partition still needs typed numeric columns for the range expectations.
    numeric = {name: "int64" for name in ("page", "tokens", "embedded_tokens") if name in columns}
    return table.astype(numeric) if table.empty else table


def run_suite(
    gates: Gates,
    suite: ExpectationSuite,
    gate: str,
    table: pandas.DataFrame,
    parameters: Mapping[str, Any],
    result_format: Mapping[str, Any] = _RESULT_FORMAT,
) -> tuple[GateResult, ...]:
    """The suite's results in the suite's order (GE reorders them by metric dependencies)."""
    return tuple(_expectation_result(gate, result) for result in suite_results(gates, suite, table, parameters, result_format))


def suite_results(
    gates: Gates,
    suite: ExpectationSuite,
    table: pandas.DataFrame,
    parameters: Mapping[str, Any],
    result_format: Mapping[str, Any] = _RESULT_FORMAT,
) -> list[Any]:
    """GE's own result objects, in the suite's order."""
    batch = gates.batch_definition.get_batch(batch_parameters={"dataframe": table})
    try:
        outcome = batch.validate(suite, result_format=dict(result_format), expectation_parameters=dict(parameters))
    finally:
        _forget_batches(gates)
    order = {expectation.meta["name"]: index for index, expectation in enumerate(suite.expectations)}
    return sorted(outcome.results, key=lambda result: order[result.expectation_config.meta["name"]])


def _forget_batches(gates: Gates) -> None:
    """Drop the frame GE keeps after a validation. The data source's execution engine (one per data source,
    `Datasource.get_execution_engine`) caches each batch and its data by batch id until another batch of that
    id replaces it: the Great Expectations process held the last batch's frame (the largest PDF's, ~50 MiB on
    the scale corpus) through the export, beside the build's process."""
    manager = gates.batch_definition.data_asset.datasource.get_execution_engine().batch_manager
    manager.batch_data_cache.clear()
    manager.reset_batch_cache()


def _expectation_result(gate: str, result: Any) -> GateResult:
    config = result.expectation_config
    name = config.meta["name"]
    error = _exception_message(result.exception_info)
    if error:
        return GateResult(gate, name, passed=False, checked_count=0, unexpected_count=0, detail=error)
    details = result.result
    offending = tuple((str(row["id"]), int(row["page"])) for row in details.get("partial_unexpected_index_list") or ())
    return GateResult(
        gate=gate,
        expectation=name,
        passed=bool(result.success),
        checked_count=int(details.get("element_count") or 0),
        unexpected_count=int(details.get("unexpected_count") or 0),
        offending=offending[:OFFENDING_LIMIT],
        detail=expectation_detail(config),
    )


def expectation_detail(config: Any) -> str:
    """What an expectation checks, in one line: its type, column and the suite's `meta.rule`."""
    return f"{config.type}({config.kwargs.get('column', '')}): {config.meta.get('rule', '')}"


def _exception_message(info: Mapping[str, Any] | None) -> str:
    """GE reports an expectation that could not run either flat or keyed by metric."""
    if not info:
        return ""
    entries = [info] if "raised_exception" in info else list(info.values())
    messages = sorted({str(entry.get("exception_message")) for entry in entries if entry.get("raised_exception")})
    return "; ".join(messages)


def check_schema(
    chunk_schema: Validator, chunks: Sequence[ChunkRecord], records: Sequence[Mapping[str, Any]] | None = None
) -> tuple[GateResult, ...]:
    """Every record, as `to_dict` writes it, against the seed's Draft-07 chunk schema.

    One result per violated schema rule (e.g. `properties/text/minLength`), so the
    check names the rule, not just "invalid". `records`, when given, are the chunks' `to_dict`
    already (the rows a stage file holds, which `chunk_from_dict` read): not made again.
    """
    validator = chunk_schema
    offenders: dict[str, list[tuple[str, int]]] = {}
    first_message: dict[str, str] = {}
    for chunk, record in zip(chunks, records if records is not None else map(to_dict, chunks), strict=True):
        if validator.is_valid(record):
            continue
        for error in validator.iter_errors(record):
            rule = schema_rule(error)
            offenders.setdefault(rule, []).append((chunk.id, chunk.page))
            first_message.setdefault(rule, error.message[:200])
    if not offenders:
        valid = GateResult(SCHEMA_GATE, CHUNK_SCHEMA_FILE, True, len(chunks), 0, detail="every record is valid")
        return (valid,)
    return tuple(
        GateResult(
            gate=SCHEMA_GATE,
            expectation=rule,
            passed=False,
            checked_count=len(chunks),
            unexpected_count=len(offenders[rule]),
            offending=tuple(offenders[rule][:OFFENDING_LIMIT]),
            detail=f"{CHUNK_SCHEMA_FILE}: {first_message[rule]}",
        )
        for rule in sorted(offenders)
    )


def check_coverage(
    partition_key: str, chunks: Sequence[ChunkRecord], pages: Sequence[PageRecord], policy: ChunkPolicy
) -> tuple[GateResult, ...]:
    """Nothing lost (DESIGN.md section 4): the chunks account for every page and character.

    What the policy's minimum leaves out is asked of the chunking rule itself (`plan_segments`),
    the same function the chunker follows, so a chunker that dropped anything else still fails.
    """
    text = canonical_text(pages)
    left_out = plan_segments(pages, policy.page_mode, policy.min_chars).left_out
    return (
        _pages_have_chunks(partition_key, chunks, pages, left_out),
        _text_matches_offsets(chunks, text),
        _children_cover_text(partition_key, chunks, pages, text, left_out),
    )


def _pages_have_chunks(
    partition_key: str,
    chunks: Sequence[ChunkRecord],
    pages: Sequence[PageRecord],
    left_out: Sequence[TextBelowMinimum],
) -> GateResult:
    excused = {short.page for short in left_out}
    with_text = [page.page for page in pages if page.text.strip() and page.page not in excused]
    missing = pages_without_chunks(chunks, with_text)
    return GateResult(
        gate=COVERAGE_GATE,
        expectation=PAGES_HAVE_CHUNKS,
        passed=not missing,
        checked_count=len(with_text),
        unexpected_count=len(missing),
        offending=tuple((partition_key, page) for page in missing[:OFFENDING_LIMIT]),
        detail="every page with non-whitespace text is in some chunk's pages"
        + (f" (pages {', '.join(map(str, sorted(excused)))}: {TEXT_BELOW_MINIMUM}, left out)" if excused else ""),
    )


def _text_matches_offsets(chunks: Sequence[ChunkRecord], text: str) -> GateResult:
    """Coverage is judged on offsets, so the offsets must be the truth about each text."""
    sliced = [chunk for chunk in chunks if chunk.chunk_type in ("parent", "child")]
    wrong = [chunk for chunk in sliced if text[chunk.char_start : chunk.char_end] != chunk.text]
    return GateResult(
        gate=COVERAGE_GATE,
        expectation=TEXT_MATCHES_OFFSETS,
        passed=not wrong,
        checked_count=len(sliced),
        unexpected_count=len(wrong),
        offending=tuple((chunk.id, chunk.page) for chunk in wrong[:OFFENDING_LIMIT]),
        detail="parent and child text == canonical_text[char_start:char_end]",
    )


def _children_cover_text(
    partition_key: str,
    chunks: Sequence[ChunkRecord],
    pages: Sequence[PageRecord],
    text: str,
    left_out: Sequence[TextBelowMinimum],
) -> GateResult:
    spans = [(chunk.char_start, chunk.char_end) for chunk in chunks if chunk.chunk_type == "child"]
    spans += list(_table_spans(pages))
    spans += [(short.char_start, short.char_end) for short in left_out]
    gaps = list(_uncovered_ranges(text, spans))
    page_starts = [page.char_start for page in pages]
    offending = tuple(
        (f"{partition_key} chars {start}-{end}", pages[bisect.bisect_right(page_starts, start) - 1].page)
        for start, end in gaps[:OFFENDING_LIMIT]
    )
    return GateResult(
        gate=COVERAGE_GATE,
        expectation=CHILDREN_COVER_TEXT,
        passed=not gaps,
        checked_count=len(text),
        unexpected_count=len(gaps),
        offending=offending,
        detail=(
            f"{sum(end - start for start, end in gaps)} characters in {len(gaps)} uncovered ranges"
            " (each from its first to its last non-whitespace character)"
            if gaps
            else "every non-whitespace character outside tables is in a child"
            + (f" or left out as {TEXT_BELOW_MINIMUM} ({len(left_out)} pages)" if left_out else "")
        ),
    )


def _table_spans(pages: Iterable[PageRecord]) -> Iterable[tuple[int, int]]:
    """Tables are summarised, not embedded whole, so children need not cover them."""
    for page in pages:
        for block in page.blocks:
            if block.kind == "table":
                yield page.char_start + block.char_start, page.char_start + block.char_end


def _uncovered_ranges(text: str, spans: Iterable[tuple[int, int]]) -> Iterable[tuple[int, int]]:
    """Maximal stretches of `text` outside every span that hold non-whitespace, trimmed."""
    position = 0
    for start, end in sorted(spans) + [(len(text), len(text))]:
        if start > position:
            gap = text[position:start]
            trimmed = gap.lstrip()
            if trimmed:
                first = position + len(gap) - len(trimmed)
                yield first, position + len(gap.rstrip())
        position = max(position, end)
