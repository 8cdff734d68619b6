"""`id_redirects_{corpus}.json` over many builds: every id ever exported resolves, never to another text."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from pocket_assets.core.records import ChunkRecord
from pocket_assets.export.lock import export_lock
from pocket_assets.export.redirects import resolve_redirect
from pocket_assets.export.writer import remove_leftover_temps
from pocket_assets_tests.export.test_writer import document_text, export, make_chunks

INSERTED = "Article nouveau inséré par la fédération au début du règlement, avant tout le reste. " * 6


def _builds() -> list[list[ChunkRecord]]:
    """v1, v2 (text inserted at the start: positional ids now name other texts), v3 (a page removed)."""
    pages = document_text(1, 4)
    annexe = make_chunks("annexe.pdf", document_text(2, 2))
    return [
        [*make_chunks("regles.pdf", pages), *annexe],
        [*make_chunks("regles.pdf", [INSERTED + pages[0], *pages[1:]]), *annexe],
        [*make_chunks("regles.pdf", [INSERTED + pages[0], *pages[1:3]]), *annexe],
    ]


def _document(out: Path) -> dict:
    return json.loads((out / "id_redirects_fr.json").read_text(encoding="utf-8"))


def _check_every_meaning(document: dict, exported: list[list[ChunkRecord]], current: list[ChunkRecord]) -> None:
    """Every (id, text) ever exported resolves to a current chunk holding that text, or to None."""
    now = {chunk.id: chunk for chunk in current}
    for build in exported:
        for old in build:
            assert old.id in document["redirects"], f"{old.id} was exported once and must stay in the map"
            target = resolve_redirect(document, old.id, old.hash)
            if target is not None:
                assert target in now
                assert now[target].source == old.source and now[target].chunk_type == old.chunk_type
            plain = document["redirects"][old.id]
            if plain is not None:  # the plain map never sends an id to a text it did not name
                assert plain == target, f"{old.id} resolves to {plain}, but its text {old.hash} went to {target}"


def test_three_builds_keep_every_id_and_never_resolve_to_other_text(tmp_path: Path) -> None:
    builds = _builds()
    for number, chunks in enumerate(builds):
        export(chunks, tmp_path, generated=f"2026-01-0{number + 1}T00:00:00Z")
        _check_every_meaning(_document(tmp_path), builds[: number + 1], chunks)
    document = _document(tmp_path)
    assert document["metadata"]["ambiguous"] > 0, "v2 reused ids for other texts: the test must exercise that"
    unchanged = [chunk for chunk in builds[0] if chunk.source == "annexe.pdf"]
    assert all(document["redirects"][chunk.id] == chunk.id for chunk in unchanged)
    removed_page = [chunk for chunk in builds[1] if chunk.source == "regles.pdf" and chunk.pages == (4,)]
    assert removed_page and all(resolve_redirect(document, c.id, c.hash) is None for c in removed_page)


def test_unchanged_rebuilds_after_a_change_do_not_turn_the_map_into_identity(tmp_path: Path) -> None:
    first, second, _ = _builds()
    export(first, tmp_path, generated="2026-01-01T00:00:00Z")
    export(second, tmp_path, generated="2026-01-02T00:00:00Z")
    after_change = _document(tmp_path)
    for number in range(3):  # one more build, then overlapping builds that both saw nothing new
        export(second, tmp_path, generated=f"2026-01-0{number + 3}T00:00:00Z")
    document = _document(tmp_path)
    assert document["history"] == after_change["history"]
    assert document["redirects"] == after_change["redirects"]
    moved = [chunk for chunk in first if resolve_redirect(document, chunk.id, chunk.hash) not in (None, chunk.id)]
    assert moved, "v1 chunks whose text moved keep pointing where it went"
    assert any(document["redirects"][chunk.id] != chunk.id for chunk in moved)
    _check_every_meaning(document, [first, second], second)


def test_a_crash_between_the_redirect_file_and_the_corpus_json_changes_nothing(tmp_path: Path) -> None:
    first, second, _ = _builds()
    clean, crashed = tmp_path / "clean", tmp_path / "crashed"
    for out in (clean, crashed):
        export(first, out, generated="2026-01-01T00:00:00Z")
    snapshot = (crashed / "chunks_mode_b_fr.json").read_bytes()
    export(second, crashed, generated="2026-01-02T00:00:00Z")
    (crashed / "chunks_mode_b_fr.json").write_bytes(snapshot)  # the redirect file was renamed, the JSON not
    for out in (clean, crashed):
        export(second, out, generated="2026-01-03T00:00:00Z")
    assert _document(clean)["history"] == _document(crashed)["history"]


def test_overlapping_exports_under_the_lock_keep_both_histories(tmp_path: Path) -> None:
    first, second, third = _builds()
    export(first, tmp_path, generated="2026-01-01T00:00:00Z")
    errors: list[BaseException] = []

    def build(chunks: list[ChunkRecord], stamp: str) -> None:
        try:
            with export_lock(tmp_path):
                export(chunks, tmp_path, generated=stamp)
        except BaseException as error:  # reported by the assertion below
            errors.append(error)

    stamps = {"2026-01-02T00:00:00Z": second, "2026-01-03T00:00:00Z": third}
    threads = [threading.Thread(target=build, args=(chunks, stamp)) for stamp, chunks in stamps.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    document = _document(tmp_path)
    final = stamps[document["metadata"]["generated"]]
    assert document["metadata"]["previous_generated"] in stamps, "the later export started from the earlier one"
    _check_every_meaning(document, [first, second, third], final)


def test_leftover_temps_of_a_killed_export_are_removed(tmp_path: Path) -> None:
    export(_builds()[0], tmp_path)
    leftovers = [
        tmp_path / ".chunks_fr.txt.k1ll3d00.tmp",
        tmp_path / ".id_redirects_fr.json.abcd1234.tmp",
        tmp_path / ".chunks_fr.piece.x9y8z7.tmp",  # a piece kept for that export alone
        tmp_path / "..chunks_mode_b_fr.json.index.0a1b2c3d.tmp",  # the corpus JSON's index
    ]
    unrelated = tmp_path / ".notes.txt.tmp"
    for path in [*leftovers, unrelated]:
        path.write_text("half written", encoding="utf-8")
    assert sorted(remove_leftover_temps(tmp_path)) == sorted(leftovers)
    assert not any(path.exists() for path in leftovers) and unrelated.exists()
