"""Text below the minimum on pages cut from real PDFs (fixtures/real/SOURCES.md): each class of text that
once made a chunk the gates refuse now passes every gate, joined to its neighbour or left out with a warning."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pocket_assets.core.chunking.chunker import ChunkedDocument, chunk_document
from pocket_assets.core.extract import extract_pages
from pocket_assets.core.pdf import inspect_pdf
from pocket_assets.core.policy import ChunkPolicy
from pocket_assets.core.quality.partition_gates import validate_partition
from pocket_assets.core.quality.suites import Gates, load_gates
from pocket_assets.core.records import PageRecord
from pocket_assets.core.tables.extractive import ExtractiveSummarizer
from pocket_assets.core.tables.summaries import summarize_tables
from pocket_assets.core.tokenizer import TokenCounter, load_tokenizer

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
EXPECTATIONS_DIR = Path(__file__).resolve().parents[2] / "expectations"
POLICY = ChunkPolicy()
SMALL_CHILDREN = ChunkPolicy(child_tokens=120, child_overlap=15)  # what CHUNK_SIZE_TOKENS=120 gives

# (fixture, policy): the classes of text once chunked below the minimum.
CASES = [
    ("title-page-then-text.pdf", POLICY),
    ("heading-alone-on-a-page.pdf", POLICY),
    ("running-header-alone-on-a-page.pdf", POLICY),
    ("unmapped-glyph-pages.pdf", POLICY),
    ("heading-before-a-block-too-big-to-share.pdf", POLICY),
    ("last-line-after-a-full-table.pdf", POLICY),
    ("table-rows-split-under-a-small-child.pdf", SMALL_CHILDREN),
    ("one-line-document.pdf", POLICY),
]


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return load_tokenizer()


@pytest.fixture(scope="module")
def gates() -> Gates:
    return load_gates(EXPECTATIONS_DIR)


def chunked(name: str, policy: ChunkPolicy, counter: TokenCounter) -> tuple[tuple[PageRecord, ...], ChunkedDocument]:
    path = REAL / name
    pages = extract_pages(path)
    return pages, chunk_document(inspect_pdf(path, f"intl/{name}"), pages, policy, counter)


@pytest.mark.parametrize("page_mode", ["pdf-page-v1", "span"])
@pytest.mark.parametrize(("name", "policy"), CASES, ids=[name for name, _ in CASES])
def test_every_gate_passes_and_no_chunk_is_below_the_minimum(name, policy, page_mode, counter, gates):
    policy = dataclasses.replace(policy, page_mode=page_mode)
    pages, result = chunked(name, policy, counter)
    identity = inspect_pdf(REAL / name, f"intl/{name}")
    summaries = summarize_tables(
        identity, pages, result.parents, policy, counter, ExtractiveSummarizer(counter), children=result.children
    ).chunks
    every = [*result.parents, *result.children, *summaries]
    assert all(len(record.text) >= policy.min_chars for record in every)
    report = validate_partition(gates, identity.partition_key, every, pages, policy)
    assert report.passed, report.failures()


@pytest.mark.parametrize(
    "name", ["title-page-then-text.pdf", "heading-alone-on-a-page.pdf", "running-header-alone-on-a-page.pdf"]
)
def test_page_mode_short_first_page_opens_the_next_pages_chunk_cited_by_that_page(name, counter):
    pages, result = chunked(name, POLICY, counter)
    assert len(pages[0].text.strip()) < POLICY.min_chars <= len(pages[1].text.strip())
    first = result.children[0]
    assert first.pages == (1, 2) and first.page == 2
    assert first.text.startswith(pages[0].text.strip())
    assert result.left_out == ()


def test_pages_of_unmapped_glyphs_join_until_the_minimum(counter):
    pages, result = chunked("unmapped-glyph-pages.pdf", POLICY, counter)
    assert all(len(page.text.strip()) < POLICY.min_chars for page in pages)
    assert [child.pages for child in result.children] == [(1, 2), (3, 4)]
    assert result.left_out == ()


@pytest.mark.parametrize("name", ["heading-before-a-block-too-big-to-share.pdf", "last-line-after-a-full-table.pdf"])
def test_short_line_at_a_page_edge_joins_the_chunk_beside_it(name, counter):
    pages, result = chunked(name, POLICY, counter)
    paragraphs = pages[0].text.split("\n\n")
    edges = [(paragraphs[0], result.children[0]), (paragraphs[-1], result.children[-1])]
    short = [(line, child) for line, child in edges if len(line) < POLICY.min_chars]
    assert short  # the page opens or ends with a line below the minimum
    for line, child in short:
        assert line in child.text and len(child.text) > len(line)


def test_split_table_pieces_below_the_minimum_join_their_neighbour(counter):
    pages, result = chunked("table-rows-split-under-a-small-child.pdf", SMALL_CHILDREN, counter)
    assert any(block.kind == "table" for block in pages[0].blocks)
    assert len(result.children) > 10  # the table is cut in many pieces
    assert min(len(child.text) for child in result.children) >= SMALL_CHILDREN.min_chars


def test_one_line_document_gives_no_chunk_and_a_warning(counter):
    pages, result = chunked("one-line-document.pdf", POLICY, counter)
    assert (result.parents, result.children) == ((), ())
    (warning,) = result.warnings
    assert warning.startswith(f"p1: text_below_minimum: {pages[0].text.strip()!r}")
