"""Structure from numbering alone: single-font documents, label grammar, tables filed where they stand.

The first users' federation PDFs are Word exports in one font and size, their headings told apart only by
their numbers (`5.5. Appariement au système Molter`, `5.6 a) Phase de zone`), often with no more space
around them than between lines. These tests build such documents (`word_export_pdf`) and read their
structure back as the chunks carry it: `section_path`, `section`, `article_num`.
"""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from pocket_assets.core.chunking.chunker import ChunkedDocument, chunk_document
from pocket_assets.core.chunking.sections import build_section_index, paragraph_article
from pocket_assets.core.document import canonical_text
from pocket_assets.core.extract import extract_pages
from pocket_assets.core.extract.numbering import read_label
from pocket_assets.core.pdf import inspect_pdf
from pocket_assets.core.policy import ChunkPolicy
from pocket_assets.core.records import PageRecord
from pocket_assets.core.tables.extractive import ExtractiveSummarizer
from pocket_assets.core.tables.summaries import summarize_tables
from pocket_assets.core.tokenizer import TokenCounter, load_tokenizer
from pocket_assets_tests.pdf_factory import word_export_pdf

BODY = (
    "Les équipes sont réparties en groupes selon leur classement de la saison précédente. Le directeur "
    "du tournoi publie les appariements au plus tard la veille de la ronde, et chaque capitaine en "
    "reçoit copie avant le début des parties."
)
# A federation's competition rules: numbered parts, their numbered articles, lettered phases.
COMPETITION_RULES = [
    "Championnat de France des clubs",
    "1. Généralités",
    BODY,
    "1.1. Objet",
    BODY,
    "5. Déroulement de la compétition",
    BODY,
    "5.5. Appariement au système Molter",
    BODY,
    BODY,
    "5.6 a) Phase de zone",
    BODY,
    "5.6 b) Phase finale",
    BODY,
    "6. Sanctions",
    BODY,
    "7 - Appels et réclamations",
    BODY,
]
# The same kind of document labelled the French administrative way.
LABELLED_RULES = [
    "Règlement intérieur de la fédération",
    "TITRE II",
    "Chapitre 3",
    "Article 12",
    BODY,
    "Article 13 bis",
    BODY,
    "Art. 14. - Le bureau se réunit au moins quatre fois par an, sur convocation de son président ou à la "
    "demande du quart de ses membres.",
    BODY,
]


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return load_tokenizer()


def chunked(path: Path, counter: TokenCounter) -> tuple[tuple[PageRecord, ...], ChunkedDocument]:
    pages = extract_pages(path)
    return pages, chunk_document(inspect_pdf(path, f"fr/{path.name}"), pages, ChunkPolicy(), counter)


def place_of(pages: tuple[PageRecord, ...], words: str) -> tuple[tuple[str, ...], str | None]:
    """(section path, article) in force where `words` first stand in the document."""
    offset = canonical_text(pages).index(words)
    sections = build_section_index(pages)
    return sections.section_at(offset).section_path, sections.article_at(offset)


@pytest.mark.parametrize("space_after", [0.0, 8.0])
def test_single_font_numbered_headings_give_section_path_and_article(
    tmp_path: Path, counter: TokenCounter, space_after: float
) -> None:
    """Glued to their text (no space after a paragraph) or set apart, numbers alone make the headings."""
    path = word_export_pdf(tmp_path / "A02_Championnat.pdf", COMPETITION_RULES, space_after=space_after)
    pages, result = chunked(path, counter)
    part = "5. Déroulement de la compétition"
    assert place_of(pages, "Appariement au système Molter") == ((part, "5.5. Appariement au système Molter"), "5.5")
    # 5.6 a) belongs to 5 but not to 5.5, though no heading numbers 5.6 itself.
    assert place_of(pages, "Phase de zone") == ((part, "5.6 a) Phase de zone"), "5.6 a")
    assert place_of(pages, "Phase finale") == ((part, "5.6 b) Phase finale"), "5.6 b")
    assert place_of(pages, "Sanctions") == (("6. Sanctions",), "6")
    assert place_of(pages, "Appels et réclamations") == (("7 - Appels et réclamations",), "7")
    molter = next(child for child in result.children if child.text.startswith("## 5.5. Appariement"))
    assert (molter.section, molter.article_num) == ("5.5. Appariement au système Molter", "5.5")
    # Every child but the one opening with the document's title (a paragraph) carries its section.
    assert all(child.section_path for child in result.children[1:])


def test_single_font_labelled_headings_nest_and_run_in_articles_count(tmp_path: Path, counter: TokenCounter) -> None:
    path = word_export_pdf(tmp_path / "R01_Reglement_interieur.pdf", LABELLED_RULES)
    pages, result = chunked(path, counter)
    headings = [page.text[block.char_start : block.char_end] for page in pages for block in page.blocks if block.kind == "heading"]
    assert [heading.lstrip("# ") for heading in headings] == ["TITRE II", "Chapitre 3", "Article 12", "Article 13 bis"]
    article_13 = next(child for child in result.children if child.text.startswith("### Article 13 bis"))
    assert (article_13.section_path, article_13.article_num) == (("TITRE II", "Chapitre 3", "Article 13 bis"), "13 bis")
    # "Art. 14. - Le bureau ..." opens article 14 in a paragraph glued to the one before: no heading, the article.
    assert place_of(pages, "Le bureau se réunit") == (("TITRE II", "Chapitre 3", "Article 13 bis"), "14")


def test_a_numbered_list_in_body_type_stays_a_list(tmp_path: Path) -> None:
    """`1. Le roi` after a lead-in with a colon, beside other items: list items, not headings."""
    path = word_export_pdf(
        tmp_path / "pieces.pdf",
        ["Le joueur dispose des pièces suivantes :", "1. Le roi", "2. La dame", "3. La tour", BODY],
        space_after=6,
    )
    pages = extract_pages(path)
    assert not any(block.kind == "heading" for block in pages[0].blocks)
    assert "1. Le roi\n2. La dame\n3. La tour" in pages[0].text


def test_a_sentence_wrapped_onto_a_numbered_line_is_not_cut_out(tmp_path: Path) -> None:
    """`5.5. Le directeur vérifie la liste` opens a line of a wrapped sentence: the line before fills the
    column and the sentence goes on in the next, so it is no heading."""
    document = pymupdf.open()
    page = document.new_page()
    for row, line in enumerate(
        [
            "Le capitaine transmet la composition de son équipe selon les modalités prévues au point",
            "5.5. Le directeur vérifie la liste",
            "et la signe avant le début de la ronde.",
        ]
    ):
        page.insert_text((72, 100 + 13 * row), line, fontsize=11, fontname="helv")
    path = tmp_path / "wrapped.pdf"
    document.save(path)
    (page_record,) = extract_pages(path)
    assert [block.kind for block in page_record.blocks] == ["paragraph"]


def test_a_bare_number_in_body_type_is_a_minor_heading_where_headings_are_styled(tmp_path: Path) -> None:
    """In a document whose sections are bold and larger, `1. Precision` titles a part of the section in force."""
    document = pymupdf.open()
    page = document.new_page()
    y = 72.0
    for text, size, font in [
        ("2 Export to text files", 14, "hebo"),
        (BODY[:90], 10, "helv"),
        ("1. Precision", 10, "helv"),
        (BODY[:90], 10, "helv"),
        ("2. Header line", 10, "helv"),
        (BODY[:90], 10, "helv"),
        ("3 Spreadsheet-like data", 14, "hebo"),
        (BODY[:90], 10, "helv"),
    ]:
        page.insert_text((72, y), text, fontsize=size, fontname=font)
        y += 30
    path = tmp_path / "manual.pdf"
    document.save(path)
    pages = extract_pages(path)
    sections = build_section_index(pages)
    text = pages[0].text
    assert sections.section_at(text.index("Header line")).section_path == ("2 Export to text files", "2. Header line")
    assert sections.section_at(text.index("3 Spreadsheet")).section_path == ("3 Spreadsheet-like data",)


@pytest.mark.parametrize(
    ("text", "kind", "number", "depth"),
    [
        ("Article premier", "article", "1", 1),
        ("CHAPITRE PREMIER - DISPOSITIONS GÉNÉRALES", "chapitre", "1", 1),
        ("Article 12 bis", "article", "12 bis", 1),
        ("Article L. 131-8", "article", "L. 131-8", 2),
        ("Art. 3-1", "art", "3-1", 1),
        ("5.6 a) Phase de zone", "decimal", "5.6 a", 3),
        ("5.6. b) Phase finale", "decimal", "5.6 b", 3),
        ("3. Recall Period", "decimal", "3", 1),
        ("6 – Sanctions", "decimal", "6", 1),
    ],
)
def test_label_grammar_of_regulations(text: str, kind: str, number: str, depth: int) -> None:
    label = read_label(text)
    assert label is not None and (label.kind, label.number, label.depth) == (kind, number, depth)


def test_articles_run_into_their_paragraph() -> None:
    assert paragraph_article("Art. 5. – Le bureau") == "5"
    assert paragraph_article("ARTICLE 7 : Les membres") == "7"
    assert paragraph_article("4.1 Chaque coup") == "4.1" and paragraph_article("5.6 a) Les équipes") == "5.6 a"
    assert paragraph_article("Article 12 du code du sport prévoit") is None  # a sentence about another text
    assert paragraph_article("3. Le joueur") is None  # a list item as often as an article


def _ruled_table(page: pymupdf.Page, top: float, cells: list[list[str]]) -> float:
    left, width, height = 72, 150, 22
    for row in range(len(cells) + 1):
        page.draw_line((left, top + row * height), (left + len(cells[0]) * width, top + row * height))
    for column in range(len(cells[0]) + 1):
        page.draw_line((left + column * width, top), (left + column * width, top + len(cells) * height))
    for row, values in enumerate(cells):
        for column, value in enumerate(values):
            page.insert_text((left + column * width + 5, top + row * height + 15), value, fontsize=11, fontname="helv")
    return top + len(cells) * height + 20


def test_a_table_summary_is_filed_under_the_article_in_force_at_the_table(tmp_path: Path, counter: TokenCounter) -> None:
    """ARTICLE 16 opens the parent that holds ARTICLE 19's table: the summary is article 19's, as its child is."""
    document = pymupdf.open()
    page = document.new_page()
    y = 72.0
    for article in (16, 17, 18, 19):
        page.insert_text((72, y), f"ARTICLE {article}", fontsize=12, fontname="hebo")
        y += 20
        page.insert_textbox(pymupdf.Rect(72, y, 523, y + 60), BODY, fontsize=10, fontname="helv")
        y += 70
    page.insert_text((72, y), "Tableau 1 – Sanctions (article 19)", fontsize=10, fontname="helv")
    _ruled_table(page, y + 10, [["Faute", "Sanction"], ["Forfait", "Amende de 50 euros"], ["Retard", "Avertissement"]])
    path = tmp_path / "sanctions.pdf"
    document.save(path)
    pages, result = chunked(path, counter)
    policy = ChunkPolicy()
    batch = summarize_tables(
        inspect_pdf(path, f"fr/{path.name}"), pages, result.parents, policy, counter, ExtractiveSummarizer(counter),
        children=result.children,
    )  # fmt: skip
    (summary,) = batch.chunks
    holder = next(parent for parent in result.parents if parent.id == summary.parent_id)
    assert holder.article_num == "16"  # the parent opens in article 16 ...
    holding_child = next(
        child for child in result.children if child.char_start <= summary.char_start < child.char_end
    )
    assert holding_child.article_num == "19"
    assert summary.article_num == "19" and summary.section_path == ("ARTICLE 19",)  # ... the table is article 19's
    assert "ARTICLE 19" in summary.context and "ARTICLE 16" not in summary.context
