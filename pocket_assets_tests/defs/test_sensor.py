"""The folder sensor over several ticks (PDFs added, edited, copied, removed, keys typed by hand), the build-on-change
sensor, and the export sensor."""

import json
import shutil
from pathlib import Path

import pytest
from dagster import (
    AssetCheckEvaluation,
    AssetObservation,
    DagsterInstance,
    DagsterRunStatus,
    RunRequest,
    SensorResult,
    SkipReason,
    build_sensor_context,
)

from pocket_assets.core.raw_folder import discover_pdfs
from pocket_assets.defs.assembly import build_definitions
from pocket_assets.defs.jobs import BUILD_CORPUS, EXPORT_CORPUS
from pocket_assets.defs.partition_sync import register_pdfs
from pocket_assets.defs.partitions import pdf_partitions
from pocket_assets.defs.provenance import DATA_VERSION_TAG, observed_sha256
from pocket_assets.defs.ranges import PDFS_TAG, run_tags
from pocket_assets.defs.resources import CorpusPaths
from pocket_assets.defs.sensors import (
    DEFAULT_EXPORT_QUIET_SECONDS,
    EXPORT_QUIET_ENV,
    build_changed_pdfs,
    corpus_export_sensor,
    pdf_folder_sensor,
)
from pocket_assets.stages.registry import RAW_PDF, VALIDATED_CHUNKS
from pocket_assets_tests.defs.conftest import materialize_corpus, materialize_export
from pocket_assets_tests.pdf_factory import small_corpus, text_pdf


def _tick(instance: DagsterInstance, paths: CorpusPaths, cursor: str | None) -> SensorResult:
    """One evaluation with a fresh context (as after a daemon restart), its asset events stored as the daemon does."""
    with build_sensor_context(instance=instance, cursor=cursor, resources={"paths": paths}) as context:
        result = pdf_folder_sensor(context)
    for event in result.asset_events:
        if isinstance(event, AssetObservation):
            instance.report_runless_asset_event(event)
    return result


def _observed(result: SensorResult) -> dict[str, str]:
    return {e.partition: e.tags[DATA_VERSION_TAG] for e in result.asset_events if isinstance(e, AssetObservation)}


def _check(result: SensorResult) -> AssetCheckEvaluation | None:
    return next((e for e in result.asset_events if isinstance(e, AssetCheckEvaluation)), None)


def test_the_folder_sensor_makes_the_partitions_the_folder_and_builds_nothing(
    instance: DagsterInstance, tmp_path: Path
) -> None:
    raw = tmp_path / "raw"
    text_pdf(raw / "fr" / "a.pdf", ["Premier document."])
    text_pdf(raw / "fr" / "b.pdf", ["Deuxième document."])
    text_pdf(raw / "intl" / "c.pdf", ["Third document."])
    paths = CorpusPaths(raw_dir=str(raw), output_dir=str(tmp_path / "out"))

    first = _tick(instance, paths, None)
    assert instance.get_dynamic_partitions(pdf_partitions.name) == ["fr/a.pdf", "fr/b.pdf", "intl/c.pdf"]
    assert first.run_requests == [], "adding a partition builds nothing"
    assert sorted(_observed(first)) == ["fr/a.pdf", "fr/b.pdf", "intl/c.pdf"], "each file observed with its sha256"
    check = _check(first)
    assert check is not None and not check.passed and check.metadata["pdfs_to_build"].value == 3

    quiet = _tick(instance, paths, first.cursor)
    assert quiet.run_requests == [] and quiet.asset_events == [], "nothing changed, nothing recorded"

    text_pdf(raw / "fr" / "b.pdf", ["Deuxième document, révisé."])
    edited = _tick(instance, paths, quiet.cursor)
    assert (
        list(_observed(edited)) == ["fr/b.pdf"]
        and observed_sha256(instance, "fr/b.pdf") == _observed(edited)["fr/b.pdf"]
    )

    instance.add_dynamic_partitions(pdf_partitions.name, ["fr/typo.pdf", "notes"])  # the UI's "Add partition"
    shutil.copyfile(raw / "fr" / "a.pdf", raw / "fr" / "a (1).pdf")  # a copy within the corpus
    shutil.copyfile(raw / "fr" / "a.pdf", raw / "intl" / "a.pdf")  # the same file in the other corpus: its own
    cleaned = _tick(instance, paths, edited.cursor)
    assert instance.get_dynamic_partitions(pdf_partitions.name) == [
        "fr/b.pdf",
        "intl/c.pdf",
        "fr/a (1).pdf",
        "intl/a.pdf",
    ], "of two copies never built, the first key is kept"
    assert sorted(_observed(cleaned)) == ["fr/a (1).pdf", "intl/a.pdf"]
    assert cleaned.run_requests == [], "the partitions removed were never built: nothing to export again"
    check = _check(cleaned)
    assert check is not None and "fr/a.pdf | copy of fr/a (1).pdf" in check.metadata["not_built"].value

    assert materialize_corpus(instance, paths, keys=["intl/c.pdf"]).success
    assert materialize_export(instance, paths).success
    (raw / "intl" / "c.pdf").unlink()
    removed = _tick(instance, paths, cleaned.cursor)
    assert "intl/c.pdf" not in instance.get_dynamic_partitions(pdf_partitions.name)
    [export] = removed.run_requests
    assert export.run_key.startswith("export@"), "a PDF the export shipped left the folder: the export is redone"


def test_the_build_sensor_builds_what_the_plan_says_in_ranges(instance: DagsterInstance, tmp_path: Path) -> None:
    """Over fresh builds it launches nothing; a PDF whose stage file went missing is built again alone."""
    raw = tmp_path / "raw"
    small_corpus(raw)
    paths = CorpusPaths(raw_dir=str(raw), output_dir=str(tmp_path / "out"))

    def tick():
        with build_sensor_context(instance=instance, resources={"paths": paths}) as context:
            return build_changed_pdfs(context)

    first = tick()
    assert len(first.run_requests) == 1, "PDFs found together are built in one run"
    keys = instance.get_dynamic_partitions(pdf_partitions.name)
    assert first.run_requests[0].tags == run_tags(keys) and first.run_requests[0].tags[PDFS_TAG].startswith("2 PDFs: ")
    assert materialize_corpus(instance, paths).success
    assert "up to date" in tick().skip_message
    paths.store().manifest_path(VALIDATED_CHUNKS, "intl/rules.pdf").unlink()
    [again] = tick().run_requests
    assert again.partition_key == "intl/rules.pdf" and again.run_key.startswith("intl/rules.pdf@")


def test_the_export_sensor_waits_for_builds_then_exports_once(instance: DagsterInstance, tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    small_corpus(raw)
    paths = CorpusPaths(raw_dir=str(raw), output_dir=str(tmp_path / "out"))

    def tick():
        with build_sensor_context(instance=instance, resources={"paths": paths}) as context:
            return corpus_export_sensor(context)

    assert "nothing to export" in tick().skip_message, "no PDF built, no export made: empty files would be published"
    assert materialize_corpus(instance, paths).success
    request = tick()
    assert request.run_key.startswith("export@"), "the PDFs changed since the last export (there was none)"
    assert materialize_export(instance, paths).success
    assert "up to date" in tick().skip_message
    (paths.output_path / "chunks_fr.txt").write_text("edited by hand\n", encoding="utf-8")
    repair = tick()
    assert repair.run_key.startswith("export@") and repair.run_key != request.run_key, "a published file changed"
    assert materialize_export(instance, paths).success
    assert "up to date" in tick().skip_message
    text_pdf(raw / "fr" / "nouveau.pdf", ["Un nouveau règlement, assez long pour faire un morceau de texte."])
    assert "up to date" in tick().skip_message, "a file dropped in changes nothing the export ships until it is built"
    assert materialize_corpus(instance, paths, keys=["fr/nouveau.pdf"]).success
    assert tick().run_key.startswith("export@"), "once built, the export is behind"
    paths.store().delete_partition("fr/nouveau.pdf")
    (raw / "fr" / "nouveau.pdf").unlink()
    assert materialize_export(instance, paths).success
    assert "up to date" in tick().skip_message
    assert paths.store().manifest(RAW_PDF, "fr/reglement.pdf") is not None


def test_the_export_waits_for_a_quiet_period_after_the_last_build(
    instance: DagsterInstance, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A backfill's runs may be submitted over several passes of the backfill daemon (30 s apart): between them no
    run is queued or running while PDFs remain to build. The export waits until no build has ended for the quiet
    period, so that it does not ship half a backfill and then export again."""
    raw = tmp_path / "raw"
    small_corpus(raw)
    paths = CorpusPaths(raw_dir=str(raw), output_dir=str(tmp_path / "out"))
    keys = discover_pdfs(raw)
    register_pdfs(instance, keys)
    build = build_definitions(paths).resolve_job_def(BUILD_CORPUS)
    assert build.execute_in_process(instance=instance, tags=run_tags(keys)).success

    def tick() -> SkipReason | RunRequest:
        with build_sensor_context(instance=instance, resources={"paths": paths}) as context:
            return corpus_export_sensor(context)

    waiting = tick()
    assert isinstance(waiting, SkipReason), waiting
    assert f"1 run(s) of the PDFs or the export ended less than {DEFAULT_EXPORT_QUIET_SECONDS} s ago" in (
        waiting.skip_message or ""
    )
    monkeypatch.setenv(EXPORT_QUIET_ENV, "0")
    request = tick()
    assert isinstance(request, RunRequest) and request.run_key.startswith("export@"), request


def test_one_export_for_a_removed_pdf_while_a_job_run_is_not_finished(
    instance: DagsterInstance, tmp_path: Path
) -> None:
    """A run a sensor or the schedule requests for a whole job (`export_corpus`, `build_corpus`) carries no asset
    selection; while it runs, both sensors see it: the export sensor waits for it, and the folder sensor, removing a
    PDF the export shipped, requests no second export beside it (the UI once showed two export runs per removal)."""
    raw = tmp_path / "raw"
    small_corpus(raw)
    paths = CorpusPaths(raw_dir=str(raw), output_dir=str(tmp_path / "out"))
    assert materialize_corpus(instance, paths).success
    assert materialize_export(instance, paths).success
    first = _tick(instance, paths, None)
    (raw / "intl" / "rules.pdf").unlink()
    definitions = build_definitions(paths)

    def export_tick() -> SkipReason | object:
        with build_sensor_context(instance=instance, resources={"paths": paths}) as context:
            return corpus_export_sensor(context)

    def running(job: str) -> str:
        run = instance.create_run_for_job(definitions.resolve_job_def(job), status=DagsterRunStatus.STARTED)
        assert run.asset_selection is None, "what a sensor's or the schedule's request of a whole job runs as"
        return run.run_id

    for job in (EXPORT_CORPUS, BUILD_CORPUS):
        run_id = running(job)
        waiting = export_tick()
        assert isinstance(waiting, SkipReason) and "not finished" in waiting.skip_message, (job, waiting)
        instance.delete_run(run_id)
    run_id = running(EXPORT_CORPUS)
    removed = _tick(instance, paths, first.cursor)
    assert "intl/rules.pdf" not in instance.get_dynamic_partitions(pdf_partitions.name)
    assert removed.run_requests == [], "an export is running: the export sensor follows it if it is still behind"
    instance.delete_run(run_id)
    assert export_tick().run_key.startswith("export@"), "nothing running any more, and the export ships a removed PDF"


def test_over_built_pdfs_the_cursor_is_empty_and_nothing_is_observed_again(
    instance: DagsterInstance, tmp_path: Path
) -> None:
    """Each build observes the file it read; the sensor's cursor (stored with every tick) holds only files no build
    has read, so it stays small whatever the corpus size."""
    raw = tmp_path / "raw"
    small_corpus(raw)
    paths = CorpusPaths(raw_dir=str(raw), output_dir=str(tmp_path / "out"))
    assert materialize_corpus(instance, paths).success
    tick = _tick(instance, paths, None)
    assert _observed(tick) == {}, "the build observed each file as it read it"
    assert json.loads(tick.cursor)["files"] == {}
    text_pdf(raw / "fr" / "ajout.pdf", ["Un ajout au règlement."])
    later = _tick(instance, paths, tick.cursor)
    assert list(_observed(later)) == ["fr/ajout.pdf"] and list(json.loads(later.cursor)["files"]) == ["fr/ajout.pdf"]
