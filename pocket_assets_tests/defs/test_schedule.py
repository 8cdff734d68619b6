"""The nightly refresh over several evaluations, with real builds in between.

Each request the schedule returns is launched the way the daemon would (same
tags, run key and schedule name), in process, on a test instance.
"""

from pathlib import Path

import pytest
from dagster import DagsterInstance, JobDefinition, RunRequest, SkipReason, build_schedule_context, build_sensor_context

from pocket_assets.core.extract import EXTRACTOR_VERSION
from pocket_assets.defs.assembly import build_definitions
from pocket_assets.defs.jobs import build_corpus_job
from pocket_assets.defs.partitions import pdf_partitions
from pocket_assets.defs.ranges import run_tags
from pocket_assets.defs.resources import CorpusPaths, environment_versions
from pocket_assets.defs.schedules import corpus_refresh, refresh_cron
from pocket_assets.defs.sensors import EXPORT_QUIET_ENV, corpus_export_sensor
from pocket_assets.stages.registry import PAGES, PARENTS
from pocket_assets.stages.store import PartitionManifest
from pocket_assets_tests.pdf_factory import ARTICLE_EN, ARTICLE_FR, random_bytes_pdf, small_corpus, text_pdf


def _evaluate(instance: DagsterInstance, paths: CorpusPaths) -> list[RunRequest] | SkipReason:
    """One evaluation; the context is entered and exited, as Dagster's own evaluations are: a context left open
    keeps the instance it opened bound to Dagster's process-wide state after that instance is gone."""
    with build_schedule_context(instance=instance, resources={"paths": paths}) as context:
        return corpus_refresh(context)


def _job(paths: CorpusPaths, name: str = build_corpus_job.name) -> JobDefinition:
    return build_definitions(paths).resolve_job_def(name)


def _launch(instance: DagsterInstance, job: JobDefinition, request: RunRequest) -> bool:
    result = job.execute_in_process(
        instance=instance,
        partition_key=request.partition_key,
        asset_selection=request.asset_selection,
        tags=request.tags,
        raise_on_error=False,
    )
    return result.success


def _skip_message(outcome: list[RunRequest] | SkipReason) -> str:
    assert isinstance(outcome, SkipReason), f"expected nothing to launch, got {outcome}"
    return outcome.skip_message or ""


def test_refresh_builds_missing_then_nothing_then_only_what_changed(instance: DagsterInstance, tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    small_corpus(raw)
    text_pdf(raw / "fr" / "annexe.pdf", [ARTICLE_FR * 3])
    paths = CorpusPaths(raw_dir=str(raw), output_dir=str(tmp_path / "out"))
    job = _job(paths)
    every_pdf = ["fr/annexe.pdf", "fr/reglement.pdf", "intl/rules.pdf"]

    first = _evaluate(instance, paths)
    assert instance.get_dynamic_partitions(pdf_partitions.name) == every_pdf
    assert isinstance(first, list) and len(first) == 1, "missing PDFs are built in one run"
    assert first[0].tags == run_tags(every_pdf)
    assert _launch(instance, job, first[0])

    assert _skip_message(_evaluate(instance, paths)) == "all 3 PDF(s) up to date"

    text_pdf(raw / "intl" / "rules.pdf", [ARTICLE_EN * 2])
    changed = _evaluate(instance, paths)
    assert isinstance(changed, list) and [request.partition_key for request in changed] == ["intl/rules.pdf"]
    assert _launch(instance, job, changed[0])
    assert _skip_message(_evaluate(instance, paths)) == "all 3 PDF(s) up to date"

    store = paths.store()
    for key in every_pdf:  # outputs as an older chunker left them
        manifest = store.manifest(PARENTS, key)
        store.write_manifest(PartitionManifest(**{**manifest.__dict__, "code_version": "pocket-hier-v0+0000"}))
    bumped = _evaluate(instance, paths)
    assert isinstance(bumped, list) and len(bumped) == 1, "a chunker bump rebuilds the corpus in one run"
    assert bumped[0].tags == run_tags(every_pdf)
    assert bumped[0].run_key != first[0].run_key


def test_a_broken_pdf_is_tried_each_night_and_a_removed_pdf_leaves_partitions_and_export(
    instance: DagsterInstance, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw = tmp_path / "raw"
    small_corpus(raw)
    paths = CorpusPaths(raw_dir=str(raw), output_dir=str(tmp_path / "out"))
    job, export_job = _job(paths), _job(paths, "export_corpus")
    (first,) = _evaluate(instance, paths)
    assert _launch(instance, job, first)

    random_bytes_pdf(raw / "intl" / "broken.pdf")
    (broken,) = _evaluate(instance, paths)
    assert broken.partition_key == "intl/broken.pdf"
    assert not _launch(instance, job, broken)
    (again,) = _evaluate(instance, paths)
    assert again.partition_key == "intl/broken.pdf", "its last attempt failed: the next night tries again"

    (raw / "intl" / "broken.pdf").unlink()
    (raw / "intl" / "rules.pdf").unlink()
    assert _skip_message(_evaluate(instance, paths)) == "all 1 PDF(s) up to date"
    assert instance.get_dynamic_partitions(pdf_partitions.name) == ["fr/reglement.pdf"]
    monkeypatch.setenv(EXPORT_QUIET_ENV, "0")  # evaluated right after the night's runs
    with build_sensor_context(instance=instance, resources={"paths": paths}) as context:
        export = corpus_export_sensor(context)
    assert export.run_key.startswith("export@"), "the export sensor sees the folder changed"
    assert export_job.execute_in_process(instance=instance).success
    assert "rules.pdf" not in (tmp_path / "out" / "chunks_intl.txt").read_text(encoding="utf-8")


def test_cron_from_environment() -> None:
    assert refresh_cron({}) == "0 3 * * *"
    assert refresh_cron({"POCKET_ASSETS_REFRESH_CRON": "30 1 * * 1-5"}) == "30 1 * * 1-5"
    assert corpus_refresh.cron_schedule == refresh_cron()
    assert environment_versions()[PAGES].startswith(EXTRACTOR_VERSION + "+"), "an extractor bump marks pages stale"
