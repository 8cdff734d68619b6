"""Every gate over one PDF's parents, children and table summaries (DESIGN.md section 5), as one report.

The schema and coverage gates are plain Python and run where the records are (`check_without_expectations`);
the Great Expectations suite (`suites`) may run later, over many PDFs at once, and joins the report then
(`with_expectations`).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from pocket_assets.core.json_schema import Validator
from pocket_assets.core.policy import ChunkPolicy
from pocket_assets.core.quality.coverage import check_coverage
from pocket_assets.core.quality.gate_results import GateReport, GateResult
from pocket_assets.core.quality.schema_gate import check_schema
from pocket_assets.core.quality.suites import Gates, check_expectations
from pocket_assets.core.records import ChunkRecord, PageRecord


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
