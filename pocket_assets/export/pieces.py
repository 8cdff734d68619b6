"""A PDF's piece: what its chunks add to the SDK, corpus JSON and HEPilot files, rendered and validated once.

What one chunk adds to the three files does not depend on the others, so a part's (a PDF's) run of
the export order is rendered and validated once as a `Piece` (`render_piece`): its SDK lines, its
corpus JSON records as they appear in the corpus file, its HEPilot lines, and a `PieceReport` (counts,
preview, neutralised ids, its first error of each kind). A `PieceCache` keeps each part's piece between
exports (in a build, beside the PDF's validated chunks, written when they are: `export.kept_pieces`), so
an export after one PDF changed renders that PDF only and copies the others' bytes. A kept piece is
trusted only if it was made from the part as it is now (`made_from`, the caller's words) by this
renderer and these schemas (`piece_render_key`), and its bytes are whole (a digest over its report and
body); otherwise it is rendered again from the part's chunks and kept, never dropped.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence

import blake3

from pocket_assets.core.atomic import atomic_path
from pocket_assets.core.json_schema import Validator
from pocket_assets.export.corpus_records import CHUNK_SCHEMA_FILE, HEPILOT_SCHEMA_FILE, hepilot_record, invalid_record
from pocket_assets.export.errors import ExportError
from pocket_assets.export.indented_json import indented_json
from pocket_assets.export.order import order_key
from pocket_assets.export.redirects import ChunkRow
from pocket_assets.export.sdk_lines import chunk_sdk_line

PREVIEW_LINES = 5
# The renderer's version: raise it when what a chunk renders to changes (`sdk_line`, `indented_json`,
# `hepilot_record`), so that pieces kept from an older renderer are rendered again (`piece_render_key`).
PIECE_FORMAT = 2  # 2: SDK lines without Markdown's marks (`embed_text.line_text`)


@dataclass(frozen=True)
class PieceReport:
    """What the export reads of a piece before its bytes: whose chunks it holds (`ids`, a digest of their ids in
    export order), how many corpus JSON records and how many bytes of each file (`sizes`: SDK lines, corpus JSON
    records, HEPilot lines), its first SDK lines (the preview), the ids whose SDK line was neutralised, and its
    first error of each kind. `stop` is what ended it (an SDK line refused, a part that changed): nothing is
    written after it; `schema` and `hepilot` are the first chunks invalid against each schema (no record is
    written after the first schema error, no HEPilot line after the first HEPilot error)."""

    ids: str
    records: int
    sizes: tuple[int, int, int]
    preview: tuple[str, ...]
    neutralised: tuple[str, ...]
    stop: ExportError | None = None
    schema: ExportError | None = None
    hepilot: ExportError | None = None

    @property
    def errors(self) -> tuple[ExportError | None, ExportError | None, ExportError | None]:
        return (self.stop, self.schema, self.hepilot)


@dataclass(frozen=True)
class Piece:
    """One part's run of the export order (a PDF's chunks), rendered and validated once: the bytes it adds to
    each of the three chunk files, end to end in `body` (`report.sizes` cut it), the corpus JSON's records
    joined by `,` without the list's brackets, as they appear in the corpus file."""

    report: PieceReport
    body: bytes

    def sections(self) -> tuple[bytes, bytes, bytes]:
        """The SDK lines, the corpus JSON records, the HEPilot lines."""
        sdk, records, _ = self.report.sizes
        return self.body[:sdk], self.body[sdk : sdk + records], self.body[sdk + records :]


class PieceCache(Protocol):
    """Where each part's piece is kept between exports (beside the PDF's validated chunks, in a build), so that
    an export renders only the parts that changed. A piece comes back only if it was made from the part as it
    is now, and whole: anything else is None, and the export renders the part again and keeps the new piece."""

    def report(self, part: str) -> PieceReport | None:
        """The kept piece's report, read without its bytes (checked whole by `piece`)."""

    def piece(self, part: str) -> Piece | None:
        """The kept piece, its bytes checked against the digest it was written with."""

    def keep(self, part: str, piece: Piece) -> None:
        """Keep a piece just rendered from the part as it is now."""


def render_piece(rows: Sequence[ChunkRow], validators: tuple[Validator, Validator]) -> Piece:
    """A part's chunks (rows in any order) as the bytes they add to the three chunk files, in export order,
    each chunk validated (`validators`: the chunk schema's and HEPilot's, as `piece_validators` loads them).

    What one chunk adds does not depend on the others, so a PDF's piece is rendered once, when its validated
    chunks are written, and the export only copies it."""
    keys = [order_key(row["source"], row["chunk_type"], row["chunk_index"], row["id"]) for row in rows]
    order = sorted(range(len(keys)), key=keys.__getitem__)
    chunk_validator, hepilot_validator = validators
    sdk: list[str] = []
    records: list[str] = []
    hepilot: list[str] = []
    preview: list[str] = []
    neutralised: list[str] = []
    stop: ExportError | None = None
    schema_error: ExportError | None = None
    hepilot_error: ExportError | None = None
    for position in order:
        chunk = rows[position]
        try:
            line = chunk_sdk_line(chunk, neutralised)
        except ExportError as error:
            stop = error
            break
        if line is not None:
            if len(preview) < PREVIEW_LINES:
                preview.append(line)
            sdk.append(line + "\n")
        if schema_error is not None:
            continue
        schema_error = invalid_record(chunk_validator, chunk, chunk["id"], CHUNK_SCHEMA_FILE)
        if schema_error is not None:
            continue
        records.append(("," if records else "") + "\n    " + indented_json(chunk, 4))
        if hepilot_error is not None:
            continue
        record = hepilot_record(chunk)
        hepilot_error = invalid_record(hepilot_validator, record, chunk["id"], HEPILOT_SCHEMA_FILE)
        if hepilot_error is not None:
            continue
        hepilot.append(json.dumps(record, ensure_ascii=False) + "\n")
    sections = ["".join(lines).encode("utf-8") for lines in (sdk, records, hepilot)]
    report = PieceReport(
        ids=ids_digest(keys[position][3] for position in order),
        records=len(records),
        sizes=(len(sections[0]), len(sections[1]), len(sections[2])),
        preview=tuple(preview),
        neutralised=tuple(neutralised),
        stop=stop,
        schema=schema_error,
        hepilot=hepilot_error,
    )
    return Piece(report, b"".join(sections))


def piece_render_key(schema_dir: Path) -> str:
    """What a piece's bytes depend on besides its chunks: the renderer (`PIECE_FORMAT`) and both schemas' files
    (what is refused). A kept piece made under another key is rendered again."""
    digest = blake3.blake3(f"piece-format-{PIECE_FORMAT}\0".encode())
    for name in (CHUNK_SCHEMA_FILE, HEPILOT_SCHEMA_FILE):
        digest.update((schema_dir / name).read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def ids_digest(ids: Iterable[str]) -> str:
    """Which chunks a piece holds: a digest of their ids in export order."""
    digest = blake3.blake3()
    for chunk_id in ids:
        digest.update(chunk_id.encode("utf-8") + b"\n")
    return digest.hexdigest()[:32]


def write_piece_file(path: Path, piece: Piece, made_from: str) -> None:
    """The piece, atomically: one line of JSON (its report, `made_from` and a digest of both and of the body),
    then the body. `made_from` says which version of the part it was rendered from (the caller's words)."""
    header = _piece_header(piece.report, made_from)
    digest = blake3.blake3(json.dumps(header, ensure_ascii=False, sort_keys=True).encode("utf-8") + piece.body)
    line = json.dumps({**header, "digest": digest.hexdigest()}, ensure_ascii=False, sort_keys=True).encode("utf-8")
    with atomic_path(path) as temp:
        temp.write_bytes(line + b"\n" + piece.body)


def read_piece_report(path: Path, made_from: str) -> PieceReport | None:
    """The report of the piece file at `path` if it was rendered from `made_from`; None if there is none, or it
    was made from something else, or its first line is not a report (its bytes are checked by `read_piece_file`)."""
    try:
        with path.open("rb") as handle:
            header = json.loads(handle.readline())
        return _report_of(header, made_from)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def read_piece_file(path: Path, made_from: str) -> Piece | None:
    """The piece file at `path`, whole, if it was rendered from `made_from` and is as written (its digest
    holds over its report and body, the body is as long as the report says); None otherwise."""
    try:
        data = path.read_bytes()
        cut = data.index(b"\n")
        header = json.loads(data[:cut])
        report = _report_of(header, made_from)
        if report is None:
            return None
        written = header.pop("digest")
        body = data[cut + 1 :]
        digest = blake3.blake3(json.dumps(header, ensure_ascii=False, sort_keys=True).encode("utf-8") + body)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if digest.hexdigest() != written or len(body) != sum(report.sizes):
        return None
    return Piece(report, body)


def _piece_header(report: PieceReport, made_from: str) -> dict[str, Any]:
    return {
        "format": PIECE_FORMAT,
        "made_from": made_from,
        "ids": report.ids,
        "records": report.records,
        "sizes": list(report.sizes),
        "preview": list(report.preview),
        "neutralised": list(report.neutralised),
        "errors": [None if error is None else [error.chunk_id, error.reason] for error in report.errors],
    }


def _report_of(header: dict[str, Any], made_from: str) -> PieceReport | None:
    if header["format"] != PIECE_FORMAT or header["made_from"] != made_from:
        return None
    stop, schema, hepilot = (None if error is None else ExportError(*error) for error in header["errors"])
    return PieceReport(
        ids=str(header["ids"]),
        records=int(header["records"]),
        sizes=tuple(int(size) for size in header["sizes"]),  # type: ignore[arg-type]  # three, as written
        preview=tuple(header["preview"]),
        neutralised=tuple(header["neutralised"]),
        stop=stop,
        schema=schema,
        hepilot=hepilot,
    )


@dataclass(frozen=True)
class PieceFileCache:
    """A `PieceCache` of piece files: a part's piece is kept at `path(part)`, and trusted only if it was made
    from `made_from[part]` (e.g. a digest of the PDF's validated chunks and `piece_render_key`)."""

    path: Callable[[str], Path]
    made_from: Mapping[str, str]

    def report(self, part: str) -> PieceReport | None:
        return read_piece_report(self.path(part), self.made_from[part])

    def piece(self, part: str) -> Piece | None:
        return read_piece_file(self.path(part), self.made_from[part])

    def keep(self, part: str, piece: Piece) -> None:
        write_piece_file(self.path(part), piece, self.made_from[part])


class TemporaryPieceCache:
    """Pieces kept for one export only (no cache given), as hidden temp files beside the exports: removed when
    the export ends, and by `remove_leftover_temps` if it was killed. Holds no piece before the export."""

    def __init__(self, out_dir: Path, corpus: str) -> None:
        self._out_dir = out_dir
        self._corpus = corpus
        self._paths: dict[str, Path] = {}

    def report(self, part: str) -> PieceReport | None:
        return None

    def piece(self, part: str) -> Piece | None:
        path = self._paths.get(part)
        return read_piece_file(path, "") if path is not None else None

    def keep(self, part: str, piece: Piece) -> None:
        self._out_dir.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(prefix=f".chunks_{self._corpus}.piece.", suffix=".tmp", dir=self._out_dir)
        os.close(handle)
        self._paths[part] = Path(name)
        write_piece_file(self._paths[part], piece, "")

    def remove(self) -> None:
        for path in self._paths.values():
            path.unlink(missing_ok=True)


def raise_first_error(reports: Sequence[PieceReport]) -> None:
    """The error the one-pass writer raised: the first SDK line refused (or part changed) in export
    order, else the first chunk invalid against the chunk schema, else against HEPilot's."""
    for kind in ("stop", "schema", "hepilot"):
        error = next((getattr(report, kind) for report in reports if getattr(report, kind) is not None), None)
        if error is not None:
            raise error
