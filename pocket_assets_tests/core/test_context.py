"""The context header: title fallbacks, path shortening, and the cap on the whole embedded string."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pocket_assets.core.chunking.chunker import chunk_document
from pocket_assets.core.chunking.context import (
    ContextHeaders,
    document_name,
    document_title,
    meaningful_title,
    readable_file_name,
    reads_as_title,
)
from pocket_assets.core.chunking.embed_text import count_embedded, text_to_embed
from pocket_assets.core.device import EMBEDDINGGEMMA_DOCUMENT_PROMPT, DeviceProfile
from pocket_assets.core.extract import extract_pages
from pocket_assets.core.policy import CONTEXT_HEADERS, ChunkPolicy
from pocket_assets.core.records import ChunkRecord, PdfIdentity
from pocket_assets.core.tables.extractive import ExtractiveSummarizer
from pocket_assets.core.tables.summaries import summarize_tables
from pocket_assets.core.tokenizer import TokenCounter, load_tokenizer
from pocket_assets_tests.core.chunker_documents import build_pages, identity_for, markdown_table

RAW = Path(__file__).resolve().parents[2] / "data" / "raw"
REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
SAMPLE_KEYS = ("fr/faq.pdf", "fr/f-array.pdf", "intl/R-data.pdf")


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return load_tokenizer()


def with_title(identity: PdfIdentity, title: str | None) -> PdfIdentity:
    return dataclasses.replace(identity, metadata={} if title is None else {"title": title})


# --- the title ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "junk",
    [
        None,
        "",
        "   ",
        "Microsoft Word - R01_Regles.docx",
        "Microsoft PowerPoint - cours",
        "R01_2025_26_Regles_generales.pdf",
        "regles.docx",
        "R01_2025_26_Regles_generales",
        "Sample Dexa Report.PDF",
        "Agriculture Statistics 2012-13..psd",
        "imagemagick-lzw\x00",
        "Untitled",
        "Sans titre",
        "Document1",
        "untitled-3",
        "Titre",
        "2025-26",
        "---",
    ],
)
def test_a_metadata_title_that_names_nothing_is_junk(junk: str | None) -> None:
    assert meaningful_title(junk) is None


def test_a_meaningful_metadata_title_is_kept_on_one_line_without_pipes() -> None:
    assert meaningful_title(" Foire aux  questions ") == "Foire aux questions"
    assert meaningful_title("Statuts | AAPPMA\n2025") == "Statuts / AAPPMA 2025"
    assert meaningful_title("R Data Import/Export") == "R Data Import/Export"
    assert meaningful_title("livre de cave juin 2018\x00") == "livre de cave juin 2018"


@pytest.mark.parametrize(
    ("source", "readable"),
    [
        ("R01_2025_26_Regles_generales.pdf", "R01 2025 26 Regles generales"),
        ("01_statuts-types-federations-sportives.pdf", "01 statuts types federations sportives"),
        ("faq.pdf", "faq"),
        ("___.pdf", "___.pdf"),
    ],
)
def test_the_file_name_made_readable(source: str, readable: str) -> None:
    assert readable_file_name(source) == readable


def test_the_title_falls_back_from_metadata_to_first_heading_to_file_name() -> None:
    pages = build_pages(
        [[("paragraph", "Texte avant tout titre.", 0), ("heading", "## Règles générales", 2)], [("heading", "# Autre", 1)]]
    )
    bare = build_pages([[("paragraph", "Un règlement sans aucun titre de section.", 0)]])
    identity = identity_for(pages, "fr/R01_2025_26_Regles_generales.pdf")
    assert document_title(with_title(identity, "Règlement intérieur"), pages) == "Règlement intérieur"
    assert document_title(with_title(identity, "Microsoft Word - R01.docx"), pages) == "Règles générales"
    assert document_title(with_title(identity, None), pages) == "Règles générales"
    assert document_title(with_title(identity, "Untitled"), bare) == "R01 2025 26 Regles generales"


def test_a_title_less_file_name_with_a_pipe_gives_a_header_without_one() -> None:
    """`a|b.pdf` must not put `|` in the context header: the schema refuses it, and the PDF would be left out."""
    bare = build_pages([[("paragraph", "Un règlement sans aucun titre de section.", 0)]])
    identity = with_title(identity_for(bare, "fr/statuts|annexe 2024.pdf"), None)
    assert document_title(identity, bare) == "statuts/annexe 2024"
    assert "|" not in document_name(identity, bare)


@pytest.mark.parametrize(
    "heading",
    [
        "Article 1er",  # corpus-regs 04: a regulation that opens on its first article
        "Article 1er Objet de la convention",  # 05
        "TITRE Ier DISPOSITIONS GÉNÉRALES",  # 02
        "Objet",  # 08: one word names a section
        "Préambule",
        "1 Introduction",  # a manual's first chapter
        "Chapitre 3 Forfaits",
        "FAQ",
    ],
)
def test_a_first_heading_that_opens_a_part_is_not_a_title(heading: str) -> None:
    assert not reads_as_title(heading)


@pytest.mark.parametrize(
    "heading",
    ["STATUTS TYPES DES FÉDÉRATIONS SPORTIVES AGRÉÉES", "CONVENTION DE FORMATION", "R Data Import/Export"],
)
def test_a_first_heading_that_names_the_document_is_a_title(heading: str) -> None:
    assert reads_as_title(heading)


@pytest.mark.parametrize(
    ("fixture", "key", "title"),
    [
        # Cut from corpus-regs (SOURCES.md), without metadata titles: the first opens on "Article 1er",
        # the second on "Objet", the third on "TITRE Ier DISPOSITIONS GÉNÉRALES", the fourth on its title.
        ("regs-two-column.pdf", "fr/04_reglement-disciplinaire-type-2004.pdf", "04 reglement disciplinaire type 2004"),
        ("regs-two-column-subheads.pdf", "fr/08_statuts-chasseurs.pdf", "08 statuts chasseurs"),
        ("regs-same-size-numbered.pdf", "fr/02_dispositions-obligatoires.pdf", "02 dispositions obligatoires"),
        ("regs-word-titre-article.pdf", "fr/01_statuts-types.pdf", "STATUTS TYPES DES FÉDÉRATIONS SPORTIVES AGRÉÉES"),
    ],
)
def test_a_regulation_without_metadata_title_is_named_by_its_title_heading_or_file(
    fixture: str, key: str, title: str
) -> None:
    pages = tuple(extract_pages(REAL / fixture))
    assert document_title(with_title(identity_for(pages, key), None), pages) == title


@pytest.mark.parametrize(
    ("source", "title", "name"),
    [
        # The file name's words the title lacks follow it in brackets: a number, a year, an acronym.
        (
            "03_reglement-disciplinaire-type-2002.pdf",
            "Règlement disciplinaire type des fédérations sportives agréées",
            "Règlement disciplinaire type des fédérations sportives agréées (03 2002)",
        ),
        ("faq.pdf", "Foire aux questions", "Foire aux questions (faq)"),
        ("R-data.pdf", "R Data Import/Export", "R Data Import/Export"),  # every word already said
        ("f-array.pdf", "Une nouvelle écriture de array", "Une nouvelle écriture de array"),  # "f" is too short
        ("R01_2025_26_Regles_generales.pdf", "Microsoft Word - R01.docx", "R01 2025 26 Regles generales"),
        ("Reglement_Regles_2025.pdf", "Règles du jeu", "Règles du jeu (Reglement 2025)"),  # accents and case folded
    ],
)
def test_the_document_is_named_by_its_title_and_the_file_name_words_it_lacks(
    source: str, title: str, name: str
) -> None:
    identity = PdfIdentity(f"fr/{source}", "fr", source, "0" * 64, 0, 1, metadata={"title": title})
    assert document_name(identity, ()) == name


# --- the header -----------------------------------------------------------------------------


def headers(counter: TokenCounter, setting: str = "title+section", max_tokens: int = 40) -> ContextHeaders:
    policy = ChunkPolicy(context_header=setting, context_max_tokens=max_tokens)
    return ContextHeaders(title="Règles générales", setting=setting, max_tokens=policy.header_tokens, counter=counter)


def test_each_setting_gives_its_header(counter: TokenCounter) -> None:
    path = ("Règles générales", "Chapitre 3 Forfaits")
    assert headers(counter, "none").header(path, "3.2") == ""
    assert headers(counter, "title").header(path, "3.2") == "Règles générales"
    # The first heading repeating the title is not said twice.
    assert headers(counter).header(path, "3.2") == "Règles générales > Chapitre 3 Forfaits > Art. 3.2"
    assert headers(counter).header((), None) == "Règles générales"


def test_an_article_the_deepest_heading_names_is_not_repeated(counter: TokenCounter) -> None:
    assert headers(counter).header(("Titre II", "Article 12 Sanctions"), "12") == "Règles générales > Titre II > Article 12 Sanctions"
    assert headers(counter).header(("Titre II", "3.2 Forfaits"), "3.2") == "Règles générales > Titre II > 3.2 Forfaits"


def test_a_path_ending_in_another_article_does_not_contradict_it(counter: TokenCounter) -> None:
    # A chunk that opens ARTICLE 29 after the end of article 28 is filed under 29 and cited as 28.
    assert headers(counter).header(("TITRE VI ADHÉSION", "ARTICLE 29"), "28") == (
        "Règles générales > TITRE VI ADHÉSION > ARTICLE 29"
    )
    assert headers(counter).header(("1 Notions de base", "1.7 Fontes et codages"), "1.6") == (
        "Règles générales > 1 Notions de base > 1.7 Fontes et codages"
    )
    # A path that names the article higher up does not repeat it.
    assert headers(counter).header(("4 The preamble", "4.1 The character class", "\\@testpach"), "4.1") == (
        "Règles générales > 4 The preamble > 4.1 The character class > \\@testpach"
    )
    # A path that names no article keeps the article in force.
    assert headers(counter).header(("TITRE II", "Chapitre 3 Forfaits"), "12") == (
        "Règles générales > TITRE II > Chapitre 3 Forfaits > Art. 12"
    )


def test_a_deep_path_is_shortened_from_the_middle(counter: TokenCounter) -> None:
    path = tuple(f"Niveau {depth} des dispositions relatives aux compétitions" for depth in range(1, 7))
    header = headers(counter, max_tokens=40).header(path, "4.1")
    assert header.startswith("Règles générales > Niveau 1 des dispositions relatives aux compétitions > … > ")
    assert header.endswith("Niveau 6 des dispositions relatives aux compétitions > Art. 4.1")
    assert counter.count(header) <= 40


def test_a_title_longer_than_the_bound_is_cut_with_an_ellipsis(counter: TokenCounter) -> None:
    long_title = " ".join(["Règlement intérieur de la fédération française des échecs"] * 6)
    builder = ContextHeaders(title=long_title, setting="title+section", max_tokens=12, counter=counter)
    header = builder.header(("Chapitre 1",), "1.1")
    assert header.endswith("…") and counter.count(header) <= 12 and header.startswith("Règlement intérieur")


# --- the cap on the whole embedded string ---------------------------------------------------

WORDS = ("arbitre", "joueur", "pendule", "forfait", "championnat", "compétition", "data", "de", "é", "3.2")
words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=14).map(" ".join)
long_words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=80).map(" ".join)
paragraph = st.lists(words, min_size=1, max_size=10).map(lambda items: ("paragraph", ". ".join(items) + ".", 0))
heading = st.tuples(st.integers(1, 4), long_words).map(lambda pair: ("heading", "#" * pair[0] + " " + pair[1], pair[0]))
article = words.map(lambda text: ("paragraph", f"4.1.2 {text}.", 0))
table = st.tuples(st.integers(1, 8), st.integers(1, 3)).map(lambda size: ("table", markdown_table(*size), 0))
block = st.one_of(paragraph, paragraph, heading, heading, article, table)
documents = st.lists(st.lists(block, min_size=1, max_size=8), min_size=1, max_size=3).map(build_pages)
titles = st.one_of(st.none(), st.just("Microsoft Word - x.docx"), long_words)
policies = st.builds(
    ChunkPolicy,
    parent_tokens=st.just(160),
    parent_overlap=st.just(20),
    child_tokens=st.sampled_from((64, 100)),
    child_overlap=st.just(10),
    min_chars=st.just(20),
    device=st.builds(
        DeviceProfile,
        embed_max_tokens=st.sampled_from((128, 192)),
        document_prompt=st.sampled_from(("", "title: {title} | text: ", EMBEDDINGGEMMA_DOCUMENT_PROMPT)),
    ),
    context_header=st.sampled_from(CONTEXT_HEADERS),
    context_max_tokens=st.sampled_from((4, 16, 40)),
)


def embedded_counts(chunks: list[ChunkRecord], policy: ChunkPolicy, counter: TokenCounter) -> list[int]:
    strings = [text_to_embed(c.text, c.source, c.page, policy.device.document_prompt, c.context) for c in chunks]
    return count_embedded(counter, strings, policy.device)


def check_cap(chunks: list[ChunkRecord], policy: ChunkPolicy, counter: TokenCounter) -> None:
    counts = embedded_counts(chunks, policy, counter)
    assert counts == [chunk.embedded_tokens for chunk in chunks]
    assert all(count <= policy.max_tokens for count in counts)
    headers_tokens = counter.count_batch([chunk.context for chunk in chunks])
    assert all(tokens <= policy.header_tokens for tokens in headers_tokens)
    assert all(bool(chunk.context) == (policy.context_header != "none") for chunk in chunks)
    assert all("|" not in chunk.context and "\n" not in chunk.context for chunk in chunks)


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(documents, titles, policies)
def test_the_embedded_string_never_exceeds_the_cap(pages, title, policy: ChunkPolicy) -> None:
    counter = load_tokenizer()
    identity = with_title(identity_for(pages, "fr/R01_2025_26_Regles_generales_et_dispositions_diverses.pdf"), title)
    document = chunk_document(identity, pages, policy, counter)
    summaries = summarize_tables(
        identity, pages, document.parents, policy, counter, ExtractiveSummarizer(counter), children=document.children
    )
    check_cap([*document.children, *summaries.chunks], policy, counter)
    assert all(parent.context == "" and parent.embedded_tokens == 0 for parent in document.parents)


@pytest.mark.parametrize("setting", CONTEXT_HEADERS)
def test_the_embedded_string_never_exceeds_the_cap_on_the_sample_corpus(counter: TokenCounter, setting: str) -> None:
    from pocket_assets.core.extract import extract_pages
    from pocket_assets.core.pdf import inspect_pdf

    policy = ChunkPolicy(context_header=setting)
    for key in SAMPLE_KEYS:
        identity, pages = inspect_pdf(RAW / key, key), extract_pages(RAW / key)
        document = chunk_document(identity, pages, policy, counter)
        summaries = summarize_tables(
            identity, pages, document.parents, policy, counter, ExtractiveSummarizer(counter), children=document.children
        )
        check_cap([*document.children, *summaries.chunks], policy, counter)
