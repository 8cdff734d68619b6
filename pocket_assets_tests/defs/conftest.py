from pathlib import Path
from typing import Iterator, Mapping, Sequence

import pytest
from dagster import AssetSelection, DagsterInstance, ExecuteInProcessResult, instance_for_test, materialize

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
        expectations_dir=str(REPO_ROOT / "expectations"),
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
