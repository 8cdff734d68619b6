"""A PDF copied under another name of its corpus is built and exported once, the copy named as its duplicate."""

import json
import shutil
from pathlib import Path

import pytest

from pocket_assets.cli.main import main
from pocket_assets.export.sdk_lines import parse_sdk_file
from pocket_assets.stages.registry import RAW_PDF
from pocket_assets.stages.store import PartitionStore
from pocket_assets_tests.pdf_factory import small_corpus


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, list[str]]:
    """The small corpus's raw folder, an output folder, and the build command over them (an instance of its own)."""
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    raw, out = tmp_path / "raw", tmp_path / "out"
    small_corpus(raw)
    return raw, out, ["build", "--raw-dir", str(raw), "--output-dir", str(out)]


def test_a_copy_is_built_and_exported_once_and_named_unless_both_are_kept(
    folders: tuple[Path, Path, list[str]], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    raw, out, args = folders
    shutil.copyfile(raw / "fr" / "reglement.pdf", raw / "fr" / "reglement (copie).pdf")

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


def test_the_same_file_in_two_corpora_ships_in_both(
    folders: tuple[Path, Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    """A PDF of `intl/` copied into `fr/` takes nothing from `intl`: duplicates are judged within a corpus."""
    raw, out, args = folders
    shutil.copyfile(raw / "intl" / "rules.pdf", raw / "fr" / "rules.pdf")
    assert main(args) == 0
    assert "is a copy of" not in capsys.readouterr().out
    for corpus in ("fr", "intl"):
        sources = {line.source for line in parse_sdk_file(out / f"chunks_{corpus}.txt", has_context=True)}
        assert "rules.pdf" in sources, corpus


def test_a_pdf_that_became_a_copy_ships_until_the_copy_kept_in_its_place_is_built(
    folders: tuple[Path, Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    """A copy whose name sorts first is the one kept, whatever was built before; until it is built, the PDF it
    replaces keeps its exported lines (listed as stale) rather than the document leaving the export."""
    raw, out, args = folders
    assert main(args) == 0
    shipped = (out / "chunks_fr.txt").read_bytes()
    shutil.copyfile(raw / "fr" / "reglement.pdf", raw / "fr" / "0-reglement.pdf")
    assert main([*args, "--select", "android_export"]) == 1, "the copy kept is not built yet"
    assert "fr/0-reglement.pdf: FAILED (left out, it has no good chunks" in capsys.readouterr().out
    assert (out / "chunks_fr.txt").read_bytes() == shipped
    metadata = json.loads((out / "chunks_mode_b_fr.json").read_text(encoding="utf-8"))["metadata"]
    assert [entry["pdf"] for entry in metadata["stale"]] == ["fr/reglement.pdf"]
    assert main(args) == 0
    assert {line.source for line in parse_sdk_file(out / "chunks_fr.txt", has_context=True)} == {"0-reglement.pdf"}
