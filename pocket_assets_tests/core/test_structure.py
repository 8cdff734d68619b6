"""Structure of regulations: labels, heading levels, article numbers, running lines, tables.

Real pages cut from the corpus-regs regulations (`fixtures/real/regs-*.pdf`, see SOURCES.md) cover
the four house styles; the label forms none of them uses are checked on the label reader and on a
built Word-like page (one font, headings by numbering and capitals only).
"""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from pocket_assets.core.chunking.chunker import chunk_document
from pocket_assets.core.chunking.sections import article_number, build_section_index
from pocket_assets.core.extract import extract_pages
from pocket_assets.core.extract.cleanup import clean_text, running_signatures
from pocket_assets.core.extract.headings import reads_as_heading
from pocket_assets.core.extract.numbering import opens_annex, read_label
from pocket_assets.core.policy import ChunkPolicy
from pocket_assets.core.records import PageRecord, TableCells
from pocket_assets.core.tables.readable import readable_cells
from pocket_assets.core.tokenizer import TokenCounter, load_tokenizer
from pocket_assets_tests.core.chunker_documents import identity_for

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return load_tokenizer()


def headings(pages: tuple[PageRecord, ...]) -> list[tuple[int, int, str]]:
    """(page, level, text) of every heading block."""
    return [
        (page.page, block.level, page.text[block.char_start : block.char_end].lstrip("# "))
        for page in pages
        for block in page.blocks
        if block.kind == "heading"
    ]


def tables(pages: tuple[PageRecord, ...]) -> list[tuple[int, tuple[str, ...], int]]:
    """(page, header, rows) of every table block."""
    return [
        (page.page, block.table.header, len(block.table.rows))
        for page in pages
        for block in page.blocks
        if block.kind == "table" and block.table is not None
    ]


@pytest.mark.parametrize(
    ("text", "kind", "number"),
    [
        ("TITRE I", "titre", "I"),
        ("Titre Ier Dispositions générales", "titre", "I"),
        ("TITRE IER", "titre", "I"),
        ("CHAPITRE 2", "chapitre", "2"),
        ("Section 3 : Dispositions communes", "section", "3"),
        ("Sous-section 1", "sous-section", "1"),
        ("Article 12", "article", "12"),
        ("Article 4.1", "article", "4.1"),
        ("ARTICLE 1ER", "article", "1"),
        ("Article 1er Objet", "article", "1"),
        ("Art. 5", "art", "5"),
        ("ARTICLE 6 - OBJET", "article", "6"),
        ("6.7. Délai de forfait", "decimal", "6.7"),
        ("1.2.3 Cadence", "decimal", "1.2.3"),
        ("Annexe A", "annexe", "A"),
        ("Chapter 4", "chapter", "4"),
        ("Part II", "part", "II"),
        ("Appendix B", "appendix", "B"),
    ],
)
def test_labels_are_read_with_the_number_as_the_document_writes_it(text: str, kind: str, number: str) -> None:
    label = read_label(text)
    assert label is not None and (label.kind, label.number) == (kind, number)


@pytest.mark.parametrize("text", ["Article ci-dessous", "Article Annexe I", "3 items", "Section civile", "Partie de"])
def test_words_after_a_label_word_are_no_label(text: str) -> None:
    assert read_label(text) is None


def test_label_ranks_nest_as_a_reader_sees_them() -> None:
    ladder = ["Titre II", "Chapitre 3", "Section 1", "Sous-section 2", "Article 7", "7.1.", "7.1.2 Cas"]
    ranks = [read_label(text).rank for text in ladder]
    assert ranks == sorted(ranks) and len(set(ranks)) == len(ranks)


def test_article_numbers_of_headings() -> None:
    assert article_number("Article 1er Objet de la convention") == "1"
    assert article_number("ARTICLE 19") == "19"
    assert article_number("6.7. Délai de forfait") == "6.7"
    assert article_number("3 Options") == "3"
    assert article_number("TITRE II SANCTIONS") is None and article_number("Section 3") is None
    assert opens_annex("Annexe") and opens_annex("Appendix A") and not opens_annex("Article 4")


def test_body_type_headings_by_numbering_and_capitals_but_not_sentences_or_items() -> None:
    assert reads_as_heading("ARTICLE 3 - OBJET", 1)
    assert reads_as_heading("Titre Ier", 1)
    assert reads_as_heading("6.7. Délai de forfait", 1)
    assert reads_as_heading("DISPOSITIONS GÉNÉRALES", 1)
    assert not reads_as_heading("Article 12 du code du sport prévoit que la fédération", 1)
    assert not reads_as_heading("1.1.2. La date de sa création ;", 1)
    assert not reads_as_heading("3.3. Sur le plan financier et comptable :", 1)
    assert not reads_as_heading("La fédération a pour objet", 1)
    assert not reads_as_heading("X11() [UNIX]", 1) and not reads_as_heading("M_1 * M_2 M_1 + M_2", 1)  # code, math


def test_running_lines_of_a_short_document_repeat_on_all_pages_but_the_first() -> None:
    pages = [["bottom:page # / #"], ["top:statuts types", "bottom:page # / #"], ["top:statuts types"]]
    assert running_signatures(pages, 3) == {"top:statuts types", "bottom:page # / #"}
    long = [["top:statuts types"], ["top:statuts types"], []] + [[] for _ in range(7)]
    assert running_signatures(long, 10) == frozenset()


def test_word_style_titre_on_two_lines_articles_below_and_running_lines_gone() -> None:
    pages = extract_pages(REAL / "regs-word-titre-article.pdf")
    found = headings(pages)
    assert (1, 1, "STATUTS TYPES DES FÉDÉRATIONS SPORTIVES AGRÉÉES") in found
    assert (1, 2, "TITRE Ier BUT ET COMPOSITION") in found  # "TITRE Ier" / "BUT ET COMPOSITION": one heading
    assert (1, 3, "Article 1er") in found and (2, 3, "Article 5") in found
    text = "\n".join(page.text for page in pages)
    # Three pages, the running header on two of them: still a running header.
    assert "Statuts types des fédérations sportives agréées" not in text
    assert "Page 2 / 10" not in text


def test_small_capitals_headings_nest_titre_section_article(counter: TokenCounter) -> None:
    pages = extract_pages(REAL / "regs-serif-small-capitals.pdf")
    found = headings(pages)
    assert (1, 4, "ARTICLE 1ER") in found
    section = "SECTION 1 DISPOSITIONS COMMUNES AUX ORGANES DISCIPLINAIRES DE PREMIÈRE INSTANCE ET D'APPEL"
    assert (1, 3, section) in found  # three lines of small capitals, one heading
    assert (3, 2, "TITRE II SANCTIONS DISCIPLINAIRES") in found
    index = build_section_index(pages)
    offset = next(
        page.char_start + page.text.index("Il est institué un organe disciplinaire") for page in pages if page.page == 1
    )
    assert index.section_at(offset).section_path[1:] == ("TITRE IER ORGANES ET PROCÉDURES DISCIPLINAIRES", section, "ARTICLE 2")
    assert index.article_at(offset) == "2"
    assert (3, ("Lettre", "Sanction disciplinaire"), 6) in tables(pages)  # cell borders drawn one by one
    assert "29 avril 2002" not in "\n".join(page.text for page in pages)
    children = chunk_document(identity_for(pages), pages, ChunkPolicy(), counter).children
    assert all(child.article_num for child in children if child.page > 1)


def test_same_size_numbered_headings_paragraphs_and_wrapped_table_cells(counter: TokenCounter) -> None:
    pages = extract_pages(REAL / "regs-same-size-numbered.pdf")
    found = headings(pages)
    assert (1, 2, "1. Dispositions relatives au but et à la composition de la fédération") in found
    assert (1, 3, "1.1. But de la fédération") in found
    assert not any(text.startswith("1.1.2.") for _, _, text in found)  # a numbered paragraph, not a heading
    children = chunk_document(identity_for(pages), pages, ChunkPolicy(page_mode="span", child_tokens=60, child_overlap=0, min_chars=20), counter).children
    inside = [child for child in children if child.text.lstrip().startswith("1.1.3.")]
    assert inside and inside[0].article_num == "1.1.3"
    table = next(block.table for page in pages for block in page.blocks if block.kind == "table")
    assert table.header == ("Lettre", "Ressource annuelle") and len(table.rows) == 6
    assert ("d)", "Subventions de l'Etat, des collectivités territoriales et des établissements publics") in table.rows


def test_two_column_style_levels_running_lines_and_two_row_table() -> None:
    pages = extract_pages(REAL / "regs-two-column.pdf")
    levels = {text: level for _, level, text in headings(pages)}
    titre, section, article = (
        levels["TITRE Ier : ORGANES ET PROCÉDURES DISCIPLINAIRES"],
        levels["Section 2 : Dispositions relatives aux organes disciplinaires de première instance."],
        levels["Article 7"],
    )
    assert titre < section < article
    text = "\n".join(page.text for page in pages)
    assert "Règlement disciplinaire type (2004)" not in text and "2/4" not in text
    assert (3, ("Situation de l'intéressé", "Délai minimal", "Délai maximal"), 2) in tables(pages)


def test_unlabelled_subheads_group_the_articles_below_them() -> None:
    for name, subhead, article in (
        ("regs-two-column-subheads.pdf", "Objet", "Article 1er"),
        ("regs-serif-subheads.pdf", "BUREAU", "ARTICLE 20"),
    ):
        pages = extract_pages(REAL / name)
        levels = {text: level for _, level, text in headings(pages)}
        assert levels[subhead] < levels[article], name
    pages = extract_pages(REAL / "regs-two-column-subheads.pdf")
    assert (3, ("Élément", "Règle statutaire"), 6) in tables(pages)


def _word_like_pdf(path: Path, lines: list[tuple[str, bool]]) -> Path:
    """One font, body size: headings only by their numbering or capitals (bold where asked)."""
    document = pymupdf.open()
    page = document.new_page()
    y = 72.0
    for index, (text, bold) in enumerate(lines):
        page.insert_text((72, y), text, fontsize=11, fontname="hebo" if bold else "helv")
        following = lines[index + 1][0] if index + 1 < len(lines) else ""
        y += 16 if len(text) > 40 and len(following) > 40 else 30
    document.save(path)
    return path


def test_word_made_regulation_headings_by_numbering_alone(tmp_path: Path) -> None:
    body = "Le joueur qui a le trait doit jouer un coup legal dans le temps imparti par la cadence."
    lines = [
        ("CHAPITRE 2", False),
        ("Section 3 Organisation", False),
        ("Sous-section 1 Arbitres", False),
        ("Art. 5 Roles", False),
        (body, False),
        (body, False),
        ("Article 4.1", False),
        (body, False),
        ("6.7. Delai de forfait", False),
        (body, False),
        ("ANNEXE A", False),
        (body, False),
    ]
    pages = extract_pages(_word_like_pdf(tmp_path / "word.pdf", lines))
    levels = {text: level for _, level, text in headings(pages)}
    assert levels["CHAPITRE 2"] < levels["Section 3 Organisation"] < levels["Sous-section 1 Arbitres"]
    assert levels["Sous-section 1 Arbitres"] < levels["Art. 5 Roles"] <= levels["Article 4.1"]
    assert levels["Article 4.1"] < levels["6.7. Delai de forfait"] and "ANNEXE A" in levels
    assert not any(body in text for text in levels)


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("Table des mati`eres", "Table des matières"),
        ("pr´esent", "présent"),
        ("´Ecole", "École"),
        ("fran¸cais", "français"),
        ("É quivalente", "Équivalente"),
        ("À la fin", "À la fin"),  # a French word alone
        ("`Figure 1:' in", "`Figure 1:' in"),  # a TeX quote, not an accent
        ("x^2 and a^b", "x^2 and a^b"),
        ("LPPL c\u20ddEFRENCH", "LPPL ©EFRENCH"),
        ("\uf0b7 The terms", "• The terms"),
    ],
)
def test_accents_set_apart_are_composed_and_private_bullets_mapped(raw: str, clean: str) -> None:
    assert clean_text(raw) == clean


def test_tex_pages_give_clean_text_and_table_cells_keep_their_spaces() -> None:
    accents = extract_pages(REAL / "tex-separate-accent-glyphs.pdf")[0].text
    assert "Wirtschaftsuniversität" in accents and "¨" not in accents
    assert "©" in extract_pages(REAL / "tex-copyright-circle.pdf")[0].text
    page = extract_pages(REAL / "tex-table-cells-words.pdf")[0]
    table = next(block.table for block in page.blocks if block.kind == "table")
    cells = " ".join(cell for row in table.rows for cell in row)
    assert "Ceci insère decl. directement en tête de l’entrée dans la colonne." in cells
    assert "Équivalente à \\parbox[b]{width}." in cells and "l’espace normalement" in cells


def test_a_grid_of_graphics_without_words_is_no_table(tmp_path: Path) -> None:
    """Staves, charts and form boxes draw ruled grids; cells with no word or number are not a table."""
    document = pymupdf.open()
    page = document.new_page()
    page.insert_text((72, 60), "Hauteurs des notes sur la portée, dans la notation du manuel.", fontsize=11)
    for row in range(5):
        for column in range(6):
            x, y = 72 + column * 60, 100 + row * 30
            page.draw_rect(pymupdf.Rect(x, y, x + 60, y + 30), color=(0, 0, 0), width=0.5)
            if (row + column) % 3 == 0:
                page.insert_text((x + 25, y + 20), "h", fontsize=11)
    path = tmp_path / "grid.pdf"
    document.save(path)
    assert not any(block.kind == "table" for page in extract_pages(path) for block in page.blocks)
    assert readable_cells(TableCells(header=("Lettre", "Sanction"), rows=(("a)", "L'avertissement"), ("", ""))))
    assert not readable_cells(TableCells(header=("h", ""), rows=(("", "ª"), ("", ""))))


def test_a_title_cut_from_its_label_by_a_page_break_stays_in_the_label_s_section() -> None:
    """"Article 15" ends a page and "Litiges" opens the next: the title is no heading of its own."""
    pages = extract_pages(REAL / "regs-heading-cut-by-page-break.pdf")
    last = pages[0].blocks[-1]
    assert last.kind == "heading" and pages[0].text[last.char_start : last.char_end].endswith("Article 15")
    first = pages[1].blocks[0]
    assert first.kind == "paragraph" and pages[1].text[first.char_start : first.char_end] == "Litiges"
    assert build_section_index(pages).section_at(pages[1].char_start).section_path[-1] == "Article 15"
