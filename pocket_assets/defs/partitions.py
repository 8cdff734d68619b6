"""One dynamic partition per PDF, keyed by its path under the raw folder (e.g. `fr/faq.pdf`).

The per-PDF assets are declared from the stage registry (`runstate.stages`): the
asset key is the stage's name and its dependencies are the stage's upstream
stages. Their code versions are not fixed here: `with_stage_versions` sets them
when the definitions are built, from the resources they are built with.
"""

from typing import Any, Mapping, Sequence

from dagster import (
    AssetCheckSpec,
    AssetsDefinition,
    AssetSpec,
    BackfillPolicy,
    DynamicPartitionsDefinition,
    asset,
    multi_asset,
)

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
    made_here = {stage.name for stage in stages}
    return multi_asset(
        name=name,
        partitions_def=pdf_partitions,
        backfill_policy=single_run,
        specs=[
            AssetSpec(
                stage.name,
                description=description,
                deps=[upstream.name for upstream in stage.upstream if upstream.name not in made_here],
                owners=OWNERS,
                group_name=group_name,
                kinds=set(kinds),
                partitions_def=pdf_partitions,
            )
            for stage, description in stages.items()
        ],
    )


def with_stage_versions(assets: Sequence[Any], versions: Mapping[Stage, str | None]) -> list[Any]:
    """Each per-PDF stage asset with its version as Dagster code version (other assets as they are).

    Dagster reads code versions when the definitions load, so the UI shows the versions
    of the resources the code location was built with (the environment); a run whose
    launchpad config changes a setting stamps its own versions in the manifests, which
    the project's staleness (`pocket-assets stale`, the schedule, the sensor) compares.
    """
    names = {stage.name: stage for stage in versions}

    def version_spec(spec: AssetSpec) -> AssetSpec:
        stage = names.get(spec.key.to_user_string())
        return spec if stage is None else spec.replace_attributes(code_version=versions[stage])

    return [
        definition.map_asset_specs(version_spec) if isinstance(definition, AssetsDefinition) else definition
        for definition in assets
    ]

