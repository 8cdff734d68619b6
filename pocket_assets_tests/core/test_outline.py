"""The author's own headings: a PDF's outline (bookmarks) and heading tags name headings and their levels.

Real pages keep the entries their PDF's outline holds for them (`fixtures/real/*outline*.pdf`, see
SOURCES.md): an R reference manual's topic lines, which no font sets apart (`attributes Object Attribute
Lists`, with the topic quoted in another topic's examples on the same page), and a LaTeX manual whose
outline drops a command's argument (`1.2.1 \\frenchsetup` for `1.2.1 \\frenchsetup{options}`).
"""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from pocket_assets.core.chunking.chunker import chunk_document
from pocket_assets.core.extract import extract_pages
from pocket_assets.core.extract.outline import (
    Candidate,
    OutlineEntry,
    has_heading_tags,
    match_outline,
    outline_entries,
)
from pocket_assets.core.pdf import inspect_pdf
from pocket_assets.core.policy import ChunkPolicy
from pocket_assets.core.records import ChunkRecord
from pocket_assets.core.tokenizer import load_tokenizer
from pocket_assets_tests.core.test_structure import headings
from pocket_assets_tests.pdf_factory import tagged_pdf

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"


def children_of(path: Path) -> tuple[ChunkRecord, ...]:
    pages = extract_pages(path)
    return chunk_document(inspect_pdf(path, f"intl/{path.name}"), pages, ChunkPolicy(), load_tokenizer()).children


def matched(entries: list[tuple[int, str]], texts: list[str | Candidate]) -> dict[int, tuple[int, int, int | None]]:
    candidates = [text if isinstance(text, Candidate) else Candidate(text) for text in texts]
    found = match_outline([OutlineEntry(level, title) for level, title in entries], candidates)
    return {index: (match.last, match.level, match.cut) for index, match in found.items()}


@pytest.mark.parametrize(
    ("title", "text"),
    [
        ("Vue d'ensemble de LaTeX{}", "Vue d'ensemble de LaTeX"),  # markup the outline keeps
        ("Introduction", "1 Introduction"),  # numbering the outline leaves out
        ("2.3 Les bases", "Les bases"),  # and numbering the page leaves out
        ("Chapitre 2 : Règles générales", "CHAPITRE 2 RÈGLES GÉNÉRALES"),  # case, accents, punctuation
        ("Appariement au systeme suisse", "Appariements au système suisse"),  # a word spelled otherwise
    ],
)
def test_an_entry_names_its_heading_whatever_its_wording(title: str, text: str) -> None:
    assert matched([(2, title)], ["Du texte avant le titre.", text, "Du texte après."]) == {1: (1, 2, None)}


def test_a_heading_cut_in_two_by_a_font_change_is_one_heading() -> None:
    assert matched([(1, "Le nom de la bête")], ["Le nom de la", "bête", "Texte."]) == {0: (1, 1, None)}


def test_an_entry_naming_the_start_of_a_line_is_that_start_only_where_a_heading_may_run_in() -> None:
    line = "base-package The R Base Package"
    assert matched([(2, "base-package")], [Candidate(line, run_in=True)]) == {0: (0, 2, len("base-package"))}
    # Body text that happens to open with the entry's words is no heading.
    sentence = "2005 a apporté son lot habituel d'innombrables mises à jour d'extensions et de programmes."
    assert matched([(3, "2005")], [Candidate(sentence)]) == {}


def test_quoted_code_and_running_headers_come_after_the_text() -> None:
    texts = [
        Candidate("attributes 47", tier=2),
        Candidate("attributes", tier=1),  # "See Also: attributes" in the topic before
        Candidate("attributes Object Attribute Lists", run_in=True),
    ]
    assert matched([(2, "attributes")], texts) == {2: (2, 2, len("attributes"))}
    assert matched([(2, "attributes")], texts[:2]) == {1: (1, 2, None)}  # code when nothing else names it


def test_entries_are_placed_in_order_and_an_entry_naming_nothing_is_left_out() -> None:
    texts = ["Objet", "Texte.", "Objet", "Texte.", "Durée", "Texte."]
    found = matched([(1, "Objet"), (1, "Mistitled"), (1, "Objet"), (1, "Durée")], texts)
    assert found == {0: (0, 1, None), 2: (2, 1, None), 4: (4, 1, None)}


def test_outline_entries_are_handed_out_per_page_and_entries_off_the_document_are_dropped(tmp_path: Path) -> None:
    path = tmp_path / "outlined.pdf"
    with pymupdf.open(REAL / "regs-word-titre-article.pdf") as document:
        document.set_toc([[1, "TITRE Ier", 1], [2, "Article 5", 2], [2, "Nowhere", -1], [1, "  ", 3]])
        document.save(path)
    with pymupdf.open(path) as document:
        assert outline_entries(document) == {1: (OutlineEntry(1, "TITRE Ier"),), 2: (OutlineEntry(2, "Article 5"),)}


def test_topic_lines_an_outline_lists_are_headings_at_its_levels() -> None:
    """R's reference manual: the topic line `attributes Object Attribute Lists` is set like the text; only the
    outline says it is a heading (and not the `attributes` its neighbour's examples quote on the same page)."""
    path = REAL / "rd-outline-names-topic-lines.pdf"
    pages = extract_pages(path)
    assert [(page, level, text) for page, level, text in headings(pages) if level == 1] == [
        (1, 1, "attr"),
        (2, 1, "attributes"),
    ]
    assert "# attributes\n\nObject Attribute Lists\n\n## Description" in pages[1].text
    assert any(child.page == 2 and child.section_path[:1] == ("attributes",) for child in children_of(path))


def test_a_topic_line_after_example_code_is_no_line_of_that_code() -> None:
    """refman p. 287: the topic's name, set in typewriter on a line of its own, was read into the example code
    above it; the outline makes it the heading, which ends the code block."""
    pages = extract_pages(REAL / "rd-outline-topic-after-example-code.pdf")
    assert "mget(letters, e1, ifnotfound = as.list(LETTERS))\n```\n\n# getDLLRegisteredRoutines\n\n" in pages[0].text


def test_a_chapter_opening_after_a_page_of_figure_files_its_passage_under_the_outline_s_headings() -> None:
    """refman pp. 833-836: `Chapter 4` (a label the outline leaves out, so set below its levels) opens a chain with
    `The grDevices package` and `grDevices-package`: the chain opens a top section, and the page before, a
    figure and its running header only, joins it."""
    path = REAL / "rd-outline-chapter-after-a-figure-page.pdf"
    chapter = next(child for child in children_of(path) if "Chapter 4" in child.text)
    assert (chapter.page, chapter.section_path) == (4, ("The grDevices package", "grDevices-package"))


def test_a_heading_whose_outline_entry_drops_an_argument_stays_whole_at_the_outline_s_level() -> None:
    pages = extract_pages(REAL / "tex-outline-drops-an-argument.pdf")
    assert headings(pages) == [(1, 1, "1.2 Customisation"), (1, 2, "1.2.1 \\frenchsetup{options}")]


def test_an_outline_naming_nothing_on_its_pages_changes_nothing(tmp_path: Path) -> None:
    """Mistitled entries (a PDF library's example of them), or an excerpt keeping its source report's outline."""
    original = REAL / "regs-same-size-numbered.pdf"
    path = tmp_path / "mistitled.pdf"
    with pymupdf.open(original) as document:
        document.set_toc([[1, "First", 1], [2, "Second", 1], [1, "Table 15. Actual and projected numbers", 2]])
        document.save(path)
    assert extract_pages(path) == extract_pages(original)


def test_heading_tags_of_a_tagged_pdf_are_headings_at_their_levels(tmp_path: Path) -> None:
    """An office suite's tagged export: headings in the body's font, told apart by their tags alone (a custom
    `Titre1` mapped to `H1` by the role map)."""
    path = tagged_pdf(
        tmp_path / "reglement.pdf",
        [
            ("Titre1", "Reglement interieur du club"),
            ("P", "Le present reglement complete les statuts du club et s'impose a tous ses membres."),
            ("H2", "Cotisations annuelles"),
            ("P", "La cotisation est due au premier septembre de chaque saison sportive."),
        ],
        role_map={"Titre1": "H1"},
    )
    assert headings(extract_pages(path)) == [(1, 1, "Reglement interieur du club"), (1, 2, "Cotisations annuelles")]


def test_a_tagged_pdf_without_heading_tags_reads_as_before(tmp_path: Path) -> None:
    path = tagged_pdf(tmp_path / "paragraphs.pdf", [("P", "Cotisations annuelles"), ("P", "La cotisation est due.")])
    with pymupdf.open(path) as document:
        assert not has_heading_tags(document)
    assert headings(extract_pages(path)) == []
