"""The partition suite over a batch of PDFs gives each PDF exactly its per-PDF results, failures included."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from pocket_assets.core.quality.expectation_batches import batchable, expectations_for_batch
from pocket_assets.core.quality.suites import (
    CORPUS_SUITE_FILE,
    Gates,
    corpus_frame_columns,
    corpus_ids_on_columns,
    expectations_on_columns,
    frame_columns,
    load_gates,
)
from pocket_assets.core.records import ChunkRecord
from pocket_assets_tests.core.test_validation import (
    EXPECTATIONS_DIR,
    POLICY,
    by_id,
    copy_expectations,
    make_chunks,
    make_pages,
    replaced,
)

CAPS = (POLICY.parent_tokens, POLICY.max_tokens)


@pytest.fixture(scope="module")
def gates() -> Gates:
    return load_gates(EXPECTATIONS_DIR)


def renamed_parent(chunks: list[ChunkRecord], new_id: str) -> list[ChunkRecord]:
    """The first parent under another id, its children pointing at it."""
    old = by_id(chunks, "parent").id
    return [
        dataclasses.replace(chunk, id=new_id) if chunk.id == old else
        dataclasses.replace(chunk, parent_id=new_id) if chunk.parent_id == old else chunk
        for chunk in chunks
    ]


def corpus() -> dict[str, list[ChunkRecord]]:
    """Clean PDFs (with the same ids: ids need only be unique within a PDF), a PDF with a short child, one
    with a duplicate id, one whose child points at a parent of another PDF, and an empty one."""
    clean = make_chunks(make_pages())
    short = replaced(clean, by_id(clean, "child"), text="trop court")
    duplicate = replaced(clean, by_id(clean, "child", 1), id=by_id(clean, "child").id)
    elsewhere = renamed_parent(clean, "only-in-a.pdf")
    stray = replaced(clean, by_id(clean, "child"), parent_id="only-in-a.pdf")
    return {
        "fr/a.pdf": elsewhere,
        "fr/b.pdf": clean,
        "fr/c.pdf": short,
        "fr/d.pdf": duplicate,
        "fr/e.pdf": stray,
        "fr/f.pdf": [],
        "fr/g.pdf": clean,
    }


def per_pdf(gates: Gates, pdfs: dict[str, list[ChunkRecord]]) -> dict:
    return {key: expectations_on_columns(gates, frame_columns(chunks), *CAPS) for key, chunks in pdfs.items()}


def failed(results: dict) -> dict[str, set[str]]:
    return {key: {r.expectation for r in found if not r.passed} for key, found in results.items()}


def test_batch_gives_each_pdf_its_own_per_pdf_results(gates: Gates) -> None:
    pdfs = corpus()
    batch = expectations_for_batch(gates, {key: frame_columns(chunks) for key, chunks in pdfs.items()}, *CAPS)
    assert batch == per_pdf(gates, pdfs)
    assert failed(batch) == {
        "fr/a.pdf": set(),
        "fr/b.pdf": set(),
        "fr/c.pdf": {"text_min_length", "searchable_text_min_length"},
        "fr/d.pdf": {"id_unique"},
        "fr/e.pdf": {"parent_id_resolves"},
        "fr/f.pdf": set(),
        "fr/g.pdf": set(),
    }


def test_a_suite_the_batch_cannot_judge_row_by_row_is_run_pdf_by_pdf(gates: Gates, tmp_path: Path) -> None:
    """`mostly` below 1 makes a PDF's verdict depend on its share of bad rows, not on any bad row."""
    lenient = load_gates(copy_expectations(tmp_path, "text_min_length", 0.5, "mostly"))
    assert batchable(gates.partition_suite) and not batchable(lenient.partition_suite)
    pdfs = corpus()
    batch = expectations_for_batch(lenient, {key: frame_columns(chunks) for key, chunks in pdfs.items()}, *CAPS)
    assert batch == per_pdf(lenient, pdfs)


def test_an_expectation_that_cannot_run_fails_every_pdf_with_its_error(tmp_path: Path) -> None:
    broken = load_gates(copy_expectations(tmp_path, "page_positive", "no_such_column", "column"))
    pdfs = {key: chunks for key, chunks in corpus().items() if key in ("fr/b.pdf", "fr/g.pdf")}
    batch = expectations_for_batch(broken, {key: frame_columns(chunks) for key, chunks in pdfs.items()}, *CAPS)
    assert batch == per_pdf(broken, pdfs)
    assert failed(batch) == {"fr/b.pdf": {"page_positive"}, "fr/g.pdf": {"page_positive"}}


def test_the_corpus_suite_reads_the_ids_only_and_still_names_a_corpus_wide_duplicate(gates: Gates) -> None:
    pdfs = corpus()
    everything = [chunk for key in ("fr/b.pdf", "fr/g.pdf") for chunk in pdfs[key]]
    narrow = corpus_frame_columns(EXPECTATIONS_DIR)
    assert narrow == ("id", "page"), "the corpus suite's frame holds no text"
    narrow_report = corpus_ids_on_columns(gates, frame_columns(everything, narrow), "corpus")
    assert narrow_report == corpus_ids_on_columns(gates, frame_columns(everything), "corpus")
    [result] = narrow_report.failures()
    assert result.expectation == "id_unique_in_corpus" and result.unexpected_count > 0
    assert {chunk_id for chunk_id, _ in result.offending} <= {chunk.id for chunk in pdfs["fr/b.pdf"]}


def test_an_expectation_on_another_column_widens_the_corpus_frame(tmp_path: Path) -> None:
    suite = json.loads((EXPECTATIONS_DIR / CORPUS_SUITE_FILE).read_text(encoding="utf-8"))
    suite["expectations"].append({"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "source"}})
    (tmp_path / CORPUS_SUITE_FILE).write_text(json.dumps(suite), encoding="utf-8")
    assert corpus_frame_columns(tmp_path) == ("id", "page", "source")
    suite["expectations"].append({"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "colour"}})
    (tmp_path / CORPUS_SUITE_FILE).write_text(json.dumps(suite), encoding="utf-8")
    with pytest.raises(ValueError, match="colour"):
        corpus_frame_columns(tmp_path)


def test_a_validation_leaves_no_frame_behind_and_the_next_one_judges_alike(gates: Gates) -> None:
    """GE's execution engine would keep the last batch's frame (the largest PDF's, through the export)."""
    pdfs = corpus()
    first = per_pdf(gates, pdfs)
    manager = gates.batch_definition.data_asset.datasource.get_execution_engine().batch_manager
    assert dict(manager.batch_data_cache) == {} and dict(manager.batch_cache) == {}
    assert per_pdf(gates, pdfs) == first
    assert failed(first)["fr/c.pdf"], "the short child still fails once the caches were emptied"
