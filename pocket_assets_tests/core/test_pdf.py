from pathlib import Path

import pytest

from pocket_assets.core.errors import PdfError
from pocket_assets.core.extract import extract_pages
from pocket_assets.core.pdf import REPAIRED_WARNING, inspect_pdf
from pocket_assets.core.raw_folder import corpus_of, discover_pdfs, scan_raw_folder, sha256_file, source_name
from pocket_assets.core.records import parse_corpora
from pocket_assets_tests.pdf_factory import (
    SAMPLE_RAW,
    broken_xref_pdf,
    encrypted_pdf,
    image_only_pdf,
    odd_corpus,
    page_tree_pdf,
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


@pytest.mark.parametrize("how", ["cut", "offset"])
def test_a_pdf_whose_cross_reference_table_is_broken_is_built_and_said_repaired(tmp_path: Path, how: str) -> None:
    good = text_pdf(tmp_path / "good.pdf", ["First page of the rules. " * 8, "Second page of the rules. " * 8])
    path = broken_xref_pdf(tmp_path / "fr" / "repaired.pdf", good, how)
    assert inspect_pdf(path, "fr/repaired.pdf").page_count == 2
    pages = extract_pages(path)
    assert [page.text for page in pages] == [page.text for page in extract_pages(good)]
    assert pages[0].warnings == (REPAIRED_WARNING,) and pages[1].warnings == ()


def _refusal(path: Path) -> str:
    """The one sentence both the raw_pdf and the pages stage give for `path`, which must be the same."""
    with pytest.raises(PdfError) as inspected:
        inspect_pdf(path, "fr/tree.pdf")
    with pytest.raises(PdfError) as extracted:
        extract_pages(path)
    assert str(inspected.value) == str(extracted.value)
    message = str(inspected.value)
    assert message.startswith("tree.pdf: ") and "\n" not in message
    return message


@pytest.mark.parametrize("count", ["-5", "1000000000"])
def test_a_page_count_mupdf_refuses_fails_that_pdf_only_with_a_sentence(tmp_path: Path, count: str) -> None:
    message = _refusal(page_tree_pdf(tmp_path / "tree.pdf", count, [1, 2]))
    assert "page tree is malformed (code=7: Invalid number of pages)" in message


def test_a_page_count_that_is_no_integer_fails_that_pdf_only_with_a_sentence(tmp_path: Path) -> None:
    message = _refusal(page_tree_pdf(tmp_path / "tree.pdf", "1e9", [1, 2]))  # MuPDF reads 1e9 as null: 0 pages
    assert "its /Count is null, not the number of the 2 page(s) it lists" in message


def test_a_page_tree_that_holds_itself_fails_that_pdf_only_with_a_sentence(tmp_path: Path) -> None:
    path = page_tree_pdf(tmp_path / "tree.pdf", "2", [1, 2])
    path.write_bytes(path.read_bytes().replace(b"/Kids[4 0 R 6 0 R]", b"/Kids[2 0 R 6 0 R]"))  # same length
    assert "none of its 2 page(s) can be read (page 1: the page cannot be loaded (code=7: cycle in page tree))" in (
        _refusal(path)
    )


def test_a_page_listed_twice_is_read_twice(tmp_path: Path) -> None:
    """MuPDF shows a repeated page object as two pages, as a viewer does: both are built."""
    path = page_tree_pdf(tmp_path / "fr" / "tree.pdf", "3", [1, 1, 2])
    assert inspect_pdf(path, "fr/tree.pdf").page_count == 3
    first, again, second = extract_pages(path)
    assert first.text == again.text == "Page 1 of the document, with enough words to be read."
    assert second.text.startswith("Page 2") and not (first.warnings or again.warnings or second.warnings)


def test_pages_the_tree_counts_but_does_not_hold_are_warned_and_the_rest_built(tmp_path: Path) -> None:
    path = page_tree_pdf(tmp_path / "fr" / "tree.pdf", "4", [1, 2])
    pages = extract_pages(path)
    assert [page.text[:6] for page in pages] == ["Page 1", "Page 2", "", ""]
    assert pages[2].warnings == ("the page cannot be loaded (page not in document): its text is missing",)


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
