"""A PDF copied under another name of its corpus is built and exported once, the copy named as its duplicate."""

import json
import shutil
from pathlib import Path

import pytest
from dagster import AssetKey, AssetRecordsFilter, DagsterInstance

from pocket_assets.cli import main
from pocket_assets.core.export.corpus_files import parse_sdk_file
from pocket_assets.defs.resources import CorpusPaths
from pocket_assets.runstate.stages import RAW_PDF
from pocket_assets.runstate.storage import PartitionStore
from pocket_assets_tests.defs.conftest import materialize_corpus, partition_states
from pocket_assets_tests.pdf_factory import small_corpus


def test_a_copy_is_built_and_exported_once_and_named_unless_both_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    raw, out = tmp_path / "raw", tmp_path / "out"
    small_corpus(raw)
    shutil.copyfile(raw / "fr" / "reglement.pdf", raw / "fr" / "reglement (copie).pdf")
    args = ["build", "--raw-dir", str(raw), "--output-dir", str(out)]

    assert main(args) == 0, "a duplicate is no failure"
    printed = capsys.readouterr().out
    assert "fr/reglement.pdf is a copy of fr/reglement (copie).pdf (the same bytes in the same corpus)" in printed
    assert not PartitionStore(out / "stages").manifest(RAW_PDF, "fr/reglement.pdf"), "built once"
    sources = [line.source for line in parse_sdk_file(out / "chunks_fr.txt", has_context=True)]
    assert set(sources) == {"reglement (copie).pdf"}
    metadata = json.loads((out / "chunks_mode_b_fr.json").read_text(encoding="utf-8"))["metadata"]
    assert metadata["duplicates"] == [{"pdf": "fr/reglement.pdf", "duplicate_of": "fr/reglement (copie).pdf"}]
    assert main([*args, "--pdf", "fr/reglement.pdf"]) == 2
    assert "is a copy of fr/reglement (copie).pdf" in capsys.readouterr().out

    monkeypatch.setenv("POCKET_ASSETS_KEEP_DUPLICATES", "1")
    assert main(args) == 0
    sources = [line.source for line in parse_sdk_file(out / "chunks_fr.txt", has_context=True)]
    assert set(sources) == {"reglement (copie).pdf", "reglement.pdf"}, "the setting keeps both"


def test_a_copy_launched_from_the_ui_is_not_built_and_says_why(instance: DagsterInstance, tmp_path: Path) -> None:
    """A backfill that names a copy (its partition added by hand, or before the copy appeared) builds the PDF once:
    the copy's stages are skipped, and its partition's page says whose copy it is."""
    raw, out = tmp_path / "raw", tmp_path / "out"
    small_corpus(raw)
    shutil.copyfile(raw / "fr" / "reglement.pdf", raw / "fr" / "z-reglement.pdf")
    paths = CorpusPaths(raw_dir=str(raw), output_dir=str(out))
    assert materialize_corpus(instance, paths).success, "a copy skipped is no failure"
    assert "fr/z-reglement.pdf" not in partition_states(instance, "validated_chunks")["materialized"]
    assert "fr/reglement.pdf" in partition_states(instance, "validated_chunks")["materialized"]
    [observation] = instance.fetch_observations(
        AssetRecordsFilter(asset_key=AssetKey("raw_pdf"), asset_partitions=["fr/z-reglement.pdf"]), limit=1
    ).records
    assert "a copy of fr/reglement.pdf" in observation.event_log_entry.asset_observation.description
