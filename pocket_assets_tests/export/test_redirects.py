"""Redirect maps from old chunk ids to new ones."""

from __future__ import annotations

import dataclasses

from pocket_assets.core.records import to_dict
from pocket_assets.export.redirects import compute_redirects
from pocket_assets_tests.export.test_writer import children_of, document_text, make_chunks


def test_identical_chunks_map_to_themselves() -> None:
    chunks = make_chunks("regles.pdf", document_text(3, 3))
    result = compute_redirects([to_dict(chunk) for chunk in chunks], chunks)
    assert result.redirects == {chunk.id: chunk.id for chunk in chunks}
    assert result.stats.one_to_one_share == 1.0 and result.stats.unchanged == len(chunks)


def test_same_text_under_a_new_id_is_found_by_hash() -> None:
    chunks = make_chunks("regles.pdf", document_text(3, 3))
    renamed = [dataclasses.replace(chunk, id=chunk.id + "-v2") for chunk in chunks]
    result = compute_redirects([to_dict(chunk) for chunk in chunks], renamed)
    assert result.redirects == {chunk.id: chunk.id + "-v2" for chunk in chunks}
    assert result.stats.unchanged == 0 and result.stats.one_to_one_share == 1.0


def test_only_the_same_text_crosses_documents_and_nothing_crosses_chunk_types() -> None:
    """A renamed PDF's texts are followed to their new ids; a text that changed is matched within its own
    document only, and no text is matched to a chunk of another type."""
    chunks = make_chunks("regles.pdf", document_text(3, 3))
    moved = [dataclasses.replace(chunk, source="autre.pdf", id=chunk.id.replace("regles", "autre")) for chunk in chunks]
    assert compute_redirects([to_dict(chunk) for chunk in chunks], moved).redirects == {
        chunk.id: chunk.id.replace("regles", "autre") for chunk in chunks
    }
    reworded = [dataclasses.replace(chunk, text=chunk.text + " Modifié.", hash="sha256:other") for chunk in moved]
    assert set(compute_redirects([to_dict(chunk) for chunk in chunks], reworded).redirects.values()) == {None}
    retyped = [dataclasses.replace(chunk, chunk_type="parent") for chunk in children_of(chunks)]
    old_children = [to_dict(chunk) for chunk in children_of(chunks)]
    assert set(compute_redirects(old_children, retyped).redirects.values()) == {None}


def test_an_old_span_mostly_outside_every_new_chunk_maps_to_none() -> None:
    old = make_chunks("regles.pdf", document_text(3, 3))
    new = make_chunks("regles.pdf", document_text(3, 3), child_chars=120, overlap_chars=10)
    first_child = children_of(old)[0]
    new_children = [chunk for chunk in children_of(new) if chunk.char_start < first_child.char_end // 3]
    result = compute_redirects([to_dict(first_child)], new_children)
    assert result.redirects == {first_child.id: None}
    assert result.stats.unmapped == 1 and result.stats.one_to_one_share == 0.0


def test_two_old_ids_on_one_new_id_are_not_one_to_one() -> None:
    old = make_chunks("regles.pdf", document_text(3, 3), child_chars=200, overlap_chars=20)
    new = make_chunks("regles.pdf", document_text(3, 3), child_chars=800, overlap_chars=20)
    result = compute_redirects([to_dict(chunk) for chunk in children_of(old)], children_of(new))
    targets = list(result.redirects.values())
    shared = {target for target in targets if targets.count(target) > 1}
    assert shared, "larger new children must each absorb several old ones"
    assert result.stats.one_to_one == sum(1 for target in targets if target not in shared)
    assert result.stats.one_to_one_share < 1.0 and result.stats.unmapped == 0


def test_previous_export_without_hash_offsets_or_canonical_id_still_redirects() -> None:
    """An export from an older version may carry only the seed schema's required fields."""
    chunks = make_chunks("regles.pdf", document_text(3, 3))
    required = ("id", "text", "source", "tokens", "corpus", "chunk_type", "page")
    minimal = [{key: to_dict(chunk)[key] for key in required} for chunk in chunks]
    assert compute_redirects(minimal, chunks).redirects == {chunk.id: chunk.id for chunk in chunks}
    rechunked = make_chunks("regles.pdf", document_text(3, 3), child_chars=300)
    result = compute_redirects(minimal, rechunked)
    assert result.stats.unmapped == 0
