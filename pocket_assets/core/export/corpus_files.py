"""The per-corpus export files (DESIGN.md section 6), validated, then written atomically.

For a corpus `c`, `write_corpus_exports` writes under `out_dir`:

- `chunks_{c}.txt`: the Google AI Edge RAG SDK file, one line per child and
  table summary, `core.embed_text.sdk_line` (seed SPEC-SCH-001 §6, with the
  context header: `<chunk_splitter> {context} | {text} [Source: f.pdf, Page N]`);
- `chunks_mode_b_{c}.json`: `{"metadata": {...}, "chunks": [...]}` with every
  chunk type, each chunk valid against the seed's Draft-07 chunk schema (§5);
- `chunks_{c}.hepilot.jsonl`: one seed HEPilot `chunk_output` record per chunk,
  valid against its 2020-12 schema, UUID formats checked (the schema allows no
  other field, so the context header is not there: its `section_path` holds the
  same structure);
- `id_redirects_{c}.json`: every id ever exported in the corpus mapped to the
  id now covering the same text, or to null, and the history of meanings it is
  made from (`core.export.redirects.carry_history`). The first export writes
  the current ids mapped to themselves and `"previous_generated": null`.

Before anything is written, `check_llm_budget`: the phone hands its `top_k` best lines
whole to its LLM, so the corpus's `top_k` longest lines and the question budget must fit
the device's LLM context, or the corpus is refused with the setting to change.

The SDK file splits chunks on `<chunk_splitter>`, so that text inside a chunk or
a source name is written `‹chunk_splitter›` (single guillemets, U+2039/U+203A)
in the SDK line only; the corpus JSON and HEPilot files keep the text as it is.
The ids concerned are returned (`CorpusExport.neutralised`) for a warning.

Order is stable so exports diff cleanly: by source, then chunk type (parent,
child, table_summary), then `chunk_index`, then id. Given the same chunks,
the SDK and HEPilot files are byte-identical between builds and the corpus
JSON differs only in `metadata.generated`.

Pieces (issue 31): what one chunk adds to the SDK, corpus JSON and HEPilot files does
not depend on the others, so a part's (a PDF's) run of the export order is rendered and
validated once as a `Piece` (`render_piece`): its SDK lines, its corpus JSON records as
they appear in the corpus file, its HEPilot lines, and a `PieceReport` (counts, preview,
neutralised ids, its first error of each kind). A `PieceShelf` keeps each part's piece
between exports (in a build, beside the PDF's validated chunks, written when they are:
`runstate.export_pieces`), so an export after one PDF changed renders that PDF only and
copies the others' bytes. A kept piece is trusted only if it was made from the part as it
is now (`made_from`, the caller's words) by this renderer and these schemas
(`piece_render_key`), and its bytes are whole (a digest over its report and body);
otherwise it is rendered again from the part's chunks and kept, never dropped.

Memory: `write_corpus_parts` holds a few key columns of every chunk (ids, hashes, sort
keys: `CorpusParts`) and one piece at a time; of the previous corpus JSON, only the index
the last export kept beside it is read, not the file (`previous_export`); a corpus of many
PDFs costs the export its ids, not its texts.
`write_corpus_exports` is the same over chunks already in memory (its pieces kept in temp
files for the one export).

CPU: the export works on chunk rows (`ChunkRow`, each chunk as `to_dict` gives
it: the corpus JSON's record), not records: a part read from Parquet is rows
already, and every file is written from them (issue 18).

Crash safety: every piece's report is read (and any piece missing rendered) before a
file is opened, so a refused chunk replaces nothing; the pieces are then streamed into
temp files, and only when all four are complete are they renamed over the targets, the
corpus JSON last. The redirect history resolves meanings by (id, text hash), so a re-run
after a crash between renames finds the same targets whichever of the redirect file and
the corpus JSON was replaced. `remove_leftover_temps` deletes the temp files of an export
that was killed (its temporary pieces included); call it while holding the export lock.
"""

from __future__ import annotations

import json
import os
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass, replace
from json.encoder import encode_basestring  # type: ignore[attr-defined]  # the C encoder, as indented_json uses it
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Protocol, Sequence, TextIO

import blake3

from pocket_assets.core.atomic import atomic_path
from pocket_assets.core.chunking.embed_text import CHUNK_SPLITTER, CONTEXT_SEPARATOR, sdk_line, with_context
from pocket_assets.core.device import DeviceProfile, llm_overflow
from pocket_assets.core.export.indented_json import indented_json
from pocket_assets.core.export.previous_export import (
    NotACorpusFile,
    index_path,
    read_previous_export,
    record_spans,
    write_export_index,
)
from pocket_assets.core.export.redirects import (
    DEFAULT_MIN_OVERLAP,
    ChunkRow,
    CurrentChunks,
    Group,
    Meaning,
    RedirectHistory,
    RedirectStats,
    carry_history,
)
from pocket_assets.core.json_schema import (
    DRAFT_07,
    DRAFT_2020_12,
    Validator,
    instance_location,
    load_validator,
    most_relevant_error,
)
from pocket_assets.core.records import CHUNK_TYPES, ChunkRecord, record_columns, to_dict

SCHEMA_VERSION = "1.0"  # the corpus file format of seed SPEC-SCH-001 §5.1
CHUNK_SCHEMA_FILE = "chunk.schema.json"
HEPILOT_SCHEMA_FILE = "hepilot_chunk_output.schema.json"
SDK_CHUNK_TYPES: tuple[str, ...] = ("child", "table_summary")  # what the phone embeds
PREVIEW_LINES = 5
# The renderer's version: raise it when what a chunk renders to changes (`sdk_line`, `indented_json`,
# `hepilot_record`), so that pieces kept from an older renderer are rendered again (`piece_render_key`).
PIECE_FORMAT = 2  # 2: SDK lines without Markdown's marks (`embed_text.line_text`)
# What `<chunk_splitter>` becomes in an SDK line: visible, and read back by `restore_splitter`.
NEUTRAL_SPLITTER = "\u2039chunk_splitter\u203a"

# Keys of CorpusExport.paths and .sizes.
SDK_FILE = "sdk"
MODE_B_FILE = "mode_b"
HEPILOT_FILE = "hepilot"
REDIRECTS_FILE = "redirects"

# What the export holds of every chunk of a corpus (`CorpusParts.keys`): the sort keys, the corpus, the text hash,
# and the tokens the phone embeds (`check_llm_budget`).
KEY_COLUMNS: tuple[str, ...] = ("id", "source", "chunk_type", "chunk_index", "corpus", "hash", "embedded_tokens")


class ExportError(ValueError):
    """A chunk that cannot be exported as it is; names the chunk so it can be found upstream."""

    def __init__(self, chunk_id: str | None, reason: str) -> None:
        self.chunk_id = chunk_id
        self.reason = reason
        super().__init__(f"{chunk_id}: {reason}" if chunk_id else reason)


@dataclass(frozen=True)
class SdkLine:
    """One SDK export line read back: its context header ("" without one), the folded chunk text
    and its citation."""

    context: str
    text: str
    source: str
    page: int

    @property
    def content(self) -> str:
        """What the line holds between `<chunk_splitter> ` and the citation: header and text."""
        return with_context(self.context, self.text)


@dataclass(frozen=True)
class CorpusExport:
    """What the `android_export` asset reports for one corpus.

    `paths` and `sizes` (bytes) are keyed by SDK_FILE, MODE_B_FILE, HEPILOT_FILE,
    REDIRECTS_FILE. `counts` holds `chunks`, one entry per chunk type,
    `sdk_lines` and `sources`. `redirect_stats` is None when there was no
    previous export to redirect from.
    """

    corpus: str
    paths: dict[str, Path]
    counts: dict[str, int]
    sizes: dict[str, int]
    redirect_stats: RedirectStats | None
    preview_lines: tuple[str, ...]
    neutralised: tuple[str, ...] = ()  # ids whose SDK line had `<chunk_splitter>` neutralised
    ambiguous_ids: tuple[str, ...] = ()  # ids that named different texts over builds (redirect to null)


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


class PieceShelf(Protocol):
    """Where each part's piece is kept between exports (beside the PDF's validated chunks, in a build), so that
    an export renders only the parts that changed. A piece comes back only if it was made from the part as it
    is now, and whole: anything else is None, and the export renders the part again and keeps the new piece."""

    def report(self, part: str) -> PieceReport | None:
        """The kept piece's report, read without its bytes (checked whole by `piece`)."""

    def piece(self, part: str) -> Piece | None:
        """The kept piece, its bytes checked against the digest it was written with."""

    def keep(self, part: str, piece: Piece) -> None:
        """Keep a piece just rendered from the part as it is now."""


@dataclass(frozen=True)
class CorpusParts:
    """A corpus as the export reads it: in parts (one PDF's chunks each), one part at a time.

    `keys[part]` maps each of KEY_COLUMNS to the part's values, in the order `load(part)`
    returns its chunks: all the export keeps of every chunk. `load(part)` reads the part's
    chunks again, as rows (`to_dict` of each record), to render its piece when `shelf` has
    none for it (and for the redirects of a changed part). Without a shelf, every piece is
    rendered for this export alone.
    """

    keys: Mapping[str, Mapping[str, Sequence[Any]]]
    load: Callable[[str], Sequence[ChunkRow]]
    shelf: PieceShelf | None = None

    @classmethod
    def in_memory(cls, chunks: Sequence[ChunkRecord]) -> CorpusParts:
        """Chunks already held, as one part."""
        rows = [to_dict(chunk) for chunk in chunks]
        return cls(keys={"": key_columns(chunks)}, load=lambda _: rows)


def key_columns(chunks: Sequence[ChunkRecord]) -> dict[str, list[Any]]:
    """KEY_COLUMNS of `chunks`, in their order."""
    return record_columns(chunks, KEY_COLUMNS)


def export_paths(corpus: str, out_dir: Path) -> dict[str, Path]:
    return {
        SDK_FILE: out_dir / f"chunks_{corpus}.txt",
        MODE_B_FILE: out_dir / f"chunks_mode_b_{corpus}.json",
        HEPILOT_FILE: out_dir / f"chunks_{corpus}.hepilot.jsonl",
        REDIRECTS_FILE: out_dir / f"id_redirects_{corpus}.json",
    }


_TYPE_RANK = {chunk_type: rank for rank, chunk_type in enumerate(CHUNK_TYPES)}


def export_order(chunks: Sequence[ChunkRecord]) -> list[ChunkRecord]:
    """Source, chunk type (parent, child, table_summary), chunk_index, id: stable between builds."""
    return sorted(chunks, key=lambda chunk: _order_key(chunk.source, chunk.chunk_type, chunk.chunk_index, chunk.id))


def _order_key(source: str, chunk_type: str, chunk_index: int, chunk_id: str) -> tuple[str, int, int, str]:
    return (source, _TYPE_RANK.get(chunk_type, len(CHUNK_TYPES)), chunk_index, chunk_id)


class _Place(NamedTuple):
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


def _places(parts: CorpusParts) -> list[_Place]:
    """Every chunk of the corpus in export order, from the key columns alone."""
    places = [
        _Place(_order_key(source, chunk_type, index, chunk_id), position, row, chunk_type, corpus)
        for position, columns in enumerate(parts.keys.values())
        for row, (chunk_id, source, chunk_type, index, corpus) in enumerate(
            zip(columns["id"], columns["source"], columns["chunk_type"], columns["chunk_index"], columns["corpus"])
        )
    ]
    places.sort()
    return places


class _PartReader:
    """The chunks of one part at a time (what the redirects read of a changed group): reading another
    part releases the last one."""

    def __init__(self, parts: CorpusParts) -> None:
        self._load = parts.load
        self._names = list(parts.keys)
        self._position: int | None = None
        self._chunks: Sequence[ChunkRow] = ()

    def part(self, position: int) -> Sequence[ChunkRow]:
        if position != self._position:
            self._chunks = ()
            self._chunks = self._load(self._names[position])
            self._position = position
        return self._chunks

    def group(self, group: Group, positions: Sequence[int]) -> list[ChunkRow]:
        """The chunks of one (source, chunk_type) group, from the parts holding its source."""
        return [
            chunk
            for position in positions
            for chunk in self.part(position)
            if (chunk["source"], chunk["chunk_type"]) == group
        ]


def write_corpus_exports(
    corpus: str,
    chunks: Sequence[ChunkRecord],
    out_dir: Path,
    generated: str,
    schema_dir: Path,
    min_overlap: float = DEFAULT_MIN_OVERLAP,
    notes: Mapping[str, Any] | None = None,
    device: DeviceProfile = DeviceProfile(),
) -> CorpusExport:
    """Write the four files of one corpus; nothing is replaced unless every chunk is valid.

    `chunks` are all the validated chunks of the corpus (every PDF, every type):
    a PDF whose chunks are not passed in is absent from every file, and its old
    ids redirect to null. `generated` is the build timestamp written into the
    metadata (passed in so the library stays deterministic). `schema_dir` holds
    `chunk.schema.json` and `hepilot_chunk_output.schema.json`. `notes` (e.g.
    the stale and left-out PDFs) are added to the corpus JSON's metadata.

    Raises ExportError naming the chunk for a chunk of another corpus, a
    duplicate id, or a schema violation (the caller keeps such chunks out), and
    without a chunk for lines too long for `device`'s LLM (`check_llm_budget`).
    """
    return write_corpus_parts(
        corpus, CorpusParts.in_memory(chunks), out_dir, generated, schema_dir, min_overlap, notes, device=device
    )


def write_corpus_parts(
    corpus: str,
    parts: CorpusParts,
    out_dir: Path,
    generated: str,
    schema_dir: Path,
    min_overlap: float = DEFAULT_MIN_OVERLAP,
    notes: Mapping[str, Any] | None = None,
    device: DeviceProfile = DeviceProfile(),
) -> CorpusExport:
    """`write_corpus_exports` holding one part's chunks at a time (and every chunk's `parts.keys`).

    The files and errors are those of `write_corpus_exports` over the parts' chunks, in part
    order: for several faulty chunks, the one named is the first in export order whose SDK
    line is refused, else the first invalid against the chunk schema, else against HEPilot's.
    Each part's piece comes from `parts.shelf` when it holds one made from the part as it is now,
    else it is rendered from `parts.load` (and kept there): the files are the same either way.
    """
    places = _places(parts)
    _check_corpus_and_ids(corpus, places)
    check_llm_budget(corpus, parts.keys, device)
    runs = _runs(places)
    names = list(parts.keys)
    ordered = [names[run[0].part] for run in runs]
    validators = piece_validators(schema_dir)
    paths = export_paths(corpus, out_dir)
    reader = _PartReader(parts)
    history, previous_generated = _history_from(paths, _current_chunks(parts, reader), min_overlap)
    del reader  # the redirects' parts, released before the pieces are read
    shelf = parts.shelf or _TemporaryShelf(out_dir, corpus)

    def render(part: str) -> Piece:
        piece = render_piece(parts.load(part), validators)
        shelf.keep(part, piece)
        return piece

    expected = {names[run[0].part]: _ids_digest(place.chunk_id for place in run) for run in runs}
    first_ids = {names[run[0].part]: run[0].chunk_id for run in runs}

    def checked(part: str, report: PieceReport) -> PieceReport:
        """The report, with the part named if its piece holds other chunks than its key columns say."""
        if report.ids == expected[part] or report.stop is not None:
            return report
        why = f"part {part!r} no longer holds this chunk: it changed during the export"
        return replace(report, stop=ExportError(first_ids[part], why))

    try:
        reports = [checked(part, shelf.report(part) or render(part).report) for part in ordered]
        _raise_first_error(reports)
        with ExitStack() as stack:
            # Entered first, renamed last: the corpus JSON commits the export (module docstring).
            temps = {
                name: stack.enter_context(atomic_path(path))
                for name, path in ((MODE_B_FILE, paths[MODE_B_FILE]), (INDEX, index_path(paths[MODE_B_FILE])))
                + tuple((name, paths[name]) for name in (HEPILOT_FILE, SDK_FILE, REDIRECTS_FILE))
            }
            with ExitStack() as handles:
                files = {name: handles.enter_context(temps[name].open("wb")) for name in PIECE_FILES}
                metadata = {
                    "corpus": corpus,
                    "generated": generated,
                    "total_chunks": len(places),
                    "schema_version": SCHEMA_VERSION,
                    **(notes or {}),
                }
                # Streamed, yet byte-identical to `json.dumps(document, indent=2, ensure_ascii=False) + "\n"`.
                files[MODE_B_FILE].write(('{\n  "metadata": ' + indented_json(metadata, 2) + ',\n  "chunks": [').encode())
                written: list[PieceReport] = []
                records = 0
                spans: list[tuple[int, int]] = []  # of every record in the corpus JSON, for the next export's index
                for part, report in zip(ordered, reports):
                    piece = shelf.piece(part)
                    if piece is None or piece.report != report:  # damaged since its report was read
                        piece = render(part)
                        _raise_first_error([checked(part, piece.report)])
                    if records and piece.report.records:
                        files[MODE_B_FILE].write(b",")
                    records += piece.report.records
                    at = files[MODE_B_FILE].tell()
                    sections = piece.sections()
                    for name, section in zip(PIECE_FILES, sections):
                        files[name].write(section)
                    spans.extend((at + start, at + end) for start, end in record_spans(sections[1]))
                    written.append(piece.report)
                    del piece, sections
                files[MODE_B_FILE].write(b"\n  ]\n}\n" if places else b"]\n}\n")
                size = files[MODE_B_FILE].tell()
            _write_index(temps[INDEX], parts, places, spans, size, metadata)
            with temps[REDIRECTS_FILE].open("w", encoding="utf-8", newline="\n") as redirects:
                _write_redirects(redirects, corpus, generated, previous_generated, history, min_overlap)
    finally:
        if parts.shelf is None:
            shelf.remove()

    counts = {"chunks": len(places), **{chunk_type: 0 for chunk_type in CHUNK_TYPES}}
    for place in places:
        counts[place.chunk_type] = counts.get(place.chunk_type, 0) + 1
    counts["sdk_lines"] = sum(1 for place in places if place.chunk_type in SDK_CHUNK_TYPES)
    counts["sources"] = len({place.order[0] for place in places})
    return CorpusExport(
        corpus=corpus,
        paths=paths,
        counts=counts,
        sizes={name: path.stat().st_size for name, path in paths.items()},
        redirect_stats=history.stats,
        preview_lines=tuple(line for report in written for line in report.preview)[:PREVIEW_LINES],
        neutralised=tuple(chunk_id for report in written for chunk_id in report.neutralised),
        ambiguous_ids=history.ambiguous,
    )


def _write_index(
    target: Path, parts: CorpusParts, places: Sequence[_Place], spans: Sequence[tuple[int, int]], size: int, metadata: Mapping[str, Any]
) -> None:
    """The corpus JSON's index (`previous_export`): each record's id, hash, group and place, in export order."""
    hashes = [column["hash"] for column in parts.keys.values()]
    write_export_index(
        target,
        size,
        metadata,
        [place.chunk_id for place in places],
        [hashes[place.part][place.row] for place in places],
        [(place.order[0], place.chunk_type) for place in places],
        spans,
    )


INDEX = "index"  # the corpus JSON's index, a temp of the export like its files
# The chunk files a piece adds to, in the order of its sections.
PIECE_FILES: tuple[str, ...] = (SDK_FILE, MODE_B_FILE, HEPILOT_FILE)


def _runs(places: Sequence[_Place]) -> list[list[_Place]]:
    """`places` cut where the part changes: a PDF's chunks are one run (its source sorts them together).

    Two parts whose chunks interleave in export order (two PDFs citing one source name) cannot each be one
    piece: the second part met again is refused, named by its chunk there."""
    runs: list[list[_Place]] = []
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


def render_piece(rows: Sequence[ChunkRow], validators: tuple[Validator, Validator]) -> Piece:
    """A part's chunks (rows in any order) as the bytes they add to the three chunk files, in export order,
    each chunk validated (`validators`: the chunk schema's and HEPilot's, as `piece_validators` loads them).

    What one chunk adds does not depend on the others, so a PDF's piece is rendered once, when its validated
    chunks are written, and the export only copies it (issue 31)."""
    keys = [_order_key(row["source"], row["chunk_type"], row["chunk_index"], row["id"]) for row in rows]
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
            line = _sdk_line(chunk, neutralised)
        except ExportError as error:
            stop = error
            break
        if line is not None:
            if len(preview) < PREVIEW_LINES:
                preview.append(line)
            sdk.append(line + "\n")
        if schema_error is not None:
            continue
        schema_error = _invalid(chunk_validator, chunk, chunk["id"], CHUNK_SCHEMA_FILE)
        if schema_error is not None:
            continue
        records.append(("," if records else "") + "\n    " + indented_json(chunk, 4))
        if hepilot_error is not None:
            continue
        record = hepilot_record(chunk)
        hepilot_error = _invalid(hepilot_validator, record, chunk["id"], HEPILOT_SCHEMA_FILE)
        if hepilot_error is not None:
            continue
        hepilot.append(json.dumps(record, ensure_ascii=False) + "\n")
    sections = ["".join(lines).encode("utf-8") for lines in (sdk, records, hepilot)]
    report = PieceReport(
        ids=_ids_digest(keys[position][3] for position in order),
        records=len(records),
        sizes=(len(sections[0]), len(sections[1]), len(sections[2])),
        preview=tuple(preview),
        neutralised=tuple(neutralised),
        stop=stop,
        schema=schema_error,
        hepilot=hepilot_error,
    )
    return Piece(report, b"".join(sections))


def piece_validators(schema_dir: Path) -> tuple[Validator, Validator]:
    """The chunk schema's and HEPilot's validators, as `render_piece` takes them."""
    return load_validator(schema_dir / CHUNK_SCHEMA_FILE, DRAFT_07), load_validator(schema_dir / HEPILOT_SCHEMA_FILE, DRAFT_2020_12)


def piece_render_key(schema_dir: Path) -> str:
    """What a piece's bytes depend on besides its chunks: the renderer (`PIECE_FORMAT`) and both schemas' files
    (what is refused). A kept piece made under another key is rendered again."""
    digest = blake3.blake3(f"piece-format-{PIECE_FORMAT}\0".encode())
    for name in (CHUNK_SCHEMA_FILE, HEPILOT_SCHEMA_FILE):
        digest.update((schema_dir / name).read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _ids_digest(ids: Iterable[str]) -> str:
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
class PieceFiles:
    """A `PieceShelf` of piece files: a part's piece is kept at `path(part)`, and trusted only if it was made
    from `made_from[part]` (e.g. a digest of the PDF's validated chunks and `piece_render_key`)."""

    path: Callable[[str], Path]
    made_from: Mapping[str, str]

    def report(self, part: str) -> PieceReport | None:
        return read_piece_report(self.path(part), self.made_from[part])

    def piece(self, part: str) -> Piece | None:
        return read_piece_file(self.path(part), self.made_from[part])

    def keep(self, part: str, piece: Piece) -> None:
        write_piece_file(self.path(part), piece, self.made_from[part])


class _TemporaryShelf:
    """Pieces kept for one export only (no shelf given), as hidden temp files beside the exports: removed when
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


def _raise_first_error(reports: Sequence[PieceReport]) -> None:
    """The error the one-pass writer raised: the first SDK line refused (or part changed) in export
    order, else the first chunk invalid against the chunk schema, else against HEPilot's."""
    for kind in ("stop", "schema", "hepilot"):
        error = next((getattr(report, kind) for report in reports if getattr(report, kind) is not None), None)
        if error is not None:
            raise error


def remove_leftover_temps(out_dir: Path) -> list[Path]:
    """Delete the hidden temp files (`.chunks_fr.txt.x1y2.tmp`, ...) a killed export left; returns them.

    Only safe while no other export of `out_dir` runs: hold the export lock.
    """
    if not out_dir.is_dir():
        return []
    stems = ("chunks_", "id_redirects_")
    leftovers = sorted(
        path
        for path in out_dir.glob(".*.tmp")
        if path.is_file() and path.name.lstrip(".").startswith(stems)
    )
    for path in leftovers:
        path.unlink(missing_ok=True)
    return leftovers


def _current_chunks(parts: CorpusParts, reader: _PartReader) -> CurrentChunks:
    """What the redirects read of the corpus: every id's hash and group, a group's chunks on demand."""
    hashes: dict[str, str] = {}
    groups: dict[str, Group] = {}
    positions_of_source: dict[str, list[int]] = {}
    for position, columns in enumerate(parts.keys.values()):
        for chunk_id, text_hash, source, chunk_type in zip(
            columns["id"], columns["hash"], columns["source"], columns["chunk_type"]
        ):
            hashes[chunk_id] = text_hash
            groups[chunk_id] = (source, chunk_type)
            held = positions_of_source.setdefault(source, [])
            if not held or held[-1] != position:
                held.append(position)
    return CurrentChunks(hashes, groups, lambda group: reader.group(group, positions_of_source.get(group[0], ())))


def _history_from(
    paths: Mapping[str, Path], current: CurrentChunks, min_overlap: float
) -> tuple[RedirectHistory, str | None]:
    """The redirect history carried over from the last export's redirect file and corpus JSON, and
    when that export was generated. The previous corpus JSON is read through its index, not held (`previous_export`)."""
    history = _read_history(paths[REDIRECTS_FILE])
    try:
        previous = read_previous_export(paths[MODE_B_FILE])
        carried = carry_history(history, previous[1] if previous else None, current, min_overlap)
    except NotACorpusFile as error:
        raise ExportError(None, str(error)) from None
    except (KeyError, TypeError, ValueError) as error:
        reason = f"a previous chunk lacks a usable id, source, chunk_type or text, or a redirect its id or hash ({error!r})"
        raise ExportError(None, f"{paths[MODE_B_FILE]} / {paths[REDIRECTS_FILE]}: {reason}") from None
    return carried, previous[0].get("generated") if previous else None


def _read_history(path: Path) -> list[dict[str, Any]]:
    """The meanings of a previous redirect file; an older file without `history` gives none.

    An unreadable file is an error, not "no history": ignoring it would drop every old id.
    """
    if not path.exists():
        return []
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as error:
        raise ExportError(None, f"{path}: previous redirect file is not valid JSON ({error})") from None
    history = document.get("history", []) if isinstance(document, dict) else None
    if not isinstance(history, list):
        raise ExportError(None, f'{path}: previous redirect file has no "history" list')
    return history


def parse_sdk_file(path: Path, *, has_context: bool) -> list[SdkLine]:
    """Read an SDK export back, one SdkLine per line (what the tests and users check a file with).

    `has_context`: the file was written with a context header (`context_header` other than
    `none`); a line's text may hold ` | ` itself, so the reader must be told.
    """
    return [parse_sdk_line(line, has_context=has_context) for line in read_sdk_lines(path)]


def read_sdk_lines(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def neutralise_splitter(text: str) -> str:
    """`<chunk_splitter>` -> `‹chunk_splitter›`: the SDK must never see a chunk start inside a chunk."""
    return text.replace(CHUNK_SPLITTER, NEUTRAL_SPLITTER)


def restore_splitter(text: str) -> str:
    """The text an SDK line stood for (exact unless the PDF itself held `‹chunk_splitter›`)."""
    return text.replace(NEUTRAL_SPLITTER, CHUNK_SPLITTER)


def parse_sdk_line(line: str, *, has_context: bool) -> SdkLine:
    """The citation is the last `[Source: ..., Page N]` of the line, so a text quoting one stays text;
    the header is what precedes the first ` | ` (a header never holds `|`)."""
    prefix = f"{CHUNK_SPLITTER} "
    marker = " [Source: "
    if not line.startswith(prefix) or not line.endswith("]"):
        raise ValueError(f"not an SDK export line: {line[:80]!r}")
    cut = line.rfind(marker)
    source, separator, page = line[cut + len(marker) : -1].rpartition(", Page ")
    if cut < 0 or not separator or not page.isdigit():
        raise ValueError(f"SDK export line without a [Source: ..., Page N] citation: {line[:80]!r}")
    content = line[len(prefix) : cut]
    context = ""
    if has_context:
        context, separator, content = content.partition(CONTEXT_SEPARATOR)
        if not separator or not context:
            raise ValueError(f"SDK export line without a context header: {line[:80]!r}")
    return SdkLine(context=context, text=content, source=source, page=int(page))


def _check_corpus_and_ids(corpus: str, places: Sequence[_Place]) -> None:
    seen: set[str] = set()
    for place in places:
        if place.corpus != corpus:
            raise ExportError(place.chunk_id, f"belongs to corpus {place.corpus!r}, not {corpus!r}")
        if place.chunk_id in seen:
            raise ExportError(place.chunk_id, "duplicate chunk id in the corpus")
        seen.add(place.chunk_id)


def check_llm_budget(corpus: str, keys: Mapping[str, Mapping[str, Sequence[Any]]], device: DeviceProfile) -> None:
    """The phone hands its `top_k` best lines whole to its LLM: any `top_k` lines of the corpus (`keys`: each
    part's KEY_COLUMNS, as `CorpusParts.keys`), with the question budget, must fit the LLM's context. Raises
    ExportError (naming no chunk: the corpus is refused, not a PDF) with the settings to change."""
    lines = (
        (chunk_id, tokens)
        for columns in keys.values()
        for chunk_id, chunk_type, tokens in zip(columns["id"], columns["chunk_type"], columns["embedded_tokens"])
        if chunk_type in SDK_CHUNK_TYPES
    )
    overflow = llm_overflow(lines, device)
    if overflow is not None:
        raise ExportError(None, overflow.message(device, corpus))


def _invalid(validator: Validator, record: dict[str, Any], chunk_id: str, schema_name: str) -> ExportError | None:
    """`_validate`'s error as a value: the one-pass writer keeps writing the other files after a file's first
    error, so that the error raised is the one the files written one after the other would raise."""
    try:
        _validate(validator, record, chunk_id, schema_name)
    except ExportError as error:
        return error
    return None


def _validate(validator: Validator, document: dict[str, Any], chunk_id: str, schema_name: str) -> None:
    error = most_relevant_error(validator, document)
    if error is not None:
        where = instance_location(error) or "(record)"
        raise ExportError(chunk_id, f"invalid against {schema_name} at {where}: {error.message}")


def _sdk_line(chunk: ChunkRow, neutralised: list[str]) -> str | None:
    """The chunk's SDK line (None for a type the phone does not embed); its id joins `neutralised`
    if `<chunk_splitter>` had to be neutralised."""
    if chunk["chunk_type"] not in SDK_CHUNK_TYPES:
        return None
    text, source, context = chunk["text"], chunk["source"], chunk["context"]
    if CHUNK_SPLITTER in text or CHUNK_SPLITTER in source or CHUNK_SPLITTER in context:
        neutralised.append(chunk["id"])
        text, source, context = neutralise_splitter(text), neutralise_splitter(source), neutralise_splitter(context)
    if "|" in context or "\n" in context:
        raise ExportError(chunk["id"], f"context header {chunk['context']!r} holds '|' or a line break")
    return sdk_line(text, source, chunk["page"], context)


def hepilot_record(chunk: ChunkRow) -> dict[str, Any]:
    """Seed HEPilot `chunk_output`: our UUIDv5s as ids, `content_type` as its `chunk_type`.

    `chunk_index`/`total_chunks` count within the document and our chunk type
    (parents, children and summaries are each numbered from 0), since the
    record has no field to say which of the three a chunk is.
    """
    return {
        "chunk_id": chunk["chunk_uid"],
        "document_id": chunk["document_id"],
        "chunk_index": chunk["chunk_index"],
        "total_chunks": chunk["total_chunks"],
        "content": chunk["text"],
        "token_count": chunk["tokens"],
        "chunk_type": chunk["content_type"],
        "section_path": chunk["section_path"],
        "has_overlap_previous": chunk["has_overlap_previous"],
        "has_overlap_next": chunk["has_overlap_next"],
        "content_features": chunk["content_features"],
    }


def _write_redirects(
    handle: TextIO,
    corpus: str,
    generated: str,
    previous_generated: str | None,
    history: RedirectHistory,
    min_overlap: float,
) -> None:
    """The plain map, its counts, and the history it is made from (read back by the next export).

    The stats are those of the re-key from the previous export (zero and a null
    share without one); `ever_exported` and `ambiguous` count the whole history.
    """
    stats = history.stats
    metadata = {
        "corpus": corpus,
        "generated": generated,
        "previous_generated": previous_generated,
        "previous_total": stats.previous_total if stats else 0,
        "mapped": stats.mapped if stats else 0,
        "unmapped": stats.unmapped if stats else 0,
        "unchanged": stats.unchanged if stats else 0,
        "one_to_one": stats.one_to_one if stats else 0,
        "one_to_one_share": stats.one_to_one_share if stats else None,
        "min_overlap": min_overlap,
        "ever_exported": len(history.redirects),
        "ambiguous": len(history.ambiguous),
    }
    # Streamed entry by entry, yet byte-identical to `indented_json(document) + "\n"`: the history of a large
    # corpus is tens of MB as one string.
    handle.write('{\n  "metadata": ' + indented_json(metadata, 2) + ',\n  "redirects": ')
    _write_members(handle, (f"{encode_basestring(key)}: {_string_or_null(to)}" for key, to in history.redirects.items()), "{}")
    handle.write(',\n  "history": ')
    _write_members(handle, map(_meaning_json, history.meanings), "[]")
    handle.write("\n}\n")


def _meaning_json(meaning: Meaning) -> str:
    """`indented_json(to_dict(meaning), 4)`, laid out here: the generic writer's ~10 µs a meaning is ~1 s of a
    20k-page corpus's export, every export."""
    return (
        f'{{\n      "id": {encode_basestring(meaning.id)},\n      "hash": {encode_basestring(meaning.hash)},'
        f'\n      "to": {_string_or_null(meaning.to)},\n      "to_hash": {_string_or_null(meaning.to_hash)}\n    }}'
    )


def _string_or_null(value: str | None) -> str:
    return "null" if value is None else encode_basestring(value)


def _write_members(handle: TextIO, members: Iterable[str], brackets: str) -> None:
    """A dict's or list's members (each already laid out at its depth) as `indented_json` lays them out at depth 2."""
    opening, closing = brackets
    separator = opening
    for member in members:
        handle.write(separator + "\n    " + member)
        separator = ","
    handle.write(f"{opening}{closing}" if separator == opening else "\n  " + closing)
