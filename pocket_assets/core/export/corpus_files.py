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

Memory: `write_corpus_parts` holds a few key columns of every chunk (ids,
hashes, sort keys: `CorpusParts`) and the chunks of one part (one PDF) at a
time, read again while the files are written in one pass; a corpus of many
PDFs costs the export its ids, not its texts. `write_corpus_exports` is the
same over chunks already in memory.

CPU: the export works on chunk rows (`ChunkRow`, each chunk as `to_dict` gives
it: the corpus JSON's record), not records: a part read from Parquet is rows
already, and every file is written from them (issue 18). A part's run of the
export order is a `Piece`: its SDK lines, corpus JSON records and HEPilot lines,
validated and written to fragment files by `write_piece`, which a `PieceRunner`
may call in other processes (the build's workers); the fragments are then
joined in export order, so the files do not depend on which process wrote what.

Crash safety: every chunk is validated while streaming into temp files; only
when all four are complete are they renamed over the targets, the corpus JSON
last. The redirect history resolves meanings by (id, text hash), so a re-run
after a crash between renames finds the same targets whichever of the redirect
file and the corpus JSON was replaced. `remove_leftover_temps` deletes the temp
files of an export that was killed (fragments included); call it while holding the
export lock.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable, Iterator, Mapping, NamedTuple, Sequence, TextIO

from pocket_assets.core.atomic import atomic_path
from pocket_assets.core.chunking.embed_text import CHUNK_SPLITTER, CONTEXT_SEPARATOR, sdk_line, with_context
from pocket_assets.core.device import DeviceProfile, llm_overflow
from pocket_assets.core.json_schema import (
    DRAFT_07,
    DRAFT_2020_12,
    Validator,
    instance_location,
    load_validator,
    most_relevant_error,
)
from pocket_assets.core.records import CHUNK_TYPES, ChunkRecord, record_columns, to_dict
from pocket_assets.core.export.indented_json import indented_json
from pocket_assets.core.export.redirects import (
    DEFAULT_MIN_OVERLAP,
    ChunkRow,
    CurrentChunks,
    Group,
    RedirectHistory,
    RedirectStats,
    carry_history,
)

SCHEMA_VERSION = "1.0"  # the corpus file format of seed SPEC-SCH-001 §5.1
CHUNK_SCHEMA_FILE = "chunk.schema.json"
HEPILOT_SCHEMA_FILE = "hepilot_chunk_output.schema.json"
SDK_CHUNK_TYPES: tuple[str, ...] = ("child", "table_summary")  # what the phone embeds
PREVIEW_LINES = 5
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

    def __reduce__(self) -> tuple[type[ExportError], tuple[str | None, str]]:
        """Picklable (a `Piece` written in another process carries its errors back)."""
        return (ExportError, (self.chunk_id, self.reason))


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
class CorpusParts:
    """A corpus as the export reads it: in parts (one PDF's chunks each), one part at a time.

    `keys[part]` maps each of KEY_COLUMNS to the part's values, in the order `load(part)`
    returns its chunks: all the export keeps of every chunk. `load(part)` reads the part's
    chunks again, as rows (`to_dict` of each record), while the files are written (and for
    the redirects of a changed part).
    """

    keys: Mapping[str, Mapping[str, Sequence[Any]]]
    load: Callable[[str], Sequence[ChunkRow]]

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
    runner: PieceRunner | None = None,
    device: DeviceProfile = DeviceProfile(),
) -> CorpusExport:
    """`write_corpus_exports` holding one part's chunks at a time (and every chunk's `parts.keys`).

    The files and errors are those of `write_corpus_exports` over the parts' chunks, in part
    order: for several faulty chunks, the one named is the first in export order whose SDK
    line is refused, else the first invalid against the chunk schema, else against HEPilot's.
    `runner` writes the pieces (`in_this_process` by default; another may use other processes):
    the files are the same whichever writes them.
    """
    places = _places(parts)
    _check_corpus_and_ids(corpus, places)
    check_llm_budget(corpus, parts, device)
    chunk_validator = load_validator(schema_dir / CHUNK_SCHEMA_FILE, DRAFT_07)
    hepilot_validator = load_validator(schema_dir / HEPILOT_SCHEMA_FILE, DRAFT_2020_12)
    paths = export_paths(corpus, out_dir)
    reader = _PartReader(parts)
    history, previous_generated = _history_from(paths, _current_chunks(parts, reader), min_overlap)
    del reader  # the redirects' parts, released before the pieces are written
    runs = _runs(places)
    writer = _PieceWriter(parts.load, tuple(parts.keys), tuple(runs), out_dir, corpus, (chunk_validator, hepilot_validator))

    with ExitStack() as stack:
        # Entered first, renamed last: the corpus JSON commits the export (module docstring).
        temps = {
            name: stack.enter_context(atomic_path(paths[name]))
            for name in (MODE_B_FILE, HEPILOT_FILE, SDK_FILE, REDIRECTS_FILE)
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
            pieces = _join_pieces(files, (runner or in_this_process)(writer, [str(n) for n in range(len(runs))]))
            _raise_first_error(pieces)
            files[MODE_B_FILE].write(b"\n  ]\n}\n" if places else b"]\n}\n")
            with temps[REDIRECTS_FILE].open("w", encoding="utf-8", newline="\n") as redirects:
                _write_redirects(redirects, corpus, generated, previous_generated, history, min_overlap)

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
        preview_lines=tuple(line for piece in pieces for line in piece.preview)[:PREVIEW_LINES],
        neutralised=tuple(chunk_id for piece in pieces for chunk_id in piece.neutralised),
        ambiguous_ids=history.ambiguous,
    )


# The chunk files a piece writes a fragment of.
PIECE_FILES: tuple[str, ...] = (SDK_FILE, MODE_B_FILE, HEPILOT_FILE)


@dataclass(frozen=True)
class Piece:
    """One run of the export order held by one part (a PDF's chunks), written: a fragment file per
    chunk file (`PIECE_FILES`; the corpus JSON's records joined by `,`, without the list's brackets),
    how many records the corpus JSON fragment holds, the first SDK lines (the preview), the ids whose
    SDK line was neutralised, and the first error of each kind in the run. `stop` is what the one-pass
    writer raised as it met it (an SDK line refused, a part that changed): the run ends there;
    `schema` and `hepilot` are the first chunks invalid against each schema (no record is written
    after the first schema error, no HEPilot line after the first HEPilot error)."""

    fragments: dict[str, Path]
    records: int
    preview: tuple[str, ...]
    neutralised: tuple[str, ...]
    stop: ExportError | None = None
    schema: ExportError | None = None
    hepilot: ExportError | None = None


# Calls `write(name)` for every name and yields `(name, piece)` as each piece is written, in any
# order, possibly in other processes (forked: `write` holds what the export loaded, and pickles).
PieceRunner = Callable[[Callable[[str], Piece], Sequence[str]], Iterable[tuple[str, Piece]]]


def in_this_process(write: Callable[[str], Piece], names: Sequence[str]) -> Iterator[tuple[str, Piece]]:
    """The default `PieceRunner`: one piece after the other, here, each part's rows freed before the next."""
    for name in names:
        yield name, write(name)


def _runs(places: Sequence[_Place]) -> list[list[_Place]]:
    """`places` cut where the part changes: a PDF's chunks are one run (its source sorts them together)."""
    runs: list[list[_Place]] = []
    for place in places:
        if runs and runs[-1][-1].part == place.part:
            runs[-1].append(place)
        else:
            runs.append([place])
    return runs


@dataclass(frozen=True)
class _PieceWriter:
    """`write_piece` for the runs of one corpus export, by run number (as a string: a `PieceRunner`'s key)."""

    load: Callable[[str], Sequence[ChunkRow]]
    part_names: tuple[str, ...]
    runs: tuple[list[_Place], ...]
    out_dir: Path
    corpus: str
    validators: tuple[Validator, Validator]

    def __call__(self, name: str) -> Piece:
        run = self.runs[int(name)]
        part = self.part_names[run[0].part]
        fragments = {file: _fragment_path(self.out_dir, self.corpus, file) for file in PIECE_FILES}
        try:
            with ExitStack() as stack:
                handles = {
                    file: stack.enter_context(path.open("w", encoding="utf-8", newline="\n"))
                    for file, path in fragments.items()
                }
                return write_piece(handles, fragments, self.load(part), run, part, self.validators)
        except BaseException:
            for path in fragments.values():
                path.unlink(missing_ok=True)
            raise


def _fragment_path(out_dir: Path, corpus: str, file: str) -> Path:
    """A hidden temp file beside the exports (`remove_leftover_temps` finds it if the export is killed)."""
    handle, name = tempfile.mkstemp(prefix=f".chunks_{corpus}.{file}.", suffix=".tmp", dir=out_dir)
    os.close(handle)
    return Path(name)


def write_piece(
    handles: Mapping[str, TextIO],
    fragments: dict[str, Path],
    rows: Sequence[ChunkRow],
    run: Sequence[_Place],
    part: str,
    validators: tuple[Validator, Validator],
) -> Piece:
    """A run's SDK lines, corpus JSON records and HEPilot lines to `handles`, each chunk validated."""
    chunk_validator, hepilot_validator = validators
    preview: list[str] = []
    neutralised: list[str] = []
    schema_error: ExportError | None = None
    hepilot_error: ExportError | None = None
    records = 0

    def piece(stop: ExportError | None = None) -> Piece:
        return Piece(fragments, records, tuple(preview), tuple(neutralised), stop, schema_error, hepilot_error)

    for place in run:
        if place.row >= len(rows) or rows[place.row]["id"] != place.chunk_id:
            return piece(ExportError(place.chunk_id, f"part {part!r} no longer holds this chunk: it changed during the export"))
        chunk = rows[place.row]
        try:
            line = _sdk_line(chunk, neutralised)
        except ExportError as error:
            return piece(error)
        if line is not None:
            if len(preview) < PREVIEW_LINES:
                preview.append(line)
            handles[SDK_FILE].write(line + "\n")
        if schema_error is not None:
            continue
        schema_error = _invalid(chunk_validator, chunk, chunk["id"], CHUNK_SCHEMA_FILE)
        if schema_error is not None:
            continue
        handles[MODE_B_FILE].write(("," if records else "") + "\n    " + indented_json(chunk, 4))
        records += 1
        if hepilot_error is not None:
            continue
        record = hepilot_record(chunk)
        hepilot_error = _invalid(hepilot_validator, record, chunk["id"], HEPILOT_SCHEMA_FILE)
        if hepilot_error is not None:
            continue
        handles[HEPILOT_FILE].write(json.dumps(record, ensure_ascii=False) + "\n")
    return piece()


def _join_pieces(files: Mapping[str, BinaryIO], written: Iterable[tuple[str, Piece]]) -> list[Piece]:
    """Append each piece's fragments to the files in run order as soon as the runs before it are in
    (pieces come in any order), deleting each fragment once copied; returns the pieces in run order."""
    waiting: dict[int, Piece] = {}
    joined: list[Piece] = []
    records = 0
    try:
        for name, piece in written:
            waiting[int(name)] = piece
            while len(joined) in waiting:
                piece = waiting.pop(len(joined))
                for file in PIECE_FILES:
                    with piece.fragments[file].open("rb") as fragment:
                        if file == MODE_B_FILE and records and piece.records:
                            files[file].write(b",")
                        shutil.copyfileobj(fragment, files[file], _COPY_BYTES)
                    piece.fragments[file].unlink()
                records += piece.records
                joined.append(piece)
    finally:
        for piece in waiting.values():
            for path in piece.fragments.values():
                path.unlink(missing_ok=True)
    return joined


_COPY_BYTES = 1 << 20


def _raise_first_error(pieces: Sequence[Piece]) -> None:
    """The error the one-pass writer raised: the first SDK line refused (or part changed) in export
    order, else the first chunk invalid against the chunk schema, else against HEPilot's."""
    for kind in ("stop", "schema", "hepilot"):
        error = next((getattr(piece, kind) for piece in pieces if getattr(piece, kind) is not None), None)
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
        if path.is_file() and path.name[1:].startswith(stems)
    )
    for path in leftovers:
        path.unlink(missing_ok=True)
    return leftovers


def read_corpus_json(path: Path) -> dict[str, Any] | None:
    """A previous `chunks_mode_b_*.json`, or None if there is none.

    A file that exists but is not a corpus JSON is an error, not "no previous
    export": treating it as absent would silently drop every redirect.
    """
    if not path.exists():
        return None
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as error:
        raise ExportError(None, f"{path}: previous export is not valid JSON ({error})") from None
    if not isinstance(document, dict) or not isinstance(document.get("chunks"), list):
        raise ExportError(None, f'{path}: previous export has no "chunks" list')
    document.setdefault("metadata", {})
    return document


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
    when that export was generated; the previous corpus JSON is released before the files are written."""
    previous = read_corpus_json(paths[MODE_B_FILE])
    history = _read_history(paths[REDIRECTS_FILE])
    try:
        carried = carry_history(history, previous["chunks"] if previous else None, current, min_overlap)
    except (KeyError, TypeError, ValueError) as error:
        reason = f"a previous chunk lacks a usable id, source, chunk_type or text, or a redirect its id or hash ({error!r})"
        raise ExportError(None, f"{paths[MODE_B_FILE]} / {paths[REDIRECTS_FILE]}: {reason}") from None
    return carried, previous["metadata"].get("generated") if previous else None


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


def check_llm_budget(corpus: str, parts: CorpusParts, device: DeviceProfile) -> None:
    """The phone hands its `top_k` best lines whole to its LLM: any `top_k` lines of the corpus, with the
    question budget, must fit the LLM's context. Raises ExportError (naming no chunk: the corpus is refused,
    not a PDF) with the settings to change."""
    lines = (
        (chunk_id, tokens)
        for columns in parts.keys.values()
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
    document = {
        "metadata": metadata,
        "redirects": history.redirects,
        "history": [to_dict(meaning) for meaning in history.meanings],
    }
    handle.write(indented_json(document) + "\n")
