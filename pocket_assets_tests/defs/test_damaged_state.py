"""State is checked before it is trusted: a stage file missing or truncated, a manifest that does not
parse, a partition key that leaves the raw folder, a killed build's temp files, a setting that changed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from dagster import DagsterInstance

from pocket_assets.cli.main import main
from pocket_assets.core.atomic import this_host
from pocket_assets.defs.resources import CorpusPaths
from pocket_assets.export.sdk_lines import parse_sdk_file
from pocket_assets.stages.registry import PAGES, RAW_PDF, VALIDATED_CHUNKS
from pocket_assets.stages.store import PartitionStore
from pocket_assets_tests.defs.conftest import materialize_corpus, partition_states
from pocket_assets_tests.pdf_factory import small_corpus


@pytest.fixture
def built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> dict[str, Path]:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    folders = {"raw": tmp_path / "raw", "out": tmp_path / "out"}
    small_corpus(folders["raw"])
    assert main(["build", "--raw-dir", str(folders["raw"]), "--output-dir", str(folders["out"])]) == 0
    capsys.readouterr()
    return folders


def _command(folders: dict[str, Path], *words: str) -> list[str]:
    return [*words, "--raw-dir", str(folders["raw"]), "--output-dir", str(folders["out"])]


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (lambda path: path.unlink(), "its validated_chunks file is missing"),
        (lambda path: path.write_bytes(path.read_bytes()[:100]), "its validated_chunks file is damaged"),
    ],
    ids=["deleted", "truncated"],
)
def test_a_missing_or_truncated_stage_file_is_stale_rebuilt_and_never_silently_dropped(
    built: dict[str, Path], capsys: pytest.CaptureFixture[str], damage, said: str
) -> None:
    store = PartitionStore(built["out"] / "stages")
    damage(store.data_path(VALIDATED_CHUNKS, "intl/rules.pdf"))
    assert main(_command(built, "stale")) == 0
    assert f"intl/rules.pdf: validated_chunks: {said}" in capsys.readouterr().out
    assert main(_command(built, "build")) == 0
    printed = capsys.readouterr().out
    assert "building 1 PDF(s)" in printed and "intl/rules.pdf: ok" in printed
    assert {line.source for line in parse_sdk_file(built["out"] / "chunks_intl.txt", has_context=True)} == {"rules.pdf"}


def test_a_damaged_file_never_fails_another_pdfs_export(built: dict[str, Path], capsys) -> None:
    store = PartitionStore(built["out"] / "stages")
    path = store.data_path(VALIDATED_CHUNKS, "intl/rules.pdf")
    path.write_bytes(path.read_bytes()[:100])
    assert main(_command(built, "build", "--select", "android_export")) == 1, "the damaged PDF is named"
    printed = capsys.readouterr().out
    assert "left out, its validated_chunks file is damaged" in printed
    assert (built["out"] / "chunks_fr.txt").read_text(encoding="utf-8").count("reglement.pdf") > 0


def test_a_manifest_that_does_not_parse_makes_its_pdf_stale_without_a_traceback(built: dict[str, Path], capsys) -> None:
    store = PartitionStore(built["out"] / "stages")
    store.manifest_path(PAGES, "fr/reglement.pdf").write_text("{ not json", encoding="utf-8")
    assert main(_command(built, "stale")) == 0
    printed = capsys.readouterr().out
    assert "fr/reglement.pdf: pages last damaged: its pages manifest cannot be read" in printed
    assert "Traceback" not in printed
    assert main(_command(built, "build")) == 0
    assert "fr/reglement.pdf: ok" in capsys.readouterr().out


def test_a_changed_setting_is_named_in_the_stale_reason(built: dict[str, Path], capsys, monkeypatch) -> None:
    monkeypatch.setenv("CHUNK_SIZE_TOKENS", "300")
    assert main(_command(built, "stale")) == 0
    assert "parents built with other settings: child_tokens (CHUNK_SIZE_TOKENS) 450 → 300" in capsys.readouterr().out


def test_a_partition_key_leaving_the_raw_folder_is_refused(instance: DagsterInstance, tmp_path: Path) -> None:
    """A key added through the API (`fr/../../outside/x.pdf`) names a file outside the raw folder: refused, and
    nothing is read or written outside the folders."""
    raw, out = tmp_path / "raw", tmp_path / "deep" / "out"
    small_corpus(raw)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.pdf").write_bytes((raw / "fr" / "reglement.pdf").read_bytes())
    paths = CorpusPaths(raw_dir=str(raw), output_dir=str(out))
    key = "fr/../../outside/x.pdf"
    result = materialize_corpus(instance, paths, keys=[key, "fr/reglement.pdf"])
    assert not result.success
    assert partition_states(instance, "raw_pdf") == {"materialized": {"fr/reglement.pdf"}, "failed": {key}}
    assert sorted(path.name for path in outside.iterdir()) == ["x.pdf"], "nothing written beside it"
    assert not list(tmp_path.glob("deep/*.parquet")) and not (tmp_path / "outside.manifest.json").exists()
    failure = next(event for event in result.all_events if event.is_step_failure)
    assert "leaves the folder" in failure.step_failure_data.user_failure_data.description


def test_temp_files_of_a_killed_build_are_removed_by_the_next_run(instance: DagsterInstance, tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    small_corpus(raw)
    paths = CorpusPaths(raw_dir=str(raw), output_dir=str(tmp_path / "out"))
    folder = paths.store().root / RAW_PDF.name / "fr"
    folder.mkdir(parents=True)
    dead = folder / f".reglement.pdf.parquet.{this_host()}~{_dead_pid()}.abcd1234.tmp"
    live = folder / f".reglement.pdf.parquet.{this_host()}~{os.getpid()}.efgh5678.tmp"
    dead.write_bytes(b"half a file")
    live.write_bytes(b"a file being written")
    assert materialize_corpus(instance, paths, selection=["raw_pdf"]).success
    assert not dead.exists() and live.exists(), "a running process's temp file is left alone"


def _dead_pid() -> int:
    """A process id that no process holds now."""
    import subprocess

    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid
