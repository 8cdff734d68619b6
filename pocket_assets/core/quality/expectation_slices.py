"""The partition suite over a long PDF in row slices, with the verdict of one frame of the whole PDF.

A frame of a long PDF's chunks is the Great Expectations process's largest allocation: refman's 7,077
chunks, ~12 MiB of text, made the process's heap grow by ~90 MiB during its one validation (the texts as
Python strings, then GE hashing the frame for its batch fingerprint, which turns every text into a
Python string again), at the build's memory peak (issue 18).
So a PDF longer than `SLICE_ROWS` is judged in two parts:

- the row-local expectations on its texts (`ROW_LOCAL` reading a `LONG_COLUMNS` column: text lengths)
  run over row slices of at most `SLICE_ROWS` rows, on a frame of the columns they read: one slice's
  texts at a time, whatever the PDF's length;
- every other expectation (uniqueness, sets, ranges, nulls) runs once over the whole PDF, on a frame of
  the columns they read and those naming an offending row: ids and numbers, not texts.

Slicing only what reads the texts keeps GE's CPU: it costs per expectation and per validation (pydantic
re-serialising each expectation, its value set included, ~140 times per validation), so slicing the
whole suite cost refman twice its CPU.

The results are merged into what one frame gives (`merged`): counts summed, the first `OFFENDING_LIMIT`
offenders in row order, passed when every slice passed. A suite whose verdict a slice cannot give
(`sliceable`: an expectation that is not a column map one, `mostly` below 1, a row condition this
module cannot read) judges the PDF in one frame, as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Sequence

from pocket_assets.core.quality.validation import (
    EXPECTATIONS_GATE,
    IDENTITY_COLUMNS,
    OFFENDING_LIMIT,
    Gates,
    GateResult,
    expectation_detail,
    expectations_on_columns,
    frame,
    parent_ids,
    run_suite,
    suite_parameters,
    table_columns,
)

if TYPE_CHECKING:
    import pyarrow
    from great_expectations.core import ExpectationSuite

# Rows per frame of a long PDF: half what one batch of small PDFs holds (`SUITE_BATCH_CHUNKS` of the step).
SLICE_ROWS = 2000
# The frame columns whose size grows with a chunk's text (the others are ids, names and numbers).
LONG_COLUMNS: frozenset[str] = frozenset({"text"})
# Expectations whose verdict on a row reads that row only.
ROW_LOCAL: frozenset[str] = frozenset(
    {
        "expect_column_values_to_be_between",
        "expect_column_values_to_be_in_set",
        "expect_column_values_to_not_be_in_set",
        "expect_column_values_to_be_null",
        "expect_column_values_to_not_be_null",
        "expect_column_value_lengths_to_be_between",
        "expect_column_value_lengths_to_equal",
        "expect_column_values_to_match_regex",
        "expect_column_values_to_not_match_regex",
    }
)


def expectations_over_slices(
    gates: Gates, table: pyarrow.Table, parent_tokens: int, max_tokens: int, slice_rows: int = SLICE_ROWS
) -> tuple[GateResult, ...]:
    """`expectations_on_columns` of the PDF whose frame columns `table` holds (`frame_table_from_files`),
    the same results, judged a slice at a time when it has more than `slice_rows` rows."""
    suite = gates.partition_suite
    if table.num_rows <= slice_rows or not sliceable(suite):
        return expectations_on_columns(gates, table_columns(table), parent_tokens, max_tokens)
    parents = parent_ids(table.column("id").to_pylist(), table.column("chunk_type").to_pylist())
    parameters = suite_parameters(parents, parent_tokens, max_tokens)
    sliced = [e for e in suite.expectations if _reads_long_column(e) and e.expectation_type in ROW_LOCAL]
    whole = [e for e in suite.expectations if e not in sliced]
    results: dict[str, list[GateResult]] = {}
    if whole:
        narrow = table.select(_columns_read(whole, table.column_names))
        whole_frame = frame(table_columns(narrow))
        _collect(results, run_suite(gates, _part(suite, "whole", whole), EXPECTATIONS_GATE, whole_frame, parameters))
    if sliced:
        part = _part(suite, "sliced", sliced)
        narrow = table.select(_columns_read(sliced, table.column_names))
        for start in range(0, narrow.num_rows, slice_rows):
            rows = frame(table_columns(narrow.slice(start, slice_rows)))
            _collect(results, run_suite(gates, part, EXPECTATIONS_GATE, rows, parameters))
    return tuple(merged(results[e.meta["name"]], expectation_detail(e.configuration)) for e in suite.expectations)


def sliceable(suite: ExpectationSuite) -> bool:
    """Whether every expectation's verdict is that of its row slices (`ROW_LOCAL`) or reads whole columns
    this module can name (a column map expectation on one column, with a row condition it can read)."""
    from great_expectations.expectations.expectation import ColumnMapExpectation

    return all(
        isinstance(expectation, ColumnMapExpectation)
        and (expectation.mostly or 1) >= 1
        and condition_columns(expectation.row_condition) is not None
        for expectation in suite.expectations
    )


def merged(results: Sequence[GateResult], detail: str) -> GateResult:
    """One expectation's result over the whole PDF from its results over the PDF's slices, in row order.
    `detail`: what the expectation checks (`expectation_detail`); a result saying something else is an
    error: an expectation that could not run on a slice could not run on the PDF, its first error is the result."""
    errors = [result for result in results if result.detail != detail]
    if errors:
        return errors[0]
    first = results[0]
    offending = tuple(row for result in results for row in result.offending)[:OFFENDING_LIMIT]
    return GateResult(
        gate=first.gate,
        expectation=first.expectation,
        passed=all(result.passed for result in results),
        checked_count=sum(result.checked_count for result in results),
        unexpected_count=sum(result.unexpected_count for result in results),
        offending=offending,
        detail=detail,
    )


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


def _columns_of(expectation: Any) -> set[str]:
    """The columns one expectation reads: its column and its row condition's."""
    return {expectation.column} | (condition_columns(expectation.row_condition) or set())


def _reads_long_column(expectation: Any) -> bool:
    return bool(_columns_of(expectation) & LONG_COLUMNS)


def _columns_read(expectations: Iterable[Any], available: Sequence[str]) -> list[str]:
    """The columns these expectations read, with those naming an offending row, in the table's order."""
    wanted = set(IDENTITY_COLUMNS).union(*map(_columns_of, expectations))
    return [name for name in available if name in wanted]


def _part(suite: ExpectationSuite, label: str, expectations: Sequence[Any]) -> ExpectationSuite:
    from great_expectations.core import ExpectationSuite

    return ExpectationSuite(name=f"{suite.name}.{label}", expectations=[e.configuration for e in expectations])


def _collect(results: dict[str, list[GateResult]], found: Iterable[GateResult]) -> None:
    for result in found:
        results.setdefault(result.expectation, []).append(result)
