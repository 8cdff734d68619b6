"""What a maintainer reads about one PDF: a preview that shows the document, gate findings with their text."""

from __future__ import annotations

import dataclasses

from pocket_assets.core.chunking.embed_text import sdk_line
from pocket_assets.core.quality.chunk_stats import PREVIEW_CHUNKS, preview_markdown, preview_selection, spread
from pocket_assets.core.quality.gate_findings import findings_from_json, findings_to_json, gate_findings
from pocket_assets.core.records import ChunkRecord
from pocket_assets_tests.core.test_validation import by_id, make_chunk, make_chunks, make_pages, run


def a_long_document(pages: int = 30) -> list[ChunkRecord]:
    """Two children per page (each long enough to show), and one table summary on page 25."""
    chunks = [
        dataclasses.replace(
            make_chunk(f"doc-p{page:03d}-c{index}", f"Page {page}, passage {index}: " + "texte " * 20, "child", page),
            chunk_index=2 * (page - 1) + index,
        )
        for page in range(1, pages + 1)
        for index in range(2)
    ]
    return chunks + [make_chunk("doc-p025-table1", "Tableau des rondes et des horaires " * 3, "table_summary", 25)]


def test_preview_spreads_over_the_document_its_tables_and_warnings() -> None:
    chunks = a_long_document()
    chosen = preview_selection(chunks, warned_pages={17})
    assert len(chosen) == PREVIEW_CHUNKS
    pages = [chunk.page for chunk in chosen]
    assert pages == sorted(pages), "in document order"
    assert 1 in pages and 30 in pages and 17 in pages, "first and last pages, and the page with warnings"
    assert "doc-p025-table1" in {chunk.id for chunk in chosen}, "the table"
    assert len(set(pages)) >= PREVIEW_CHUNKS - 1, "not the first chunks of one page"


def test_preview_shows_each_chunk_as_the_phone_reads_it() -> None:
    chunks = a_long_document(pages=2)
    markdown = preview_markdown(chunks, warned_pages={2})
    for chunk in chunks:
        assert f"**{chunk.id}** · page {chunk.page} · {chunk.tokens} tokens" in markdown
        assert sdk_line(chunk.text, chunk.source, chunk.page, chunk.context) in markdown
    assert "page has warnings" in markdown


def test_spread_keeps_both_ends() -> None:
    items = a_long_document()[:10]
    assert spread(items, 3) == [items[0], items[4], items[9]] or spread(items, 3) == [items[0], items[5], items[9]]
    assert spread(items, 20) == items and spread(items, 0) == []


def test_gate_findings_quote_the_start_of_the_offending_text(gates) -> None:
    pages = make_pages()
    chunks = make_chunks(pages)
    dropped = by_id(chunks, "child", 3)
    kept = [chunk for chunk in chunks if chunk is not dropped]
    (finding,) = gate_findings(run(gates, kept), kept, pages)
    (offender,) = finding.offenders
    assert (finding.gate, offender.page) == ("coverage", 2)
    assert dropped.text.split()[0] in offender.text and offender.text.startswith(" ".join(dropped.text.split())[:20])
    assert findings_from_json(findings_to_json([finding])) == [finding], "kept in a manifest and read back"


def test_gate_findings_name_a_broken_chunk_with_its_text(gates) -> None:
    pages = make_pages()
    chunks = make_chunks(pages)
    broken = by_id(chunks, "child", 0)
    chunks = [dataclasses.replace(c, tokens=900) if c is broken else c for c in chunks]
    (finding,) = gate_findings(run(gates, chunks), chunks, pages)
    assert finding.offenders[0].label == broken.id
    assert finding.offenders[0].text.startswith(" ".join(broken.text.split())[:20])
