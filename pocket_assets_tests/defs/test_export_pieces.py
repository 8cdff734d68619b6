"""android_export from the pieces kept beside the stages: the files a full export writes, byte for
byte; after one PDF changed, only its piece rendered again; a missing, damaged or foreign piece rendered again
from the PDF's validated chunks, never dropped. (A removed PDF: `test_export_asset`.)"""

import json
import shutil
from pathlib import Path

import pytest
from dagster import DagsterInstance

from pocket_assets.core.records import chunk_from_dict
from pocket_assets.defs.resources import CorpusPaths, default_gates
from pocket_assets.export.kept_pieces import piece_path, stored_pieces
from pocket_assets.export.validated_files import read_validated
from pocket_assets.export.writer import export_paths, write_corpus_exports
from pocket_assets.stages.registry import VALIDATED_CHUNKS
from pocket_assets_tests.defs.conftest import materialize_corpus, materialize_export
from pocket_assets_tests.pdf_factory import ARTICLE_FR, text_pdf

KEYS = ["fr/annexe.pdf", "fr/reglement.pdf", "fr/statuts.pdf", "intl/rules.pdf"]
CHUNK_FILES = ("sdk", "mode_b", "hepilot")


@pytest.fixture
def built(instance: DagsterInstance, tmp_path: Path) -> CorpusPaths:
    raw = tmp_path / "raw"
    for number, key in enumerate(KEYS, 1):
        text_pdf(raw / key, [f"Page {page} du document {number}. " + ARTICLE_FR * (3 + number) for page in range(1, 3)])
    paths = CorpusPaths(raw_dir=str(raw), output_dir=str(tmp_path / "out"))
    assert materialize_corpus(instance, paths).success
    assert materialize_export(instance, paths).success
    return paths


def full_export(paths: CorpusPaths, corpus: str, out: Path) -> dict[str, bytes]:
    """What the export writes from every PDF's validated chunks held in memory, with no piece kept and no
    previous export, stamped as the build's files are."""
    store = paths.store()
    chunks = [
        chunk_from_dict(row)
        for key in KEYS
        if key.startswith(f"{corpus}/")
        for row in store.read(VALIDATED_CHUNKS, key)
    ]
    built_json = json.loads(export_paths(corpus, paths.output_path)["mode_b"].read_text(encoding="utf-8"))
    notes = {"stale": [], "left_out": [], "dropped": [], "duplicates": []}
    export = write_corpus_exports(corpus, chunks, out, built_json["metadata"]["generated"], default_gates().expectations_path, notes=notes)
    return {name: export.paths[name].read_bytes() for name in CHUNK_FILES}


def chunk_files(paths: CorpusPaths, corpus: str) -> dict[str, bytes]:
    return {name: export_paths(corpus, paths.output_path)[name].read_bytes() for name in CHUNK_FILES}


def identities(paths: CorpusPaths) -> dict[str, tuple[int, int]]:
    """Each kept piece's inode and modification time: a piece written again is a new file."""
    return {key: (stat.st_ino, stat.st_mtime_ns) for key in KEYS for stat in [piece_path(paths.store(), key).stat()]}


def test_pieces_assembled_write_what_a_full_export_writes(built: CorpusPaths, tmp_path: Path) -> None:
    for corpus in ("fr", "intl"):
        assert chunk_files(built, corpus) == full_export(built, corpus, tmp_path / "full" / corpus)
    assert all(piece_path(built.store(), key).is_file() for key in KEYS), "written with the validated chunks"


def test_after_one_pdf_changed_only_its_piece_is_rendered_again(
    instance: DagsterInstance, built: CorpusPaths, tmp_path: Path
) -> None:
    before = identities(built)
    changed = "fr/reglement.pdf"
    text_pdf(built.raw_path / changed, ["Page 1 réécrite. " + ARTICLE_FR * 9, "Page 2 ajoutée. " + ARTICLE_FR * 2])
    assert materialize_corpus(instance, built, keys=[changed]).success
    written = identities(built)
    assert written[changed] != before[changed]
    assert materialize_export(instance, built).success
    assert identities(built) == written, "the export copied every piece, rendered none"
    assert {key for key in KEYS if written[key] != before[key]} == {changed}
    assert chunk_files(built, "fr") == full_export(built, "fr", tmp_path / "full")
    redirects = json.loads(export_paths("fr", built.output_path)["redirects"].read_text(encoding="utf-8"))
    assert redirects["metadata"]["previous_total"] > 0 and redirects["metadata"]["unchanged"] > 0


def test_a_missing_damaged_or_foreign_piece_is_rendered_again_from_the_validated_chunks(
    instance: DagsterInstance, built: CorpusPaths, tmp_path: Path
) -> None:
    store = built.store()
    truncated, flipped, foreign, missing = (piece_path(store, key) for key in KEYS)
    shutil.copyfile(flipped, foreign)  # another PDF's piece in its place
    truncated.write_bytes(truncated.read_bytes()[: truncated.stat().st_size // 2])
    body = bytearray(flipped.read_bytes())
    body[-10] ^= 0x01  # one bit of a HEPilot line: the report reads, the bytes do not hold
    flipped.write_bytes(bytes(body))
    missing.unlink()

    assert materialize_export(instance, built).success

    for corpus in ("fr", "intl"):
        assert chunk_files(built, corpus) == full_export(built, corpus, tmp_path / "full" / corpus)
    kept = stored_pieces(store, default_gates().expectations_path, {key: read_validated(store, key, ["id"]) for key in KEYS})
    assert all(kept.piece(key) is not None for key in KEYS), "each one rendered again and kept"
    document = json.loads(export_paths("fr", built.output_path)["mode_b"].read_text(encoding="utf-8"))
    assert document["metadata"]["left_out"] == [] and document["metadata"]["stale"] == []
