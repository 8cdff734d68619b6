"""The per-corpus export files (DESIGN.md section 6), validated, then written atomically.

For a corpus `c`, `write_corpus_exports` writes under `out_dir`:

- `chunks_{c}.txt`: the Google AI Edge RAG SDK file, one line per child and table summary
  (`export.sdk_lines`);
- `chunks_mode_b_{c}.json`: `{"metadata": {...}, "chunks": [...]}` with every chunk type, each chunk
  valid against the seed's Draft-07 chunk schema (§5; `export.corpus_records`);
- `chunks_{c}.hepilot.jsonl`: one seed HEPilot `chunk_output` record per chunk (`export.corpus_records`);
- `id_redirects_{c}.json`: every id ever exported in the corpus mapped to the id now covering the same
  text, or to null (`export.redirect_file`).

The files list the chunks in the export order (`export.order`). Given the same chunks, the SDK and
HEPilot files are byte-identical between builds and the corpus JSON differs only in `metadata.generated`.

Each PDF's chunks come as a piece (`export.pieces`), rendered once and kept between exports when a
`PieceCache` is given. Memory: `write_corpus_parts` holds a few key columns of every chunk (ids, hashes,
sort keys: `CorpusParts`) and one piece at a time; of the previous corpus JSON, only the index the last
export kept beside it is read, not the file (`export.previous_export`); a corpus of many PDFs costs the
export its ids, not its texts. `write_corpus_exports` is the same over chunks already in memory (its pieces
kept in temp files for the one export). The export works on chunk rows (`ChunkRow`, each chunk as
`to_dict` gives it: the corpus JSON's record), not records: a part read from Parquet is rows already.

Crash safety: every piece's report is read (and any piece missing rendered) before a file is opened, so a
refused chunk replaces nothing; the pieces are then streamed into temp files, and only when all four are
complete are they renamed over the targets, the corpus JSON last. The redirect history resolves meanings
by (id, text hash), so a re-run after a crash between renames finds the same targets whichever of the
redirect file and the corpus JSON was replaced. `remove_leftover_temps` deletes the temp files of an export
that was killed (its temporary pieces included); call it while holding the export lock.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Collection, Mapping, Sequence

from pocket_assets.core.atomic import atomic_path
from pocket_assets.core.device import DeviceProfile
from pocket_assets.core.records import CHUNK_TYPES, SDK_CHUNK_TYPES, ChunkRecord, record_columns, to_dict
from pocket_assets.export.corpus_records import SCHEMA_VERSION, piece_validators
from pocket_assets.export.errors import ExportError
from pocket_assets.export.indented_json import indented_json
from pocket_assets.export.llm_budget import check_llm_budget
from pocket_assets.export.order import Place, check_corpus_and_ids, places_in_order, runs_by_part
from pocket_assets.export.pieces import (
    PREVIEW_LINES,
    Piece,
    PieceCache,
    PieceReport,
    TemporaryPieceCache,
    ids_digest,
    raise_first_error,
    render_piece,
)
from pocket_assets.export.previous_export import index_path, record_spans, write_export_index
from pocket_assets.export.redirect_file import carried_history, write_redirect_file
from pocket_assets.export.redirects import DEFAULT_MIN_OVERLAP, ChunkRow, CurrentChunks, Group, RedirectStats

# Keys of CorpusExport.paths and .sizes.
SDK_FILE = "sdk"
MODE_B_FILE = "mode_b"
HEPILOT_FILE = "hepilot"
REDIRECTS_FILE = "redirects"
INDEX = "index"  # the corpus JSON's index, a temp of the export like its files
# The chunk files a piece adds to, in the order of its sections.
PIECE_FILES: tuple[str, ...] = (SDK_FILE, MODE_B_FILE, HEPILOT_FILE)

# What the export holds of every chunk of a corpus (`CorpusParts.keys`): the sort keys, the corpus, the text hash,
# and the tokens the phone embeds (`check_llm_budget`).
KEY_COLUMNS: tuple[str, ...] = ("id", "source", "chunk_type", "chunk_index", "corpus", "hash", "embedded_tokens")


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
    chunks again, as rows (`to_dict` of each record), to render its piece when `piece_cache`
    has none for it (and for the redirects of a changed part). Without a cache, every piece is
    rendered for this export alone.
    """

    keys: Mapping[str, Mapping[str, Sequence[Any]]]
    load: Callable[[str], Sequence[ChunkRow]]
    piece_cache: PieceCache | None = None

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
    changed: Collection[str] = (),
) -> CorpusExport:
    """`write_corpus_exports` holding one part's chunks at a time (and every chunk's `parts.keys`).

    The files and errors are those of `write_corpus_exports` over the parts' chunks, in part
    order: for several faulty chunks, the one named is the first in export order whose SDK
    line is refused, else the first invalid against the chunk schema, else against HEPilot's.
    Each part's piece comes from `parts.piece_cache` when it holds one made from the part as it is now,
    else it is rendered from `parts.load` (and kept there): the files are the same either way. The previous
    files named in `changed` (not what the last export published) are not read back for the redirects.
    """
    places = places_in_order(parts.keys)
    check_corpus_and_ids(corpus, places)
    check_llm_budget(corpus, parts.keys, device)
    runs = runs_by_part(places)
    names = list(parts.keys)
    ordered = [names[run[0].part] for run in runs]
    validators = piece_validators(schema_dir)
    paths = export_paths(corpus, out_dir)
    reader = _PartReader(parts)
    history, previous_generated = carried_history(
        paths[REDIRECTS_FILE], paths[MODE_B_FILE], _current_chunks(parts, reader), min_overlap, changed
    )
    del reader  # the redirects' parts, released before the pieces are read
    cache = parts.piece_cache or TemporaryPieceCache(out_dir, corpus)

    def render(part: str) -> Piece:
        piece = render_piece(parts.load(part), validators)
        cache.keep(part, piece)
        return piece

    expected = {names[run[0].part]: ids_digest(place.chunk_id for place in run) for run in runs}
    first_ids = {names[run[0].part]: run[0].chunk_id for run in runs}

    def checked(part: str, report: PieceReport) -> PieceReport:
        """The report, with the part named if its piece holds other chunks than its key columns say."""
        if report.ids == expected[part] or report.stop is not None:
            return report
        why = f"part {part!r} no longer holds this chunk: it changed during the export"
        return replace(report, stop=ExportError(first_ids[part], why))

    try:
        reports = [checked(part, cache.report(part) or render(part).report) for part in ordered]
        raise_first_error(reports)
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
                    piece = cache.piece(part)
                    if piece is None or piece.report != report:  # damaged since its report was read
                        piece = render(part)
                        raise_first_error([checked(part, piece.report)])
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
                write_redirect_file(redirects, corpus, generated, previous_generated, history, min_overlap)
    finally:
        if parts.piece_cache is None:
            cache.remove()

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
    target: Path, parts: CorpusParts, places: Sequence[Place], spans: Sequence[tuple[int, int]], size: int, metadata: Mapping[str, Any]
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
