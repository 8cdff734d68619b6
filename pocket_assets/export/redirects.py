"""Old chunk id -> new chunk id, so citations saved against a previous export still resolve.

A re-chunk (new chunker version, new policy, changed PDF) re-keys chunks; seed
"Chunk ID Schema" asks for a redirect map from every old id to the id now
covering the same text, and for the share of the mapping that is one to one.

Matching never crosses chunk types, and only the exact text crosses documents:

1. same text: the new chunk with the old chunk's content hash, in its document
   (source and chunk_type: the same id if several share it, else the one
   overlapping the old span most), else anywhere in the corpus (a renamed PDF,
   or the other copy of a PDF now exported in its place: the lowest id);
2. same document text (the `r=` revision of both canonical ids agrees, so
   offsets are comparable): the new chunk of its document whose
   `[char_start, char_end)` overlaps the old span most, if that overlap covers
   at least `min_overlap` of the old span;
3. changed document text (offsets no longer comparable): the new chunk of its
   document that contains the largest share of the old chunk's word 5-grams,
   if that share is at least `min_overlap`;

otherwise the old id maps to None (its text is gone, e.g. its PDF was removed).

`carry_history` keeps every id ever exported, not only the previous build's:
the redirect file holds one entry per *meaning* (an id and the hash of the
text it named when exported) with where that text is now. Ids are positional,
so one id can name different texts in different builds; an id whose meanings
now lead to different places maps to None in the plain map (never silently to
another text), and its meanings stay in the history for a caller that kept the
chunk's `hash`.
"""

from __future__ import annotations

import bisect
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from pocket_assets.core.chunking.embed_text import fold_whitespace
from pocket_assets.core.ids import content_hash
from pocket_assets.core.records import ChunkRecord, to_dict

DEFAULT_MIN_OVERLAP = 0.5
_SHINGLE_WORDS = 5


@dataclass(frozen=True)
class RedirectStats:
    """What a maintainer checks after a re-chunk (seed target: one-to-one share >= 0.95)."""

    previous_total: int  # ids in the previous export
    mapped: int  # old ids with a new id
    unmapped: int  # old ids mapped to None
    unchanged: int  # old ids mapped to themselves
    one_to_one: int  # old ids mapped to a new id that no other old id maps to

    @property
    def one_to_one_share(self) -> float:
        """1.0 when there was nothing to redirect."""
        return self.one_to_one / self.previous_total if self.previous_total else 1.0


@dataclass(frozen=True)
class RedirectMap:
    redirects: dict[str, str | None]  # in the previous export's order
    stats: RedirectStats


@dataclass(frozen=True)
class Meaning:
    """One id as it was once exported (`hash` of the text it named) and where that text is now."""

    id: str
    hash: str
    to: str | None
    to_hash: str | None


@dataclass(frozen=True)
class RedirectHistory:
    """Every meaning ever exported, the plain id -> id map made from it, and the last re-key's stats."""

    meanings: tuple[Meaning, ...]  # sorted by (id, hash)
    redirects: dict[str, str | None]  # every id ever exported, sorted
    ambiguous: tuple[str, ...]  # ids whose meanings lead to different places (mapped to None)
    stats: RedirectStats | None  # of the previous export's ids; None without a previous export


Group = tuple[str, str]  # (source, chunk_type): matching never crosses it
ChunkRow = Mapping[str, Any]  # a chunk as `to_dict` gives it (the corpus JSON's record): what the export reads


@dataclass(frozen=True)
class CurrentChunks:
    """The current export as the redirects read it, without holding its texts.

    `hashes` and `groups` (id -> content hash, id -> group) are held for every chunk;
    `load_group` reads the chunks of one group again (as rows), and is called only for
    groups holding a previous chunk whose id does not name the same text now (a
    re-chunked or changed PDF), one group at a time.
    """

    hashes: Mapping[str, str]
    groups: Mapping[str, Group]
    load_group: Callable[[Group], Sequence[ChunkRow]]

    @classmethod
    def of(cls, chunks: Sequence[ChunkRecord]) -> CurrentChunks:
        """Chunks already in memory."""
        by_group: dict[Group, list[ChunkRow]] = defaultdict(list)
        for chunk in chunks:
            by_group[(chunk.source, chunk.chunk_type)].append(to_dict(chunk))
        return cls(
            hashes={chunk.id: chunk.hash for chunk in chunks},
            groups={chunk.id: (chunk.source, chunk.chunk_type) for chunk in chunks},
            load_group=lambda group: by_group.get(group, []),
        )


@dataclass(frozen=True)
class PreviousChunks:
    """The previous export as the redirects read it, without holding its texts (`core.export.previous_export`).

    `ids`, `hashes` and `groups` are held for every previous chunk, in the file's order; `load(positions)`
    reads the whole records at those positions again, and is called only for the previous chunks whose id
    does not name the same text now, one group at a time.
    """

    ids: Sequence[str]
    hashes: Sequence[str]
    groups: Sequence[Group]
    load: Callable[[Sequence[int]], Sequence[Mapping[str, Any]]]

    @classmethod
    def of(cls, rows: Sequence[Mapping[str, Any]]) -> PreviousChunks:
        """Records already in memory (dicts as read from a `chunks_mode_b_*.json`)."""
        fields = [cls.fields(row) for row in rows]
        return cls(
            ids=[field["id"] for field in fields],
            hashes=[field["hash"] for field in fields],
            groups=[(field["source"], field["chunk_type"]) for field in fields],
            load=lambda positions: [rows[position] for position in positions],
        )

    @staticmethod
    def fields(row: Mapping[str, Any]) -> dict[str, Any]:
        """What is held of a previous record: `id`, `source`, `chunk_type` are required (KeyError without
        them); `hash` is the text's when an older export did not write it."""
        return {
            "id": str(row["id"]),
            "hash": row.get("hash") or content_hash(row["text"]),
            "source": row["source"],
            "chunk_type": row["chunk_type"],
        }


Previous = Sequence[Mapping[str, Any]] | PreviousChunks


def carry_history(
    history: Sequence[Mapping[str, Any]],
    previous: Previous | None,
    current: Sequence[ChunkRecord] | CurrentChunks,
    min_overlap: float = DEFAULT_MIN_OVERLAP,
) -> RedirectHistory:
    """The history after this export, from the last one's (`history`: Meaning dicts) and its chunks.

    A meaning resolves, in order: to itself if the current export holds the same
    id with the same text; to its recorded target if that target (id and text)
    is still there; through `compute_redirects` if its target is a chunk of the
    previous export; else to None. Matching by (id, hash) rather than by the
    previous export alone makes the result the same whether or not a crashed
    export replaced the redirect file before the corpus JSON.
    """
    current = current if isinstance(current, CurrentChunks) else CurrentChunks.of(current)
    previous = previous if previous is None or isinstance(previous, PreviousChunks) else PreviousChunks.of(previous)
    last = compute_redirects(previous, current, min_overlap) if previous is not None else None
    now = current.hashes
    before = dict(zip(previous.ids, previous.hashes)) if previous is not None else {}

    def resolve(chunk_id: str, text_hash: str, to: str | None, to_hash: str | None) -> Meaning:
        if now.get(chunk_id) == text_hash:
            return Meaning(chunk_id, text_hash, chunk_id, text_hash)
        if to is not None and now.get(to) == to_hash:
            return Meaning(chunk_id, text_hash, to, to_hash)
        if to is not None and last is not None and before.get(to) == to_hash:
            target = last.redirects.get(to)
            return Meaning(chunk_id, text_hash, target, now[target] if target else None)
        return Meaning(chunk_id, text_hash, None, None)

    meanings: dict[tuple[str, str], Meaning] = {}
    for row in history:
        key = (str(row["id"]), str(row["hash"]))
        meanings[key] = resolve(*key, row.get("to"), row.get("to_hash"))
    for chunk_id, text_hash in before.items():
        if (chunk_id, text_hash) not in meanings:
            meanings[(chunk_id, text_hash)] = resolve(chunk_id, text_hash, chunk_id, text_hash)
    for chunk_id, text_hash in now.items():
        if (chunk_id, text_hash) not in meanings:
            meanings[(chunk_id, text_hash)] = Meaning(chunk_id, text_hash, chunk_id, text_hash)

    # An id whose meanings lead to different places is ambiguous: None in the plain map.
    first: dict[str, str | None] = {}
    ambiguous: set[str] = set()
    for (chunk_id, _), meaning in meanings.items():
        if chunk_id not in first:
            first[chunk_id] = meaning.to
        elif first[chunk_id] != meaning.to:
            ambiguous.add(chunk_id)
    ids = sorted(first)
    return RedirectHistory(
        meanings=tuple(meanings[key] for key in sorted(meanings)),
        redirects={chunk_id: None if chunk_id in ambiguous else first[chunk_id] for chunk_id in ids},
        ambiguous=tuple(chunk_id for chunk_id in ids if chunk_id in ambiguous),
        stats=last.stats if last else None,
    )


def resolve_redirect(document: Mapping[str, Any], chunk_id: str, text_hash: str | None = None) -> str | None:
    """Where a cited chunk is now, from an `id_redirects_*.json` document.

    With the `hash` the chunk had when it was cited, the answer is exact even for
    an id that named different texts over builds; without it, the plain map
    (None for such an id, and for an id never exported).
    """
    if text_hash is not None:
        for meaning in document.get("history", ()):
            if meaning["id"] == chunk_id and meaning["hash"] == text_hash:
                return meaning["to"]
        return None
    return document.get("redirects", {}).get(chunk_id)


@dataclass(frozen=True)
class _Span:
    """The part of a chunk that matching looks at, from a current chunk's row or a previous export's JSON."""

    id: str
    group: Group
    hash: str
    start: int | None
    end: int | None
    revision: str | None
    text: str

    def overlap(self, other: _Span) -> int:
        if self.start is None or self.end is None or other.start is None or other.end is None:
            return 0
        return max(0, min(self.end, other.end) - max(self.start, other.start))


def compute_redirects(
    previous: Previous,
    current: Sequence[ChunkRecord] | CurrentChunks,
    min_overlap: float = DEFAULT_MIN_OVERLAP,
) -> RedirectMap:
    """Map every chunk of `previous` (dicts as read from a `chunks_mode_b_*.json`) to a chunk of `current`.

    Previous chunks are plain dicts, not records: an export written by an older
    version may lack fields the current record has. Only `id`, `source`,
    `chunk_type` and `text` are required; `hash`, `char_start`, `char_end` and
    `canonical_id` are used when present.

    A previous chunk whose id names the same text in the same group now maps to
    itself (what the same-text rule gives it) without either record being read, and one
    whose group is gone is looked for by its hash alone; the other groups are read one at
    a time, theirs and the previous ones (`CurrentChunks.load_group`, `PreviousChunks.load`).
    """
    current = current if isinstance(current, CurrentChunks) else CurrentChunks.of(current)
    previous = previous if isinstance(previous, PreviousChunks) else PreviousChunks.of(previous)
    current_groups = set(current.groups.values())
    elsewhere = _TextElsewhere(current)
    targets: list[str | None] = [None] * len(previous.ids)
    changed: dict[Group, list[int]] = defaultdict(list)
    for position, (old_id, old_hash, group) in enumerate(zip(previous.ids, previous.hashes, previous.groups)):
        if current.hashes.get(old_id) == old_hash and current.groups.get(old_id) == group:
            targets[position] = old_id
        elif group in current_groups:
            changed[group].append(position)
        else:
            targets[position] = elsewhere.holder(group[1], old_hash)
    for group in sorted(changed):
        index = _GroupIndex([_span_from_row(row) for row in current.load_group(group)])
        for position, row in zip(changed[group], previous.load(changed[group])):
            old = _span_from_row(row)
            targets[position] = (
                index.same_text(old) or elsewhere.holder(group[1], old.hash) or index.nearest(old, min_overlap)
            )

    redirects: dict[str, str | None] = {}
    for old_id, target in zip(previous.ids, targets):
        redirects[old_id] = target
    return RedirectMap(redirects=redirects, stats=_stats(redirects))


def _stats(redirects: Mapping[str, str | None]) -> RedirectStats:
    targets = Counter(target for target in redirects.values() if target is not None)
    mapped = sum(targets.values())
    return RedirectStats(
        previous_total=len(redirects),
        mapped=mapped,
        unmapped=len(redirects) - mapped,
        unchanged=sum(1 for old, new in redirects.items() if old == new),
        one_to_one=sum(1 for new in redirects.values() if new is not None and targets[new] == 1),
    )


class _TextElsewhere:
    """The current chunks by (chunk_type, text hash), made on first use: where a text that left its document
    (a renamed PDF, a copy exported in place of another) is now."""

    def __init__(self, current: CurrentChunks) -> None:
        self._current = current
        self._holders: dict[tuple[str, str], str] | None = None

    def holder(self, chunk_type: str, text_hash: str) -> str | None:
        """The lowest id of a current chunk of `chunk_type` holding the text, or None."""
        if self._holders is None:
            self._holders = {}
            for chunk_id in sorted(self._current.hashes):
                self._holders.setdefault((self._current.groups[chunk_id][1], self._current.hashes[chunk_id]), chunk_id)
        return self._holders.get((chunk_type, text_hash))


class _GroupIndex:
    """The new chunks of one (source, chunk_type), indexed three ways for the three match rules."""

    def __init__(self, spans: list[_Span]) -> None:
        self._by_hash: dict[str, list[_Span]] = defaultdict(list)
        for span in spans:
            self._by_hash[span.hash].append(span)
        located = [(span.start, span.end, span) for span in spans if span.start is not None and span.end is not None]
        located.sort(key=lambda item: (item[0], item[1], item[2].id))
        self._by_start = [span for _, _, span in located]
        self._starts = [start for start, _, _ in located]
        self._longest = max((end - start for start, end, _ in located), default=0)
        self._revisions = {span.revision for span in spans}
        self._spans = spans
        self._shingle_index: dict[tuple[str, ...], set[int]] | None = None

    def same_text(self, old: _Span) -> str | None:
        """The new chunk holding the old one's text: the same id if several do, else the one overlapping it most."""
        same_text = self._by_hash.get(old.hash)
        if same_text:
            return min(same_text, key=lambda span: (span.id != old.id, -span.overlap(old), span.id)).id
        return None

    def nearest(self, old: _Span, min_overlap: float) -> str | None:
        """The new chunk covering most of the old one's place (same document text) or words (changed text)."""
        if old.revision is not None and self._revisions == {old.revision}:
            return self._best_by_offsets(old, min_overlap)
        return self._best_by_shingles(old, min_overlap)

    def _best_by_offsets(self, old: _Span, min_overlap: float) -> str | None:
        if old.start is None or old.end is None or old.end <= old.start:
            return None
        first = bisect.bisect_left(self._starts, old.start - self._longest)
        last = bisect.bisect_left(self._starts, old.end)
        candidates = self._by_start[first:last]
        best = max(candidates, key=lambda span: (span.overlap(old), span.id == old.id, span.id), default=None)
        if best is None or best.overlap(old) < min_overlap * (old.end - old.start):
            return None
        return best.id

    def _best_by_shingles(self, old: _Span, min_overlap: float) -> str | None:
        old_shingles = _shingles(old.text)
        if not old_shingles:
            return None
        index = self._shingles()
        hits: Counter[int] = Counter()
        for shingle in old_shingles:
            hits.update(index.get(shingle, ()))
        if not hits:
            return None
        position, count = min(hits.items(), key=lambda item: (-item[1], item[0]))
        return self._spans[position].id if count >= min_overlap * len(old_shingles) else None

    def _shingles(self) -> dict[tuple[str, ...], set[int]]:
        """Built on first use: only documents whose text changed need it."""
        if self._shingle_index is None:
            self._shingle_index = defaultdict(set)
            for position, span in enumerate(self._spans):
                for shingle in _shingles(span.text):
                    self._shingle_index[shingle].add(position)
        return self._shingle_index


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = fold_whitespace(text).split(" ")
    if len(words) < _SHINGLE_WORDS:
        return {tuple(words)} if words != [""] else set()
    return {tuple(words[i : i + _SHINGLE_WORDS]) for i in range(len(words) - _SHINGLE_WORDS + 1)}


def _revision(canonical: str | None) -> str | None:
    """The `r=rev8` part of a canonical id: equal revisions mean offsets point into the same text."""
    for part in (canonical or "").split("|"):
        if part.startswith("r="):
            return part[2:]
    return None


def _span_from_row(row: Mapping[str, Any]) -> _Span:
    start, end = row.get("char_start"), row.get("char_end")
    return _Span(
        id=row["id"],
        group=(row["source"], row["chunk_type"]),
        hash=row.get("hash") or content_hash(row["text"]),
        start=int(start) if start is not None else None,
        end=int(end) if end is not None else None,
        revision=_revision(row.get("canonical_id")),
        text=row["text"],
    )
