"""What the export keeps and reads back between builds: piece files trusted only whole and made from
what they say, the previous corpus JSON scanned as `json` reads it, the redirect file streamed in the layout
`json.dumps(indent=2)` gives."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from pocket_assets.core.records import to_dict
from pocket_assets.export.corpus_records import piece_validators
from pocket_assets.export.pieces import read_piece_file, read_piece_report, render_piece, write_piece_file
from pocket_assets.export.previous_export import NotACorpusFile, index_path, read_previous_export
from pocket_assets.export.redirects import Meaning
from pocket_assets.export.writer import MODE_B_FILE, REDIRECTS_FILE
from pocket_assets_tests.export.test_writer import SCHEMA_DIR, document_text, export, make_chunks, sample_chunks

INSERTED = "Un article inséré au début du règlement déplace tout le texte qui suit. " * 5


def test_a_piece_file_is_trusted_only_whole_and_made_from_what_it_says(tmp_path: Path) -> None:
    piece = render_piece([to_dict(chunk) for chunk in sample_chunks()], piece_validators(SCHEMA_DIR))
    path = tmp_path / "regles.piece"
    write_piece_file(path, piece, "v1")
    assert read_piece_file(path, "v1") == piece and read_piece_report(path, "v1") == piece.report
    assert read_piece_file(path, "v2") is None and read_piece_report(path, "v2") is None, "made from another version"

    data = path.read_bytes()
    path.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    assert read_piece_report(path, "v1") == piece.report and read_piece_file(path, "v1") is None, "a byte changed"
    path.write_bytes(data[: len(data) // 2])
    assert read_piece_file(path, "v1") is None, "truncated"
    path.write_bytes(data[:40])
    assert read_piece_report(path, "v1") is None and read_piece_file(path, "v1") is None, "cut in its report"
    path.unlink()
    assert read_piece_report(path, "v1") is None and read_piece_file(path, "v1") is None


def test_the_previous_export_is_scanned_as_json_reads_it(tmp_path: Path) -> None:
    written = export(sample_chunks(), tmp_path).paths[MODE_B_FILE]
    document = json.loads(written.read_text(encoding="utf-8"))
    compact = tmp_path / "compact.json"
    compact.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    for path in (written, compact):  # the export's layout, scanned; any other, parsed
        metadata, previous = read_previous_export(path)
        rows = document["chunks"]
        assert metadata == document["metadata"]
        assert list(previous.ids) == [row["id"] for row in rows]
        assert list(previous.hashes) == [row["hash"] for row in rows]
        assert list(previous.groups) == [(row["source"], row["chunk_type"]) for row in rows]
        assert list(previous.load([len(rows) - 1, 0, 3])) == [rows[-1], rows[0], rows[3]]

    index = index_path(written)
    assert index.is_file(), "kept beside the corpus JSON by the export"
    index.rename(tmp_path / "index")  # scanned without it, the same
    metadata, previous = read_previous_export(written)
    assert (list(previous.ids), list(previous.load([2]))) == ([row["id"] for row in rows], [rows[2]])
    (tmp_path / "index").rename(index)
    written.write_text(written.read_text(encoding="utf-8").replace(document["metadata"]["generated"], "2027-01-01T00:00:00Z"))
    assert read_previous_export(written)[0]["generated"] == "2027-01-01T00:00:00Z", "an index of another file is not read"

    empty = export([], tmp_path / "empty").paths[MODE_B_FILE]
    assert list(read_previous_export(empty)[1].ids) == []
    assert read_previous_export(tmp_path / "none.json") is None
    written.write_bytes(written.read_bytes()[:-30])
    with pytest.raises(NotACorpusFile, match="not valid JSON"):
        read_previous_export(written)


def test_the_redirect_file_is_laid_out_as_json_dumps_indent_2(tmp_path: Path) -> None:
    pages = document_text(1, 4)
    export(make_chunks("regles.pdf", pages), tmp_path)
    rebuilt = export(make_chunks("regles.pdf", [INSERTED + pages[0], *pages[1:]]), tmp_path, "2026-02-02T00:00:00Z")
    raw = rebuilt.paths[REDIRECTS_FILE].read_text(encoding="utf-8")
    document = json.loads(raw)
    assert document["history"] and document["redirects"] and document["metadata"]["previous_total"]
    assert raw == json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    assert list(document["history"][0]) == [field.name for field in dataclasses.fields(Meaning)]
