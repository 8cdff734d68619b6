from pathlib import Path
from typing import Iterator, Mapping, Sequence

import pytest
from dagster import (
    AssetKey,
    AssetRecordsFilter,
    AssetSelection,
    DagsterInstance,
    ExecuteInProcessResult,
    instance_for_test,
    materialize,
)
from dagster._core.definitions.partitions.context import partition_loading_context
from dagster._core.storage.partition_status_cache import get_and_update_asset_status_cache_value

from pocket_assets.core.pdf import discover_pdfs
from pocket_assets.defs.build import ASSETS, build_resources
from pocket_assets.defs.jobs import BUILD_GROUPS
from pocket_assets.defs.partition_ranges import range_tags
from pocket_assets.defs.partitions import pdf_partitions
from pocket_assets.defs.resources import CorpusPaths
from pocket_assets_tests.pdf_factory import REPO_ROOT


@pytest.fixture
def instance() -> Iterator[DagsterInstance]:
    with instance_for_test() as test_instance:
        yield test_instance


@pytest.fixture
def paths(tmp_path: Path, raw_dir: Path) -> CorpusPaths:
    return CorpusPaths(
        raw_dir=str(raw_dir),
        output_dir=str(tmp_path / "processed"),
        expectations_dir=str(REPO_ROOT / "pocket_assets" / "expectations"),
    )


def materialize_corpus(
    instance: DagsterInstance,
    paths: CorpusPaths,
    keys: Sequence[str] | None = None,
    selection: Sequence[str] | None = None,
    resources: Mapping[str, object] | None = None,
) -> ExecuteInProcessResult:
    """One run over the given PDFs (all of the folder by default), like a single-run backfill of the build job;
    `resources` override the environment's, as a run's launchpad config does."""
    keys = list(keys or discover_pdfs(paths.raw_path))
    registered = instance.get_dynamic_partitions(pdf_partitions.name)
    instance.add_dynamic_partitions(pdf_partitions.name, [key for key in keys if key not in registered])
    tags = range_tags(keys[0], keys[-1]) if len(keys) > 1 else {}
    return materialize(
        ASSETS,
        instance=instance,
        resources={**build_resources(paths), **(resources or {})},
        partition_key=keys[0] if len(keys) == 1 else None,
        tags=tags,
        selection=selection or AssetSelection.groups(*BUILD_GROUPS),
        raise_on_error=False,
    )


def materialize_export(instance: DagsterInstance, paths: CorpusPaths) -> ExecuteInProcessResult:
    """Only the unpartitioned export, from whatever the stages hold."""
    return materialize(
        ASSETS, instance=instance, resources=build_resources(paths), selection=["android_export"], raise_on_error=False
    )


def partition_states(instance: DagsterInstance, asset: str) -> dict[str, set[str]]:
    """`materialized` and `failed` PDFs of an asset, computed as the UI's `assetPartitionStatuses` does
    (the same status cache; a failed partition is not counted materialized)."""
    cache = get_and_update_asset_status_cache_value(instance, AssetKey(asset), pdf_partitions)
    if cache is None:
        return {"materialized": set(), "failed": set()}
    with partition_loading_context(dynamic_partitions_store=instance):
        materialized = set(cache.deserialize_materialized_partition_subsets(pdf_partitions).get_partition_keys())
        failed = set(cache.deserialize_failed_partition_subsets(pdf_partitions).get_partition_keys())
    return {"materialized": materialized - failed, "failed": failed}


def partition_metadata(instance: DagsterInstance, asset: str, key: str) -> dict[str, object]:
    """The metadata values of the latest materialization of one PDF's partition."""
    records = instance.fetch_materializations(
        AssetRecordsFilter(asset_key=AssetKey(asset), asset_partitions=[key]), limit=1
    ).records
    return {name: value.value for name, value in records[0].asset_materialization.metadata.items()}
