from pathlib import Path

import pytest

from pocket_assets.core.errors import PdfError
from pocket_assets.core.pdf import corpus_of, discover_pdfs, inspect_pdf, scan_raw_folder, sha256_file, source_name
from pocket_assets.core.records import parse_corpora
from pocket_assets_tests.pdf_factory import (
    SAMPLE_RAW,
    encrypted_pdf,
    image_only_pdf,
    odd_corpus,
    random_bytes_pdf,
    text_pdf,
    truncated_pdf,
    zero_page_pdf,
)


def test_inspect_records_identity_of_a_real_pdf() -> None:
    identity = inspect_pdf(SAMPLE_RAW / "fr" / "faq.pdf", "fr/faq.pdf")
    assert identity.corpus == "fr"
    assert identity.source == "faq.pdf"
    assert identity.page_count == 17
    assert identity.sha256 == sha256_file(SAMPLE_RAW / "fr" / "faq.pdf")
    assert identity.size_bytes == (SAMPLE_RAW / "fr" / "faq.pdf").stat().st_size
    assert identity.metadata["title"].startswith("Foire aux questions")


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda path: random_bytes_pdf(path), "not a PDF"),
        (lambda path: truncated_pdf(path, SAMPLE_RAW / "fr" / "faq.pdf"), "truncated"),
        (lambda path: encrypted_pdf(path), "encrypted"),
        (lambda path: zero_page_pdf(path), "zero pages"),
    ],
    ids=["random-bytes", "truncated", "encrypted", "zero-pages"],
)
def test_bad_pdfs_are_refused_with_the_file_named(tmp_path: Path, make, message: str) -> None:
    path = make(tmp_path / "fr" / "broken.pdf")
    with pytest.raises(PdfError) as raised:
        inspect_pdf(path, "fr/broken.pdf")
    assert message in str(raised.value)
    assert str(raised.value).startswith("broken.pdf: ")


def test_image_only_pdf_is_a_valid_pdf(tmp_path: Path) -> None:
    identity = inspect_pdf(image_only_pdf(tmp_path / "intl" / "scan.pdf"), "intl/scan.pdf")
    assert identity.page_count == 1


def test_corpus_comes_from_the_first_folder() -> None:
    assert corpus_of("intl/sub/x.pdf") == "intl"
    with pytest.raises(PdfError, match="not under a corpus folder"):
        corpus_of("other/x.pdf")


def test_discover_lists_pdfs_under_corpus_folders_sorted(tmp_path: Path) -> None:
    text_pdf(tmp_path / "intl" / "b.pdf", ["b"])
    text_pdf(tmp_path / "fr" / "sub" / "a.PDF", ["a"])
    (tmp_path / "fr" / "notes.txt").write_text("not a pdf")
    text_pdf(tmp_path / "elsewhere" / "c.pdf", ["c"])
    assert discover_pdfs(tmp_path) == ["fr/sub/a.PDF", "intl/b.pdf"]


def test_scan_builds_refuses_or_ignores_every_odd_name_alone(tmp_path: Path) -> None:
    cases = odd_corpus(tmp_path)
    scan = scan_raw_folder(tmp_path)
    built = {cases[name] for name in cases if name not in ("newline_name", "latin1_name", "top_level", "unknown_folder")}
    assert set(scan.keys) == built
    refused = dict(scan.refused)
    assert "fr/new\\nline.pdf" in refused and "control character" in refused["fr/new\\nline.pdf"]
    assert "fr/r\\xe8gles.pdf" in refused and "not valid UTF-8" in refused["fr/r\\xe8gles.pdf"]
    ignored = dict(scan.ignored)
    assert "top of the raw folder" in ignored["top.pdf"] and "POCKET_ASSETS_CORPORA" in ignored["top.pdf"]
    assert "'de', not a corpus" in ignored["de/x.pdf"]
    assert scan_raw_folder(tmp_path, ("fr", "intl", "de")).keys == tuple(sorted([*scan.keys, "de/x.pdf"]))


def test_a_pdf_in_a_configured_extra_corpus_gets_that_corpus(tmp_path: Path) -> None:
    path = text_pdf(tmp_path / "de" / "regeln.pdf", ["Regeln"])
    assert inspect_pdf(path, "de/regeln.pdf", ("fr", "de")).corpus == "de"
    with pytest.raises(PdfError, match="one of fr, intl"):
        inspect_pdf(path, "de/regeln.pdf")


@pytest.mark.parametrize(
    ("key", "source"),
    [
        ("fr/faq.pdf", "faq.pdf"),
        ("fr/sub/faq.pdf", "sub/faq.pdf"),
        ("fr/Règlement ÉTÉ 2024.PDF", "Règlement ÉTÉ 2024.pdf"),
        ("fr/Re\u0300gles  \u00a0de\tjeu.Pdf", "Règles de jeu.pdf"),
    ],
)
def test_source_keeps_the_subfolder_and_is_citable(key: str, source: str) -> None:
    assert source_name(key) == source


def test_parse_corpora() -> None:
    assert parse_corpora(" fr, intl,fr ,de") == ("fr", "intl", "de")
    for bad in ("", " , ", "fr/sub", ".."):
        with pytest.raises(ValueError, match="folder names"):
            parse_corpora(bad)
