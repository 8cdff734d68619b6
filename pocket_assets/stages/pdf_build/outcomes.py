"""What building a PDF gives back, stage by stage: small, it crosses from the worker to the run's process."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from pocket_assets.core.quality.gate_results import GateReport
from pocket_assets.stages.registry import Stage
from pocket_assets.stages.store import STATUS_OK

# A stage not built because its PDF is a copy of another (no manifest is written: the copy has no stage files).
STATUS_DUPLICATE = "duplicate"


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
class AwaitingSuite:
    """A PDF whose schema and coverage gates ran, waiting for the suite: what the suite reads of its chunks."""

    frame: pa.Table  # FRAME_COLUMNS of its parents, children and table summaries
    report: GateReport  # schema and coverage results
    metadata: Mapping[str, Any]


@dataclass(frozen=True)
class PdfOutcome:
    """What building one PDF gave: a result per stage it got to, the seconds it took, and for a crash its
    traceback (to log); `awaiting_suite` when its `validated_chunks` waits for the suite."""

    key: str
    results: tuple[StageResult, ...]
    seconds: float = 0.0
    traceback: str | None = None
    awaiting_suite: AwaitingSuite | None = None

    @property
    def failure(self) -> StageResult | None:
        """The first stage that did not succeed, if any (a copy of another PDF, not built, did not fail)."""
        return next((result for result in self.results if not result.ok and result.status != STATUS_DUPLICATE), None)


@dataclass(frozen=True)
class StageOutput:
    rows: list[dict[str, Any]] | pa.Table
    metadata: Mapping[str, Any] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)  # kept in the manifest
