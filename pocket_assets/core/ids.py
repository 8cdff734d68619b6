"""Deterministic identifiers: Mode B ids, canonical ids, UUIDv5s, content hashes, anchors.

Nothing here is random: the same document and policy give the same ids in every
process, which is what makes citations stable and redirect maps possible.
"""

from __future__ import annotations

import hashlib
import re
import uuid

# Fixed namespace for every UUIDv5 this project mints (uuid5 of the project name).
POCKET_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://pocket-assets/chunks")

_WHITESPACE = re.compile(r"\s+")
_MARKDOWN_NOISE = re.compile(r"^\s*(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s+|\|)|[*_`|]")
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")


def parent_id(source: str, page: int, index: int) -> str:
    return f"{source}-p{page:03d}-parent{index:03d}"


def child_id(parent: str, index: int) -> str:
    return f"{parent}-child{index:02d}"


def table_summary_id(source: str, page: int, index: int) -> str:
    return f"{source}-p{page:03d}-table{index:03d}"


def document_uuid(partition_key: str) -> str:
    """Stable across revisions of the file: the document is its place in the corpus."""
    return str(uuid.uuid5(POCKET_NAMESPACE, f"document:{partition_key}"))


def chunk_uuid(document_id: str, chunk_id: str) -> str:
    return str(uuid.uuid5(POCKET_NAMESPACE, f"chunk:{document_id}:{chunk_id}"))


def content_hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def doc_uid(partition_key: str) -> str:
    """sha1_8 of the normalized corpus path (seed Chunk ID Schema, no stable CMS id here)."""
    return hashlib.sha1(partition_key.strip().lower().encode("utf-8")).hexdigest()[:8]


def revision8(canonical_text: str) -> str:
    """sha1_8 of the whitespace-normalized document text: changes only when the text does."""
    normalized = _WHITESPACE.sub(" ", canonical_text).strip()
    return hashlib.sha1(normalized.encode("utf-8")).hexdigest()[:8]


def canonical_id(doc: str, revision: str, section_path: str | None, page: int, block: int) -> str:
    """`doc|r=rev8|s=sect|p=page3|b=block3`; an unknown section becomes `p<page3>`."""
    section = section_path or f"p{page:03d}"
    return f"{doc}|r={revision}|s={section}|p={page:03d}|b={block:03d}"


def anchor(text: str, max_chars: int = 160) -> str:
    """The first salient sentence: Markdown markers dropped, at least a few words long."""
    lines = [_MARKDOWN_NOISE.sub("", line).strip() for line in text.splitlines()]
    flat = " ".join(line for line in lines if line)
    flat = _WHITESPACE.sub(" ", flat).strip()
    sentences = [sentence for sentence in _SENTENCE_END.split(flat) if sentence]
    chosen = next((sentence for sentence in sentences if len(sentence.split()) >= 4), flat)
    if len(chosen) > max_chars:
        cut = chosen[:max_chars]
        chosen = cut[: cut.rfind(" ")] if " " in cut else cut
    return chosen
