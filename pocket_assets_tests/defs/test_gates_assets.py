"""Gates in Dagster: a broken chunk fails the right check, fails its PDF's partition and the run, keeps the
last good file, which the export ships as stale."""

import dataclasses
from pathlib import Path
from typing import Callable

import pytest
from dagster import AssetKey, DagsterInstance

import pocket_assets.stages.pdf_build.gates as pdf_gates
from pocket_assets.core.quality.gate_results import PARTITION_GATES
from pocket_assets.core.records import ChunkRecord, chunk_from_dict, to_dict
from pocket_assets.defs.resources import CorpusPaths
from pocket_assets.stages.pdf_notes import EXPORT
from pocket_assets.stages.registry import CHILDREN, VALIDATED_CHUNKS
from pocket_assets_tests.defs.conftest import materialize_corpus, materialize_export, partition_states
from pocket_assets_tests.pdf_factory import small_corpus


@pytest.fixture
def built(instance: DagsterInstance, tmp_path: Path) -> CorpusPaths:
    raw = tmp_path / "small"
    small_corpus(raw)
    paths = CorpusPaths(
        raw_dir=str(raw),
        output_dir=str(tmp_path / "out"),
    )
    assert materialize_corpus(instance, paths).success
    assert materialize_export(instance, paths).success
    return paths


def _break_children(paths: CorpusPaths, key: str, breaker: Callable[[ChunkRecord], ChunkRecord]) -> str:
    """Rewrite the stored children with the first one broken; returns the broken chunk's id."""
    store = paths.store()
    children = [chunk_from_dict(row) for row in store.read(CHILDREN, key)]
    children[0] = breaker(children[0])
    manifest = store.manifest(CHILDREN, key)
    store.write(CHILDREN, key, [to_dict(c) for c in children], manifest)
    return children[0].id


@pytest.mark.parametrize(
    ("gate", "breaker", "expectation"),
    [
        ("expectations", lambda c: dataclasses.replace(c, tokens=900), "tokens"),
        ("expectations", lambda c: dataclasses.replace(c, parent_id="nowhere.pdf-p001-parent999"), "parent"),
        ("json_schema", lambda c: dataclasses.replace(c, pages=(0,)), "pages"),
        ("coverage", lambda c: dataclasses.replace(c, text=c.text[:-5] + "XXXXX"), "slice"),
    ],
    ids=["token-cap", "parent-id", "schema-pages", "coverage-slice"],
)
def test_a_broken_chunk_fails_its_gate_and_its_partition_and_ships_stale(
    instance: DagsterInstance, built: CorpusPaths, gate: str, breaker, expectation: str
) -> None:
    store = built.store()
    key = "fr/reglement.pdf"
    good_bytes = store.data_path(VALIDATED_CHUNKS, key).read_bytes()
    exports_before = instance.get_latest_materialization_event(AssetKey("android_export"))
    broken_id = _break_children(built, key, breaker)

    result = materialize_corpus(instance, built, selection=["validated_chunks"])
    assert materialize_export(instance, built).success, "one failed PDF does not stop the export"

    checks = {evaluation.check_name: evaluation for evaluation in result.get_asset_check_evaluations()}
    assert not checks[gate].passed
    failures = checks[gate].metadata["failures"].value
    assert key in failures and expectation in failures.lower()
    assert broken_id in failures or gate == "coverage"
    assert [name for name in PARTITION_GATES if not checks[name].passed] == [gate]
    assert "failed_expectations" not in checks["coverage"].metadata, "each check says only what it found"
    assert store.data_path(VALIDATED_CHUNKS, key).read_bytes() == good_bytes, "last good output kept"
    assert store.manifest(VALIDATED_CHUNKS, key).status == "failed"
    assert store.manifest(VALIDATED_CHUNKS, "intl/rules.pdf").status == "ok", "the other PDF goes on"
    assert not result.success, "a run in which a PDF failed fails"
    assert partition_states(instance, "validated_chunks") == {"materialized": {"intl/rules.pdf"}, "failed": {key}}
    latest_export = instance.get_latest_materialization_event(AssetKey("android_export"))
    assert latest_export.run_id != exports_before.run_id
    assert store.manifest(EXPORT, key).status == "stale", "it ships its last good chunks, listed"


def test_a_pdf_whose_upstream_failed_is_not_counted_as_judged(instance: DagsterInstance, tmp_path: Path) -> None:
    """A PDF whose raw_pdf failed was never judged: the gate checks count the two others."""
    raw = tmp_path / "small"
    small_corpus(raw)
    (raw / "fr" / "zz-broken.pdf").write_bytes(b"%PDF-1.4\n" + b"not a PDF body " * 40)
    paths = CorpusPaths(
        raw_dir=str(raw),
        output_dir=str(tmp_path / "out"),
    )
    result = materialize_corpus(instance, paths)
    assert not result.success, "the broken PDF fails the run"
    checks = {
        evaluation.check_name: evaluation.metadata
        for evaluation in result.get_asset_check_evaluations()
        if evaluation.asset_key == AssetKey("validated_chunks")
    }
    for gate in PARTITION_GATES:
        assert checks[gate]["pdfs_judged"].value == 2, gate


def test_batches_sent_upfront_give_the_verdicts_of_one_batch(
    instance: DagsterInstance, built: CorpusPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One PDF a suite batch: the checks, manifests and files are those of both PDFs in one batch, the broken
    PDF failing alone."""
    store = built.store()
    _break_children(built, "fr/reglement.pdf", lambda c: dataclasses.replace(c, tokens=900))
    keys = ["fr/reglement.pdf", "intl/rules.pdf"]

    def judged() -> tuple:
        result = materialize_corpus(instance, built, selection=["validated_chunks"])
        checks = {
            e.check_name: e.metadata["failures"].value
            for e in result.get_asset_check_evaluations()
            if e.check_name in PARTITION_GATES
        }
        manifests = [(m.status, m.reason, m.extra) for m in (store.manifest(VALIDATED_CHUNKS, key) for key in keys)]
        return result.success, checks, manifests, [store.data_path(VALIDATED_CHUNKS, key).read_bytes() for key in keys]

    one_batch = judged()
    monkeypatch.setattr(pdf_gates, "SUITE_BATCH_CHUNKS", 1)
    assert judged() == one_batch
    success, checks, manifests, _ = one_batch
    assert not success and "fr/reglement.pdf" in checks["expectations"] and "intl/rules.pdf" not in checks["expectations"]
    assert [status for status, _, _ in manifests] == ["failed", "ok"]
