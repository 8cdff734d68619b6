"""android_export over real builds: every PDF in, a removed PDF out, refused while a PDF fails its gates."""

import json
from pathlib import Path

import pytest
from dagster import DagsterInstance

from pocket_assets.core.export.corpus_files import parse_sdk_file
from pocket_assets.runstate.storage import PartitionManifest
from pocket_assets.defs.resources import CorpusPaths
from pocket_assets_tests.defs.conftest import materialize_corpus, materialize_export
from pocket_assets_tests.pdf_factory import REPO_ROOT, small_corpus


@pytest.fixture
def built(instance: DagsterInstance, tmp_path: Path) -> CorpusPaths:
    raw = tmp_path / "small"
    small_corpus(raw)
    paths = CorpusPaths(
        raw_dir=str(raw), output_dir=str(tmp_path / "out"), expectations_dir=str(REPO_ROOT / "expectations")
    )
    assert materialize_corpus(instance, paths).success
    return paths


def test_export_holds_every_pdf_and_a_removed_pdf_disappears(instance: DagsterInstance, built: CorpusPaths) -> None:
    out = built.output_path
    assert {line.source for line in parse_sdk_file(out / "chunks_intl.txt", has_context=True)} == {"rules.pdf"}
    old_ids = [chunk["id"] for chunk in json.loads((out / "chunks_mode_b_intl.json").read_text())["chunks"]]

    (built.raw_path / "intl" / "rules.pdf").unlink()
    assert materialize_export(instance, built).success

    for name in ("chunks_intl.txt", "chunks_mode_b_intl.json", "chunks_intl.hepilot.jsonl"):
        assert "rules.pdf" not in (out / name).read_text(encoding="utf-8")
    redirects = json.loads((out / "id_redirects_intl.json").read_text(encoding="utf-8"))
    assert redirects["redirects"] == {chunk_id: None for chunk_id in old_ids}
    assert {line.source for line in parse_sdk_file(out / "chunks_fr.txt", has_context=True)} == {"reglement.pdf"}


def test_export_is_refused_while_a_pdf_fails_its_gates(instance: DagsterInstance, built: CorpusPaths) -> None:
    out = built.output_path
    before = {path.name: path.read_bytes() for path in out.glob("chunks_*")}
    built.store().write_manifest(
        PartitionManifest("validated_chunks", "fr/reglement.pdf", "failed", reason="fr/reglement.pdf failed coverage")
    )
    result = materialize_export(instance, built)
    assert not result.success
    message = result.failure_data_for_node("android_export").user_failure_data.description
    assert "Export refused" in message and "fr/reglement.pdf" in message
    assert {path.name: path.read_bytes() for path in out.glob("chunks_*")} == before
