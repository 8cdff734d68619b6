from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest
from dagster import (
    AssetKey,
    AssetPartitionStatus,
    AssetRecordsFilter,
    DagsterInstance,
    ExecuteInProcessResult,
    instance_for_test,
    materialize,
)

from pocket_assets.core.raw_folder import discover_pdfs
from pocket_assets.defs.assembly import ASSETS, build_resources
from pocket_assets.defs.partitions import pdf_partitions
from pocket_assets.defs.ranges import run_tags
from pocket_assets.defs.resources import CorpusPaths
from pocket_assets.stages.registry import STAGES

PER_PDF = [stage.name for stage in STAGES]


@pytest.fixture
def instance() -> Iterator[DagsterInstance]:
    with instance_for_test() as test_instance:
        yield test_instance


@pytest.fixture
def paths(tmp_path: Path, raw_dir: Path) -> CorpusPaths:
    return CorpusPaths(raw_dir=str(raw_dir), output_dir=str(tmp_path / "processed"))


def materialize_corpus(
    instance: DagsterInstance,
    paths: CorpusPaths,
    keys: Sequence[str] | None = None,
    selection: Sequence[str] | None = None,
    resources: Mapping[str, object] | None = None,
) -> ExecuteInProcessResult:
    """One run over the given PDFs (all of the folder by default) as a range run of the per-PDF stages, like one
    run of a multi-run backfill; `resources` override the environment's, as a run's launchpad config does."""
    keys = list(keys or discover_pdfs(paths.raw_path))
    registered = instance.get_dynamic_partitions(pdf_partitions.name)
    instance.add_dynamic_partitions(pdf_partitions.name, [key for key in keys if key not in registered])
    return materialize(
        ASSETS,
        instance=instance,
        resources={**build_resources(paths), **(resources or {})},
        partition_key=keys[0] if len(keys) == 1 else None,
        tags=run_tags(keys),
        selection=list(selection or PER_PDF),
        raise_on_error=False,
    )


def materialize_export(instance: DagsterInstance, paths: CorpusPaths) -> ExecuteInProcessResult:
    """Only the unpartitioned export, from whatever the stages hold."""
    return materialize(
        ASSETS, instance=instance, resources=build_resources(paths), selection=["android_export"], raise_on_error=False
    )


def partition_states(instance: DagsterInstance, asset: str) -> dict[str, set[str]]:
    """`materialized` and `failed` PDFs of an asset, as Dagster reports them (the UI's partition statuses)."""
    keys = instance.get_dynamic_partitions(pdf_partitions.name)
    statuses = instance.get_status_by_partition(AssetKey(asset), keys, pdf_partitions)
    return {
        "materialized": {key for key, status in statuses.items() if status == AssetPartitionStatus.MATERIALIZED},
        "failed": {key for key, status in statuses.items() if status == AssetPartitionStatus.FAILED},
    }


def partition_metadata(instance: DagsterInstance, asset: str, key: str) -> dict[str, object]:
    """The metadata values of the latest materialization of one PDF's partition."""
    records = instance.fetch_materializations(
        AssetRecordsFilter(asset_key=AssetKey(asset), asset_partitions=[key]), limit=1
    ).records
    return {name: value.value for name, value in records[0].asset_materialization.metadata.items()}
