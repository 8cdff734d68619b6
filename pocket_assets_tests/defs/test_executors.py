"""Parents and children come from one step, with nothing carried between steps: the in-process and the
multiprocess executor, each with the PDFs built on two worker processes inside its steps (`pdf_workers`),
give the bytes of the serial build, and each materializes both assets with their metadata.

The multiprocess executor runs each step in a process of its own, so it needs an instance on disk
(a temporary DAGSTER_HOME) and a job Dagster can rebuild in that process (`reconstructable`).
"""

from pathlib import Path

import pytest
from dagster import (
    AssetKey,
    AssetSelection,
    DagsterInstance,
    Definitions,
    JobDefinition,
    define_asset_job,
    execute_job,
    in_process_executor,
    instance_for_test,
    multiprocess_executor,
    reconstructable,
)

from pocket_assets.defs.build import ASSETS, build_resources
from pocket_assets.defs.jobs import BUILD_GROUPS
from pocket_assets.defs.partition_ranges import range_tags
from pocket_assets.defs.partitions import pdf_partitions
from pocket_assets.defs.resources import CorpusPaths
from pocket_assets.runstate.stages import CHILDREN, PARENTS, STAGES
from pocket_assets_tests.defs.conftest import materialize_corpus, partition_metadata
from pocket_assets_tests.pdf_factory import REPO_ROOT, small_corpus

KEYS = ["fr/reglement.pdf", "intl/rules.pdf"]
PER_PDF_GROUPS = [group for group in BUILD_GROUPS if group != "export"]


def _job(name: str, executor) -> JobDefinition:
    """The build job's per-PDF stages; paths come from the environment (the child processes read it too)."""
    job = define_asset_job(name, selection=AssetSelection.groups(*PER_PDF_GROUPS), executor_def=executor)
    return Definitions(assets=ASSETS, jobs=[job], resources=build_resources()).resolve_job_def(name)


def multiprocess_job() -> JobDefinition:
    return _job("build_multiprocess", multiprocess_executor.configured({"max_concurrent": 2}))


def in_process_job() -> JobDefinition:
    return _job("build_in_process", in_process_executor)


@pytest.mark.parametrize("job_function", [in_process_job, multiprocess_job], ids=["in_process", "multiprocess"])
def test_each_executor_builds_parents_and_children_in_one_step(
    job_function, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_corpus(tmp_path / "raw")
    monkeypatch.setenv("POCKET_ASSETS_RAW_DIR", str(tmp_path / "raw"))
    monkeypatch.setenv("POCKET_ASSETS_OUTPUT_DIR", str(tmp_path / "out"))
    monkeypatch.setenv("POCKET_ASSETS_EXPECTATIONS_DIR", str(REPO_ROOT / "pocket_assets" / "expectations"))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("POCKET_ASSETS_WORKERS", "2")
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    with DagsterInstance.get() as instance:
        instance.add_dynamic_partitions(pdf_partitions.name, KEYS)
        with execute_job(reconstructable(job_function), instance=instance, tags=range_tags(*KEYS)) as result:
            assert result.success
            step_keys = {event.step_key for event in result.all_events if event.is_step_success}
        assert "chunks" in step_keys and not {"parents", "children"} & step_keys, "one chunking step"
        for stage in (PARENTS, CHILDREN):
            assert instance.get_materialized_partitions(AssetKey(stage.name)) == set(KEYS), stage
            for key in KEYS:
                metadata = partition_metadata(instance, stage.name, key)
                assert metadata["status"] == "ok" and metadata["dagster/row_count"] > 0, (stage, key)
    out = tmp_path / "out" / "stages"
    built = {(stage.name, key): (out / stage.name / f"{key}.parquet").read_bytes() for stage in STAGES for key in KEYS}
    monkeypatch.setenv("POCKET_ASSETS_WORKERS", "1")
    assert built == _reference_build(tmp_path), "the same bytes as a serial in-process materialize"


def _reference_build(tmp_path: Path) -> dict[tuple[str, str], bytes]:
    """The same corpus built by `materialize` (in process, one PDF after another): what the CLI and tests do."""
    raw, expectations = str(tmp_path / "raw"), str(REPO_ROOT / "pocket_assets" / "expectations")
    paths = CorpusPaths(raw_dir=raw, output_dir=str(tmp_path / "reference"), expectations_dir=expectations)
    with instance_for_test() as instance:
        assert materialize_corpus(instance, paths, selection=[stage.name for stage in STAGES]).success
    return {(stage.name, key): paths.store().data_path(stage, key).read_bytes() for stage in STAGES for key in KEYS}
