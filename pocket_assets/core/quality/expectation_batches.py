"""The partition suite over many PDFs in one Great Expectations validation, with each PDF's own verdict.

One GE validation has a fixed cost whatever its size (graph building, pydantic), far above its
cost per row: on a corpus of small PDFs it would be the largest per-PDF cost. So the PDFs
of a batch are stacked into one frame with a `pdf` column, the identity columns
(`QUALIFIED_COLUMNS`: ids and parent ids) prefixed by the PDF's place in the batch, so that
"unique" and "parent id resolves" still mean within the PDF, and the suite runs once.

The verdict of each PDF is the per-PDF path's, exactly:

- a PDF none of whose rows is unexpected passes every expectation; its results are the
  per-PDF ones (`checked_count` is its rows in the expectation's domain, GE's row
  condition applied by GE's own engine);
- a PDF with any unexpected row is validated again alone (`expectations_on_columns`), so
  its counts, offenders and details are those of the per-PDF path; the prefixes can only
  add failures (never hide one), and those go through the same second look;
- any expectation that could not run, or a suite the batch cannot judge row by row (an
  expectation that is not a column map one, `mostly` below 1, a check on an identity
  column other than unique / in a set / null), sends every PDF of the batch the per-PDF way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from pocket_assets.core.quality.gate_results import EXPECTATIONS_GATE, GateResult
from pocket_assets.core.quality.suites import (
    FRAME_COLUMNS,
    Columns,
    Gates,
    expectation_detail,
    expectations_on_columns,
    frame,
    suite_parameters,
    suite_results,
)

if TYPE_CHECKING:
    from great_expectations.core import ExpectationSuite

QUALIFIED_COLUMNS: frozenset[str] = frozenset({"id", "canonical_id", "chunk_uid", "parent_id"})
# What the batch may check on a qualified column: a prefix shared by the whole PDF changes none of these verdicts.
_QUALIFIED_SAFE = frozenset(
    {
        "expect_column_values_to_be_unique",
        "expect_column_values_to_be_in_set",
        "expect_column_values_to_be_null",
        "expect_column_values_to_not_be_null",
    }
)
PDF_COLUMN = "pdf"
_SEPARATOR = "\x1f"


def expectations_for_batch(
    gates: Gates, columns_by_key: Mapping[str, Columns], parent_tokens: int, max_tokens: int
) -> dict[str, tuple[GateResult, ...]]:
    """Each PDF's partition-suite results, as `expectations_on_columns` gives them one by one."""
    keys = list(columns_by_key)
    if len(keys) < 2 or not batchable(gates.partition_suite):
        return {key: expectations_on_columns(gates, columns_by_key[key], parent_tokens, max_tokens) for key in keys}
    table, parent_ids = _stacked(columns_by_key)
    parameters = suite_parameters(parent_ids, parent_tokens, max_tokens)
    result_format = {"result_format": "COMPLETE", "unexpected_index_column_names": [PDF_COLUMN]}
    results = suite_results(gates, gates.partition_suite, table, parameters, result_format)
    failing = _failing_places(results, len(keys))
    passed = _passed_results(gates.partition_suite, table, results)
    return {
        key: expectations_on_columns(gates, columns_by_key[key], parent_tokens, max_tokens)
        if place in failing
        else tuple(result_for(place) for result_for in passed)
        for place, key in enumerate(keys)
    }


def batchable(suite: ExpectationSuite) -> bool:
    """Whether every expectation's verdict on the stacked frame is the union of its verdicts per PDF."""
    from great_expectations.expectations.expectation import ColumnMapExpectation

    for expectation in suite.expectations:
        if not isinstance(expectation, ColumnMapExpectation) or (expectation.mostly or 1) < 1:
            return False
        if expectation.column in QUALIFIED_COLUMNS and expectation.expectation_type not in _QUALIFIED_SAFE:
            return False
        read = condition_columns(expectation.row_condition)
        if read is None or read & QUALIFIED_COLUMNS:
            return False
    return True


def condition_columns(condition: Any) -> set[str] | None:
    """The columns a structured row condition reads; None for one this module cannot read."""
    from great_expectations.expectations.row_conditions import (
        AndCondition,
        ComparisonCondition,
        NullityCondition,
        OrCondition,
    )

    if condition is None:
        return set()
    if isinstance(condition, (ComparisonCondition, NullityCondition)):
        return {condition.column.name}
    if isinstance(condition, (AndCondition, OrCondition)):
        parts = [condition_columns(part) for part in condition.conditions]
        return None if None in parts else set().union(*parts)
    return None


def _stacked(columns_by_key: Mapping[str, Columns]) -> tuple[Any, list[str]]:
    """One frame of every PDF's rows in batch order, and the qualified ids of every parent."""
    stacked: dict[str, list[Any]] = {name: [] for name in (*FRAME_COLUMNS, PDF_COLUMN)}
    parent_ids: list[str] = []
    for place, columns in enumerate(columns_by_key.values()):
        prefix = f"{place}{_SEPARATOR}"
        for name in FRAME_COLUMNS:
            values = columns[name]
            if name in QUALIFIED_COLUMNS:
                values = [None if value is None else prefix + value for value in values]
            stacked[name].extend(values)
        stacked[PDF_COLUMN].extend([place] * len(columns["id"]))
        parent_ids += [prefix + id_ for id_, kind in zip(columns["id"], columns["chunk_type"]) if kind == "parent"]
    return frame(stacked), sorted(parent_ids)


def _failing_places(results: Sequence[Any], count: int) -> set[int]:
    """The PDFs (by place) with an unexpected row; all of them when GE could not say which."""
    failing: set[int] = set()
    for result in results:
        if result.exception_info and _raised(result.exception_info):
            return set(range(count))
        rows = (result.result or {}).get("unexpected_index_list") or []
        failing.update(int(row[PDF_COLUMN]) for row in rows)
        if not result.success and not rows:
            return set(range(count))
    return failing


def _raised(info: Mapping[str, Any]) -> bool:
    entries = [info] if "raised_exception" in info else list(info.values())
    return any(entry.get("raised_exception") for entry in entries)


def _passed_results(suite: ExpectationSuite, table: Any, results: Sequence[Any]) -> list[Any]:
    """Per expectation, a function from a PDF's place to its passing result (what GE gives one PDF)."""
    from great_expectations.execution_engine import PandasExecutionEngine

    engine = PandasExecutionEngine()
    makers = []
    for result in results:
        config = result.expectation_config
        expectation = next(e for e in suite.expectations if e.meta["name"] == config.meta["name"])
        domain = table if expectation.row_condition is None else table.query(engine.condition_to_filter_clause(expectation.row_condition))
        sizes = domain[PDF_COLUMN].value_counts().to_dict()
        detail = expectation_detail(config)
        makers.append(
            lambda place, name=config.meta["name"], sizes=sizes, detail=detail: GateResult(
                EXPECTATIONS_GATE, name, passed=True, checked_count=int(sizes.get(place, 0)), unexpected_count=0, detail=detail
            )
        )
    return makers
