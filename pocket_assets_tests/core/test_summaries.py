"""Extractive summaries and `summarize_tables`: records, links to parents, cap, cache, determinism."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Sequence

import pytest

from pocket_assets.core import ids
from pocket_assets.core.chunking.chunker import chunk_document
from pocket_assets.core.chunking.embed_text import text_to_embed
from pocket_assets.core.device import EMBEDDINGGEMMA_SPECIAL_TOKENS, DeviceProfile
from pocket_assets.core.document import PageContent, assemble_pages, canonical_text
from pocket_assets.core.policy import ChunkPolicy
from pocket_assets.core.records import (
    Block,
    ChunkPlace,
    ChunkRecord,
    ContentFeatures,
    PageRecord,
    PdfIdentity,
    PlacedChunk,
    TableCells,
    chunk_place_from_dict,
    to_dict,
)
from pocket_assets.core.tables.cache import SummaryCache
from pocket_assets.core.tables.extractive import ExtractiveSummarizer
from pocket_assets.core.tables.summaries import (
    cells_from_markdown,
    document_language,
    has_table_blocks,
    summarize_tables,
)
from pocket_assets.core.tables.summarizer import SummaryError, TableContext
from pocket_assets.core.tokenizer import TokenCounter, load_tokenizer
from pocket_assets_tests.core.test_table_types import ARRAY_CLASSES, UCB_ADMISSIONS

IDENTITY = PdfIdentity(
    partition_key="fr/A02_Championnat_de_France_des_Clubs.pdf",
    corpus="fr",
    source="A02_Championnat_de_France_des_Clubs.pdf",
    sha256="0" * 64,
    size_bytes=1000,
    page_count=2,
)
CALENDAR = TableCells(
    header=("Ronde", "Date", "Horaire"),
    rows=(("1", "12/10/2025", "14h00"), ("2", "16/11/2025", "14h00"), ("3", "7/12/2025", "14h00")),
)
MATCH_POINTS = TableCells(
    header=("Résultat du match", "Points"),
    rows=(("Victoire", "3"), ("Match nul", "2"), ("Défaite", "1"), ("Forfait", "0")),
)


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return load_tokenizer()


def pipe(cells: TableCells) -> str:
    lines = [cells.header, *cells.rows]
    return "\n".join(
        ["| " + " | ".join(lines[0]) + " |", "|" + "---|" * len(cells.header)]
        + ["| " + " | ".join(row) + " |" for row in lines[1:]]
    )


def page_content(number: int, parts: list[tuple[str, str, TableCells | None]]) -> PageContent:
    """A page from (kind, text, cells) parts joined by blank lines, with each part's block."""
    text, blocks = "", []
    for kind, part, cells in parts:
        if text:
            text += "\n\n"
        level = part.count("#", 0, 4) if kind == "heading" else 0
        blocks.append(Block(kind, len(text), len(text) + len(part), level=level, table=cells))
        text += part
    return PageContent(number, text, tuple(blocks))


def build_pages() -> tuple[PageRecord, ...]:
    """Two pages of a French regulation: a calendar on page 1, the match points on page 2."""
    return assemble_pages(
        [
            page_content(
                1,
                [
                    ("heading", "## 3.2 Calendrier des rondes", None),
                    (
                        "paragraph",
                        "Le championnat se joue en trois rondes, le dimanche, dans la salle du club qui reçoit.",
                        None,
                    ),
                    ("table", pipe(CALENDAR), CALENDAR),
                    ("paragraph", "Les horaires sont ceux du club qui reçoit pour la ronde et pour le match.", None),
                ],
            ),
            page_content(
                2,
                [
                    ("heading", "## 3.3 Décompte des points", None),
                    ("paragraph", "Tableau 4 - Points de match attribués aux équipes", None),
                    ("table", pipe(MATCH_POINTS), MATCH_POINTS),
                ],
            ),
        ]
    )


def parent(index: int, start: int, end: int, pages: tuple[PageRecord, ...], section: str) -> ChunkRecord:
    text = canonical_text(pages)[start:end]
    page = next(record.page for record in pages if record.char_start <= start <= record.char_end)
    record_id = ids.parent_id(IDENTITY.source, page, index)
    document_id = ids.document_uuid(IDENTITY.partition_key)
    # A canonical place without a block: its revision is the document's, as the chunker's.
    revision = ids.revision8(canonical_text(pages))
    canonical = ids.canonical_place(ids.doc_uid(IDENTITY.partition_key), revision, section[:3], page)
    return ChunkRecord(
        id=record_id, text=text, source=IDENTITY.source, corpus="fr", chunk_type="parent", page=page,
        pages=(page,), tokens=10, section=section, section_path=(section,), section_id=section[:3],
        article_num=section[:3], parent_id=None, table_type=None, char_start=start, char_end=end,
        line_from=1, line_to=1, chunk_uid=ids.chunk_uuid(document_id, record_id), document_id=document_id,
        canonical_id=canonical, hash=ids.content_hash(text), anchor="", chunk_index=index, total_chunks=3,
        has_overlap_previous=False, has_overlap_next=False, content_type="mixed",
        content_features=ContentFeatures(), chunker_version="pocket-hier-v1", policy_hash="0" * 16,
    )  # fmt: skip


def build_parents(pages: tuple[PageRecord, ...]) -> tuple[ChunkRecord, ...]:
    """Three overlapping parents; the table of page 2 starts inside both the second and the third."""
    second_table = pages[1].char_start + pages[1].blocks[2].char_start
    return (
        parent(0, 0, pages[0].char_end, pages, "3.2 Calendrier des rondes"),
        parent(1, pages[0].char_end - 20, second_table + 30, pages, "3.3 Décompte des points"),
        parent(2, second_table - 10, pages[1].char_end, pages, "3.3 Décompte des points (suite)"),
    )


def context(cells: TableCells, language: str, title: str | None = None) -> TableContext:
    return TableContext("x.pdf", 3, 0, language, title, cells, pipe(cells))


def test_extractive_summary_in_french_names_title_shape_columns_and_keys(counter: TokenCounter) -> None:
    summary = ExtractiveSummarizer(counter).summarize(context(CALENDAR, "fr", "3.2 Calendrier des rondes"))
    assert summary.text == (
        "Tableau « 3.2 Calendrier des rondes » de 3 lignes et 3 colonnes : Ronde, Date et Horaire ; Ronde : 1, 2 et 3."
    )
    assert (summary.requests, summary.fallback) == (0, None)


def test_extractive_summary_in_english_on_a_real_sample_table(counter: TokenCounter) -> None:
    summary = ExtractiveSummarizer(counter).summarize(context(UCB_ADMISSIONS, "en", "UCBAdmissions"))
    assert summary.text == (
        'Table "UCBAdmissions" with 4 rows and 9 columns: Admit, Gender, Dept, A, B, C, D, E and F; '
        "Admit: Admitted and Rejected."
    )


@pytest.mark.parametrize("target", [50, 80])
def test_extractive_summary_grows_to_about_its_target(counter: TokenCounter, target: int) -> None:
    wide = TableCells(
        header=tuple(f"Colonne {index}" for index in range(12)),
        rows=tuple((f"Équipe {index}", *("x" * 11)) for index in range(40)),
    )
    text = ExtractiveSummarizer(counter, target_tokens=target).summarize(context(wide, "fr", "Équipes")).text
    assert target - 12 <= counter.count(text) <= target
    assert len(text) >= 50


def test_a_tiny_table_still_gets_fifty_characters(counter: TokenCounter) -> None:
    tiny = TableCells(header=("a",), rows=(("b",),))
    for language in ("fr", "en"):
        assert len(ExtractiveSummarizer(counter).summarize(context(tiny, language)).text) >= 50


def test_the_key_column_is_the_first_holding_words(counter: TokenCounter) -> None:
    text = ExtractiveSummarizer(counter).summarize(context(ARRAY_CLASSES, "fr")).text
    assert "token : c, l et r" in text


def test_language_follows_the_corpus_unless_the_text_clearly_differs() -> None:
    english = "The table of results is given in the appendix and the rules are for all of the events. " * 3
    assert document_language("fr", "Le calendrier des rondes est fixé par la direction.") == "fr"
    assert document_language("intl", "") == "en"
    assert document_language("fr", english) == "en"
    assert document_language("intl", "Les résultats de la ronde sont publiés sur le site et dans la salle " * 3) == "fr"


def test_cells_are_read_back_from_a_pipe_table() -> None:
    assert cells_from_markdown(pipe(CALENDAR)) == CALENDAR


def test_summarize_tables_makes_one_linked_record_per_table(counter: TokenCounter) -> None:
    pages = build_pages()
    parents = build_parents(pages)
    policy = ChunkPolicy()
    batch = summarize_tables(IDENTITY, pages, parents, policy, counter, ExtractiveSummarizer(counter))
    text = canonical_text(pages)
    calendar, points = batch.chunks
    assert [chunk.id for chunk in batch.chunks] == [
        "A02_Championnat_de_France_des_Clubs.pdf-p001-table000",
        "A02_Championnat_de_France_des_Clubs.pdf-p002-table001",
    ]
    assert calendar.text.startswith("Tableau « 3.2 Calendrier des rondes » de 3 lignes")
    assert points.text.startswith("Tableau « Tableau 4 - Points de match attribués aux équipes »")
    assert (calendar.table_type, points.table_type) == ("schedule", "scoring")
    assert (calendar.parent_id, points.parent_id) == (parents[0].id, parents[1].id)
    # Filed by the document's heading tree at the table (the second heading: dot path 2), not by its parent.
    assert points.section == "3.3 Décompte des points" and points.section_id == "2"
    for chunk, cells in ((calendar, CALENDAR), (points, MATCH_POINTS)):
        assert text[chunk.char_start : chunk.char_end] == pipe(cells)
        lines = text.splitlines()
        assert lines[chunk.line_from - 1] == pipe(cells).splitlines()[0]
        assert lines[chunk.line_to - 1] == pipe(cells).splitlines()[-1]
        assert chunk.pages == (chunk.page,) and chunk.chunk_type == "table_summary"
        assert chunk.tokens == counter.count(chunk.text) and len(chunk.text) >= 50
        embedded = text_to_embed(chunk.text, chunk.source, chunk.page, policy.device.document_prompt, chunk.context)
        assert chunk.embedded_tokens == counter.count(embedded) + policy.device.special_tokens <= policy.max_tokens
        assert chunk.content_type == "table" and chunk.content_features == ContentFeatures(table_count=1)
        assert chunk.hash == ids.content_hash(chunk.text)
        assert chunk.chunk_uid == ids.chunk_uuid(ids.document_uuid(IDENTITY.partition_key), chunk.id)
        assert (chunk.chunker_version, chunk.policy_hash) == (policy.chunker_version, policy.policy_hash)
    assert [(chunk.chunk_index, chunk.total_chunks) for chunk in batch.chunks] == [(0, 2), (1, 2)]
    assert calendar.canonical_id.endswith("|p=001|b=000")  # the test parents use no block
    # The revision read back from the holding parent is the hash of the document's text.
    assert ids.canonical_revision(calendar.canonical_id) == ids.revision8(text)
    stats = batch.stats
    assert (stats.tables, stats.summaries, stats.cache_hits, stats.llm_calls) == (2, 2, 0, 0)
    assert stats.tables_per_page == {1: 1, 2: 1}
    assert stats.table_types == {"schedule": 1, "scoring": 1}
    assert stats.fallbacks == ()


def test_summaries_are_deterministic_and_cached(counter: TokenCounter, tmp_path: Path) -> None:
    pages = build_pages()
    parents = build_parents(pages)
    cache = SummaryCache(tmp_path)
    summarizer = ExtractiveSummarizer(counter)
    first = summarize_tables(IDENTITY, pages, parents, ChunkPolicy(), counter, summarizer, cache)
    second = summarize_tables(IDENTITY, pages, parents, ChunkPolicy(), counter, summarizer, SummaryCache(tmp_path))
    assert first.chunks == second.chunks
    assert (first.stats.cache_hits, second.stats.cache_hits, len(cache)) == (0, 2, 2)


@pytest.mark.parametrize("context_header", ["none", "title+section"])
def test_a_summary_is_trimmed_to_the_embedding_cap(counter: TokenCounter, context_header: str) -> None:
    pages = build_pages()
    prompt = "title: {title} | text: "
    # Prompt, citation and special tokens alone.
    overhead = counter.count(text_to_embed("", IDENTITY.source, 1, prompt)) + EMBEDDINGGEMMA_SPECIAL_TOKENS
    header_room = 0 if context_header == "none" else 24  # what the header may take (header_tokens below)
    policy = ChunkPolicy(
        device=DeviceProfile(embed_max_tokens=overhead + header_room + 20, document_prompt=prompt),
        context_header=context_header,
        context_max_tokens=max(header_room - 4, 4),
    )
    summarizer = ExtractiveSummarizer(counter, target_tokens=80)
    batch = summarize_tables(IDENTITY, pages, build_parents(pages), policy, counter, summarizer)
    for chunk in batch.chunks:
        assert bool(chunk.context) == (context_header != "none")
        embedded = text_to_embed(chunk.text, chunk.source, chunk.page, prompt, chunk.context)
        counted = counter.count(embedded) + EMBEDDINGGEMMA_SPECIAL_TOKENS
        assert policy.max_tokens - 3 <= counted == chunk.embedded_tokens <= policy.max_tokens
        assert chunk.text.endswith("…") and len(chunk.text) >= 50


def test_a_table_outside_every_parent_is_an_error_naming_it(counter: TokenCounter) -> None:
    pages = build_pages()
    with pytest.raises(SummaryError, match=r"A02_Championnat_de_France_des_Clubs.pdf, page 2, table 1: no parent"):
        summarize_tables(
            IDENTITY, pages, build_parents(pages)[:1], ChunkPolicy(), counter, ExtractiveSummarizer(counter)
        )


def test_a_document_without_tables_gives_no_summary(counter: TokenCounter) -> None:
    pages = assemble_pages([page_content(1, [("paragraph", "Aucun tableau sur cette page de règlement.", None)])])
    batch = summarize_tables(IDENTITY, pages, (), ChunkPolicy(), counter, ExtractiveSummarizer(counter))
    assert batch.chunks == () and batch.stats.tables_per_page == {}


def test_with_the_real_chunker_every_summary_resolves_to_a_parent(counter: TokenCounter) -> None:
    from pocket_assets.core.chunking.chunker import chunk_document

    pages = build_pages()
    policy = dataclasses.replace(ChunkPolicy(), parent_tokens=64, parent_overlap=8, child_tokens=32, child_overlap=4)
    parents = chunk_document(IDENTITY, pages, policy, counter).parents
    batch = summarize_tables(IDENTITY, pages, parents, policy, counter, ExtractiveSummarizer(counter))
    by_id = {record.id: record for record in parents}
    for chunk in batch.chunks:
        holder = by_id[chunk.parent_id]
        assert holder.char_start <= chunk.char_start < holder.char_end


def test_summary_canonical_ids_never_take_a_chunk_s_block(counter: TokenCounter) -> None:
    """Summaries number their blocks after the parents' and children's in the same section and page."""
    pages = build_pages()
    chunked = chunk_document(IDENTITY, pages, ChunkPolicy(), counter)
    batch = summarize_tables(
        IDENTITY,
        pages,
        chunked.parents,
        ChunkPolicy(),
        counter,
        ExtractiveSummarizer(counter),
        children=chunked.children,
    )
    records = [*chunked.parents, *chunked.children, *batch.chunks]
    assert len({record.canonical_id for record in records}) == len(records)
    for summary in batch.chunks:
        place = ids.split_canonical_id(summary.canonical_id)[0]
        same_place = [
            record
            for record in chunked.parents + chunked.children
            if ids.split_canonical_id(record.canonical_id)[0] == place
        ]
        assert same_place, "the summary shares its section and page with the chunks around its table"


def test_a_document_without_table_blocks_is_summarized_without_its_chunks(counter: TokenCounter) -> None:
    """The step reads a PDF's chunk places only when `has_table_blocks`: without, nothing reads them."""
    with_tables = build_pages()
    pages = assemble_pages([page_content(1, [("heading", "# Objet", None), ("paragraph", "Aucun tableau ici.", None)])])
    assert has_table_blocks(with_tables) and not has_table_blocks(pages)
    chunked = chunk_document(IDENTITY, pages, ChunkPolicy(), counter)
    batch = summarize_tables(IDENTITY, pages, [], ChunkPolicy(), counter, ExtractiveSummarizer(counter))
    assert batch == summarize_tables(
        IDENTITY, pages, chunked.parents, ChunkPolicy(), counter, ExtractiveSummarizer(counter), children=chunked.children
    )
    assert batch.chunks == () and batch.stats.tables == 0


def test_a_table_whose_cells_are_empty_or_unreadable_gets_no_summary(counter: TokenCounter) -> None:
    notation = TableCells(header=("h", "", "ª"), rows=(("", "h", ""), ("ª", "", "h")))
    pages = assemble_pages([page_content(1, [("paragraph", "Hauteurs", None), ("table", pipe(notation), notation)])])
    batch = summarize_tables(IDENTITY, pages, (), ChunkPolicy(), counter, ExtractiveSummarizer(counter))
    assert batch.chunks == ()


def test_a_documents_new_summaries_are_cached_together_and_a_repeated_table_hits_its_twin(
    counter: TokenCounter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One cache transaction per document (each commit is a disk sync), with the per-table verdicts unchanged."""
    calendar_page = [("heading", "## 3.2 Calendrier des rondes", None), ("table", pipe(CALENDAR), CALENDAR)]
    pages = assemble_pages([page_content(1, calendar_page), page_content(2, calendar_page)])
    parents = (parent(0, 0, pages[-1].char_end, pages, "3.2 Calendrier des rondes"),)
    cache = SummaryCache(tmp_path)
    writes: list[int] = []
    put_many = cache.put_many
    monkeypatch.setattr(cache, "put_many", lambda entries: (writes.append(len(entries)), put_many(entries)))
    batch = summarize_tables(IDENTITY, pages, parents, ChunkPolicy(), counter, ExtractiveSummarizer(counter), cache)
    assert writes == [1] and len(cache) == 1
    assert batch.stats.cache_hits == 1 and len(batch.chunks) == 2


def test_summaries_from_the_chunks_places_are_those_from_the_whole_chunks(counter: TokenCounter) -> None:
    """The asset reads only `CHUNK_PLACE_FIELDS` of the stored parents and children, not their texts."""
    pages = build_pages()
    chunked = chunk_document(IDENTITY, pages, ChunkPolicy(), counter)

    def places(records: tuple[ChunkRecord, ...]) -> list[ChunkPlace]:
        return [chunk_place_from_dict(to_dict(record)) for record in records]

    def summaries(parents: Sequence[PlacedChunk], children: Sequence[PlacedChunk]) -> tuple[ChunkRecord, ...]:
        summarizer = ExtractiveSummarizer(counter)
        return summarize_tables(IDENTITY, pages, parents, ChunkPolicy(), counter, summarizer, children=children).chunks

    whole = summaries(chunked.parents, chunked.children)
    assert whole and summaries(places(chunked.parents), places(chunked.children)) == whole
