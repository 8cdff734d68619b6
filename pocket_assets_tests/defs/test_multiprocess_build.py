"""The build under Dagster's multiprocess executor (each step its own process, PDFs on worker
processes inside) gives the serial in-process build's outputs byte for byte."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from dagster import (
    AssetSelection,
    DagsterInstance,
    Definitions,
    JobDefinition,
    define_asset_job,
    execute_job,
    instance_for_test,
    multiprocess_executor,
    reconstructable,
)

from pocket_assets.core.pdf import discover_pdfs
from pocket_assets.defs.build import ASSETS, build_resources
from pocket_assets.defs.jobs import BUILD_GROUPS
from pocket_assets.defs.partition_ranges import range_tags
from pocket_assets.defs.partitions import pdf_partitions
from pocket_assets.defs.resources import CorpusPaths
from pocket_assets_tests.defs.conftest import materialize_corpus
from pocket_assets_tests.pdf_factory import REPO_ROOT, SAMPLE_RAW


def multiprocess_build_job() -> JobDefinition:
    """Rebuilt in every step process; the paths come from the environment the test sets."""
    job = define_asset_job(
        "build_corpus_multiprocess",
        selection=AssetSelection.groups(*BUILD_GROUPS),
        executor_def=multiprocess_executor.configured({"max_concurrent": 2}),
    )
    return Definitions(assets=ASSETS, jobs=[job], resources=build_resources()).resolve_job_def(job.name)


def _outputs(out: Path) -> dict[str, bytes]:
    files = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*.parquet"))}
    for export in sorted([*out.glob("chunks_*"), *out.glob("id_redirects_*")]):
        data = export.read_bytes()
        if export.suffix == ".json":  # the `generated` stamp is the build's time
            document = json.loads(data)
            document["metadata"].pop("generated", None)
            data = json.dumps(document, sort_keys=True).encode("utf-8")
        files[export.name] = data
    return files


def test_the_multiprocess_executor_builds_what_the_serial_build_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw = tmp_path / "raw"  # two PDFs: one step process per asset is slow to start
    for key in ("fr/faq.pdf", "intl/R-data.pdf"):
        (raw / key).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SAMPLE_RAW / key, raw / key)
    keys = discover_pdfs(raw)
    serial = CorpusPaths(
        raw_dir=str(raw), output_dir=str(tmp_path / "serial"), expectations_dir=str(REPO_ROOT / "expectations")
    )
    monkeypatch.setenv("POCKET_ASSETS_WORKERS", "1")
    with instance_for_test() as instance:
        assert materialize_corpus(instance, serial).success

    monkeypatch.setenv("POCKET_ASSETS_WORKERS", "2")
    monkeypatch.setenv("POCKET_ASSETS_RAW_DIR", str(raw))
    monkeypatch.setenv("POCKET_ASSETS_OUTPUT_DIR", str(tmp_path / "multiprocess"))
    monkeypatch.setenv("POCKET_ASSETS_EXPECTATIONS_DIR", str(REPO_ROOT / "expectations"))
    with instance_for_test() as instance:
        instance.add_dynamic_partitions(pdf_partitions.name, keys)
        with execute_job(
            reconstructable(multiprocess_build_job), instance=instance, tags=range_tags(keys[0], keys[-1])
        ) as result:
            assert result.success
            step_processes = {
                event.pid for event in result.all_events if event.event_type_value == "STEP_START"
            }
    assert len(step_processes) > 1  # each step ran in a process of its own

    serial_files, multiprocess_files = _outputs(tmp_path / "serial"), _outputs(tmp_path / "multiprocess")
    assert any(name.startswith("stages/pages/") for name in serial_files)
    assert multiprocess_files == serial_files
