"""The raw-folder sensor over several ticks (add, change and delete PDFs), and the export sensor."""

from pathlib import Path

from dagster import DagsterInstance, SensorResult, build_sensor_context

from pocket_assets.core.records import PdfIdentity, to_dict
from pocket_assets.defs.partitions import pdf_partitions
from pocket_assets.defs.ranges import PDFS_TAG, run_tags
from pocket_assets.defs.resources import CorpusPaths
from pocket_assets.defs.sensors import corpus_export_sensor, raw_pdf_sensor
from pocket_assets.stages.registry import RAW_PDF, VALIDATED_CHUNKS
from pocket_assets.stages.store import PartitionManifest
from pocket_assets_tests.defs.conftest import materialize_corpus, materialize_export
from pocket_assets_tests.pdf_factory import small_corpus, text_pdf


def _tick(instance: DagsterInstance, paths: CorpusPaths, cursor: str | None) -> SensorResult:
    """One evaluation with a fresh context (as after a daemon restart), applying its partition requests."""
    context = build_sensor_context(instance=instance, cursor=cursor, resources={"paths": paths})
    result = raw_pdf_sensor(context)
    for request in result.dynamic_partitions_requests:
        if request.__class__.__name__ == "AddDynamicPartitionsRequest":
            instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
        else:
            for key in request.partition_keys:
                instance.delete_dynamic_partition(request.partitions_def_name, key)
    return result


def test_sensor_adds_rebuilds_and_deletes(instance: DagsterInstance, tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    text_pdf(raw / "fr" / "a.pdf", ["Premier document."])
    text_pdf(raw / "fr" / "b.pdf", ["Deuxième document."])
    text_pdf(raw / "intl" / "c.pdf", ["Third document."])
    paths = CorpusPaths(raw_dir=str(raw), output_dir=str(tmp_path / "out"))

    first = _tick(instance, paths, None)
    assert instance.get_dynamic_partitions(pdf_partitions.name) == ["fr/a.pdf", "fr/b.pdf", "intl/c.pdf"]
    assert len(first.run_requests) == 1, "PDFs found together are built in one run"
    assert first.run_requests[0].tags == run_tags(["fr/a.pdf", "fr/b.pdf", "intl/c.pdf"])
    assert first.run_requests[0].tags[PDFS_TAG] == "3 PDFs: fr/a.pdf .. intl/c.pdf", "the runs list names them"

    quiet = _tick(instance, paths, first.cursor)
    assert quiet.run_requests == [] and quiet.dynamic_partitions_requests == []

    text_pdf(raw / "fr" / "b.pdf", ["Deuxième document, révisé."])
    changed = _tick(instance, paths, quiet.cursor)
    assert [request.partition_key for request in changed.run_requests] == ["fr/b.pdf"]
    assert changed.run_requests[0].run_key.startswith("fr/b.pdf@")
    assert changed.run_requests[0].tags[PDFS_TAG] == "fr/b.pdf"
    assert changed.dynamic_partitions_requests == []

    store = paths.store()
    identity = PdfIdentity("intl/c.pdf", "intl", "c.pdf", "0" * 64, 1, 1)
    store.write(RAW_PDF, "intl/c.pdf", [to_dict(identity)], PartitionManifest("raw_pdf", "intl/c.pdf", "ok", rows=1))
    (raw / "intl" / "c.pdf").unlink()
    removed = _tick(instance, paths, changed.cursor)
    [export] = removed.run_requests
    assert export.job_name == "export_corpus", "the tick that deletes a partition requests the export"
    assert instance.get_dynamic_partitions(pdf_partitions.name) == ["fr/a.pdf", "fr/b.pdf"]
    assert not store.data_path(RAW_PDF, "intl/c.pdf").exists()

    text_pdf(raw / "intl" / "d.pdf", ["A new one."])
    added = _tick(instance, paths, removed.cursor)
    assert [request.partition_key for request in added.run_requests] == ["intl/d.pdf"]
    assert instance.get_dynamic_partitions(pdf_partitions.name) == ["fr/a.pdf", "fr/b.pdf", "intl/d.pdf"]


def test_first_tick_over_fresh_builds_launches_nothing(instance: DagsterInstance, tmp_path: Path) -> None:
    """Turning the sensor on over an instance that already built the folder rebuilds only what is stale."""
    raw = tmp_path / "raw"
    small_corpus(raw)
    paths = CorpusPaths(raw_dir=str(raw), output_dir=str(tmp_path / "out"))
    assert materialize_corpus(instance, paths).success

    first = _tick(instance, paths, None)
    assert first.run_requests == [] and first.dynamic_partitions_requests == []
    assert len(first.cursor) < 200 * len(instance.get_dynamic_partitions(pdf_partitions.name)), "a short cursor"

    paths.store().manifest_path(VALIDATED_CHUNKS, "intl/rules.pdf").unlink()
    restarted = _tick(instance, paths, None)
    assert [request.partition_key for request in restarted.run_requests] == ["intl/rules.pdf"]


def test_the_export_sensor_waits_for_builds_then_exports_once(instance: DagsterInstance, tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    small_corpus(raw)
    paths = CorpusPaths(raw_dir=str(raw), output_dir=str(tmp_path / "out"))

    def tick():
        return corpus_export_sensor(build_sensor_context(instance=instance, resources={"paths": paths}))

    assert "nothing to export" in tick().skip_message, "no PDF built, no export made: empty files would be published"
    assert materialize_corpus(instance, paths).success
    request = tick()
    assert request.run_key.startswith("export@"), "the PDFs changed since the last export (there was none)"
    assert materialize_export(instance, paths).success
    assert "up to date" in tick().skip_message
    text_pdf(raw / "fr" / "nouveau.pdf", ["Un nouveau règlement, assez long pour faire un morceau de texte."])
    assert tick().run_key.startswith("export@"), "a PDF added to the folder changes what the export is made of"
