"""A run that names a copy of another PDF of its corpus does not build it, and says whose copy it is."""

import shutil
from pathlib import Path

from dagster import AssetKey, AssetRecordsFilter, DagsterInstance

from pocket_assets.defs.resources import CorpusPaths
from pocket_assets_tests.defs.conftest import materialize_corpus, partition_states
from pocket_assets_tests.pdf_factory import small_corpus


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
