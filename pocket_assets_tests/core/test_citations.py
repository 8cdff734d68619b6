"""What an arbiter cites ("Article 10, page 7") holds on documents never seen: the article of a passage, the
headings of a numbered series in capitals, a long title in capitals; and the line the phone embeds holds no
Markdown marks.

Real pages cut from corpus-regs (`fixtures/real/regs-*.pdf`, see SOURCES.md) carry the forms federations
print: an unlabelled heading grouping an article (`# Objet ## Article 1er`), a TITRE over an article, an
article opened straight by its numbered part (`# Article 9 ## 9.1.`). Forms none of them prints (run-in
`Art. 7.-`, a cahier des charges' `1.2. COUVERTURE RADIOÉLECTRIQUE`) are set in a Word-like page built from
the same kind of text.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pocket_assets.core.chunking.chunker import ChunkedDocument, chunk_document
from pocket_assets.core.chunking.context import document_title
from pocket_assets.core.chunking.embed_text import line_text
from pocket_assets.core.chunking.sections import article_number, build_section_index, heading_title, paragraph_article
from pocket_assets.core.document import canonical_text
from pocket_assets.core.extract import extract_pages
from pocket_assets.core.extract.headings import numbered_capitals, reads_as_long_title
from pocket_assets.core.extract.numbering import opens_annex, read_label
from pocket_assets.core.pdf import inspect_pdf
from pocket_assets.core.policy import ChunkPolicy
from pocket_assets.core.records import ChunkRecord, PageRecord
from pocket_assets.core.tokenizer import TokenCounter, load_tokenizer
from pocket_assets_tests.core.chunker_documents import bare_device, build_pages, identity_for
from pocket_assets_tests.core.test_chunker_properties import SETTINGS, paragraph
from pocket_assets_tests.pdf_factory import word_export_pdf

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
REGS = sorted(path.name for path in REAL.glob("regs-*.pdf"))


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return load_tokenizer()


def chunked(path: Path, counter: TokenCounter, policy: ChunkPolicy | None = None) -> ChunkedDocument:
    pages = extract_pages(path)
    return chunk_document(inspect_pdf(path, f"fr/{path.name}"), pages, policy or ChunkPolicy(), counter)


def opening_chain(child: ChunkRecord, pages: tuple[PageRecord, ...]) -> list[str]:
    """The titles of the headings the child's text opens with, in order."""
    text = canonical_text(pages)
    headings = {
        page.char_start + block.char_start: page.char_start + block.char_end
        for page in pages
        for block in page.blocks
        if block.kind == "heading"
    }
    chain = []
    position = child.char_start
    while position in headings and headings[position] <= child.char_end:
        chain.append(heading_title(text[position : headings[position]]))
        rest = text[headings[position] : child.char_end]
        position = headings[position] + len(rest) - len(rest.lstrip())
    return chain


def article_of_chain(chain: list[str]) -> tuple[bool, str | None]:
    """(whether the chain holds an article heading, the article its last article or annex heading gives)."""
    found, number = False, None
    for title in chain:
        if opens_annex(title):
            number = None
        elif (label := article_number(title)) is not None:
            found, number = True, label
    return found, number


def assert_children_carry_their_opening_article(result: ChunkedDocument, pages: tuple[PageRecord, ...]) -> None:
    for child in result.children:
        holds_article, number = article_of_chain(opening_chain(child, pages))
        if holds_article:
            assert child.article_num == number, (child.text[:80], child.article_num)


@pytest.mark.parametrize("name", REGS)
def test_every_child_opening_with_an_article_heading_carries_that_article(name: str, counter: TokenCounter) -> None:
    path = REAL / name
    pages = extract_pages(path)
    result = chunk_document(inspect_pdf(path, f"fr/{name}"), pages, ChunkPolicy(), counter)
    assert_children_carry_their_opening_article(result, pages)


def test_an_unlabelled_heading_over_an_article_files_its_passage_under_that_article(counter: TokenCounter) -> None:
    """corpus-regs 08: `# Composition et adhésion ## Article 3 La fédération ...` was article 2's."""
    result = chunked(REAL / "regs-two-column-subheads.pdf", counter)
    grouped = [
        child for child in result.children if child.text.startswith("# ") and "\n\n## Article" in child.text[:60]
    ]
    assert [(child.section_path[-1], child.article_num) for child in grouped] == [
        ("Article 1er", "1"), ("Article 3", "3"), ("Article 4", "4"), ("Article 5", "5"), ("Article 6", "6"),
        ("Article 7", "7"),
    ]


def test_a_titre_over_an_article_and_a_stray_line_above_the_title_are_filed_under_the_article(
    counter: TokenCounter,
) -> None:
    """corpus-regs 01 p. 1: "Article Annexe I" (a short line above the title), the title, TITRE Ier, Article 1er:
    the first passage is article 1's; and TITRE II over Article 5 gives article 5, not 4."""
    result = chunked(REAL / "regs-word-titre-article.pdf", counter)
    first = result.children[0]
    assert first.text.startswith("Article Annexe I\n\n# STATUTS TYPES")
    assert (first.section_path[-1], first.article_num) == ("Article 1er", "1")
    titre = next(child for child in result.children if child.text.startswith("## TITRE II"))
    assert (titre.section_path[-1], titre.article_num) == ("Article 5", "5")


def test_every_article_opens_a_passage_of_its_own(counter: TokenCounter) -> None:
    """corpus-regs 03: articles below TITRE and SECTION held two or three to a child, cited by the first."""
    path = REAL / "regs-serif-small-capitals.pdf"
    pages = extract_pages(path)
    result = chunk_document(inspect_pdf(path, f"fr/{path.name}"), pages, ChunkPolicy(), counter)
    text = canonical_text(pages)
    sections = build_section_index(pages)
    headed = [offset for offset in sections.article_openings if offset in set(sections.heading_starts)]
    for offset in headed:
        number = sections.article_at(offset)
        holder = next(child for child in result.children if child.char_start <= offset < child.char_end)
        assert holder.article_num == number, (text[offset : offset + 30], holder.article_num)


def test_an_article_opened_by_its_first_numbered_part_is_cited_by_that_part(counter: TokenCounter) -> None:
    """corpus-regs 05 p. 5: `# Article 9 ...` then `## 9.1. ...` at once: the passage is article 9.1, in article 9."""
    result = chunked(REAL / "regs-article-then-numbered-parts.pdf", counter)
    nine = next(child for child in result.children if child.text.startswith("# Article 9"))
    assert nine.article_num == "9.1" and nine.section_path[-2].startswith("Article 9")
    ten = next(child for child in result.children if child.text.startswith("# Article 10"))
    assert ten.article_num == "10"  # its 10.1 is a numbered paragraph of it, which opens no passage


article_heading = st.sampled_from(("Article 3", "ARTICLE 12", "Article 1er", "Art. 7", "4.2. Durée", "Article 9 bis"))
group_heading = st.sampled_from(("Comptabilité", "TITRE II OBJET", "Bureau", "Annexe A", "CHAPITRE 2"))
headed_block = st.one_of(
    st.tuples(st.integers(1, 3), article_heading), st.tuples(st.integers(1, 3), group_heading)
).map(lambda pair: ("heading", "#" * pair[0] + " " + pair[1], pair[0]))
regulations = st.lists(
    st.lists(st.one_of(headed_block, headed_block, paragraph), min_size=1, max_size=8), min_size=1, max_size=3
).map(build_pages)


@SETTINGS
@given(regulations, st.sampled_from(("span", "pdf-page-v1")), st.sampled_from((48, 96, 200)))
def test_property_a_child_opening_with_an_article_heading_carries_its_number(pages, page_mode, child_tokens):
    """Whatever the sizes, groups, TITREs and annexes around them: the article a child's opening headings give."""
    policy = ChunkPolicy(
        parent_tokens=2 * child_tokens, parent_overlap=12, child_tokens=child_tokens, child_overlap=8, min_chars=20,
        device=bare_device(child_tokens + 60), page_mode=page_mode,
    )
    result = chunk_document(identity_for(pages), pages, policy, load_tokenizer())
    assert_children_carry_their_opening_article(result, pages)


@SETTINGS
@given(st.sampled_from(REGS), st.sampled_from(("span", "pdf-page-v1")), st.sampled_from((120, 250, 450)))
def test_property_real_regulation_pages_at_any_size(name, page_mode, child_tokens):
    path = REAL / name
    pages = extract_pages(path)
    policy = dataclasses.replace(
        ChunkPolicy(page_mode=page_mode), child_tokens=child_tokens, child_overlap=child_tokens // 8
    )
    result = chunk_document(inspect_pdf(path, f"fr/{name}"), pages, policy, load_tokenizer())
    assert_children_carry_their_opening_article(result, pages)


@pytest.mark.parametrize(
    ("line", "number"),
    [
        ("Art. 7.- Le siège social est fixé à Paris.", "7"),
        ("Art 1er- Il est fondé entre les adhérents une association.", "1"),
        ("Art.7.- Le siège social est fixé à Paris.", "7"),
        ("Art. 5\u2011 Le bureau se réunit.", "5"),  # a word processor's non-breaking hyphen
        ("Art. 12 bis.\u2013 Les statuts sont modifiés.", "12 bis"),
        ("Art. 12 du code du sport prévoit", None),  # a sentence about another text
    ],
)
def test_run_in_articles_give_their_number(line: str, number: str | None) -> None:
    assert paragraph_article(line) == number


def test_run_in_articles_open_their_passage_and_are_cited(tmp_path: Path, counter: TokenCounter) -> None:
    body = (
        "Il peut être transféré en tout autre lieu du département par simple décision du conseil "
        "d'administration, ratifiée par la prochaine assemblée générale."
    )
    path = word_export_pdf(
        tmp_path / "statuts.pdf",
        [
            "Statuts de l'association",
            "Art 1er- Il est fondé entre les adhérents aux présents statuts une association régie par la loi du "
            "1er juillet 1901, ayant pour titre Club d'échecs de la vallée.",
            body,
            "Art. 7.- Le siège social est fixé à la mairie de la commune.",
            body,
            "Art.8.\u2011 L'association se compose de membres actifs et de membres d'honneur.",
            body,
        ],
    )
    result = chunked(path, counter)
    # The title, too short for a passage, opens article 1's.
    assert [(child.text[:6], child.article_num) for child in result.children] == [
        ("Statut", "1"), ("Art. 7", "7"), ("Art.8.", "8"),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1.2. COUVERTURE RADIOÉLECTRIQUE", True),
        ("9.2.1. PRINCIPES GÉNÉRAUX", True),
        ("2. DISPONIBILITÉ", True),
        ("ARTICLE 4 - OBJET", True),
        ("2024. BILAN ANNUEL", False),  # a year
        ("1.2. La date de sa création ;", False),
        ("3. TCP/IP", False),
    ],
)
def test_numbered_titles_in_capitals(text: str, expected: bool) -> None:
    assert numbered_capitals(text) is expected


TITLE = (
    "CAHIER DES CHARGES ANNEXÉ À LA DÉCISION PORTANT AUTORISATION D'UTILISER DES FRÉQUENCES DANS LA BANDE "
    "700 MHZ POUR ÉTABLIR ET EXPLOITER UN RÉSEAU RADIOÉLECTRIQUE MOBILE OUVERT AU PUBLIC"
)
BODY = (
    "Le titulaire assure la couverture du territoire dans les conditions fixées par la présente décision. "
    "Il publie chaque année les cartes de couverture et les transmet à l'autorité avant le 31 mars."
)
SERIES = [
    "1. OBLIGATIONS DE COUVERTURE", "1.1. COUVERTURE DE LA POPULATION", "1.2. COUVERTURE RADIOÉLECTRIQUE",
    "2. QUALITÉ DE SERVICE", "2.1. PERMANENCE", "2.2. DISPONIBILITÉ", "9. SÉCURITÉ", "9.1. OBJET",
    "9.2. ORGANISATION", "9.2.1. PRINCIPES GÉNÉRAUX", "9.2.2. MOYENS",
]
ITEMS = ["- les zones blanches du programme gouvernemental", "- les axes routiers prioritaires du territoire"]


def cahier_des_charges(with_lists: bool) -> list[str]:
    """The title, then the series: a part's heading right over its first subpart's, the others after text."""
    paragraphs = [TITLE]
    for index, heading in enumerate(SERIES):
        paragraphs.append(heading)
        following = SERIES[index + 1] if index + 1 < len(SERIES) else ""
        if following.count(".") <= heading.count("."):
            paragraphs.append(BODY)
            paragraphs.extend(ITEMS if with_lists else ())
    return paragraphs


@pytest.mark.parametrize(("bold", "with_lists"), [(False, False), (False, True), (True, False), (True, True)])
def test_every_heading_of_a_numbered_series_in_capitals_is_found(tmp_path: Path, bold: bool, with_lists: bool) -> None:
    """Set in bold and glued to the heading above it ("9.2. ORGANISATION" over "9.2.1. PRINCIPES GÉNÉRAUX" made
    one heading), or in body type after a list ("2. QUALITÉ DE SERVICE" read as the list's third item)."""
    path = word_export_pdf(tmp_path / "cahier.pdf", cahier_des_charges(with_lists), bold=SERIES if bold else ())
    pages = extract_pages(path)
    headings = [page.text[b.char_start : b.char_end] for page in pages for b in page.blocks if b.kind == "heading"]
    depth = {heading: heading.split(" ")[0].count(".") for heading in SERIES}
    assert headings == [f"# {TITLE}", *(f"{'#' * depth[heading]} {heading}" for heading in SERIES)]


def test_a_long_title_in_capitals_is_the_document_s_first_heading_and_its_name(tmp_path: Path) -> None:
    path = word_export_pdf(tmp_path / "ARCEP_2015_1454.pdf", cahier_des_charges(False))
    pages = extract_pages(path)
    assert pages[0].text.startswith(f"# {TITLE}\n\n# 1. OBLIGATIONS DE COUVERTURE")
    assert document_title(inspect_pdf(path, f"fr/{path.name}"), pages) == TITLE


@pytest.mark.parametrize(
    ("text", "lines", "expected"),
    [
        (TITLE, 3, True),
        ("RÈGLEMENT INTÉRIEUR", 1, False),  # short: a heading by the capitals rule already
        ("LE PRÉSENT DOCUMENT EST CONFIDENTIEL ET NE PEUT ÊTRE REPRODUIT SANS L'ACCORD DE L'AUTEUR.", 3, False),
        ("TABLE 4: STATE-WISE DECADAL GROWTH RATE OF POPULATION IN THE STATES AND UNION TERRITORIES", 3, False),
        ("A1 B1 C1 D1 E1 F1 C2 D2 F2 C3 D3 F3", 3, False),
        ("TITRE II DISPOSITIONS RELATIVES AUX ORGANES DISCIPLINAIRES DE PREMIÈRE INSTANCE ET D'APPEL", 3, False),
    ],
)
def test_a_long_title_is_no_sentence_caption_part_or_grid(text: str, lines: int, expected: bool) -> None:
    assert reads_as_long_title(text, lines) is expected


def test_labels_read_without_a_space_or_with_a_word_processor_s_dash() -> None:
    assert read_label("Art.7.- Le siège") is not None and read_label("Art.7.- Le siège").number == "7"
    assert read_label("6 \u2011 Sanctions") is not None and read_label("6 \u2011 Sanctions").number == "6"


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("# TITRE II\n\n### Article 5\n\nLa licence est délivrée.", "TITRE II Article 5 La licence est délivrée."),
        ("Sanctions :\n- l'avertissement ;\n- le blâme.", "Sanctions : l'avertissement ; le blâme."),
        ("\\1. Un paragraphe ouvert par un nombre.", "1. Un paragraphe ouvert par un nombre."),
        ("| Lettre | Ressource |\n|---|---|\n| a) | Revenu |", "| Lettre | Ressource | | a) | Revenu |"),
        ("```\nx <- 1:10\n```", "x <- 1:10"),
        ("-5 degrés, 3 - 2 = 1", "-5 degrés, 3 - 2 = 1"),  # no mark: a sign, a minus
    ],
)
def test_the_line_the_phone_embeds_holds_no_markdown_marks(text: str, line: str) -> None:
    assert line_text(text) == line
