"""Each stage's attempt recorded for one PDF: a good output with its manifest, or a manifest saying why not.

The manifest says how the attempt ended, with the stage's version and the settings it was built with
(what a stale reason names); a failed attempt leaves the last good file where it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from pocket_assets.stages.pdf_build.outcomes import StageOutput, StageResult
from pocket_assets.stages.pdf_build.plan import BuildPlan
from pocket_assets.stages.registry import RAW_PDF, Stage
from pocket_assets.stages.staleness import SETTINGS
from pocket_assets.stages.store import STATUS_OK, PartitionManifest


def store_output(plan: BuildPlan, stage: Stage, key: str, output: StageOutput) -> StageResult:
    rows = output.rows.num_rows if isinstance(output.rows, pa.Table) else len(output.rows)
    sha256 = plan.store.source_sha256(key) if stage is not RAW_PDF else output.metadata["sha256"]
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


def record_attempt(
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
