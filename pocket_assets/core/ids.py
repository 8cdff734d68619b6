"""Deterministic identifiers: Mode B ids, canonical ids, UUIDv5s, content hashes, anchors.

Nothing here is random: the same document and policy give the same ids in every
process, which is what makes citations stable and redirect maps possible.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from typing import Iterator

# Fixed namespace for every UUIDv5 this project mints (uuid5 of the project name).
POCKET_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://pocket-assets/chunks")
_NAMESPACE_BYTES = POCKET_NAMESPACE.bytes

# Markdown markers: a heading, item, quote or table mark at a line's start (`str.splitlines`' line breaks),
# and emphasis, code and table characters anywhere. Removed from the whole text in one pass: a line at a time
# would be one `sub` call per line.
_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_SPACE_IN_LINE = f"[^\\S{_LINE_BREAKS}]"
_MARKDOWN_NOISE = re.compile(
    f"(?<![^{_LINE_BREAKS}]){_SPACE_IN_LINE}*"
    f"(?:#{{1,6}}{_SPACE_IN_LINE}+|[-*+]{_SPACE_IN_LINE}+|\\d+[.)]{_SPACE_IN_LINE}+|>{_SPACE_IN_LINE}+|\\|)"
    "|[*_`|]"
)
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")
_ANCHOR_FIRST_PREFIX = 256
_BLOCK_MARK = "|b="
_REVISION_MARK = "r="
# `\s` is what `str.split()` splits on (both are `Py_UNICODE_ISSPACE`; a test checks every code point).
_WHITESPACE = re.compile(r"\s")
_HASHED_PART_CHARS = 1 << 20


def parent_id(source: str, page: int, index: int) -> str:
    return f"{source}-p{page:03d}-parent{index:03d}"


def child_id(parent: str, index: int) -> str:
    return f"{parent}-child{index:02d}"


def table_summary_id(source: str, page: int, index: int) -> str:
    return f"{source}-p{page:03d}-table{index:03d}"


def document_uuid(partition_key: str) -> str:
    """Stable across revisions of the file: the document is its place in the corpus."""
    return _uuid5(f"document:{partition_key}")


def chunk_uuid(document_id: str, chunk_id: str) -> str:
    return _uuid5(f"chunk:{document_id}:{chunk_id}")


def _uuid5(name: str) -> str:
    """`str(uuid.uuid5(POCKET_NAMESPACE, name))`, without building a `UUID` (its checks cost more than the
    hash, once per chunk): the SHA-1 of namespace and name, version 5 and RFC 4122 variant bits set."""
    digest = bytearray(hashlib.sha1(_NAMESPACE_BYTES + name.encode("utf-8")).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50
    digest[8] = (digest[8] & 0x3F) | 0x80
    hex_digits = digest.hex()
    return f"{hex_digits[:8]}-{hex_digits[8:12]}-{hex_digits[12:16]}-{hex_digits[16:20]}-{hex_digits[20:]}"


def content_hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def doc_uid(partition_key: str) -> str:
    """sha1_8 of the normalized corpus path (seed Chunk ID Schema, no stable CMS id here)."""
    return hashlib.sha1(partition_key.strip().lower().encode("utf-8")).hexdigest()[:8]


def revision8(canonical_text: str) -> str:
    """sha1_8 of the whitespace-normalized document text (`" ".join(text.split())`): changes only when
    the text does.

    Hashed a part at a time, each part ending before a whitespace character so that no word is cut:
    the words of a long manual, split at once, would be a string object per word held at once.
    """
    digest = hashlib.sha1()
    separator = b""
    for part in _parts_at_whitespace(canonical_text, _HASHED_PART_CHARS):
        words = part.split()
        if words:
            digest.update(separator + " ".join(words).encode("utf-8"))
            separator = b" "
    return digest.hexdigest()[:8]


def _parts_at_whitespace(text: str, size: int) -> Iterator[str]:
    """`text` in consecutive parts of about `size` characters, each (but the last) followed by whitespace."""
    start = 0
    while start < len(text):
        found = _WHITESPACE.search(text, start + size) if start + size < len(text) else None
        end = found.start() if found else len(text)
        yield text[start:end]
        start = end


def canonical_id(doc: str, revision: str, section_path: str | None, page: int, block: int) -> str:
    """`doc|r=rev8|s=sect|p=page3|b=block3`; an unknown section becomes `p<page3>`."""
    return f"{canonical_place(doc, revision, section_path, page)}{_BLOCK_MARK}{block:03d}"


def canonical_place(doc: str, revision: str, section_path: str | None, page: int) -> str:
    """A canonical id without its block: where blocks are numbered."""
    section = section_path or f"p{page:03d}"
    return f"{doc}|{_REVISION_MARK}{revision}|s={section}|p={page:03d}"


def canonical_revision(canonical: str) -> str:
    """The `rev8` of a canonical id (or place): its document's revision, read back instead of hashed again."""
    parts = canonical.split("|", 2)  # the doc part is hex: the first "|" ends it
    if len(parts) < 3 or not parts[1].startswith(_REVISION_MARK):
        raise ValueError(f"not a canonical id: {canonical!r}")
    return parts[1][len(_REVISION_MARK) :]


def split_canonical_id(canonical: str) -> tuple[str, int | None]:
    """(place, block) of a canonical id; block None when the id has no numbered block."""
    place, _, block = canonical.rpartition(_BLOCK_MARK)
    return place, int(block) if block.isdigit() else None


def anchor(text: str, max_chars: int = 160) -> str:
    """The first salient sentence: Markdown markers dropped, at least a few words long.

    Read from growing prefixes: a sentence followed by more text inside a prefix
    is final (later lines cannot change it), so most chunks never clean their
    whole text. Only the whole text decides when no such sentence qualifies.
    """
    prefix_chars = _ANCHOR_FIRST_PREFIX
    while prefix_chars < len(text):
        sentences = _sentences(text[:prefix_chars])
        chosen = next((sentence for sentence in sentences[:-1] if _salient(sentence)), None)
        if chosen is not None:
            return _shortened(chosen, max_chars)
        prefix_chars *= 4
    sentences = _sentences(text)
    return _shortened(next((sentence for sentence in sentences if _salient(sentence)), " ".join(sentences)), max_chars)


def _sentences(text: str) -> list[str]:
    flat = " ".join(_MARKDOWN_NOISE.sub("", text).split())  # every line break is whitespace to `split`
    return [sentence for sentence in _SENTENCE_END.split(flat) if sentence]


def _salient(sentence: str) -> bool:
    return len(sentence.split()) >= 4


def _shortened(sentence: str, max_chars: int) -> str:
    if len(sentence) <= max_chars:
        return sentence
    cut = sentence[:max_chars]
    return cut[: cut.rfind(" ")] if " " in cut else cut
