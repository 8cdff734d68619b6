"""Retrieval evaluation: gold files, the hit@k / MRR arithmetic, BM25 on the sample corpus, RRF."""

from __future__ import annotations

import dataclasses
import json
import random
import re
from fractions import Fraction
from pathlib import Path

import pymupdf
import pytest

from pocket_assets.core import ids
from pocket_assets.core.device import DeviceProfile
from pocket_assets.core.evaluation.bm25 import bm25_rankings, evaluate_bm25, plain_tokenize, tokenize
from pocket_assets.core.evaluation.fusion import fuse_rankings, reciprocal_rank_fusion
from pocket_assets.core.evaluation.gold import GoldFormatError, GoldQuestion, load_gold
from pocket_assets.core.evaluation.passages import Passage, passages_from_chunks
from pocket_assets.core.evaluation.scoring import evaluate_rankings, gold_warnings, k_values_for, metric_names
from pocket_assets.core.records import ChunkRecord, ContentFeatures
from pocket_assets.export.read_back import passages_from_export

ROOT = Path(__file__).resolve().parents[2]
RAW = ROOT / "data" / "raw"
SAMPLE_GOLD = ROOT / "data" / "gold" / "sample_gold.jsonl"
SAMPLE_KEYS = ("fr/faq.pdf", "fr/f-array.pdf", "intl/R-data.pdf")


def make_chunk(
    chunk_id: str,
    text: str = "texte",
    source: str = "doc.pdf",
    corpus: str = "fr",
    pages: tuple[int, ...] = (1,),
    chunk_type: str = "child",
) -> ChunkRecord:
    """A chunk with only what retrieval reads set meaningfully; the rest is consistent filler."""
    document_id = ids.document_uuid(f"{corpus}/{source}")
    return ChunkRecord(
        id=chunk_id,
        text=text,
        source=source,
        corpus=corpus,
        chunk_type=chunk_type,
        page=pages[0],
        pages=pages,
        tokens=len(text.split()),
        section=None,
        section_path=(),
        section_id=None,
        article_num=None,
        parent_id=None,
        table_type=None,
        char_start=0,
        char_end=len(text),
        line_from=1,
        line_to=1,
        chunk_uid=ids.chunk_uuid(document_id, chunk_id),
        document_id=document_id,
        canonical_id=chunk_id,
        hash=ids.content_hash(text),
        anchor=text[:40],
        chunk_index=0,
        total_chunks=1,
        has_overlap_previous=False,
        has_overlap_next=False,
        content_type="text",
        content_features=ContentFeatures(),
        chunker_version="test",
        policy_hash="0" * 16,
    )


def make_passage(passage_id: str, source: str = "doc.pdf", corpus: str = "fr", pages: tuple[int, ...] = (1,)) -> Passage:
    """What the metric arithmetic reads: id, document and pages (an SDK line cites one; several test spans)."""
    return Passage(id=passage_id, uid=passage_id, corpus=corpus, source=source, pages=pages, text="texte")


def question(qid: str, pages: tuple[int, ...], docs: tuple[str, ...] = ("doc.pdf",), **extra: object) -> GoldQuestion:
    return GoldQuestion(id=qid, question="?", corpus="fr", expected_docs=docs, expected_pages=pages, **extra)


# --- metric arithmetic ----------------------------------------------------------------------


def test_metric_arithmetic_on_a_hand_made_case() -> None:
    miss = make_passage("miss", pages=(9,))
    other_doc = make_passage("other", source="other.pdf", pages=(2,))
    spanning = make_passage("span", pages=(4, 5))
    questions = [question("q1", (1,)), question("q2", (2,)), question("q3", (5,)), question("q4", (3,))]
    rankings = {
        "q1": [make_passage("a", pages=(1,)), miss],  # first hit at rank 1
        "q2": [miss, other_doc, make_passage("b", pages=(2,))],  # right page, wrong document first: rank 3
        "q3": [miss] * 6 + [spanning],  # a chunk spanning pages 4-5 hits page 5: rank 7
        "q4": [miss, other_doc],  # never
    }
    report = evaluate_rankings(rankings, questions, k_values=(1, 3, 5, 10))
    assert report.metrics["hit@1"] == 1 / 4
    assert report.metrics["hit@3"] == 2 / 4
    assert report.metrics["hit@5"] == 2 / 4
    assert report.metrics["hit@10"] == 3 / 4
    assert report.metrics["mrr"] == pytest.approx(float((1 + Fraction(1, 3) + Fraction(1, 7)) / 4), abs=1e-12)
    assert report.metrics["questions"] == 4
    assert [row.first_hit_rank for row in report.rows] == [1, 3, 7, None]
    assert report.rows[1].top_ids == ("miss", "other", "b")
    assert report.table()[2]["top_pages"].split() == ["9"] * 6 + ["4,5"]


def test_mrr_only_counts_hits_within_the_largest_k() -> None:
    ranking = [make_passage("miss", pages=(9,))] * 4 + [make_passage("hit", pages=(1,))]
    report = evaluate_rankings({"q": ranking}, [question("q", (1,))], k_values=(1, 3))
    assert report.rows[0].first_hit_rank is None
    assert report.metrics == {"hit@1": 0.0, "hit@3": 0.0, "mrr": 0.0, "questions": 1.0}


def test_a_question_without_a_ranking_is_a_miss() -> None:
    report = evaluate_rankings({"q1": [make_passage("a")]}, [question("q1", (1,)), question("q2", (1,))], (1,))
    assert report.metrics["hit@1"] == 0.5


def test_expected_chunk_id_makes_only_that_chunk_a_hit() -> None:
    right_page = make_passage("c1", pages=(1,))
    expected = make_passage("c2", pages=(1,))
    strict = question("q", (1,), expected_chunk_id="c2")
    report = evaluate_rankings({"q": [right_page, expected]}, [strict], (1, 3))
    assert report.rows[0].first_hit_rank == 2


def test_empty_expected_pages_accepts_any_page_of_the_document() -> None:
    report = evaluate_rankings({"q": [make_passage("a", pages=(17,))]}, [question("q", ())], (1,))
    assert report.metrics["hit@1"] == 1.0


def test_metrics_are_also_split_by_corpus() -> None:
    intl = GoldQuestion("qi", "?", "intl", ("doc.pdf",), (1,))
    rankings = {"qf": [make_passage("a")], "qi": [make_passage("b", corpus="intl", pages=(2,))]}
    report = evaluate_rankings(rankings, [question("qf", (1,)), intl], (1,))
    assert report.metrics["hit@1"] == 0.5
    assert report.corpus_metrics["fr"]["hit@1"] == 1.0
    assert report.corpus_metrics["intl"]["hit@1"] == 0.0


def test_bad_k_values_and_no_questions_are_refused() -> None:
    with pytest.raises(ValueError):
        evaluate_rankings({}, [question("q", (1,))], (0, 3))
    with pytest.raises(ValueError):
        evaluate_rankings({}, [], (1,))


# --- reciprocal rank fusion -----------------------------------------------------------------


def test_reciprocal_rank_fusion_orders_by_summed_reciprocal_ranks() -> None:
    # b: 1/62 + 1/61, c: 1/63 + 1/62, a: 1/61, d: 1/63
    assert reciprocal_rank_fusion([["a", "b", "c"], ["b", "c", "d"]]) == ["b", "c", "a", "d"]
    assert reciprocal_rank_fusion([["x", "y"], ["y", "x"]]) == ["x", "y"]  # a tie keeps the first seen
    assert reciprocal_rank_fusion([]) == []


def test_fuse_rankings_maps_fused_ids_back_to_chunks() -> None:
    a, b, c = make_passage("a"), make_passage("b"), make_passage("c")
    fused = fuse_rankings([{"q": [a, b]}, {"q": [b, c]}])
    assert [chunk.id for chunk in fused["q"]] == ["b", "a", "c"]


# --- tokenization and BM25 ------------------------------------------------------------------


def test_tokenize_folds_case_accents_inflections_and_stopwords() -> None:
    assert tokenize("Les Césures FRANÇAISES de l’installation", "french") == tokenize(
        "la césure française, installer", "french"
    )
    assert tokenize("Reading the files", "english") == tokenize("read a file", "english")
    assert tokenize("modifica-\ntions", "french") == tokenize("modifications", "french")
    assert tokenize("ﬁchier", "french") == tokenize("fichier", "french")  # PDF ligatures
    assert tokenize("le la les the of a", "french") == []


def test_the_plain_tokenizer_reads_words_as_an_off_the_shelf_bm25_does() -> None:
    # bm25s's default: no stemming, no accent folding, English stopwords, `_` inside a word.
    line = "Règles générales | [Source: R01_2025_26_Regles_generales.pdf, Page 3]"
    assert plain_tokenize(line) == ["règles", "générales", "source", "r01_2025_26_regles_generales", "pdf", "page"]
    assert plain_tokenize("la règle") != plain_tokenize("les règles")


def test_bm25_reports_which_tokenizer_ranked() -> None:
    passages = passages_from_chunks([make_chunk("child-forfait", "Le forfait est prononcé par l'arbitre.", pages=(1,))])
    gold = [GoldQuestion("q", "Qui prononce le forfait ?", "fr", ("doc.pdf",), (1,))]
    assert evaluate_bm25(passages, gold).method == "bm25"
    plain = evaluate_bm25(passages, gold, tokenizer="plain")
    assert plain.method == "bm25-plain" and plain.metrics["hit@1"] == 1.0
    with pytest.raises(ValueError, match="tokenizer"):
        evaluate_bm25(passages, gold, tokenizer="porter")


def test_bm25_finds_accent_free_queries_and_ignores_parents_and_other_corpora() -> None:
    chunks = [
        make_chunk("child-cesure", "La césure des mots accentués en fin de ligne.", pages=(2,)),
        make_chunk("child-other", "Les fontes virtuelles et leurs codages.", pages=(3,)),
        make_chunk("parent", "La césure des mots accentués. Césure, césure.", chunk_type="parent"),
        make_chunk("intl-cesure", "césure césure césure", corpus="intl"),
    ]
    gold = GoldQuestion("q", "cesure des mots accentues", "fr", ("doc.pdf",), (2,))
    rankings = bm25_rankings(passages_from_chunks(chunks), [gold], depth=10)
    assert [chunk.id for chunk in rankings["q"]] == ["child-cesure"]  # no shared term: not retrieved


def test_bm25_ranking_does_not_depend_on_input_order() -> None:
    chunks = [make_chunk(f"c{index:02d}", f"colonne tableau {'filet ' * (index % 3)}") for index in range(12)]
    gold = [GoldQuestion("q", "filet de tableau", "fr", ("doc.pdf",), (1,))]
    shuffled = chunks[:]
    random.Random(7).shuffle(shuffled)
    first = bm25_rankings(passages_from_chunks(chunks), gold)["q"]
    assert [chunk.id for chunk in first] == [
        chunk.id for chunk in bm25_rankings(passages_from_chunks(shuffled), gold)["q"]
    ]


# --- gold files -----------------------------------------------------------------------------


def test_gold_jsonl_and_json_arrays_load_the_same(tmp_path: Path) -> None:
    entries = [
        {"id": "a", "question": "q?", "corpus": "fr", "expected_docs": ["d.pdf"], "expected_pages": [3, 1, 3]},
        {
            "id": "b",
            "question": "q?",
            "corpus": "intl",
            "expected_docs": ["e.pdf"],
            "expected_pages": [],
            "expected_chunk_id": "e.pdf-p001-parent001-child00",
            "notes": "strict",
        },
    ]
    lines = tmp_path / "gold.jsonl"
    lines.write_text("\n".join(json.dumps(entry) for entry in entries) + "\n\n", encoding="utf-8")
    array = tmp_path / "gold.json"
    array.write_text(json.dumps(entries), encoding="utf-8")
    loaded = load_gold(lines)
    assert loaded == load_gold(array)
    assert loaded[0].expected_pages == (1, 3)
    assert loaded[1].expected_chunk_id == "e.pdf-p001-parent001-child00"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "gold.jsonl:2: not valid JSON"),
        ('{"id": "x", "question": "q", "corpus": "fr", "expected_docs": ["d.pdf"]}', "missing fields"),
        (
            '{"id": "x", "question": "q", "corpus": "fr", "expected_docs": ["d.pdf"], "expected_pages": [1], '
            '"page": 1}',
            "unknown fields ['page']",
        ),
        ('{"id": "x", "question": "q", "corpus": "fr", "expected_docs": [], "expected_pages": [1]}', "expected_docs"),
        ('{"id": "x", "question": "q", "corpus": "fr", "expected_docs": ["d.pdf"], "expected_pages": [0]}', "1-based"),
        (
            '{"id": "ok", "question": "q", "corpus": "fr", "expected_docs": ["d.pdf"], "expected_pages": [1]}',
            "appears twice",
        ),
    ],
)
def test_bad_gold_lines_are_reported_with_their_place(tmp_path: Path, line: str, message: str) -> None:
    good = '{"id": "ok", "question": "q", "corpus": "fr", "expected_docs": ["d.pdf"], "expected_pages": [1]}'
    path = tmp_path / "gold.jsonl"
    path.write_text(good + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(GoldFormatError, match=re.escape(message)):
        load_gold(path)


def test_gold_warnings_name_questions_that_cannot_score() -> None:
    chunks = [make_passage("a", pages=(1, 2))]
    gold = [
        question("fine", (2,)),
        question("unknown-doc", (1,), docs=("nowhere.pdf",)),
        question("unknown-page", (40,)),
        question("unknown-chunk", (1,), expected_chunk_id="gone"),
    ]
    warnings = gold_warnings(chunks, gold)
    assert [warning.split(":")[0] for warning in warnings] == ["unknown-doc", "unknown-page", "unknown-chunk"]


def test_sample_gold_points_at_real_pages_of_the_sample_corpus() -> None:
    questions = load_gold(SAMPLE_GOLD)
    assert len(questions) >= 20
    assert {question.corpus for question in questions} == {"fr", "intl"}
    for gold in questions:
        for source in gold.expected_docs:
            with pymupdf.open(RAW / gold.corpus / source) as document:
                assert gold.expected_pages and max(gold.expected_pages) <= document.page_count, gold.id


# --- BM25 on the shipped sample corpus ------------------------------------------------------


@pytest.fixture(scope="module")
def sample_children() -> list[ChunkRecord]:
    from pocket_assets.core.chunking.chunker import chunk_document
    from pocket_assets.core.extract import extract_pages
    from pocket_assets.core.pdf import inspect_pdf
    from pocket_assets.core.policy import ChunkPolicy
    from pocket_assets.core.tokenizer import load_tokenizer

    counter, policy = load_tokenizer(), ChunkPolicy()
    chunks: list[ChunkRecord] = []
    for key in SAMPLE_KEYS:
        chunked = chunk_document(inspect_pdf(RAW / key, key), extract_pages(RAW / key), policy, counter)
        chunks += [*chunked.parents, *chunked.children]
    return chunks


def test_export_passages_are_the_sdk_lines_with_their_cited_page(
    sample_children: list[ChunkRecord], tmp_path: Path
) -> None:
    """What retrieval_eval searches is the exported file read back, and it is what the chunks say the
    phone embeds: context header, text and citation, behind the document prompt; through a window, what
    the embedder reads of that."""
    from pocket_assets.core.tokenizer import load_tokenizer
    from pocket_assets.export.writer import write_corpus_exports

    counter = load_tokenizer()
    device = DeviceProfile(document_prompt="title: {title} | text: ")
    for corpus in ("fr", "intl"):
        chunks = [chunk for chunk in sample_children if chunk.corpus == corpus]
        expectations = ROOT / "expectations"
        write_corpus_exports(corpus, chunks, tmp_path, "2026-01-01T00:00:00Z", expectations, device=device)
        exported = passages_from_export(tmp_path, corpus, device)
        assert exported == passages_from_chunks(chunks, device)
        assert all(len(passage.pages) == 1 and passage.text.startswith("title: ") for passage in exported)
        assert all(" | " in passage.text[len("title: x | text: ") :] for passage in exported)  # the header
        # The lines fit the window they were made for: read through it, they are whole.
        assert passages_from_export(tmp_path, corpus, device, counter) == exported
        bare = passages_from_export(tmp_path, corpus)
        assert [passage.text for passage in bare] == [
            passage.text.removeprefix(f"title: {passage.source} | text: ") for passage in exported
        ]
        # Through a smaller window, a line is read from its start, prompt included, up to the window.
        small = dataclasses.replace(device, embed_max_tokens=64)
        cut = passages_from_export(tmp_path, corpus, small, counter)
        assert cut == passages_from_chunks(chunks, small, counter)
        for whole, read in zip(exported, cut):
            assert whole.text.startswith(read.text) and counter.count(read.text) <= 64 - device.special_tokens
        assert any(len(read.text) < len(whole.text) for whole, read in zip(exported, cut))
    assert passages_from_export(tmp_path / "nowhere", "fr") == []


def test_an_sdk_file_out_of_step_with_its_corpus_json_is_refused(
    sample_children: list[ChunkRecord], tmp_path: Path
) -> None:
    from pocket_assets.export.read_back import ExportMismatchError
    from pocket_assets.export.writer import write_corpus_exports

    chunks = [chunk for chunk in sample_children if chunk.corpus == "intl"]
    export = write_corpus_exports("intl", chunks, tmp_path, "2026-01-01T00:00:00Z", ROOT / "expectations")
    sdk = export.paths["sdk"]
    lines = sdk.read_text(encoding="utf-8").splitlines(keepends=True)
    sdk.write_text("".join(lines[1:]), encoding="utf-8")
    with pytest.raises(ExportMismatchError, match="lines for"):
        passages_from_export(tmp_path, "intl")
    sdk.write_text("".join([lines[1], lines[0], *lines[2:]]), encoding="utf-8")
    with pytest.raises(ExportMismatchError, match=r"chunks_intl.txt:1: does not match"):
        passages_from_export(tmp_path, "intl")


def test_bm25_on_the_sample_corpus_is_sane_and_deterministic(sample_children: list[ChunkRecord]) -> None:
    questions = load_gold(SAMPLE_GOLD)
    report = evaluate_bm25(passages_from_chunks(sample_children), questions)
    # The floors sit below what benchmarks/bench_retrieval.py measures on these lines (benchmarks/README.md):
    # room for chunker changes, not for a broken index.
    assert report.metrics["hit@1"] >= 0.6
    assert report.metrics["hit@5"] >= 0.8
    assert report.metrics["hit@10"] >= 0.85
    assert report.metrics["mrr"] >= 0.7
    assert report.warnings == ()
    assert all(len(row.top_ids) <= 10 for row in report.rows)
    parents = {chunk.id for chunk in sample_children if chunk.chunk_type == "parent"}
    assert parents and not parents.intersection(chunk_id for row in report.rows for chunk_id in row.top_ids)
    assert evaluate_bm25(passages_from_chunks(reversed(sample_children)), questions) == report


def test_the_devices_top_k_is_evaluated_and_reported_first() -> None:
    assert k_values_for(DeviceProfile()) == (1, 3, 5, 10)
    assert metric_names(DeviceProfile()) == ("hit@3", "hit@1", "hit@5", "hit@10", "mrr")
    assert k_values_for(DeviceProfile(top_k=4)) == (1, 3, 4, 5, 10)
    assert metric_names(DeviceProfile(top_k=4))[:2] == ("hit@4", "hit@1")
