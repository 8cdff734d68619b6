"""Unit tests of the chunker on documents built block by block and on the shipped sample PDFs."""

from __future__ import annotations

import dataclasses
import gc
import json
import random
import subprocess
import sys
import weakref
from pathlib import Path

import pytest
from tokenizers import Tokenizer, models

from pocket_assets.core import tokenizer as tokenizer_module
from pocket_assets.core.chunking.chunker import ChunkedDocument, chunk_document, table_header_for
from pocket_assets.core.chunking.embed_text import count_embedded, text_to_embed
from pocket_assets.core.chunking.slice_counts import (
    PieceTokens,
    SliceCounter,
    page_token_offsets,
    splits_cleanly,
    vocabulary_splits_cleanly,
)
from pocket_assets.core.device import EMBEDDINGGEMMA_DOCUMENT_PROMPT, DeviceProfile
from pocket_assets.core.document import canonical_text
from pocket_assets.core.extract import extract_pages
from pocket_assets.core.policy import ChunkPolicy
from pocket_assets.core.tokenizer import TokenCounter, load_tokenizer
from pocket_assets_tests.core.chunker_documents import (
    bare_device,
    build_pages,
    fingerprint,
    identity_for,
    markdown_table,
)

RAW = Path(__file__).resolve().parents[2] / "data" / "raw"
SAMPLES = ("fr/faq.pdf", "fr/f-array.pdf", "intl/R-data.pdf")
SMALL = ChunkPolicy(
    parent_tokens=120,
    parent_overlap=20,
    child_tokens=60,
    child_overlap=10,
    min_chars=20,
    device=bare_device(90),
    page_mode="span",
)

SENTENCE = "Le joueur ayant le trait touche une piece et doit la jouer si le coup est legal."


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return load_tokenizer()


def rules_document():
    return build_pages(
        [
            [
                ("heading", "# Regles du jeu", 1),
                ("paragraph", " ".join([SENTENCE] * 6), 0),
                ("heading", "## Article 4 Le toucher", 2),
                ("paragraph", "4.1 " + " ".join([SENTENCE] * 3), 0),
                ("list", "- premier point a retenir\n- second point a retenir\n- troisieme point", 0),
            ],
            [],
            [
                ("heading", "### 4.2 Ajustement", 3),
                ("paragraph", " ".join([SENTENCE] * 8), 0),
                ("code", "x <- 1\ny <- 2\nprint(x + y)", 0),
                ("equation", "$$ a^2 + b^2 = c^2 $$", 0),
                ("heading", "# Annexe", 1),
                ("table", markdown_table(2, 2), 0),
            ],
        ]
    )


def chunk(pages, policy=SMALL, counter=None) -> ChunkedDocument:
    return chunk_document(identity_for(pages), pages, policy, counter or load_tokenizer())


def test_every_chunk_is_an_exact_slice_with_consistent_fields(counter):
    pages = rules_document()
    text = canonical_text(pages)
    result = chunk(pages, counter=counter)
    assert result.parents and result.children
    for record in result.parents + result.children:
        assert text[record.char_start : record.char_end] == record.text
        assert record.tokens == counter.count(record.text)
        assert record.line_from == text.count("\n", 0, record.char_start) + 1
        assert record.line_to == text.count("\n", 0, record.char_end - 1) + 1
        assert record.page in record.pages
        assert record.hash.startswith("sha256:") and record.anchor
        assert record.chunker_version == SMALL.chunker_version and record.policy_hash == SMALL.policy_hash
        assert record.canonical_id.split("|")[3] == f"p={record.page:03d}"
    for record in result.parents:
        assert record.tokens <= SMALL.parent_tokens and record.parent_id is None
    parents = {record.id: record for record in result.parents}
    for record in result.children:
        parent = parents[record.parent_id]
        assert parent.char_start <= record.char_start and record.char_end <= parent.char_end
        assert record.id.startswith(record.parent_id + "-child")
        embedded = text_to_embed(record.text, record.source, record.page, "", record.context)
        assert record.embedded_tokens == counter.count(embedded) <= SMALL.max_tokens
    for kind in (result.parents, result.children):
        assert [record.chunk_index for record in kind] == list(range(len(kind)))
        assert {record.total_chunks for record in kind} == {len(kind)}
        assert not kind[0].has_overlap_previous and not kind[-1].has_overlap_next


def test_sections_dot_paths_and_article_numbers(counter):
    result = chunk(rules_document(), counter=counter)
    by_start = {record.text.split("\n")[0]: record for record in result.children}
    article = next(record for record in result.children if record.text.startswith("## Article 4"))
    assert article.section == "Article 4 Le toucher"
    assert article.section_path == ("Regles du jeu", "Article 4 Le toucher")
    assert article.section_id == "1.1"
    assert article.article_num == "4"  # in force at its start; its paragraph 4.1 comes later
    adjustment = next(record for record in result.children if record.text.startswith("### 4.2"))
    assert adjustment.section_id == "1.1.1" and adjustment.article_num == "4.2"
    assert adjustment.section == "Article 4 Le toucher"
    annex = next(record for record in result.children if record.text.startswith("# Annexe"))
    assert annex.section_id == "2" and annex.article_num is None and annex.section == "Annexe"
    assert by_start  # the headings opened chunks: each heading above started one


def test_a_heading_never_ends_a_chunk(counter):
    pages = rules_document()
    heading_texts = [
        page.text[block.char_start : block.char_end]
        for page in pages
        for block in page.blocks
        if block.kind == "heading"
    ]
    result = chunk(pages, counter=counter)
    for record in result.parents + result.children:
        last_line = record.text.rstrip().splitlines()[-1]
        assert last_line not in heading_texts, record.text


def test_atomic_blocks_stay_whole_and_content_features_count_them(counter):
    result = chunk(rules_document(), counter=counter)
    code = next(record for record in result.children if "x <- 1" in record.text)
    assert "print(x + y)" in code.text
    table = next(record for record in result.children if "| Colonne 0" in record.text)
    assert "valeur 1.1 ronde |" in table.text
    assert table.content_features.table_count == 1 and table.content_features.heading_count == 1
    assert table.content_type == "mixed"
    assert any(record.content_features.equation_count == 1 for record in result.children)


def test_oversized_table_splits_at_rows_and_the_header_is_offered_for_each_piece(counter):
    pages = build_pages([[("paragraph", SENTENCE, 0), ("table", markdown_table(30), 0)]])
    result = chunk(pages, counter=counter)
    pieces = [record for record in result.children if "valeur" in record.text]
    assert len(pieces) > 2
    header = markdown_table(0)
    for piece in pieces:
        assert all(line.startswith("|") and line.endswith("|") for line in piece.text.splitlines() if "valeur" in line)
        offered = table_header_for(piece, pages)
        if not piece.text.startswith("| valeur"):
            assert offered == ""
        else:
            assert offered == header + "\n"
            embedded = text_to_embed(offered + piece.text, piece.source, piece.page, "", piece.context)
            assert counter.count(embedded) <= SMALL.max_tokens + 2


def test_page_mode_never_crosses_a_page_and_skips_empty_pages(counter):
    pages = rules_document()
    result = chunk(pages, dataclasses.replace(SMALL, page_mode="pdf-page-v1"), counter)
    for record in result.parents + result.children:
        assert len(record.pages) == 1
        page = pages[record.page - 1]
        assert page.char_start <= record.char_start and record.char_end <= page.char_end
    assert 2 not in {record.page for record in result.parents}


def test_span_mode_records_every_page_and_cites_the_principal_one(counter):
    pages = build_pages([[("paragraph", SENTENCE * 2, 0)], [("paragraph", " ".join([SENTENCE] * 2), 0)]])
    result = chunk(pages, counter=counter)
    spanning = [record for record in result.children if len(record.pages) > 1]
    assert spanning and spanning[0].pages == (1, 2)
    shares = {
        page.page: min(spanning[0].char_end, page.char_end) - max(spanning[0].char_start, page.char_start)
        for page in pages
    }
    assert spanning[0].page == max(shares, key=shares.get)


def test_short_fragments_merge_into_a_neighbour(counter):
    pages = build_pages([[("paragraph", " ".join([SENTENCE] * 3), 0), ("paragraph", "Fin.", 0)]])
    result = chunk(pages, dataclasses.replace(SMALL, child_overlap=0, parent_overlap=0), counter)
    assert all(len(record.text) >= SMALL.min_chars for record in result.children)
    assert result.children[-1].text.endswith("Fin.")


def test_empty_document_gives_no_chunks(counter):
    assert chunk(build_pages([[], []]), counter=counter) == ChunkedDocument((), ())


@pytest.mark.parametrize("prompt", ["title: {title} | text: ", EMBEDDINGGEMMA_DOCUMENT_PROMPT])
def test_window_holds_the_document_prompt_the_line_and_the_special_tokens(counter, prompt):
    device = DeviceProfile(embed_max_tokens=80, document_prompt=prompt)
    policy = dataclasses.replace(SMALL, child_tokens=80, device=device)
    pages = build_pages([[("heading", "# Article 3 Forfaits", 1), ("paragraph", " ".join([SENTENCE] * 10), 0)]])
    result = chunk(pages, policy, counter)
    assert result.children[0].context  # the header is budgeted too
    for record in result.children:
        embedded = text_to_embed(record.text, record.source, record.page, prompt, record.context)
        assert record.embedded_tokens == counter.count(embedded) + device.special_tokens <= 80


@pytest.mark.parametrize("key", SAMPLES)
def test_sample_pdfs_keep_every_rule_with_the_default_policy(key, counter):
    pages = extract_pages(RAW / key)
    text = canonical_text(pages)
    policy = ChunkPolicy()
    result = chunk_document(identity_for(pages, key), pages, policy, counter)
    covered = bytearray(len(text))
    for record in result.children:
        assert text[record.char_start : record.char_end] == record.text
        assert record.tokens <= policy.child_tokens
        covered[record.char_start : record.char_end] = b"\x01" * (record.char_end - record.char_start)
    assert all(covered[index] or char.isspace() for index, char in enumerate(text))
    embedded = count_embedded(
        counter,
        [text_to_embed(r.text, r.source, r.page, policy.device.document_prompt, r.context) for r in result.children],
        policy.device,
    )
    assert embedded == [record.embedded_tokens for record in result.children]
    assert max(embedded) <= policy.max_tokens
    every = result.parents + result.children
    assert [record.tokens for record in every] == counter.count_batch([record.text for record in every])
    assert max(record.tokens for record in result.parents) <= policy.parent_tokens
    every_id = [record.id for record in result.parents + result.children]
    assert len(set(every_id)) == len(every_id)
    assert len({record.canonical_id for record in result.parents + result.children}) == len(every_id)
    assert len({record.chunk_uid for record in result.parents + result.children}) == len(every_id)


def test_deterministic_over_a_thousand_runs(counter):
    pages = build_pages([[("heading", "# Titre", 1), ("paragraph", " ".join([SENTENCE] * 3), 0)]])
    expected = fingerprint(chunk(pages, counter=counter))
    assert all(fingerprint(chunk(pages, counter=counter)) == expected for _ in range(1000))


_CHILD_PROCESS = """
from pocket_assets.core.chunking.chunker import chunk_document
from pocket_assets.core.device import DeviceProfile
from pocket_assets.core.policy import ChunkPolicy
from pocket_assets.core.tokenizer import load_tokenizer
from pocket_assets_tests.core.chunker_documents import build_pages, fingerprint, identity_for
import json, sys
pages = build_pages(json.loads(sys.argv[1]))
fields = json.loads(sys.argv[2])
policy = ChunkPolicy(**{**fields, "device": DeviceProfile(**fields["device"])})
print(fingerprint(chunk_document(identity_for(pages), pages, policy, load_tokenizer())))
"""


def test_deterministic_across_processes(counter):
    specs = [[("heading", "# Titre", 1), ("paragraph", " ".join([SENTENCE] * 9), 0)], [("table", markdown_table(3), 0)]]
    pages = build_pages(specs)
    expected = fingerprint(chunk(pages, counter=counter))
    arguments = [json.dumps(specs), json.dumps(dataclasses.asdict(SMALL))]
    output = subprocess.run(
        [sys.executable, "-c", _CHILD_PROCESS, *arguments],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "7"},
    )
    assert output.stdout.strip() == expected


@pytest.mark.parametrize("spec", sorted(tokenizer_module._VENDORED))
def test_the_vendored_vocabularies_split_cleanly(spec):
    """`splits_cleanly` trusts a vendored tokenizer's vocabulary without scanning it in every process:
    this scan is what it trusts."""
    vendored = load_tokenizer(spec)
    assert vendored.vendored and vocabulary_splits_cleanly(vendored) and splits_cleanly(vendored)


@pytest.mark.parametrize("key", SAMPLES)
def test_slice_counts_equal_a_full_re_encoding_on_the_sample_pdfs(key, counter):
    """Counts read off the page encoding, edges re-encoded, must be the tokenizer's own, for any slice."""
    assert splits_cleanly(counter)  # else the chunker falls back to plain counting and this proves nothing
    pages = extract_pages(RAW / key)
    text = canonical_text(pages)
    slices = SliceCounter(text, pages, PieceTokens(counter))
    assert slices.tokens == page_token_offsets(pages, counter)  # assembled from pieces = the pipeline's own
    generator = random.Random(key)
    starts = [generator.randint(0, len(text)) for _ in range(600)]
    spans = [(start, min(len(text), start + generator.choice((8, 40, 400, 3000)))) for start in starts]
    assert slices.count_slices(spans) == counter.count_batch([text[start:end] for start, end in spans])
    embedded = [
        text_to_embed(text[start:end], "sample > </ x.pdf", 12, "title: {title} | text: ") for start, end in spans
    ]
    assert slices.count_batch(embedded) == counter.count_batch(embedded)


def test_a_bounded_piece_cache_gives_the_counts_and_chunks_of_an_unbounded_one(counter):
    """One `PieceTokens` shared by a run's documents starts afresh past its capacity: the chunks
    of every document are those made with a cache that keeps everything, and it holds at most
    its capacity plus one `learn` call's strings."""
    documents = [extract_pages(RAW / key) for key in SAMPLES]
    unbounded, bounded = PieceTokens(counter, capacity=10**9), PieceTokens(counter, capacity=300)
    for pages in documents:
        expected = chunk_document(identity_for(pages), pages, SMALL, counter, unbounded)
        assert chunk_document(identity_for(pages), pages, SMALL, counter, bounded) == expected
        assert len(bounded.counts) < len(unbounded.counts)
    text = canonical_text(documents[0])
    spans = [(start, start + 300) for start in range(0, len(text) - 300, 97)]
    counted = SliceCounter(text, documents[0], bounded).count_slices(spans)
    assert counted == counter.count_batch([text[start:end] for start, end in spans])
    asked = set(piece for start, end in spans for piece in (text[start : start + 40], text[end - 40 : end]))
    bounded.learn(asked)
    assert asked <= bounded.counts.keys() and len(bounded.counts) <= 300 + len(asked)


def test_what_the_chunker_learns_of_a_tokenizer_does_not_keep_it_alive():
    """A tokenizer dropped by its last user goes (a whole vocabulary): nothing the chunker remembers about a tokenizer (its piece cache, whether it splits cleanly)
    may hold it past the last user's reference."""
    tiny = TokenCounter("tiny", Tokenizer(models.WordLevel({"a": 0, "[UNK]": 1}, unk_token="[UNK]")))
    PieceTokens(tiny).learn(["a", "b a"])
    assert splits_cleanly(tiny) is False and splits_cleanly(tiny) is False  # remembered while it lives
    released = weakref.ref(tiny)
    del tiny
    gc.collect()
    assert released() is None


def test_overlap_never_creeps_toward_an_atomic_block_too_big_to_share_a_window(counter):
    """A paragraph then a code block that fits a child only alone: the child after the paragraph
    starts at the code block, instead of overlap windows each one word shorter (seen on frenchb.pdf)."""
    code = "```\n" + "\n".join(f"x{line} <- f({line})" for line in range(6)) + "\n```"
    pages = build_pages([[("paragraph", " ".join([SENTENCE] * 2), 0), ("code", code, 0), ("paragraph", SENTENCE, 0)]])
    result = chunk(pages, counter=counter)
    ends = [record.char_end for record in result.children]
    assert len(ends) == len(set(ends)), "no child ends where the previous one did"
    assert all(len(record.text) >= SMALL.min_chars for record in result.children)
    assert any(record.text == code for record in result.children)


# --- text below the minimum ----------------------------------------------------------------------

PAGE_MODE = dataclasses.replace(SMALL, page_mode="pdf-page-v1")
BODY = " ".join([SENTENCE] * 2)


def assert_no_chunk_below_the_minimum(result: ChunkedDocument, policy: ChunkPolicy) -> None:
    assert all(len(record.text) >= policy.min_chars for record in result.parents + result.children)


@pytest.mark.parametrize(
    "short_page",
    [
        [("heading", "# Chapitre 3", 1)],  # a heading alone on its page
        [("paragraph", "xix", 0)],  # a lone page counter
        [("heading", "# Titre", 1), ("paragraph", "v1", 0)],  # a title page
    ],
    ids=["heading", "counter", "title"],
)
def test_page_mode_page_below_the_minimum_joins_the_next_chunk_across_the_page(counter, short_page):
    pages = build_pages([short_page, [("paragraph", BODY, 0)]])
    result = chunk(pages, PAGE_MODE, counter)
    assert_no_chunk_below_the_minimum(result, PAGE_MODE)
    first = result.children[0]
    assert first.pages == (1, 2) and first.page == 2  # cited by the page holding most of its text
    assert first.char_start == pages[0].char_start and result.parents[0].pages == (1, 2)
    assert result.left_out == ()


def test_short_pages_in_a_row_join_across_empty_pages_until_the_minimum(counter):
    pages = build_pages([[("paragraph", "Titre", 0)], [], [("paragraph", "Auteur", 0)], [("paragraph", BODY, 0)]])
    result = chunk(pages, PAGE_MODE, counter)
    assert result.children[0].pages == (1, 3, 4) and result.children[0].page == 4


def test_short_last_page_is_left_out_with_a_warning_naming_page_and_text(counter):
    pages = build_pages([[("paragraph", BODY, 0)], [("paragraph", "Fin.", 0)]])
    result = chunk(pages, PAGE_MODE, counter)
    assert result.children and all(record.pages == (1,) for record in result.parents + result.children)
    (short,) = result.left_out
    assert (short.page, short.text) == (2, "Fin.")
    assert result.warnings == (
        f"p2: text_below_minimum: 'Fin.' (4 characters, minimum {SMALL.min_chars}) "
        "has no following text to join and is left out of the chunks",
    )


@pytest.mark.parametrize("page_mode", ["span", "pdf-page-v1"])
def test_document_below_the_minimum_gives_no_chunk_and_a_warning_per_page(counter, page_mode):
    pages = build_pages([[("paragraph", "Hello", 0)], [("paragraph", "world", 0)]])
    result = chunk(pages, dataclasses.replace(SMALL, page_mode=page_mode), counter)
    assert (result.parents, result.children) == ((), ())
    assert [(short.page, short.text) for short in result.left_out] == [(1, "Hello"), (2, "world")]


def test_heading_led_fragment_joins_the_block_after_it_even_past_the_child_target(counter):
    """A short heading then a code block that fits a child alone: heading and block share one child, which
    passes the child target (never the cap) rather than leave the heading alone."""
    code = "```\n" + "\n".join(f"x{line} <- f({line})" for line in range(6)) + "\n```"
    policy = dataclasses.replace(SMALL, child_overlap=0, context_header="none")
    pages = build_pages([[("paragraph", BODY, 0), ("heading", "# Annexe 4.2.1.9", 1), ("code", code, 0)]])
    result = chunk(pages, policy, counter)
    assert_no_chunk_below_the_minimum(result, policy)
    last = result.children[-1]
    assert last.text == "# Annexe 4.2.1.9\n\n" + code and last.tokens > policy.child_tokens
    assert last.embedded_tokens <= policy.max_tokens


def test_last_piece_of_a_split_table_below_the_minimum_joins_its_neighbouring_piece(counter):
    table = markdown_table(9, 2) + "\n| 1 | 2 |"  # a last row shorter than the minimum
    pages = build_pages([[("table", table, 0)]])
    result = chunk(pages, SMALL, counter)
    assert len(result.children) > 1  # the table is split
    assert_no_chunk_below_the_minimum(result, SMALL)
    assert result.children[-1].text.endswith("| 1 | 2 |")


def test_short_fragment_after_a_table_too_full_to_share_grows_back_over_its_last_row(counter):
    """Table plus fragment would pass the cap: the fragment repeats the table's last row instead; the table
    stays whole in the child before."""
    policy = dataclasses.replace(SMALL, device=bare_device(62), context_header="none")
    table = markdown_table(2, 2)
    pages = build_pages([[("table", table, 0), ("paragraph", "Fin de la table.", 0)]])
    result = chunk(pages, policy, counter)
    assert [record.text for record in result.children] == [table, table.splitlines()[-1] + "\n\nFin de la table."]
    assert result.children[1].has_overlap_previous
