"""The stale_pdfs sensor: lists stale PDFs and records an observation only when a verdict changes."""

from pathlib import Path

from dagster import DagsterInstance, SensorResult, build_sensor_context

from pocket_assets.core.raw_folder import sha256_file
from pocket_assets.defs.partitions import pdf_partitions
from pocket_assets.defs.resources import CorpusPaths, environment_versions
from pocket_assets.defs.stale_sensor import stale_pdfs
from pocket_assets.stages.store import STATUS_OK, PartitionManifest
from pocket_assets_tests.pdf_factory import text_pdf


def _tick(instance: DagsterInstance, paths: CorpusPaths, cursor: str | None) -> SensorResult:
    return stale_pdfs(build_sensor_context(instance=instance, cursor=cursor, resources={"paths": paths}))


def _observed(result: SensorResult) -> dict[str, bool]:
    return {event.partition: event.metadata["stale"].value for event in result.asset_events}


def test_stale_pdfs_observes_changes_only(instance: DagsterInstance, tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    text_pdf(raw / "fr" / "a.pdf", ["Premier document."])
    text_pdf(raw / "intl" / "b.pdf", ["Second document."])
    paths = CorpusPaths(raw_dir=str(raw), output_dir=str(tmp_path / "out"))
    instance.add_dynamic_partitions(pdf_partitions.name, ["fr/a.pdf", "intl/b.pdf"])

    first = _tick(instance, paths, None)
    assert first.run_requests is None or first.run_requests == []
    assert _observed(first) == {"fr/a.pdf": True, "intl/b.pdf": True}
    assert first.skip_reason.skip_message.startswith("2 of 2 PDF(s) stale:\nfr/a.pdf: raw_pdf never built")

    quiet = _tick(instance, paths, first.cursor)
    assert quiet.asset_events == []

    sha = sha256_file(raw / "fr" / "a.pdf")
    for stage, version in environment_versions().items():  # manifests as a build with these versions leaves them
        manifest = PartitionManifest(stage.name, "fr/a.pdf", STATUS_OK, rows=1, source_sha256=sha, code_version=version)
        paths.store().write(stage, "fr/a.pdf", [], manifest)
    fresh = _tick(instance, paths, quiet.cursor)
    assert _observed(fresh) == {"fr/a.pdf": False}
    assert fresh.skip_reason.skip_message.startswith("1 of 2 PDF(s) stale")
