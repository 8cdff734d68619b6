"""The export order: source, then chunk type (parent, child, table_summary), then `chunk_index`, then id.

Stable between builds, so exports diff cleanly; every file lists its chunks in it. The writer plans a
corpus from its key columns alone (`places_in_order`): where each chunk goes, and which PDF holds it.
"""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple, Sequence

from pocket_assets.core.records import CHUNK_TYPES, ChunkRecord
from pocket_assets.export.errors import ExportError

_TYPE_RANK = {chunk_type: rank for rank, chunk_type in enumerate(CHUNK_TYPES)}


def export_order(chunks: Sequence[ChunkRecord]) -> list[ChunkRecord]:
    """Source, chunk type (parent, child, table_summary), chunk_index, id: stable between builds."""
    return sorted(chunks, key=lambda chunk: order_key(chunk.source, chunk.chunk_type, chunk.chunk_index, chunk.id))


def order_key(source: str, chunk_type: str, chunk_index: int, chunk_id: str) -> tuple[str, int, int, str]:
    return (source, _TYPE_RANK.get(chunk_type, len(CHUNK_TYPES)), chunk_index, chunk_id)


class Place(NamedTuple):
    """Where a chunk goes in the files (`order`), and where to find it (`part` position, `row` in it).

    Equal orders (a duplicate id, refused) fall back on part and row: the order of the chunks passed in.
    A tuple, so that sorting the corpus's places compares them in C.
    """

    order: tuple[str, int, int, str]
    part: int
    row: int
    chunk_type: str
    corpus: str

    @property
    def chunk_id(self) -> str:
        return self.order[3]


def places_in_order(keys: Mapping[str, Mapping[str, Sequence[Any]]]) -> list[Place]:
    """Every chunk of the corpus in export order, from the key columns alone (`CorpusParts.keys`)."""
    places = [
        Place(order_key(source, chunk_type, index, chunk_id), position, row, chunk_type, corpus)
        for position, columns in enumerate(keys.values())
        for row, (chunk_id, source, chunk_type, index, corpus) in enumerate(
            zip(columns["id"], columns["source"], columns["chunk_type"], columns["chunk_index"], columns["corpus"])
        )
    ]
    places.sort()
    return places


def runs_by_part(places: Sequence[Place]) -> list[list[Place]]:
    """`places` cut where the part changes: a PDF's chunks are one run (its source sorts them together).

    Two parts whose chunks interleave in export order (two PDFs citing one source name) cannot each be one
    piece: the second part met again is refused, named by its chunk there."""
    runs: list[list[Place]] = []
    for place in places:
        if runs and runs[-1][-1].part == place.part:
            runs[-1].append(place)
        else:
            runs.append([place])
    seen: set[int] = set()
    for run in runs:
        if run[0].part in seen:
            raise ExportError(run[0].chunk_id, f"its PDF's chunks interleave with another PDF's in export order (source {run[0].order[0]!r} cited by both)")
        seen.add(run[0].part)
    return runs


def check_corpus_and_ids(corpus: str, places: Sequence[Place]) -> None:
    seen: set[str] = set()
    for place in places:
        if place.corpus != corpus:
            raise ExportError(place.chunk_id, f"belongs to corpus {place.corpus!r}, not {corpus!r}")
        if place.chunk_id in seen:
            raise ExportError(place.chunk_id, "duplicate chunk id in the corpus")
        seen.add(place.chunk_id)
