"""extract_pages on small PDFs the tests draw themselves, and on one shipped sample."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from pocket_assets.core.document import PageContent, assemble_pages, canonical_text
from pocket_assets.core.extract import extract_pages
from pocket_assets.core.extract.tables import may_hold_table
from pocket_assets.core.records import BLOCK_KINDS
from pocket_assets_tests.pdf_factory import draw_ruled_table, nested_arrays_pdf

BODY = "The arbiter records the result on the score sheet and signs it at the end of the game."
SAMPLE_PDF = Path(__file__).resolve().parents[2] / "data" / "raw" / "fr" / "f-array.pdf"


def _save(document: pymupdf.Document, tmp_path: Path, name: str = "generated.pdf") -> Path:
    path = tmp_path / name
    document.save(path)
    return path


def _body(page: pymupdf.Page, y: float, lines: int = 3, x: float = 72) -> float:
    for _ in range(lines):
        page.insert_text((x, y), BODY[:70], fontsize=11, fontname="helv")
        y += 14
    return y + 10


def _blocks_of(page, kind):
    return [page.text[block.char_start : block.char_end] for block in page.blocks if block.kind == kind]


def test_heading_levels_follow_size_rank_and_numbering(tmp_path: Path) -> None:
    document = pymupdf.open()
    for chapter in ("Overview", "Procedures"):
        page = document.new_page()
        page.insert_text((72, 80), chapter, fontsize=20, fontname="hebo")
        y = _body(page, 110)
        page.insert_text((72, y), "Details of play", fontsize=15, fontname="hebo")
        y = _body(page, y + 24)
        page.insert_text((72, y), "3.9.1 Numbered clause", fontsize=13, fontname="hebo")
        _body(page, y + 22)
    pages = extract_pages(_save(document, tmp_path))
    headings = _blocks_of(pages[0], "heading")
    assert headings == ["# Overview", "## Details of play", "### 3.9.1 Numbered clause"]
    assert [block.level for block in pages[0].blocks if block.kind == "heading"] == [1, 2, 3]
    assert _blocks_of(pages[0], "paragraph")[0].startswith("The arbiter records")


def test_two_columns_are_read_left_column_first(tmp_path: Path) -> None:
    document = pymupdf.open()
    page = document.new_page()
    # The right column is written first, so content-stream order is wrong.
    for index in range(6):
        page.insert_text((320, 100 + 14 * index), f"right column line {index}", fontsize=11, fontname="helv")
    for index in range(6):
        page.insert_text((60, 100 + 14 * index), f"left column line {index}", fontsize=11, fontname="helv")
    text = extract_pages(_save(document, tmp_path))[0].text
    assert text.index("left column line 5") < text.index("right column line 0")


def test_ruled_table_becomes_pipe_table_with_cells(tmp_path: Path) -> None:
    document = pymupdf.open()
    page = document.new_page()
    _body(page, 80)
    draw_ruled_table(page, [["Round", "White", "Black"], ["1", "Carlsen", "Caruana"], ["2", "Ding", "Nepo"]], 72, 160)
    result = extract_pages(_save(document, tmp_path))[0]
    tables = [block for block in result.blocks if block.kind == "table"]
    assert len(tables) == 1
    assert tables[0].table.header == ("Round", "White", "Black")
    assert tables[0].table.rows == (("1", "Carlsen", "Caruana"), ("2", "Ding", "Nepo"))
    markdown = result.text[tables[0].char_start : tables[0].char_end].splitlines()
    assert markdown[0] == "| Round | White | Black |"
    assert markdown[1] == "|---|---|---|"
    assert markdown[2] == "| 1 | Carlsen | Caruana |"
    assert result.text.count("Carlsen") == 1  # table text is not repeated as a paragraph


def test_monospaced_lines_are_fenced_code(tmp_path: Path) -> None:
    document = pymupdf.open()
    page = document.new_page()
    y = _body(page, 80)
    page.insert_text((72, y), "for game in games:", fontsize=10, fontname="cour")
    page.insert_text((72 + 4 * 6, y + 12), "record(game)", fontsize=10, fontname="cour")
    result = extract_pages(_save(document, tmp_path))[0]
    assert _blocks_of(result, "code") == ["```\nfor game in games:\n    record(game)\n```"]


def test_line_end_hyphenation_is_joined(tmp_path: Path) -> None:
    document = pymupdf.open()
    page = document.new_page()
    page.insert_text((72, 100), "The tournament director checks the regis-", fontsize=11, fontname="helv")
    page.insert_text((72, 114), "tration of every player before the round.", fontsize=11, fontname="helv")
    text = extract_pages(_save(document, tmp_path))[0].text
    assert "registration of every player" in text


def test_running_header_footer_and_page_counter_are_removed(tmp_path: Path) -> None:
    document = pymupdf.open()
    for number in range(1, 5):
        page = document.new_page()
        page.insert_text((72, 40), "Federation rules handbook", fontsize=9, fontname="helv")
        _body(page, 120)
        page.insert_text((280, 815), f"page {number} sur 4", fontsize=9, fontname="helv")
    for page in extract_pages(_save(document, tmp_path)):
        assert "Federation rules handbook" not in page.text
        assert "sur 4" not in page.text
        assert page.text.startswith("The arbiter records")


def test_empty_and_image_only_pages_warn_without_failing(tmp_path: Path) -> None:
    document = pymupdf.open()
    document.new_page()
    scanned = document.new_page()
    pixmap = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 40, 40), False)
    pixmap.clear_with(200)
    scanned.insert_image(pymupdf.Rect(72, 72, 300, 300), pixmap=pixmap)
    empty, image_only = extract_pages(_save(document, tmp_path))
    assert empty.text == "" and empty.warnings == ("empty page",)
    assert image_only.text == "" and image_only.warnings == ("image-only page: no text layer (scanned?)",)


@pytest.mark.parametrize(
    ("in_text", "problem"),
    [(False, "code=5: exception stack overflow!"), (True, "syntax error: syntax error in array")],
    ids=["mupdf-gives-up", "mupdf-skips-them"],
)
def test_a_page_whose_content_mupdf_cannot_read_is_said_so_not_empty(
    tmp_path: Path, in_text: bool, problem: str
) -> None:
    """100,000 nested arrays: MuPDF stops reading the page (or skips them): what follows is lost, and told."""
    first, damaged = extract_pages(nested_arrays_pdf(tmp_path / "arrays.pdf", in_text))
    assert first.text.startswith("A plain first page") and first.warnings == ()
    assert damaged.warnings == (f"the page's content could not be read fully ({problem}): text may be missing",)
    assert "Text after them" not in damaged.text
    assert damaged.text == ("Text before the arrays." if in_text else "")


def test_same_pdf_gives_identical_pages(tmp_path: Path) -> None:
    document = pymupdf.open()
    page = document.new_page()
    page.insert_text((72, 80), "Overview", fontsize=20, fontname="hebo")
    _body(page, 110)
    path = _save(document, tmp_path)
    assert extract_pages(path) == extract_pages(path)


@pytest.fixture(scope="module")
def sample_pages():
    return extract_pages(SAMPLE_PDF)


def test_sample_pdf_invariants(sample_pages) -> None:
    assert [page.page for page in sample_pages] == list(range(1, len(sample_pages) + 1))
    reassembled = assemble_pages(PageContent(page.page, page.text, page.blocks, page.warnings) for page in sample_pages)
    assert reassembled == sample_pages
    document_text = canonical_text(sample_pages)
    for page in sample_pages:
        assert document_text[page.char_start : page.char_end] == page.text
        assert document_text[: page.char_start].count("\n") + 1 == page.line_start
        previous_end = 0
        for block in page.blocks:
            assert block.kind in BLOCK_KINDS
            assert previous_end <= block.char_start < block.char_end <= len(page.text)
            assert page.text[block.char_start : block.char_end].strip()
            assert (block.kind == "heading") == (1 <= block.level <= 4)
            previous_end = block.char_end
    tables = [block for page in sample_pages for block in page.blocks if block.kind == "table"]
    assert tables and all(block.table is not None and block.table.rows for block in tables)
    assert any(block.kind == "code" for page in sample_pages for block in page.blocks)


def _headings(page) -> list[tuple[str, int]]:
    return [
        (page.text[block.char_start : block.char_end], block.level) for block in page.blocks if block.kind == "heading"
    ]


def test_words_in_spans_of_slightly_different_sizes_make_one_body_line(tmp_path: Path) -> None:
    # Font expansion (microtype) sets each word at its own size: one line, one body size, no heading.
    document = pymupdf.open()
    page = document.new_page()
    x = 72.0
    for index, word in enumerate(["the", "arbiter", "signs", "the", "score", "sheet", "at", "the", "end"]):
        size = (10.96, 11.0, 11.04)[index % 3]
        page.insert_text((x, 100), word, fontsize=size, fontname="helv")
        x += pymupdf.get_text_length(word + " ", fontname="helv", fontsize=size)
    _body(page, 114)
    result = extract_pages(_save(document, tmp_path))[0]
    assert result.text.startswith("the arbiter signs the score sheet at the end The arbiter records")
    assert _headings(result) == []


def test_bold_labels_ending_with_a_colon_and_bold_run_on_openings_are_not_headings(tmp_path: Path) -> None:
    document = pymupdf.open()
    page = document.new_page()
    y = _body(page, 80)
    page.insert_text((72, y), "Options:", fontsize=11, fontname="hebo")
    y = _body(page, y + 16)
    page.insert_text((72, y), "Note.", fontsize=11, fontname="hebo")
    page.insert_text(
        (72 + pymupdf.get_text_length("Note. ", fontname="hebo", fontsize=11), y),
        BODY[:60],
        fontsize=11,
        fontname="helv",
    )
    _body(page, y + 14)
    result = extract_pages(_save(document, tmp_path))[0]
    assert _headings(result) == []
    assert "Options:" in _blocks_of(result, "paragraph")
    assert any(text.startswith("Note. The arbiter") for text in _blocks_of(result, "paragraph"))


def test_numbered_run_in_heading_is_split_from_its_paragraph(tmp_path: Path) -> None:
    document = pymupdf.open()
    page = document.new_page()
    y = _body(page, 80)
    lead = "4.1.1.2 Corps du document"
    page.insert_text((72, y), lead, fontsize=11, fontname="hebo")
    page.insert_text(
        (72 + pymupdf.get_text_length(lead, fontname="hebo", fontsize=11) + 12, y),
        "Le document est divisé en trois blocs.",
        fontsize=11,
        fontname="helv",
    )
    _body(page, y + 14)
    result = extract_pages(_save(document, tmp_path))[0]
    assert _headings(result) == [("#### 4.1.1.2 Corps du document", 4)]
    assert any(text.startswith("Le document est divisé en trois blocs.") for text in _blocks_of(result, "paragraph"))


def test_numbered_headings_at_body_size_in_typewriter_or_without_letters(tmp_path: Path) -> None:
    document = pymupdf.open()
    page = document.new_page()
    y = _body(page, 80)
    page.insert_text((72, y), "3.2.1 \\frenchsetup", fontsize=11, fontname="cour")
    y = _body(page, y + 18)
    page.insert_text((72, y), "10.1.1", fontsize=11, fontname="hebo")
    page.insert_text((110, y), "2003", fontsize=11, fontname="hebo")
    _body(page, y + 18)
    result = extract_pages(_save(document, tmp_path))[0]
    assert _headings(result) == [("### 3.2.1 \\frenchsetup", 3), ("### 10.1.1 2003", 3)]


def test_contents_line_with_a_page_number_at_the_right_is_not_a_heading(tmp_path: Path) -> None:
    document = pymupdf.open()
    page = document.new_page()
    page.insert_text((72, 80), "Contents", fontsize=18, fontname="hebo")
    page.insert_text((72, 110), "1 Introduction", fontsize=11, fontname="hebo")
    page.insert_text((515, 110), "3", fontsize=11, fontname="hebo")
    _body(page, 140)
    second = document.new_page()
    second.insert_text((72, 80), "Introduction", fontsize=18, fontname="hebo")
    _body(second, 110)
    first, _ = extract_pages(_save(document, tmp_path))
    assert [text for text, _ in _headings(first)] == ["# Contents"]


def test_title_page_keeps_its_title_but_not_authors_and_dates(tmp_path: Path) -> None:
    document = pymupdf.open()
    title_page = document.new_page()
    title_page.insert_text((72, 120), "Rules of the Game", fontsize=24, fontname="hebo")
    title_page.insert_text((72, 170), "Magnus Example and the Federation", fontsize=14, fontname="helv")
    title_page.insert_text((72, 200), "Version 2, March 2024", fontsize=14, fontname="helv")
    for chapter in ("Overview", "Procedures", "Appeals"):
        page = document.new_page()
        page.insert_text((72, 80), chapter, fontsize=18, fontname="hebo")
        _body(page, 110)
    pages = extract_pages(_save(document, tmp_path))
    assert _headings(pages[0]) == [("# Rules of the Game", 1)]
    assert _blocks_of(pages[0], "paragraph") == ["Magnus Example and the Federation", "Version 2, March 2024"]
    assert _headings(pages[1]) == [("# Overview", 1)]


def test_paragraphs_that_open_like_markdown_structure_are_escaped(tmp_path: Path) -> None:
    document = pymupdf.open()
    page = document.new_page()
    y = 80.0
    for opening in (
        "# define is a preprocessor line",
        "> quoted reply from the arbiter",
        "+ plus sign first",
        "2024. A year that opens the sentence",
    ):
        page.insert_text((72, y), opening, fontsize=11, fontname="helv")
        y = _body(page, y + 14, lines=1) + 10
    result = extract_pages(_save(document, tmp_path))[0]
    paragraphs = _blocks_of(result, "paragraph")
    assert "\\# define is a preprocessor line The arbiter records" in paragraphs[0]
    assert paragraphs[1].startswith("\\> quoted reply")
    assert paragraphs[2].startswith("\\+ plus sign first")
    assert paragraphs[3].startswith("\\2024. A year")
    assert _headings(result) == [] and _blocks_of(result, "list") == []


def test_unruled_aligned_table_becomes_pipe_table_with_cells(tmp_path: Path) -> None:
    document = pymupdf.open()
    page = document.new_page()
    y = _body(page, 80)
    rows = [
        ("Player", "Rating", "Club"),
        ("Anand", "2751", "Chennai"),
        ("Carlsen", "2830", "Oslo"),
        ("Ding", "2780", "Wenzhou"),
    ]
    for row in rows:
        y += 16
        for x, value in zip((90, 220, 330), row):
            page.insert_text((x, y), value, fontsize=11, fontname="helv")
    _body(page, y + 40)
    (page_record,) = extract_pages(_save(document, tmp_path))
    (table,) = [block for block in page_record.blocks if block.kind == "table"]
    assert table.table.header == ("Player", "Rating", "Club")
    assert table.table.rows == (("Anand", "2751", "Chennai"), ("Carlsen", "2830", "Oslo"), ("Ding", "2780", "Wenzhou"))
    assert page_record.text[table.char_start : table.char_end].splitlines()[0] == "| Player | Rating | Club |"
    assert not any("Carlsen" in text for text in _blocks_of(page_record, "paragraph"))


def test_prose_lists_and_two_columns_are_not_tables(tmp_path: Path) -> None:
    document = pymupdf.open()
    page = document.new_page()
    y = _body(page, 80, lines=4)
    for index in range(4):  # a bulleted list whose marker stands apart from its text
        y += 14
        page.insert_text((80, y), "•", fontsize=11, fontname="helv")
        page.insert_text((100, y), f"the arbiter signs score sheet {index} at the end", fontsize=11, fontname="helv")
    for index in range(4):  # a numbered list
        y += 14
        page.insert_text((72, y), f"{index + 1}. Players shake hands before the round.", fontsize=11, fontname="helv")
    y += 10
    for index in range(8):  # two columns of running text
        y += 14
        page.insert_text((60, y), f"left column of the rules, sentence {index} goes on.", fontsize=10, fontname="helv")
        page.insert_text((320, y), f"right column keeps the story, line {index} of it.", fontsize=10, fontname="helv")
    (page_record,) = extract_pages(_save(document, tmp_path))
    assert not _blocks_of(page_record, "table")


def _margin_label(page: pymupdf.Page, y: float, label: str, column: float, fontname: str, gap: float = 0) -> None:
    """A label set in the left margin, right-aligned on the text column's edge (less `gap`)."""
    width = pymupdf.get_text_length(label, fontname=fontname, fontsize=11)
    page.insert_text((column - gap - width, y), label, fontsize=11, fontname=fontname, color=(0, 0.2, 0.6))


def test_margin_labels_are_headings_below_their_section_before_the_text_they_label(tmp_path: Path) -> None:
    column = 140.0
    document = pymupdf.open()
    page = document.new_page()
    page.insert_text((column, 80), "2.3 Page de titre", fontsize=14, fontname="hebo")
    y = _body(page, 110, x=column)
    # A command signature: its name in the margin, its arguments in the column (same font, another colour).
    _margin_label(page, y, "\\university", column, "cour")
    page.insert_text((column, y), "{name}", fontsize=11, fontname="cour")
    y = _body(page, y + 16, lines=2, x=column)
    # A field: its name in the margin in another font, a gap, then a short text in the column.
    _margin_label(page, y, "eventdate", column, "helv", gap=10)
    page.insert_text((column, y), "champ (date)", fontsize=11, fontname="tiro")
    y = _body(page, y + 16, lines=2, x=column)
    # A first line hanging into the margin in the body's own style is no label.
    page.insert_text((column - 30, y), "Hanging " + BODY[:60], fontsize=11, fontname="helv")
    _body(page, y + 14, lines=2, x=column)
    second = document.new_page()
    _margin_label(second, 80, "\\maketitlepage", column, "cour")
    _body(second, 100, x=column)
    first, following = extract_pages(_save(document, tmp_path))
    assert _headings(first) == [
        ("## 2.3 Page de titre", 2),
        ("### \\university", 3),
        ("### eventdate", 3),
    ]
    blocks = [first.text[block.char_start : block.char_end] for block in first.blocks]
    assert "{name}" in blocks[blocks.index("### \\university") + 1]
    assert blocks[blocks.index("### eventdate") + 1].startswith("champ (date)")
    assert any(text.startswith("Hanging The arbiter") for text in _blocks_of(first, "paragraph"))
    # The section goes on over the page break: a label at the top of the next page stays below it.
    assert _headings(following) == [("### \\maketitlepage", 3)]


def test_bold_phrase_opening_a_paragraph_over_a_line_end_is_not_a_heading(tmp_path: Path) -> None:
    document = pymupdf.open()
    page = document.new_page()
    y = _body(page, 80)
    page.insert_text((72, y), "Attention, these sorting schemes must not be selected", fontsize=11, fontname="hebo")
    # 16 pt apart, as set lines are: the boxes of lines 14 pt apart overlap at 11 pt.
    page.insert_text((72, y + 16), "globally", fontsize=11, fontname="hebo")
    page.insert_text(
        (72 + pymupdf.get_text_length("globally ", fontname="hebo", fontsize=11), y + 16),
        "but per bibliography.",
        fontsize=11,
        fontname="helv",
    )
    _body(page, y + 32, lines=2)
    result = extract_pages(_save(document, tmp_path))[0]
    assert _headings(result) == []
    assert any(
        text.startswith("Attention, these sorting schemes must not be selected globally but per")
        for text in _blocks_of(result, "paragraph")
    )


def test_stacked_margin_labels_beside_a_paragraph_are_read_before_it_not_as_code(tmp_path: Path) -> None:
    column = 140.0
    document = pymupdf.open()
    page = document.new_page()
    page.insert_text((column, 80), "10 The Environment Definitions", fontsize=14, fontname="hebo")
    y = _body(page, 110, x=column)
    for number, code in enumerate(("\\def\\@tabarray{\\@ifnextchar[", "\\@array[c]}}"), start=211):
        page.insert_text((column, y), f"{number} {code}", fontsize=11, fontname="cour")
        y += 14
    y += 16
    # Two labels stacked down the side of one paragraph, set a point below its first line.
    _margin_label(page, y + 1, "\\tabular", column, "cour", gap=6)
    _margin_label(page, y + 15, "\\tabular*", column, "cour", gap=6)
    _body(page, y, lines=3, x=column)
    result = extract_pages(_save(document, tmp_path))[0]
    blocks = [(block.kind, result.text[block.char_start : block.char_end]) for block in result.blocks]
    code = next(index for index, (kind, _) in enumerate(blocks) if kind == "code")
    assert "\\tabular" not in blocks[code][1]
    assert blocks[code + 1 : code + 3] == [("heading", "## \\tabular"), ("heading", "## \\tabular*")]
    assert blocks[code + 3][1].startswith("The arbiter records")


def test_display_formula_in_math_fonts_is_an_equation_block(tmp_path: Path) -> None:
    """A line set apart in a math font is fenced as `$$`; a symbol inside a prose line is not."""
    document = pymupdf.open()
    page = document.new_page()
    y = _body(page, 80)
    page.insert_text((230, y + 6), "h = b1x1 + b2x2 + e", fontsize=12, fontname="symb")
    page.insert_text((72, y + 40), "where the weights", fontsize=11, fontname="helv")
    page.insert_text((160, y + 40), "b", fontsize=11, fontname="symb")
    page.insert_text(
        (170, y + 40), "are estimated from the sample by least squares fitting.", fontsize=11, fontname="helv"
    )
    page.insert_text((300, y + 80), "<", fontsize=11, fontname="symb")  # a lone symbol stays text
    [content] = extract_pages(_save(document, tmp_path))
    [equation] = _blocks_of(content, "equation")
    assert equation.startswith("$$\n") and equation.endswith("\n$$")
    assert len(equation.splitlines()) == 3 and "=" in equation
    assert any("least squares" in paragraph for paragraph in _blocks_of(content, "paragraph"))
    assert sum(block.kind == "equation" for block in content.blocks) == 1


def test_contents_without_leaders_is_not_a_table(tmp_path: Path) -> None:
    """Titles with their page numbers right-aligned, in page order, are a table of contents."""
    document = pymupdf.open()
    page = document.new_page()
    titles = ("1 Quelques notions de base", "2 Le codage", "3 Les polices", "4 La typographie", "5 Les outils")
    for index, (title, number) in enumerate(zip(titles, ("2", "5", "9", "14", "21"))):
        y = 100 + 16 * index
        page.insert_text((72, y), title, fontsize=11, fontname="helv")
        page.insert_text((520 - pymupdf.get_text_length(number, fontsize=11), y), number, fontsize=11)
    [content] = extract_pages(_save(document, tmp_path))
    assert _blocks_of(content, "table") == []
    assert "3 Les polices" in content.text and "14" in content.text


def test_page_number_above_the_bottom_band_is_removed_when_it_repeats(tmp_path: Path) -> None:
    """LaTeX sets the page number at ~85% of an A4 page, above the bottom tenth; a number in the text stays."""
    document = pymupdf.open()
    for number in range(1, 5):
        page = document.new_page(width=595, height=842)
        y = _body(page, 100, lines=4)
        if number == 2:
            page.insert_text((72, y + 10), "42", fontsize=11, fontname="helv")  # a lone number in the text
            _body(page, y + 40, lines=2)
        page.insert_text((294, 713), str(number), fontsize=10, fontname="helv")
    pages = extract_pages(_save(document, tmp_path))
    for content in pages:
        assert content.text.splitlines()[-1] != str(content.page)
    assert "\n42\n" in pages[1].text


def test_a_line_alone_on_every_page_is_kept_not_taken_for_a_running_header(tmp_path: Path) -> None:
    """A running header repeats over text that changes; a document whose every page shows one same line
    (a form's stub, pages of a rotated sample) would otherwise lose all its text."""
    document = pymupdf.open()
    for _ in range(4):
        document.new_page().insert_text((72, 60), "Fédération habibi", fontsize=11, fontname="helv")
    pages = extract_pages(_save(document, tmp_path))
    assert [page.text for page in pages] == ["Fédération habibi"] * 4


REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"


@pytest.mark.parametrize(
    ("name", "index", "row"),
    [
        ("tex-table-cells-words.pdf", 0, ("Options nouvelles", "")),  # TeX: no space characters in the cells
        ("regs-serif-small-capitals.pdf", 2, ("b)", "Le blâme ;")),  # a regulation's sanctions, office rules
        ("crossing-rules-without-table.pdf", 0, None),  # rules that cross around no table: the pre-filter lets it by
        ("ruled-table-jittered-rules.pdf", 0, ("Bel/Lux", "61.6", "57", "56.9", "77.4", "53", "60", "", "60.9")),  # office
    ],
)
def test_ruled_tables_of_real_pages_are_found_by_find_tables(name: str, index: int, row: tuple | None) -> None:
    with pymupdf.open(REAL / name) as document:
        assert may_hold_table(document[index].get_cdrawings())
    page = extract_pages(REAL / name)[index]
    tables = [block.table for block in page.blocks if block.kind == "table"]
    assert len(tables) == (row is not None)
    assert row is None or row in tables[0].rows
