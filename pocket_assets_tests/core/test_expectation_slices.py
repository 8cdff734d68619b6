"""A long PDF judged in row slices gets exactly the results of one frame of the whole PDF, failures included."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pyarrow as pa
import pytest

from pocket_assets.core.quality.expectation_batches import expectations_for_files
from pocket_assets.core.quality.expectation_slices import expectations_over_slices, sliceable
from pocket_assets.core.quality.validation import (
    OFFENDING_LIMIT,
    Gates,
    expectations_on_columns,
    frame_columns,
    load_gates,
)
from pocket_assets.core.records import ChunkRecord
from pocket_assets_tests.core.test_expectation_batches import CAPS, corpus, failed, per_pdf, stored
from pocket_assets_tests.core.test_validation import EXPECTATIONS_DIR, by_id, copy_expectations, make_chunks, make_pages

SLICE = 3  # rows per slice: the test PDFs below are several slices long


@pytest.fixture(scope="module")
def gates() -> Gates:
    return load_gates(EXPECTATIONS_DIR)


def long_pdf(copies: int = 4) -> list[ChunkRecord]:
    """The clean test PDF's chunks repeated under other ids (each copy's children pointing at its parents)."""
    clean = make_chunks(make_pages())
    ids = {chunk.id for chunk in clean}
    return [
        dataclasses.replace(
            chunk,
            id=f"{chunk.id}~{copy}",
            canonical_id=f"{chunk.canonical_id}~{copy}",
            chunk_uid=f"{chunk.chunk_uid}~{copy}",
            parent_id=f"{chunk.parent_id}~{copy}" if chunk.parent_id in ids else chunk.parent_id,
        )
        for copy in range(copies)
        for chunk in clean
    ]


def failing_long_pdf() -> list[ChunkRecord]:
    """Failures in several slices: more short texts than the offenders kept, a duplicate id whose rows are
    slices apart, a child whose parent is in another slice, a stray parent id, an over-long child."""
    chunks = long_pdf(6)
    children = [index for index, chunk in enumerate(chunks) if chunk.chunk_type == "child"]
    for index in children[::2]:
        chunks[index] = dataclasses.replace(chunks[index], text="trop court")
    chunks[children[-1]] = dataclasses.replace(chunks[children[-1]], id=chunks[children[1]].id)
    chunks[children[-3]] = dataclasses.replace(chunks[children[-3]], parent_id=by_id(chunks, "parent").id)
    chunks[children[3]] = dataclasses.replace(chunks[children[3]], parent_id="nowhere")
    chunks[children[5]] = dataclasses.replace(chunks[children[5]], tokens=100_000)
    return chunks


def table(chunks: list[ChunkRecord]) -> pa.Table:
    return pa.table(frame_columns(chunks))


def whole(gates: Gates, chunks: list[ChunkRecord]) -> tuple:
    return expectations_on_columns(gates, frame_columns(chunks), *CAPS)


def test_a_clean_long_pdf_passes_over_slices_as_in_one_frame(gates: Gates) -> None:
    chunks = long_pdf()
    assert len(chunks) > 3 * SLICE
    sliced = expectations_over_slices(gates, table(chunks), *CAPS, slice_rows=SLICE)
    assert sliced == whole(gates, chunks)
    assert all(result.passed for result in sliced)


def test_a_failing_long_pdf_fails_over_slices_as_in_one_frame(gates: Gates) -> None:
    chunks = failing_long_pdf()
    sliced = expectations_over_slices(gates, table(chunks), *CAPS, slice_rows=SLICE)
    assert sliced == whole(gates, chunks)
    failures = {result.expectation: result for result in sliced if not result.passed}
    assert set(failures) == {
        "id_unique",
        "text_min_length",
        "searchable_text_min_length",
        "searchable_tokens_cap",
        "parent_id_resolves",
    }
    short = failures["text_min_length"]
    assert short.unexpected_count > OFFENDING_LIMIT and len(short.offending) == OFFENDING_LIMIT


def test_a_suite_the_slices_cannot_judge_is_run_in_one_frame(tmp_path: Path) -> None:
    lenient = load_gates(copy_expectations(tmp_path, "text_min_length", 0.5, "mostly"))
    assert not sliceable(lenient.partition_suite)
    chunks = failing_long_pdf()
    assert expectations_over_slices(lenient, table(chunks), *CAPS, slice_rows=SLICE) == whole(lenient, chunks)


def test_an_expectation_on_the_texts_that_cannot_run_fails_with_its_error(tmp_path: Path) -> None:
    condition = {"type": "comparison", "column": {"name": "no_such_column"}, "operator": "!=", "parameter": "parent"}
    broken = load_gates(copy_expectations(tmp_path, "searchable_text_min_length", condition, "row_condition"))
    chunks = long_pdf()
    sliced = expectations_over_slices(broken, table(chunks), *CAPS, slice_rows=SLICE)
    assert sliced == whole(broken, chunks)
    assert failed({"pdf": sliced}) == {"pdf": {"searchable_text_min_length"}}


def test_the_process_judges_a_long_pdf_alone_and_the_others_in_their_batch(gates: Gates, tmp_path: Path) -> None:
    pdfs = {**corpus(), "fr/long.pdf": failing_long_pdf(), "fr/long-clean.pdf": long_pdf()}
    files = stored(tmp_path, pdfs)
    assert expectations_for_files(gates, files, *CAPS, slice_rows=SLICE) == per_pdf(gates, pdfs)
    assert list(expectations_for_files(gates, files, *CAPS, slice_rows=SLICE)) == list(pdfs)

