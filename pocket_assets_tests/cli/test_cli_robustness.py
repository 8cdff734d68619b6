"""`pocket-assets build` on a folder of odd names and bad PDFs: each is built or refused alone,
named in one sentence; the export holds every readable PDF with text; the exit code says something failed."""

from __future__ import annotations

import contextlib
import io
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest
from dagster import DagsterInstance

from pocket_assets.cli.main import main
from pocket_assets.core.chunking.embed_text import CHUNK_SPLITTER
from pocket_assets.defs.partitions import pdf_partitions
from pocket_assets.export.sdk_lines import parse_sdk_file
from pocket_assets.stages.registry import PAGES, VALIDATED_CHUNKS
from pocket_assets.stages.store import PartitionStore
from pocket_assets_tests.pdf_factory import COMMA_NAME, LONG_NAME, odd_corpus


@dataclass(frozen=True)
class Build:
    raw: Path
    out: Path
    cases: dict[str, str]
    code: int
    printed: str


def _run(*args: str) -> tuple[int, str]:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(list(args))
    return code, printed.getvalue()


@pytest.fixture(scope="module")
def odd_build(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Build]:
    root = tmp_path_factory.mktemp("odd")
    raw, out = root / "raw", root / "out"
    cases = odd_corpus(raw)
    out.mkdir()
    (out / ".chunks_fr.txt.k1ll3d00.tmp").write_text("left by a killed export", encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DAGSTER_HOME", str(root / "home"))
        code, printed = _run("build", "--raw-dir", str(raw), "--output-dir", str(out))
        yield Build(raw, out, cases, code, printed)


def _sources(build: Build, corpus: str) -> set[str]:
    return {line.source for line in parse_sdk_file(build.out / f"chunks_{corpus}.txt", has_context=True)}


def test_every_readable_pdf_with_text_is_exported_whatever_its_name(odd_build: Build) -> None:
    assert _sources(odd_build, "fr") == {
        "reglement.pdf",
        "Règlement ÉTÉ 2024.pdf",
        "Règlement intérieur, version 2024.pdf",
        "faq.pdf",
        "sub/faq.pdf",
        LONG_NAME,
        "splitter.pdf",
    }
    assert _sources(odd_build, "intl") == {"rules.pdf", "a‹chunk_splitter›b.pdf"}


def test_only_the_unbuildable_fail_each_named_in_one_sentence_and_the_exit_code_says_so(odd_build: Build) -> None:
    assert odd_build.code == 1
    problems = odd_build.printed.split("PDF(s) with a problem")[1].split("warning(s)")[0]
    lines = [line for line in problems.splitlines() if line.startswith("  - ")]
    assert len(lines) == 3
    assert any(line.startswith("  - intl/broken.pdf: raw_pdf failed") and "not a PDF" in line for line in lines)
    assert any("fr/new\\nline.pdf is not built" in line and "rename the file" in line for line in lines)
    assert any("fr/r\\xe8gles.pdf is not built" in line and "UTF-8" in line for line in lines)
    assert "Traceback" not in odd_build.printed


def test_a_name_with_a_comma_is_its_own_partition_source_and_citation(
    odd_build: Build, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The partition key is the path, comma included (the UI's partition dialog selects it as it is:
    `e2e/test_comma_backfill.py`); the exports cite the file's real name."""
    monkeypatch.setenv("DAGSTER_HOME", str(odd_build.raw.parent / "home"))
    name = Path(COMMA_NAME).name
    assert f"  {COMMA_NAME}: ok; " in odd_build.printed
    with DagsterInstance.get() as instance:
        assert COMMA_NAME in instance.get_dynamic_partitions(pdf_partitions.name)
    assert f"[Source: {name}, Page 1]" in (odd_build.out / "chunks_fr.txt").read_text(encoding="utf-8")
    records = json.loads((odd_build.out / "chunks_mode_b_fr.json").read_text(encoding="utf-8"))["chunks"]
    assert {row["source"] for row in records if "version 2024" in row["source"]} == {name}
    code, printed = _run(
        "build",
        "--raw-dir",
        str(odd_build.raw),
        "--output-dir",
        str(odd_build.out),
        "--pdf",
        str(odd_build.raw / COMMA_NAME),
    )
    assert code == 0 and "building 1 PDF(s)" in printed and f"  {COMMA_NAME}: ok; " in printed, printed


def test_same_base_name_in_two_folders_gets_distinct_sources_and_ids(odd_build: Build) -> None:
    chunks = json.loads((odd_build.out / "chunks_mode_b_fr.json").read_text(encoding="utf-8"))["chunks"]
    faq = {row["source"]: row for row in chunks if row["source"].endswith("faq.pdf") and row["chunk_type"] == "child"}
    assert set(faq) == {"faq.pdf", "sub/faq.pdf"}
    assert faq["faq.pdf"]["id"] != faq["sub/faq.pdf"]["id"]
    assert "fréquentes" in faq["faq.pdf"]["text"] and "cadences" in faq["sub/faq.pdf"]["text"]


def test_chunk_splitter_in_text_or_name_never_opens_a_chunk_and_is_warned(odd_build: Build) -> None:
    for corpus in ("fr", "intl"):
        for line in (odd_build.out / f"chunks_{corpus}.txt").read_text(encoding="utf-8").splitlines():
            assert line.count(CHUNK_SPLITTER) == 1 and line.startswith(CHUNK_SPLITTER)
    warnings = odd_build.printed.split("warning(s)")[1]
    assert "fr/splitter.pdf: 1 SDK line(s) held the text <chunk_splitter>" in warnings
    assert "intl/a<chunk_splitter>b.pdf: 1 SDK line(s)" in warnings


def test_pdfs_without_text_or_outside_a_corpus_are_warned_with_what_to_do(odd_build: Build) -> None:
    warnings = odd_build.printed.split("warning(s)")[1]
    assert "fr/scan.pdf: holds no text at all (image-only page(s) 1)" in warnings and "tesseract-ocr" in warnings
    assert "top.pdf is at the top of the raw folder" in warnings
    assert "de/x.pdf is in 'de', not a corpus" in warnings and "POCKET_ASSETS_CORPORA" in warnings
    metadata = PartitionStore(odd_build.out / "stages").manifest(PAGES, "fr/scan.pdf").extra
    assert (metadata["image_only_pages"], metadata["empty_pages"]) == ([1], [])


def test_a_page_ocr_failed_on_is_told_with_what_failed_not_as_a_picture_without_text(odd_build: Build) -> None:
    (told,) = [
        line for line in odd_build.printed.splitlines() if line.startswith("  - fr/plan géant.pdf: holds no text")
    ]
    assert "OCR failed on page(s) 1: the page image (60000 x 60000 pixels at 300 dpi) is too large to render" in told
    assert "read no words" not in told and "Tesseract missing" not in told


def test_every_file_not_built_is_in_the_exports_left_out_with_why(odd_build: Build) -> None:
    """Names a partition key cannot hold (shown escaped) in their corpus's list, files outside every corpus
    folder in every corpus's: each with the sentence the summary prints."""
    for corpus, expected in {
        "fr": {"fr/new\\nline.pdf", "fr/r\\xe8gles.pdf", "top.pdf", "de/x.pdf"},
        "intl": {"intl/broken.pdf", "top.pdf", "de/x.pdf"},
    }.items():
        metadata = json.loads((odd_build.out / f"chunks_mode_b_{corpus}.json").read_text(encoding="utf-8"))["metadata"]
        reasons = {entry["pdf"]: entry["reason"] for entry in metadata["left_out"]}
        assert set(reasons) == expected, corpus
        for name in expected - {"intl/broken.pdf"}:
            assert reasons[name].startswith(f"{name} is ") and reasons[name] in odd_build.printed


def test_long_names_get_hashed_stage_files(odd_build: Build) -> None:
    store = PartitionStore(odd_build.out / "stages")
    manifest = store.manifest_path(VALIDATED_CHUNKS, f"fr/{LONG_NAME}")
    assert manifest.is_file() and "~" in manifest.name and len(manifest.name.encode("utf-8")) < 255 - 14


def test_leftover_temp_files_of_a_killed_export_are_removed(odd_build: Build) -> None:
    assert not list(odd_build.out.glob(".chunks_*.tmp"))


def test_pdf_argument_symlink_or_outside_the_raw_folder_is_a_sentence_not_a_traceback(
    odd_build: Build, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(odd_build.raw.parent / "home"))
    link = odd_build.raw / "fr" / "link.pdf"
    outside = tmp_path / "elsewhere.pdf"
    outside.write_bytes((odd_build.raw / "fr" / "reglement.pdf").read_bytes())
    os.symlink(odd_build.raw / "fr" / "reglement.pdf", link)
    try:
        base = ("build", "--raw-dir", str(odd_build.raw), "--output-dir", str(odd_build.out), "--pdf")
        code, printed = _run(*base, str(link))
        assert code == 2 and "is a symbolic link" in printed
        code, printed = _run(*base, str(outside))
        assert code == 2 and "is outside the raw folder" in printed
        code, printed = _run(*base, "fr/new\nline.pdf")
        assert code == 2 and "is not built" in printed and "rename the file" in printed
    finally:
        link.unlink()
