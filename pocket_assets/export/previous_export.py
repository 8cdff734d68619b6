"""The previous corpus JSON as the redirects read it: every chunk's id, text hash and group, texts on demand.

The redirects need the id, hash and (source, chunk_type) of every chunk the last export held, and the
whole record only of those whose id no longer names the same text (a changed or re-chunked PDF). The
corpus JSON of a large corpus is hundreds of MB: `json.load` of it costs seconds of CPU and several hundred
MiB, for records the export mostly never looks at again. So each export keeps, beside its corpus JSON, an
index of those four fields and of each record's place in the file (`write_export_index`), read back at once;
a record is parsed whole only when asked for. Without an index that describes the file there now (the
first export of a folder, an older version's, a crash between the index and the corpus JSON), the file is
scanned in blocks for the same.

The scan reads the layout the export writes (`json.dumps(document, indent=2)`, which `indented_json`
reproduces): the metadata first, then one record per `    {` ... `    }` block, each field on its own
line six spaces in. A file laid out otherwise (written by hand, or damaged) is read with `json.loads`,
so it is judged exactly as before: not JSON, or without a `chunks` list, it is an error, never "no
previous export" (treating it as absent would silently drop every redirect).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, BinaryIO, Mapping, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from pocket_assets.export.redirects import PreviousChunks

_HEAD = b'{\n  "metadata": '
_CHUNKS = b',\n  "chunks": ['
_OPEN = b"\n    {\n"
_CLOSE = b"\n    }"
_OPENING, _CLOSING = re.compile(re.escape(_OPEN)), re.compile(re.escape(_CLOSE))
# A field of a record, on its own line (the `\n` ending the line before it; the record's first line follows `_OPEN`'s).
_KEYS = tuple((name, f'\n      "{name}": '.encode()) for name in ("id", "hash", "source", "chunk_type"))
_BLOCK_BYTES = 8 << 20
_INDEX_KEY = "corpus_json"


class NotACorpusFile(ValueError):
    """The previous corpus JSON is there but is not one (not JSON, or no `chunks` list)."""


class NotLaidOut(ValueError):
    """The file is not in the export's own layout (the scan hands it to `json.loads`)."""


def read_previous_export(path: Path) -> tuple[dict[str, Any], PreviousChunks] | None:
    """The previous export's metadata and chunks, or None if there is none.

    Raises NotACorpusFile (not JSON, or no `chunks` list) for a file that is there but is no corpus JSON,
    and KeyError or TypeError for a record without a usable id, source, chunk_type or text.
    """
    if not path.exists():
        return None
    indexed = _indexed(path)
    if indexed is not None:
        return indexed
    try:
        return _scan(path)
    except NotLaidOut:
        return _parsed(path)


def _parsed(path: Path) -> tuple[dict[str, Any], PreviousChunks]:
    """Any JSON layout, held whole (a file the export did not write)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as error:
        raise NotACorpusFile(f"{path}: previous export is not valid JSON ({error})") from None
    if not isinstance(document, dict) or not isinstance(document.get("chunks"), list):
        raise NotACorpusFile(f'{path}: previous export has no "chunks" list')
    metadata = document.get("metadata")
    return (metadata if isinstance(metadata, dict) else {}), PreviousChunks.of(document["chunks"])


def _scan(path: Path) -> tuple[dict[str, Any], PreviousChunks]:
    """The export's own layout, one block of records at a time (found with `bytes.find`: a regex over a
    large corpus's file is slow); NotLaidOut at the first surprise."""
    ids: list[str] = []
    hashes: list[str] = []
    groups: list[tuple[str, str]] = []
    spans: list[tuple[int, int]] = []
    with path.open("rb") as handle:
        metadata, offset, buffer = _head(handle)  # `buffer` starts at `offset` in the file
        ended = False
        while True:
            more = handle.read(_BLOCK_BYTES)
            used = 0
            while buffer.startswith(_OPEN, used):
                start = used + len(_OPEN)
                end = buffer.find(_CLOSE, start)
                if end < 0:
                    break  # the record goes on in the next block
                fields = _fields(buffer, start, end)
                ids.append(fields["id"])
                hashes.append(fields["hash"])
                groups.append((fields["source"], fields["chunk_type"]))
                spans.append((offset + start, offset + end))
                used = end + len(_CLOSE)
                if buffer.startswith(b",", used):
                    used += 1
                else:  # the last record: no comma after it
                    ended = True
                    break
            offset += used
            buffer = buffer[used:] + more
            if ended or not more:
                break
        tail = buffer + handle.read()
    if ids and not ended or tail.rstrip(b"\n") != (b"\n  ]\n}" if ids else b"]\n}"):
        raise NotLaidOut(path)
    return metadata, PreviousChunks(ids, hashes, groups, lambda positions: _records(path, spans, positions))


def _head(handle: BinaryIO) -> tuple[dict[str, Any], int, bytes]:
    """The metadata of a corpus JSON in the export's layout, where its chunks start, and the bytes read past it."""
    head = handle.read(_BLOCK_BYTES)
    cut = head.find(_CHUNKS)
    if not head.startswith(_HEAD) or cut < 0:
        raise NotLaidOut(handle.name)
    metadata = _loads(head[len(_HEAD) : cut])
    if not isinstance(metadata, dict):
        raise NotLaidOut(handle.name)
    return metadata, cut + len(_CHUNKS), head[cut + len(_CHUNKS) :]


def record_spans(records: bytes) -> list[tuple[int, int]]:
    """Where each record of a piece's corpus JSON records (`render_piece`'s second section) is, as the scan
    finds records: from after its opening line to its closing brace's line (found in C: ~90k records a corpus)."""
    return list(zip((match.end() for match in _OPENING.finditer(records)), (match.start() for match in _CLOSING.finditer(records))))


def index_path(corpus_json: Path) -> Path:
    """Where the export keeps what `read_previous_export` reads of its corpus JSON (hidden, beside it)."""
    return corpus_json.with_name(f".{corpus_json.name}.index")


def write_export_index(
    target: Path,
    size: int,
    metadata: Mapping[str, Any],
    ids: Sequence[str],
    hashes: Sequence[str],
    groups: Sequence[tuple[str, str]],
    spans: Sequence[tuple[int, int]],
) -> None:
    """The id, hash, group and place of every record of a corpus JSON just written (`size` bytes, `metadata`),
    so that the next export reads them without scanning it (a scan that grows with the corpus, every export)."""
    table = pa.table(
        {
            "id": ids,
            "hash": hashes,
            "source": [group[0] for group in groups],
            "chunk_type": [group[1] for group in groups],
            "start": [span[0] for span in spans],
            "end": [span[1] for span in spans],
        }
    )
    recorded = json.dumps({"size": size, "metadata": metadata}, ensure_ascii=False)
    pq.write_table(table.replace_schema_metadata({_INDEX_KEY: recorded}), target)


def _indexed(path: Path) -> tuple[dict[str, Any], PreviousChunks] | None:
    """The previous export from its index, if the index describes the corpus JSON there now (its size and
    metadata, `generated` included, as recorded); None otherwise (no index, another export's, unreadable)."""
    try:
        with pq.ParquetFile(index_path(path)) as parquet:
            recorded = json.loads(parquet.schema_arrow.metadata[_INDEX_KEY.encode()])
            with path.open("rb") as handle:
                metadata, _, _ = _head(handle)
            if recorded["size"] != path.stat().st_size or recorded["metadata"] != metadata:
                return None
            columns = parquet.read(use_threads=False).to_pydict()
    except (OSError, ValueError, KeyError, TypeError, pa.ArrowException):
        return None
    spans = list(zip(columns["start"], columns["end"]))
    groups = list(zip(columns["source"], columns["chunk_type"]))
    return metadata, PreviousChunks(columns["id"], columns["hash"], groups, lambda positions: _records(path, spans, positions))


def _fields(buffer: bytes, start: int, end: int) -> dict[str, Any]:
    """The four fields of the record `buffer[start:end]`, each on its own line six spaces in; the record parsed
    whole when one is not there so (an older export without `hash`)."""
    fields = {}
    for name, key in _KEYS:
        at = buffer.find(key, start - 1, end)
        if at < 0:
            return _row_fields(_loads(b"{" + buffer[start:end] + b"}"))
        line_end = buffer.find(b"\n", at + 1, end)
        value = buffer[at + len(key) : line_end if line_end >= 0 else end].rstrip(b",")
        # A string without escapes is its bytes between the quotes: `json.loads` costs more, once per field.
        simple = value[:1] == b'"' and value[-1:] == b'"' and b"\\" not in value and len(value) > 1
        fields[name] = value[1:-1].decode("utf-8") if simple else _loads(value)
    return fields


def _row_fields(row: Any) -> dict[str, Any]:
    """The four fields of a record lacking some on their own lines (an older export without `hash`)."""
    if not isinstance(row, dict):
        raise NotLaidOut("a record that is not an object")
    return PreviousChunks.fields(row)


def _records(path: Path, spans: Sequence[tuple[int, int]], positions: Sequence[int]) -> list[Mapping[str, Any]]:
    """The whole records at these positions, read again from the file."""
    rows = []
    with path.open("rb") as handle:
        for position in positions:
            start, end = spans[position]
            handle.seek(start)
            rows.append(json.loads(b"{" + handle.read(end - start) + b"}"))
    return rows


def _loads(text: bytes) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        raise NotLaidOut("not JSON where the layout expects it") from None
