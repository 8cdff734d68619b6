"""One dynamic partition per PDF, keyed by its path under the raw folder (e.g. `fr/faq.pdf`).

The per-PDF assets are declared from the stage registry (`runstate.stages`): the
asset key is the stage's name, its dependencies are the stage's upstream stages,
and its Dagster code version is the stage's version under the settings the
environment configures (tokenizer, chunk policy, summarizer, extraction options).

Dagster reads code versions when the code location loads, so the UI shows the
versions of the environment's settings; a run whose launchpad config changes a
setting stamps its own versions in the manifests, which the project's staleness
(`pocket-assets stale`, the schedule, the sensor) compares with the environment's.
"""

from typing import Any, Mapping, Sequence

import pyarrow as pa
from dagster import (
    AssetCheckSpec,
    AssetSpec,
    BackfillPolicy,
    DynamicPartitionsDefinition,
    TableColumn,
    TableSchema,
    asset,
    multi_asset,
)

from pocket_assets.defs.resources import environment_versions
from pocket_assets.runstate.stages import Stage

pdf_partitions = DynamicPartitionsDefinition(name="pdfs")

# Many PDFs in one run: one process start and one tokenizer load for the whole backfill.
single_run = BackfillPolicy.single_run()

# Who to ask about these assets, shown in the UI.
OWNERS = ["team:corpus-maintainers"]


def pdf_asset(
    stage: Stage,
    *,
    group_name: str,
    description: str,
    kinds: Sequence[str] = ("parquet",),
    check_specs: Sequence[AssetCheckSpec] | None = None,
):
    """`@asset` for one per-PDF stage: partitioned by PDF, single-run backfills, owned, grouped."""
    return asset(
        name=stage.name,
        partitions_def=pdf_partitions,
        backfill_policy=single_run,
        owners=OWNERS,
        group_name=group_name,
        kinds=set(kinds),
        deps=[upstream.name for upstream in stage.upstream],
        description=description,
        check_specs=check_specs,
        code_version=environment_versions()[stage],
        metadata=stage_metadata(stage),
    )


def pdf_multi_asset(
    stages: Mapping[Stage, str],
    *,
    name: str,
    group_name: str,
    kinds: Sequence[str] = ("parquet",),
):
    """`@multi_asset` for per-PDF stages made in one step (stage -> description); the same
    partitions, backfill policy, owners and group as `pdf_asset`. Not subsettable: the
    stages come from one computation, so they are always materialized together."""
    versions = environment_versions()
    return multi_asset(
        name=name,
        partitions_def=pdf_partitions,
        backfill_policy=single_run,
        specs=[
            AssetSpec(
                stage.name,
                description=description,
                deps=[upstream.name for upstream in stage.upstream],
                owners=OWNERS,
                group_name=group_name,
                kinds=set(kinds),
                partitions_def=pdf_partitions,
                code_version=versions[stage],
                metadata=stage_metadata(stage),
            )
            for stage, description in stages.items()
        ],
    )


def stage_metadata(stage: Stage) -> dict[str, Any]:
    """The asset's own metadata: its column schema, the stage's and so every PDF's (the UI's Columns).
    On the asset rather than on each PDF's materialization, where it was ~7 KB and ~0.6 ms of
    serialization per event, for the same table each time."""
    return {"dagster/column_schema": column_schema(stage.schema)}


def column_schema(schema: pa.Schema) -> TableSchema:
    return TableSchema(columns=[TableColumn(name=f.name, type=str(f.type)) for f in schema])
