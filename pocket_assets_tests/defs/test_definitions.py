"""The code location `dg` and `dagster dev` load (the defs/ folder) holds what `build_definitions` holds."""

from pathlib import Path

from dagster import AssetKey, Definitions, load_from_defs_folder

import pocket_assets.definitions as location
from pocket_assets.defs.assembly import build_definitions
from pocket_assets.defs.assets.pdf_file import PDF_FILE
from pocket_assets.stages.registry import STAGES


def _summary(definitions: Definitions) -> dict:
    graph = definitions.resolve_asset_graph()
    return {
        "assets": {key.to_user_string(): graph.get(key).code_version for key in graph.get_all_asset_keys()},
        "checks": sorted(key.to_user_string() for key in graph.asset_check_keys),
        "jobs": sorted({job.name for job in definitions.jobs or []}),
        "schedules": sorted(schedule.name for schedule in definitions.schedules or []),
        "sensors": sorted(sensor.name for sensor in definitions.sensors or []),
        "resources": sorted(definitions.resources or {}),
    }


def test_the_defs_folder_and_build_definitions_agree() -> None:
    from_folder = load_from_defs_folder(path_within_project=Path(location.__file__).parent)
    assert _summary(from_folder) == _summary(build_definitions())
    assert "chunks" not in _summary(from_folder)["assets"], "the multi-asset's keys are its stages"


def test_the_asset_lineage_is_the_registry_lineage() -> None:
    """Each stage reads its registry upstream stages; `raw_pdf` reads the observed file (`pdf_file`)."""
    graph = build_definitions().resolve_asset_graph()
    for stage in STAGES:
        parents = {key.to_user_string() for key in graph.get(AssetKey(stage.name)).parent_keys}
        assert parents == ({upstream.name for upstream in stage.upstream} or {PDF_FILE}), stage
    assert graph.get(AssetKey(PDF_FILE)).is_external and graph.get(AssetKey(PDF_FILE)).partitions_def is not None


def test_each_stage_asset_declares_its_column_schema() -> None:
    """The UI's Columns come from the asset (the stage's Parquet schema), not from each PDF's materialization."""
    graph = build_definitions().resolve_asset_graph()
    for stage in STAGES:
        schema = graph.get(AssetKey(stage.name)).metadata["dagster/column_schema"]
        assert [(column.name, column.type) for column in schema.columns] == [
            (field.name, str(field.type)) for field in stage.schema
        ], stage
