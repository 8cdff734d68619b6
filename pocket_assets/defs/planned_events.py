"""Planned materializations: one per asset when a run starts, and per PDF only where a PDF failed.

Dagster shows a PDF's partition failed when its latest event is a planned materialization
with no materialization after it, in a run that ended FAILED
(`_core/storage/partition_status_cache.py`; only planned events that name one partition
count). By default the process that creates a run writes one planned event per partition
and asset before the run starts: 6 per PDF, each a SQLite write of ~12 ms of CPU, on one
core while nothing else runs (5.3 s for 86 PDFs; 10,000 PDFs would wait ~12 min). With
`DAGSTER_EMIT_PARTITION_SUBSET_IN_PLANNED_EVENTS` set in that process, it writes one per asset,
naming the run's PDFs as a subset.

What the UI shows then, and how this project keeps it:
- a PDF that fails a stage: red, as before; each stage plans it again itself after its
  materialization (`mark_failed`), the run then fails (`run_verdict`);
- a step that crashes as a whole (a bug, a missing OCR engine): every PDF of the run red for
  that step's assets and the later ones of the run, as before (`mark_crashed`, from the
  step's own process, so only on the crash: the same events the run used to write up front);
- not kept: partitions are not shown in progress ("materializing", blue) while the run runs
  (the asset still shows its run in progress); and when the step never reaches our code
  (a resource that fails to start, a process killed by the system), its PDFs keep their
  previous colour while the run shows FAILED.

The variable is read where runs are created: `pocket-assets` sets it for itself and for the
`dagster dev` it starts (`cli.SUBSET_PLANNED_EVENTS`), `.env` at the project root sets it for
Dagster's commands started there (`dagster dev`, `dagster-webserver`, `dagster-daemon`), and
a deployment sets it on its webserver and daemon. `=0` in the environment turns it off.
"""

from __future__ import annotations

import logging
from typing import Collection, Sequence

from dagster import AssetExecutionContext, AssetKey

# Private, and unavoidable: Dagster 1.13 has no public way to report a planned materialization.
from dagster._core.events import AssetMaterializationPlannedData, DagsterEvent, DagsterEventType


def mark_failed(context: AssetExecutionContext, asset: AssetKey, partition_keys: Sequence[str], why: str) -> None:
    """Plan these partitions of `asset` in this run: with no materialization after it, once the run
    fails, Dagster shows them failed. The framework's own planned events are made the same way
    (`run_domain.py`); these come later in the run, so each is its partition's latest event."""
    step_key = context.op_execution_context.get_step_execution_context().step.key
    for key in partition_keys:
        event = DagsterEvent(
            event_type_value=DagsterEventType.ASSET_MATERIALIZATION_PLANNED.value,
            job_name=context.run.job_name,
            message=f"{asset.to_user_string()} {key} {why}: planned with no materialization, so it shows failed",
            event_specific_data=AssetMaterializationPlannedData(asset, partition=key),
            step_key=step_key,
        )
        context.instance.report_dagster_event(event, context.run.run_id, logging.WARNING)


def mark_crashed(
    context: AssetExecutionContext,
    made_here: Sequence[AssetKey],
    materialized: Collection[AssetKey],
    partition_keys: Sequence[str],
) -> None:
    """A step that failed as a whole: the assets it made and had not materialized yet, and the per-PDF
    assets of the run after it (whose steps Dagster then skips), failed for every PDF of the run: what
    Dagster showed when it planned every partition up front."""
    step = context.op_execution_context.get_step_execution_context().step.key
    unmaterialized = [asset for asset in made_here if asset not in materialized]
    for asset in [*unmaterialized, *_later_per_pdf_assets(context, made_here)]:
        mark_failed(context, asset, partition_keys, f"not built: step {step} failed")


def _later_per_pdf_assets(context: AssetExecutionContext, assets: Sequence[AssetKey]) -> list[AssetKey]:
    """The partitioned assets of the run downstream of `assets` through assets of the run, in graph order."""
    layer = context.job_def.asset_layer
    graph, in_run = layer.asset_graph, layer.selected_asset_keys
    later: set[AssetKey] = set()
    frontier = list(assets)
    while frontier:
        for child in graph.get(frontier.pop()).child_keys:
            if child in in_run and child not in later and child not in assets:
                later.add(child)
                frontier.append(child)
    return [key for key in graph.toposorted_asset_keys if key in later and graph.get(key).partitions_def is not None]
