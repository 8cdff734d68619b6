"""What the retrieval evaluation searches: what the phone embeds, one `Passage` per SDK line.

A passage is a child's or table summary's SDK line content (the device's document prompt, context
header, text and citation, exactly `embed_text.text_to_embed`), citing one page, and of it what the
device's embedder reads (its window, `device.read_by_embedder`): a line longer than the window is
searched by its start, as on the phone. `passages_from_chunks` makes them from chunk records; the
exported files give the same passages back (`export.read_back`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Sequence

from pocket_assets.core.chunking.embed_text import prompt_for, sdk_content
from pocket_assets.core.device import DeviceProfile, read_by_embedder
from pocket_assets.core.records import SDK_CHUNK_TYPES, ChunkRecord

if TYPE_CHECKING:
    from pocket_assets.core.tokenizer import TokenCounter


# What the phone searches: parents only give context to the LLM, they are never retrieved.
SEARCHABLE_CHUNK_TYPES: tuple[str, ...] = SDK_CHUNK_TYPES


@dataclass(frozen=True)
class Passage:
    """One string the phone searches, as it embeds it, and the page its citation names.

    `id` and `uid` are the chunk's (`id`, `chunk_uid`); `pages` is the cited page alone.
    """

    id: str
    uid: str
    corpus: str
    source: str
    pages: tuple[int, ...]
    text: str


def passages_from_chunks(
    chunks: Iterable[ChunkRecord], device: DeviceProfile | None = None, counter: TokenCounter | None = None
) -> list[Passage]:
    """The passages `passages_from_export` would give for these chunks (children and table summaries), in id
    order."""
    searchable = searchable_chunks(chunks)
    texts = [sdk_content(chunk.text, chunk.source, chunk.page, chunk.context) for chunk in searchable]
    read = as_embedded([chunk.source for chunk in searchable], texts, device, counter)
    return [
        Passage(
            id=chunk.id, uid=chunk.chunk_uid, corpus=chunk.corpus, source=chunk.source, pages=(chunk.page,), text=text
        )
        for chunk, text in zip(searchable, read)
    ]


def as_embedded(
    sources: Sequence[str], contents: Sequence[str], device: DeviceProfile | None, counter: TokenCounter | None
) -> list[str]:
    """SDK line contents as the phone's embedder reads them: the device's document prompt in front, then cut
    to its window when a `counter` (the embedder's tokenizer) is given; the contents alone without a device."""
    if device is None:
        return list(contents)
    texts = [prompt_for(device.document_prompt, source) + content for source, content in zip(sources, contents)]
    return read_by_embedder(texts, device, counter) if counter is not None else texts


def searchable_chunks(
    chunks: Iterable[ChunkRecord], chunk_types: Sequence[str] = SEARCHABLE_CHUNK_TYPES
) -> list[ChunkRecord]:
    """The chunks a phone would search, in id order so that ties rank the same in every run."""
    return sorted((chunk for chunk in chunks if chunk.chunk_type in chunk_types), key=lambda chunk: chunk.id)


def by_corpus(passages: Iterable[Passage]) -> dict[str, list[Passage]]:
    """Passages per corpus, in id order so that ties rank the same in every run."""
    grouped: dict[str, list[Passage]] = {}
    for passage in sorted(passages, key=lambda passage: (passage.id, passage.uid)):
        grouped.setdefault(passage.corpus, []).append(passage)
    return grouped
