"""Children start at the document's top sections and articles, and are filed under the headings they open with."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pocket_assets.core.chunking.chunker import ChunkedDocument, chunk_document
from pocket_assets.core.chunking.sections import build_section_index, heading_title
from pocket_assets.core.chunking.units import layout_document, top_heading_level
from pocket_assets.core.document import canonical_text
from pocket_assets.core.extract import extract_pages
from pocket_assets.core.pdf import inspect_pdf
from pocket_assets.core.policy import ChunkPolicy
from pocket_assets.core.records import PageRecord
from pocket_assets.core.tokenizer import TokenCounter, load_tokenizer
from pocket_assets_tests.core.chunker_documents import bare_device, build_pages, identity_for
from pocket_assets_tests.core.test_chunker_properties import SETTINGS, block, heading, paragraph

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
POLICY = ChunkPolicy(
    parent_tokens=400, parent_overlap=40, child_tokens=200, child_overlap=20, min_chars=20, page_mode="span",
    device=bare_device(260),
)
SENTENCE = "Le joueur ayant le trait touche une piece et doit la jouer si le coup est legal."


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return load_tokenizer()


def chunk(pages: tuple[PageRecord, ...], counter: TokenCounter, policy: ChunkPolicy = POLICY) -> ChunkedDocument:
    return chunk_document(identity_for(pages), pages, policy, counter)


def opening(result: ChunkedDocument, first_line: str):
    return next(child for child in result.children if child.text.split("\n")[0] == first_line)


@pytest.mark.parametrize(
    ("levels", "top"),
    [
        ([1, 1, 2, 2, 3, 3], 2),  # chapters and sections
        ([1, 2, 2, 3, 3, 4], 3),  # a title set once above them does not push the sections out
        ([2, 2, 3, 3], 3),  # levels offset by one
        ([3, 3, 3], 3),  # one recurring level
        ([1, 2], 2),  # nothing recurs: every heading
        ([], 0),
    ],
)
def test_top_heading_level_is_the_second_recurring_level(levels, top):
    assert top_heading_level(levels) == top


def test_a_chain_of_headings_opens_at_the_level_of_its_highest():
    """`Chapter 4` (a label an outline leaves out, set below the outline's levels) over `# The grid package`: the
    chain opens a top section, as its chapter heading does."""
    pages = build_pages(
        [
            [
                ("heading", "# 1 Base", 1), ("paragraph", SENTENCE, 0), ("heading", "## 1.1 abs", 2),
                ("paragraph", SENTENCE, 0), ("heading", "### Chapter 4", 3), ("heading", "# The grid package", 1),
                ("paragraph", SENTENCE, 0), ("heading", "## grid.layout", 2), ("paragraph", SENTENCE, 0),
            ]
        ]
    )
    chapter = canonical_text(pages).index("### Chapter 4")
    assert chapter in layout_document(pages).section_starts


def test_sections_short_enough_to_share_a_child_start_one_each(counter):
    pages = build_pages(
        [
            [
                ("heading", "# 2 Le jeu", 1),
                ("paragraph", SENTENCE, 0),
                ("heading", "## 2.1 Le toucher", 2),
                ("paragraph", SENTENCE, 0),
                ("heading", "### Exception", 3),
                ("paragraph", SENTENCE, 0),
                ("heading", "## 2.2 Le roque", 2),
                ("paragraph", SENTENCE, 0),
            ]
        ]
    )
    assert counter.count(canonical_text(pages)) < POLICY.child_tokens  # one child under the old rule
    result = chunk(pages, counter)
    assert [child.text.split("\n")[0] for child in result.children] == ["# 2 Le jeu", "## 2.1 Le toucher", "## 2.2 Le roque"]
    # A heading below the top levels that opens no article stays inside its section's child.
    assert opening(result, "## 2.1 Le toucher").section_path == ("2 Le jeu", "2.1 Le toucher")
    assert opening(result, "## 2.2 Le roque").section_path == ("2 Le jeu", "2.2 Le roque")
    assert opening(result, "## 2.2 Le roque").article_num == "2.2"


def test_a_child_opening_with_a_chain_of_headings_is_filed_under_the_innermost(counter):
    pages = build_pages(
        [
            [
                ("heading", "## TITRE Ier BUT", 1),
                ("heading", "### Article 4", 2),
                ("paragraph", SENTENCE, 0),
                ("heading", "## TITRE II OBJET", 1),
                ("heading", "### Article 5", 2),
                ("paragraph", "5.1 " + SENTENCE, 0),
            ]
        ]
    )
    result = chunk(pages, counter)
    titre = opening(result, "## TITRE II OBJET")
    assert titre.section_path == ("TITRE II OBJET", "Article 5")
    # The path, the article and the context header are read after the chain: Article 5, not the Article 4
    # in force at the child's first character.
    assert titre.article_num == "5"
    assert "Article 4" not in titre.context and "Article 5" in titre.context


def test_a_section_below_the_minimum_still_joins_a_neighbour(counter):
    policy = dataclasses.replace(POLICY, min_chars=60)
    pages = build_pages(
        [
            [
                ("heading", "# 1 Regles", 1),
                ("paragraph", SENTENCE, 0),
                ("heading", "# 2 Bref", 1),
                ("paragraph", "Voir 1.", 0),
                ("heading", "# 3 Fin", 1),
                ("paragraph", SENTENCE, 0),
            ]
        ]
    )
    result = chunk(pages, counter, policy)
    assert all(len(child.text) >= policy.min_chars for child in result.children)
    assert [child.text.split("\n")[0] for child in result.children] == ["# 1 Regles", "# 2 Bref"]
    assert "# 3 Fin" in result.children[1].text and result.children[1].section_path == ("2 Bref",)


def test_page_mode_children_start_at_sections_and_never_cross_a_page(counter):
    pages = build_pages(
        [
            [("heading", "# 1 Un", 1), ("paragraph", SENTENCE, 0), ("heading", "# 2 Deux", 1), ("paragraph", SENTENCE, 0)],
            [("paragraph", SENTENCE, 0), ("heading", "# 3 Trois", 1), ("paragraph", SENTENCE, 0)],
        ]
    )
    result = chunk(pages, counter, dataclasses.replace(POLICY, page_mode="pdf-page-v1"))
    assert [(child.pages, child.text.split("\n")[0]) for child in result.children] == [
        ((1,), "# 1 Un"),
        ((1,), "# 2 Deux"),
        ((2,), SENTENCE),
        ((2,), "# 3 Trois"),
    ]
    assert result.children[2].section_path == ("2 Deux",)


def test_several_sections_on_a_real_page_each_open_a_child(counter):
    """R-FAQ p. 32: "7 R Miscellanea" then four short sections; children held two or three of them."""
    path = REAL / "tex-several-sections-on-a-page.pdf"
    pages = extract_pages(path)
    for page_mode in ("pdf-page-v1", "span"):
        result = chunk_document(inspect_pdf(path, f"intl/{path.name}"), pages, ChunkPolicy(page_mode=page_mode), counter)
        paths = [child.section_path for child in result.children]
        assert [path[-1].split(" ")[0] for path in paths] == ["7.1", "7.2", "7.3", "7.4"]
        assert all(path[0] == "7 R Miscellanea" for path in paths)
        # The first child opens with "7 R Miscellanea" and "7.1 ...": it is filed under 7.1, article and all.
        assert [child.article_num for child in result.children] == ["7.1", "7.2", "7.3", "7.4"]
        assert result.children[0].text.startswith("# 7 R Miscellanea\n\n## 7.1 How can I set components")


headed_documents = st.lists(
    st.lists(st.one_of(heading, heading, paragraph, block), max_size=8), min_size=1, max_size=3
).map(build_pages)


@SETTINGS
@given(headed_documents, st.sampled_from(("span", "pdf-page-v1")))
def test_every_top_section_begins_a_child_unless_a_fragment_below_the_minimum_joined_it(pages, page_mode):
    """A top section's or an article's opening begins a child; where it does not, the child holding it took in a fragment
    shorter than `min_chars` on one side of it (the only reason to join) or it was left out with the text
    too short to chunk; every child is filed under the last heading of the chain it opens with."""
    counter = load_tokenizer()
    policy = dataclasses.replace(POLICY, parent_tokens=140, parent_overlap=24, child_tokens=64, child_overlap=12,
                                 device=bare_device(96), page_mode=page_mode)
    result = chunk_document(identity_for(pages), pages, policy, counter)
    text = canonical_text(pages)
    layout = layout_document(pages, build_section_index(pages).article_openings)
    starts = {child.char_start for child in result.children}
    for opening_at in layout.section_starts:
        if opening_at in starts or any(short.char_start <= opening_at < short.char_end for short in result.left_out):
            continue
        holders = [child for child in result.children if child.char_start < opening_at < child.char_end]
        assert holders, opening_at
        assert any(
            min(len(text[child.char_start : opening_at].strip()), len(text[opening_at : child.char_end].strip()))
            < policy.min_chars
            for child in holders
        ), (opening_at, text[opening_at : opening_at + 40])
    headings = [
        (page.char_start + b.char_start, page.char_start + b.char_end) for page in pages for b in page.blocks
        if b.kind == "heading"
    ]
    for child in result.children:
        chain = []
        position = child.char_start
        for start, end in headings:
            if start == position and end <= child.char_end:
                chain.append(heading_title(text[start:end]))
                rest = text[end : child.char_end]
                position = end + len(rest) - len(rest.lstrip())
        if chain:
            assert child.section_path[-1] == chain[-1], (child.text[:80], chain)
