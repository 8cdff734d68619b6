"""The gates' verdicts as plain results: one `GateResult` per expectation, a `GateReport` per PDF.

Three gates per partition (`expectations`, `json_schema`, `coverage`), each a separate verdict so a
Dagster check can map one gate to one blocking asset check; `corpus_ids` joins the partitions.
"""

from __future__ import annotations

from dataclasses import dataclass

# Gate names: one blocking asset check each.
EXPECTATIONS_GATE = "expectations"
SCHEMA_GATE = "json_schema"
COVERAGE_GATE = "coverage"
CORPUS_IDS_GATE = "corpus_ids"
PARTITION_GATES: tuple[str, ...] = (EXPECTATIONS_GATE, SCHEMA_GATE, COVERAGE_GATE)
OFFENDING_LIMIT = 10


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
