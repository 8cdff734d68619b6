"""The export read one part (one PDF) at a time (`write_corpus_parts`) writes what the corpus held in memory does."""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest

from pocket_assets.core.chunking.embed_text import sdk_line
from pocket_assets.core.records import SDK_CHUNK_TYPES, ChunkRecord, to_dict
from pocket_assets.core.schemas import CHUNK_SCHEMA
from pocket_assets.export.corpus_records import hepilot_record, piece_validators
from pocket_assets.export.errors import ExportError
from pocket_assets.export.order import export_order
from pocket_assets.export.pieces import PieceFileCache, render_piece
from pocket_assets.export.validated_files import ValidatedChunks
from pocket_assets.export.writer import (
    HEPILOT_FILE,
    MODE_B_FILE,
    SDK_FILE,
    CorpusExport,
    CorpusParts,
    export_paths,
    key_columns,
    write_corpus_exports,
    write_corpus_parts,
)
from pocket_assets_tests.export.test_writer import GENERATED, SCHEMA_DIR, document_text, make_chunks

REBUILT = "2026-02-02T00:00:00Z"


class CountedParts:
    """Parts kept apart (each shuffled, as a stage file need not be in export order), loads counted."""

    def __init__(self, chunks_by_part: dict[str, list[ChunkRecord]]) -> None:
        self.chunks = {part: chunks[::-1] for part, chunks in chunks_by_part.items()}
        self.loads: Counter[str] = Counter()

    def parts(self) -> CorpusParts:
        return CorpusParts(keys={part: key_columns(chunks) for part, chunks in self.chunks.items()}, load=self._load)

    def _load(self, part: str) -> list[dict]:
        self.loads[part] += 1
        return [to_dict(chunk) for chunk in self.chunks[part]]


def three_pdfs(statuts_pages: list[str] | None = None) -> dict[str, list[ChunkRecord]]:
    return {
        "fr/regles.pdf": make_chunks("regles.pdf", document_text(1, 4)),
        "fr/annexe.pdf": make_chunks("annexe.pdf", document_text(2, 2)),
        "fr/statuts.pdf": make_chunks("statuts.pdf", statuts_pages or document_text(3, 3)),
    }


def flat(chunks_by_part: dict[str, list[ChunkRecord]]) -> list[ChunkRecord]:
    return [chunk for chunks in chunks_by_part.values() for chunk in chunks]


def file_bytes(export: CorpusExport) -> dict[str, bytes]:
    return {name: path.read_bytes() for name, path in export.paths.items()}


def previous_export(out_dir: Path) -> None:
    """A first export of the three PDFs, so the rebuild carries redirects."""
    write_corpus_exports("fr", flat(three_pdfs()), out_dir, GENERATED, SCHEMA_DIR)


def test_parts_read_one_at_a_time_write_what_the_corpus_in_memory_writes(tmp_path: Path) -> None:
    streamed_dir, held_dir = tmp_path / "streamed", tmp_path / "held"
    previous_export(streamed_dir)
    shutil.copytree(streamed_dir, held_dir)
    edited = ["Article inséré au début des statuts de la fédération. " + page for page in document_text(3, 3)]
    rebuilt = three_pdfs(statuts_pages=edited)
    del rebuilt["fr/annexe.pdf"]  # removed from the folder: its ids redirect to null
    counted = CountedParts(rebuilt)

    streamed = write_corpus_parts("fr", counted.parts(), streamed_dir, REBUILT, SCHEMA_DIR)
    held = write_corpus_exports("fr", flat(rebuilt), held_dir, REBUILT, SCHEMA_DIR)

    assert file_bytes(streamed) == file_bytes(held)
    assert (streamed.counts, streamed.preview_lines, streamed.redirect_stats) == (
        held.counts,
        held.preview_lines,
        held.redirect_stats,
    )
    assert counted.loads == {"fr/regles.pdf": 1, "fr/statuts.pdf": 2}, "the changed PDF is read again for its redirects"


def test_the_files_are_those_of_the_whole_corpus_in_export_order(tmp_path: Path) -> None:
    """Against the files' definitions, not the writer: one JSON document, one SDK line per child and summary."""
    chunks_by_part = three_pdfs()
    export = write_corpus_parts("fr", CountedParts(chunks_by_part).parts(), tmp_path, GENERATED, SCHEMA_DIR)
    ordered = export_order(flat(chunks_by_part))
    document = {
        "metadata": {"corpus": "fr", "generated": GENERATED, "total_chunks": len(ordered), "schema_version": "1.0"},
        "chunks": [to_dict(chunk) for chunk in ordered],
    }
    written = export.paths[MODE_B_FILE].read_text(encoding="utf-8")
    assert written == json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    sdk = [sdk_line(c.text, c.source, c.page, c.context) for c in ordered if c.chunk_type in SDK_CHUNK_TYPES]
    assert export.paths[SDK_FILE].read_text(encoding="utf-8") == "".join(line + "\n" for line in sdk)
    hepilot = [json.dumps(hepilot_record(to_dict(chunk)), ensure_ascii=False) + "\n" for chunk in ordered]
    assert export.paths[HEPILOT_FILE].read_text(encoding="utf-8") == "".join(hepilot)


def test_a_refused_chunk_names_its_pdf_and_the_others_ship_as_in_memory(tmp_path: Path) -> None:
    """The first error is the one the three files written one after the other would raise; the caller
    (`android_export`) then leaves that PDF out and writes the others."""
    chunks_by_part = three_pdfs()
    regles = chunks_by_part["fr/regles.pdf"]
    statuts = chunks_by_part["fr/statuts.pdf"]
    # annexe (first in export order) breaks the chunk schema; statuts (later) holds an SDK line the export refuses:
    # the SDK file is written first, so statuts is named.
    chunks_by_part["fr/annexe.pdf"][1] = dataclasses.replace(chunks_by_part["fr/annexe.pdf"][1], text="trop court")
    statuts[-2] = dataclasses.replace(statuts[-2], context="Règles | Page 3")
    for write in (
        lambda: write_corpus_parts("fr", CountedParts(chunks_by_part).parts(), tmp_path, GENERATED, SCHEMA_DIR),
        lambda: write_corpus_exports("fr", flat(chunks_by_part), tmp_path, GENERATED, SCHEMA_DIR),
    ):
        with pytest.raises(ExportError, match="holds '|'") as refused:
            write()
        assert refused.value.chunk_id == statuts[-2].id
    assert not any(path.exists() for path in export_paths("fr", tmp_path).values())

    del chunks_by_part["fr/statuts.pdf"]
    with pytest.raises(ExportError, match="chunk.schema.json") as refused:
        write_corpus_parts("fr", CountedParts(chunks_by_part).parts(), tmp_path, GENERATED, SCHEMA_DIR)
    assert refused.value.chunk_id == chunks_by_part["fr/annexe.pdf"][1].id

    del chunks_by_part["fr/annexe.pdf"]
    regles[3] = dataclasses.replace(regles[3], chunk_uid="not-a-uuid")
    with pytest.raises(ExportError, match="hepilot") as refused:
        write_corpus_parts("fr", CountedParts(chunks_by_part).parts(), tmp_path, GENERATED, SCHEMA_DIR)
    assert refused.value.chunk_id == regles[3].id

    shipped = {"fr/statuts.pdf": make_chunks("statuts.pdf", document_text(3, 3))}
    streamed = write_corpus_parts("fr", CountedParts(shipped).parts(), tmp_path / "streamed", GENERATED, SCHEMA_DIR)
    held = write_corpus_exports("fr", flat(shipped), tmp_path / "held", GENERATED, SCHEMA_DIR)
    assert file_bytes(streamed) == file_bytes(held)


def test_an_id_held_by_two_pdfs_is_caught_and_named(tmp_path: Path) -> None:
    chunks_by_part = three_pdfs()
    twin = chunks_by_part["fr/regles.pdf"][4]
    chunks_by_part["fr/statuts.pdf"].append(dataclasses.replace(twin, source="statuts.pdf"))
    counted = CountedParts(chunks_by_part)
    with pytest.raises(ExportError, match="duplicate chunk id in the corpus") as refused:
        write_corpus_parts("fr", counted.parts(), tmp_path, GENERATED, SCHEMA_DIR)
    assert refused.value.chunk_id == twin.id
    assert not counted.loads, "caught on the key columns, before any PDF is read again"


@pytest.mark.parametrize("schema", [CHUNK_SCHEMA, None], ids=["todays-schema", "inferred-types"])
def test_chunks_read_from_arrow_a_batch_at_a_time_export_as_records_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, schema: pa.Schema | None
) -> None:
    """`ValidatedChunks` (what `android_export` loads a PDF's validated file as) in batches smaller than a PDF:
    a file in the stage's schema is read a column at a time, one written otherwise through its records."""
    monkeypatch.setattr(ValidatedChunks, "BATCH_ROWS", 7)
    chunks_by_part = three_pdfs()
    tables = {
        part: pa.Table.from_pylist([to_dict(chunk) for chunk in chunks[::-1]], schema=schema)
        for part, chunks in chunks_by_part.items()
    }
    regles = ValidatedChunks(tables["fr/regles.pdf"])
    rows = [to_dict(chunk) for chunk in chunks_by_part["fr/regles.pdf"]]
    assert list(regles) == rows[::-1]
    assert [regles[row] for row in reversed(range(len(regles)))] == rows
    assert [list(row) for row in regles] == [list(row) for row in rows[::-1]], "the fields in the records' order"
    with pytest.raises(IndexError):
        regles[len(regles)]
    parts = CorpusParts(
        keys={part: key_columns(chunks[::-1]) for part, chunks in chunks_by_part.items()},
        load=lambda part: ValidatedChunks(tables[part]),
    )
    streamed = write_corpus_parts("fr", parts, tmp_path / "streamed", GENERATED, SCHEMA_DIR)
    held = write_corpus_exports("fr", flat(chunks_by_part), tmp_path / "held", GENERATED, SCHEMA_DIR)
    assert file_bytes(streamed) == file_bytes(held)


def test_a_file_of_an_older_schema_exports_its_records_defaults(tmp_path: Path) -> None:
    """A stale PDF ships a validated file written before the context header existed: its chunks read
    back with the records' defaults (no header, no embedded count), as `chunk_from_dict` makes them."""
    chunks = [dataclasses.replace(chunk, context="", embedded_tokens=0) for chunk in three_pdfs()["fr/regles.pdf"]]
    older = pa.Table.from_pylist(
        [{name: value for name, value in to_dict(chunk).items() if name not in ("context", "embedded_tokens")} for chunk in chunks]
    )
    assert list(ValidatedChunks(older)) == [to_dict(chunk) for chunk in chunks]


def pieces_kept_last_first(chunks_by_part: dict[str, list[ChunkRecord]], folder: Path) -> PieceFileCache:
    """Each PDF's piece rendered ahead, the last PDF first (as a build writes them, in any order), and kept
    in files as the build keeps them."""
    cache = PieceFileCache(path=lambda part: folder / f"{part}.piece", made_from={part: "v1" for part in chunks_by_part})
    validators = piece_validators(SCHEMA_DIR)
    for part in reversed(list(chunks_by_part)):
        cache.keep(part, render_piece([to_dict(chunk) for chunk in chunks_by_part[part]], validators))
    return cache


def test_pieces_rendered_ahead_in_any_order_join_into_the_same_files(tmp_path: Path) -> None:
    """Each PDF's piece may be rendered elsewhere, earlier and in any order: the files, preview and counts are
    those of the one-pass export, no PDF is read again for them, and the same error is raised."""
    chunks_by_part = three_pdfs()
    in_order = write_corpus_parts("fr", CountedParts(chunks_by_part).parts(), tmp_path / "in-order", GENERATED, SCHEMA_DIR)
    counted = CountedParts(chunks_by_part)
    kept = dataclasses.replace(counted.parts(), piece_cache=pieces_kept_last_first(chunks_by_part, tmp_path / "pieces"))
    ahead = write_corpus_parts("fr", kept, tmp_path / "ahead", GENERATED, SCHEMA_DIR)
    assert file_bytes(ahead) == file_bytes(in_order)
    assert (ahead.counts, ahead.preview_lines) == (in_order.counts, in_order.preview_lines)
    assert len(in_order.preview_lines) == 5 and len(chunks_by_part) == 3
    assert not counted.loads, "every piece copied as kept"

    # The SDK error of the last PDF wins over the schema error of the first, whichever piece was rendered first.
    chunks_by_part["fr/annexe.pdf"][1] = dataclasses.replace(chunks_by_part["fr/annexe.pdf"][1], text="trop court")
    statuts = chunks_by_part["fr/statuts.pdf"]
    statuts[-2] = dataclasses.replace(statuts[-2], context="Règles | Page 3")
    kept = dataclasses.replace(CountedParts(chunks_by_part).parts(), piece_cache=pieces_kept_last_first(chunks_by_part, tmp_path / "bad"))
    with pytest.raises(ExportError, match="holds '|'") as refused:
        write_corpus_parts("fr", kept, tmp_path / "refused", GENERATED, SCHEMA_DIR)
    assert refused.value.chunk_id == statuts[-2].id
    assert not (tmp_path / "refused").exists() or not list((tmp_path / "refused").iterdir()), "no export, no temp left"
    left = sorted(path.name for path in (tmp_path / "ahead").iterdir())
    assert left == sorted([*(path.name for path in ahead.paths.values()), ".chunks_mode_b_fr.json.index"]), "no temp left"


def test_a_part_that_changed_during_the_export_is_named(tmp_path: Path) -> None:
    chunks_by_part = three_pdfs()
    counted = CountedParts(chunks_by_part)
    parts = counted.parts()
    counted.chunks["fr/statuts.pdf"] = counted.chunks["fr/statuts.pdf"][1:]  # rewritten after its ids were read
    with pytest.raises(ExportError, match="no longer holds this chunk"):
        write_corpus_parts("fr", parts, tmp_path, GENERATED, SCHEMA_DIR)
    assert not list(tmp_path.iterdir())
