"""The `expectations` and `corpus_ids` gates: the Great Expectations 1.x suites, run over the chunks' columns.

`expectations/chunks.partition.json` runs over each PDF's chunks: the suite is the single source of the
numeric rules (lengths, token caps, sets, patterns); this module only feeds it a DataFrame and two run-time
parameters. `validate_corpus_ids` runs `expectations/chunks.corpus.json` over every exported chunk.

Great Expectations takes seconds to import, so it is imported inside `load_gates` only: importing this
module stays cheap, and a process pays for GE once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from pocket_assets.core.json_schema import Validator
from pocket_assets.core.policy import ChunkPolicy
from pocket_assets.core.quality.gate_results import (
    CORPUS_IDS_GATE,
    EXPECTATIONS_GATE,
    OFFENDING_LIMIT,
    GateReport,
    GateResult,
)
from pocket_assets.core.quality.schema_gate import load_chunk_schema
from pocket_assets.core.records import ChunkRecord, record_columns

if TYPE_CHECKING:
    import pandas
    import pyarrow
    from great_expectations.core import ExpectationSuite
    from great_expectations.core.batch_definition import BatchDefinition
    from great_expectations.data_context import AbstractDataContext


# The suites and schemas shipped with the package: the project's top-level `expectations/` folder, which a wheel
# installs as `pocket_assets/expectations/` (pyproject's `package-dir`) and a checkout or an editable install reads
# where it is. A folder setting may name another folder holding the same files.
_PACKAGE = Path(__file__).resolve().parents[2]
PACKAGED_EXPECTATIONS = next(
    (folder for folder in (_PACKAGE / "expectations", _PACKAGE.parent / "expectations") if folder.is_dir()),
    _PACKAGE.parent / "expectations",
)

# Files under `expectations/`.
PARTITION_SUITE_FILE = "chunks.partition.json"
CORPUS_SUITE_FILE = "chunks.corpus.json"
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
    id replaces it: the process would hold the last batch's frame for as long as the gates live."""
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
