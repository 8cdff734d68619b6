"""Typed records that flow between the stages.

Every stage reads and writes these frozen dataclasses; Parquet storage and the
exports convert them with `to_dict` / `from_dict`, and the stage files' Arrow
schemas are read off their fields (`core/schemas.py`), so one definition serves
the library, the assets, the files on disk and the tests.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import types
import typing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Callable, Sequence

from pocket_assets.core import ids

if TYPE_CHECKING:
    from pocket_assets.core.policy import ChunkPolicy

# The default corpora: the folders under the raw folder that are built, and the seed schema's enum.
CORPORA: tuple[str, ...] = ("fr", "intl")
BLOCK_KINDS: tuple[str, ...] = ("heading", "paragraph", "list", "table", "code", "equation")
CHUNK_TYPES: tuple[str, ...] = ("parent", "child", "table_summary")
SDK_CHUNK_TYPES: tuple[str, ...] = ("child", "table_summary")  # what the phone embeds: one SDK line each
TABLE_TYPES: tuple[str, ...] = ("schedule", "scoring", "other")
CONTENT_TYPES: tuple[str, ...] = ("text", "table", "equation", "mixed")

# An integer field is a 32-bit column of the stage files (`core/schemas.py`) unless its annotation names another
# Arrow width: offsets into a whole document's text and a file's size may pass 2**31 (line numbers go with the
# offsets), a heading level fits in 8 bits.
Int64 = Annotated[int, "int64"]
Int8 = Annotated[int, "int8"]

# Pages are joined with a blank line into the document's canonical text, so a
# page break is always also a paragraph break and never glues two words.
PAGE_SEPARATOR = "\n\n"


@dataclass(frozen=True)
class PdfIdentity:
    """What `raw_pdf` knows about one file: enough to cite it and detect change."""

    partition_key: str  # path under the raw folder, e.g. "fr/faq.pdf"
    corpus: str  # "fr" or "intl", from the first folder of the key
    source: str  # the file name, e.g. "faq.pdf"
    sha256: str
    size_bytes: Int64
    page_count: int
    metadata: dict[str, str] = field(default_factory=dict)  # PDF info dict (title, author, ...)


@dataclass(frozen=True)
class TableCells:
    """A table's cells, kept beside its Markdown so summaries need not re-parse it."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    caption: str | None = None


@dataclass(frozen=True)
class Block:
    """A structural unit of a page; offsets are into that page's `text`."""

    kind: str  # one of BLOCK_KINDS
    char_start: int
    char_end: int
    level: Int8 = 0  # heading level 1..6 (1..4 unless the document labels its parts); 0 for other kinds
    table: TableCells | None = None


@dataclass(frozen=True)
class PageRecord:
    """One PDF page as canonical Markdown, with its place in the document text."""

    page: int  # 1-based
    text: str
    blocks: tuple[Block, ...]
    warnings: tuple[str, ...]
    char_start: Int64  # span of `text` in the document canonical text
    char_end: Int64
    line_start: Int64  # 1-based line number of the page's first line in the document text


@dataclass(frozen=True)
class ContentFeatures:
    heading_count: int = 0
    list_count: int = 0
    table_count: int = 0
    equation_count: int = 0


@dataclass(frozen=True)
class ChunkRecord:
    """The one chunk shape (DESIGN.md section 3) shared by parents, children and table summaries."""

    id: str
    text: str
    source: str
    corpus: str
    chunk_type: str
    page: int
    pages: tuple[int, ...]
    tokens: int
    section: str | None
    section_path: tuple[str, ...]
    section_id: str | None
    article_num: str | None
    parent_id: str | None
    table_type: str | None
    char_start: Int64
    char_end: Int64
    line_from: Int64
    line_to: Int64
    chunk_uid: str
    document_id: str
    canonical_id: str
    hash: str
    anchor: str
    chunk_index: int
    total_chunks: int
    has_overlap_previous: bool
    has_overlap_next: bool
    content_type: str
    content_features: ContentFeatures
    chunker_version: str
    policy_hash: str
    # What the phone embeds before the text (core/chunking/context.py); "" for parents, which are
    # not embedded, and with `context_header = none`.
    context: str = ""
    # Tokens the phone's embedder reads (prompt, context, text, citation: embed_text.text_to_embed, and the
    # special tokens its tokenizer adds: embed_text.count_embedded); 0 for parents. The gates check it
    # against the device's window.
    embedded_tokens: int = 0


@dataclass(frozen=True)
class ChunkPlace:
    """Where a stored chunk is and what it is filed under: the fields a table summary reads of the
    parents and children of its document (`summaries.summarize_tables`). Read as these columns alone,
    not as whole records: a long manual's chunk texts would be the largest thing its worker holds."""

    id: str
    char_start: int
    char_end: int
    section: str | None
    section_path: tuple[str, ...]
    section_id: str | None
    article_num: str | None
    canonical_id: str


CHUNK_PLACE_FIELDS: tuple[str, ...] = tuple(field.name for field in dataclasses.fields(ChunkPlace))
# A parent or child as a table summary reads it: the whole record, or only its place.
PlacedChunk = ChunkRecord | ChunkPlace


def parse_corpora(value: str) -> tuple[str, ...]:
    """`"fr,intl"` -> `("fr", "intl")`: the corpus folder names of a setting, in order, without repeats."""
    names = tuple(dict.fromkeys(name.strip() for name in value.split(",") if name.strip()))
    bad = [name for name in names if "/" in name or "\\" in name or name in (".", "..")]
    if not names or bad:
        raise ValueError(f"corpora must be folder names separated by commas (e.g. 'fr,intl'), got {value!r}")
    return names


def new_chunk(
    identity: PdfIdentity,
    document_id: str,
    policy: ChunkPolicy,
    *,
    id: str,
    text: str,
    anchor_text: str,
    **fields: Any,
) -> ChunkRecord:
    """The one place a chunk record is made: what follows from its PDF (source, corpus), its id and
    text (uuid, content hash, anchor of `anchor_text`) and the policy (versions) is filled here; the
    chunker and the table summaries give the rest in `fields`."""
    return _chunk_of(
        dict(
            id=id,
            text=text,
            source=identity.source,
            corpus=identity.corpus,
            chunk_uid=ids.chunk_uuid(document_id, id),
            document_id=document_id,
            hash=ids.content_hash(text),
            anchor=ids.anchor(anchor_text),
            chunker_version=policy.chunker_version,
            policy_hash=policy.policy_hash,
            **fields,
        )
    )


def record_columns(records: Sequence[Any], names: Sequence[str]) -> dict[str, list[Any]]:
    """Some fields of `records` as columns (name -> values, in the records' order): what a frame or a
    key index needs of them, without each record's other fields."""
    return {name: [getattr(record, name) for record in records] for name in names}


def to_dict(record: Any) -> dict[str, Any]:
    """A plain, JSON-ready dict (tuples become lists), as `dataclasses.asdict` gives it.

    Not `asdict` itself: it deep-copies every leaf; the leaves here are immutable (str, int,
    float, bool, None). Called for every record a stage writes, the gate checks and the export
    writes (millions of fields on a large corpus), so each record type's fields are read
    in one `attrgetter` call and only those whose annotation is not a scalar are converted further.
    """
    names, read, nested = _record_layout(type(record))
    values = dict(zip(names, read(record)))
    for name in nested:
        values[name] = _plain(values[name])
    return values


# The types of values that are their own plain form; a field of any other type goes through `_plain`.
_LEAF_TYPES = frozenset({str, int, float, bool, type(None)})


@functools.lru_cache(maxsize=None)
def _record_layout(record_type: type) -> tuple[tuple[str, ...], Callable[[Any], tuple[Any, ...]], tuple[str, ...]]:
    """A dataclass type's field names, one reader of all their values, and the fields that need `_plain`."""
    names = tuple(field.name for field in dataclasses.fields(record_type))
    read = operator.attrgetter(*names) if len(names) > 1 else lambda record: tuple(getattr(record, name) for name in names)
    hints = typing.get_type_hints(record_type)  # resolved, `Int64` read as `int`
    nested = tuple(name for name in names if not _is_scalar(hints[name]))
    return names, read, nested


def _is_scalar(hint: Any) -> bool:
    """`str`, `int | None`, ...: a leaf type, or a union of leaf types."""
    if typing.get_origin(hint) in (types.UnionType, typing.Union):
        return all(arg in _LEAF_TYPES for arg in typing.get_args(hint))
    return hint in _LEAF_TYPES


def _plain(value: Any) -> Any:
    if type(value) in _LEAF_TYPES:
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_dict(value)
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [item if type(item) in _LEAF_TYPES else _plain(item) for item in value]
    return value


def pdf_identity_from_dict(row: dict[str, Any]) -> PdfIdentity:
    return PdfIdentity(**{**row, "metadata": dict(row.get("metadata") or {})})


def chunk_from_dict(row: dict[str, Any]) -> ChunkRecord:
    """The record a stored row (`to_dict`'s dict, read back from Parquet) stands for.

    Each chunk is read back several times in a build (by the stages and gates after the one that wrote it):
    see `_chunk_of`.
    """
    values = dict(row)
    values["pages"] = tuple(int(page) for page in values["pages"])
    values["section_path"] = tuple(values["section_path"])
    values["content_features"] = ContentFeatures(**values["content_features"])
    return _chunk_of(values)


def _chunk_of(values: dict[str, Any]) -> ChunkRecord:
    """The record of these field values. Values for every field, and only those, are filled in directly:
    the frozen dataclass's `__init__` sets its fields one `object.__setattr__` at a time, most of the cost of
    reading a row back. Any others go through `__init__`, for its defaults and its error on an unknown
    field."""
    if values.keys() != _CHUNK_FIELDS:
        return ChunkRecord(**values)
    chunk = object.__new__(ChunkRecord)
    chunk.__dict__.update(values)
    return chunk


def chunk_place_from_dict(row: dict[str, Any]) -> ChunkPlace:
    """A stored chunk row's `CHUNK_PLACE_FIELDS` (any other key is ignored)."""
    values = {name: row[name] for name in CHUNK_PLACE_FIELDS}
    values["section_path"] = tuple(values["section_path"])
    return ChunkPlace(**values)


_CHUNK_FIELDS = frozenset(field.name for field in dataclasses.fields(ChunkRecord))
