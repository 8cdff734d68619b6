"""The export of an output folder: which PDFs ship and why the others do not, then every corpus written at once.

One PDF never blocks the others: a PDF whose latest chunks failed ships its last good ones, listed as
stale, or is left out, listed; a PDF whose chunk ids collide with another's of its corpus is left out,
named; a copy of another PDF of its corpus (the same bytes) is named as its duplicate; every file of the
raw folder that is not built is listed in `left_out` with why. Strict export refuses the whole export
instead while any PDF is stale or left out.

What ships is never less than what was built: a PDF that shipped in the last export and has no validated
chunks it can ship now (its stage files damaged, or deleted by `forget` during a build) ships the chunks
it shipped then, read back from the last corpus JSON, listed as stale; only when those cannot be had (that
file changed since it was published) is it left out, and then named as `dropped` too (the build command
fails on it). So does a PDF that shipped and became the copy of a new PDF sorting first, until that one
is built (a sensor or a `build --pdf` exports before it is).

The export holds a few columns of every chunk (ids, hashes, sort keys: `KEY_COLUMNS` and the corpus
suite's) and copies each PDF's export piece, rendered when its validated chunks were written
(`kept_pieces`), one piece at a time: after one PDF changed, only that PDF's chunks are rendered again.
Every corpus is judged against the phone's LLM budget before any is written, so that none is published
beside an old one; each PDF's way into the export is recorded in its `android_export` manifest (the
build command reads them), and what the export was made from and published beside it (`fingerprint`).
A published file that is not what the last export wrote is written again, named, and not read back; the
files of a corpus no longer configured are removed, named (a crash in between leaves them recorded, and
the next export removes the rest).

It runs once after the PDFs of a build or a backfill are done, never in a range run: the published files
always hold a whole corpus.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

import pyarrow as pa

from pocket_assets.core.device import DeviceProfile
from pocket_assets.core.quality.gate_results import GateReport
from pocket_assets.core.quality.suites import Gates, corpus_frame_columns, corpus_ids_on_columns
from pocket_assets.core.raw_folder import corpus_of, source_name
from pocket_assets.export.errors import ExportError
from pocket_assets.export.fingerprint import (
    ExportState,
    changed_files,
    export_fingerprint,
    read_export_state,
    record_export,
)
from pocket_assets.export.kept_pieces import stored_pieces
from pocket_assets.export.llm_budget import check_llm_budget
from pocket_assets.export.lock import export_lock
from pocket_assets.export.pieces import PieceFileCache
from pocket_assets.export.previous_export import NotACorpusFile, index_path, read_previous_export
from pocket_assets.export.redirects import ChunkRow
from pocket_assets.export.selection import select_for_export
from pocket_assets.export.validated_files import ValidatedFile, read_validated, validated_chunks_as_read
from pocket_assets.export.writer import (
    KEY_COLUMNS,
    MODE_B_FILE,
    CorpusExport,
    CorpusParts,
    export_paths,
    remove_leftover_temps,
    write_corpus_parts,
)
from pocket_assets.stages.pdf_notes import EXPORT, pdf_warnings
from pocket_assets.stages.planner import CorpusPlan, duplicate_sentence
from pocket_assets.stages.registry import STAGES
from pocket_assets.stages.store import STATUS_OK, PartitionManifest, PartitionStore

# How each PDF went into the export, in its `android_export` manifest (read by the build command).
SHIPPED_FRESH, SHIPPED_STALE, LEFT_OUT, DUPLICATE = STATUS_OK, "stale", "left_out", "duplicate"

Columns = dict[str, list[Any]]  # column -> values, in the PDF's validated file's row order
Notes = Mapping[str, list[dict[str, str]]]  # a corpus JSON's `duplicates` and its files not built


class ExportRefused(Exception):
    """The whole export refused (strict export and a PDF stale or left out, a corpus over the phone's LLM
    budget): nothing was published; the message says why and what to change."""


@dataclass(frozen=True)
class ExportOutcome:
    """What an export published: each corpus's files, how many PDFs shipped (fresh or stale) and were left out,
    the sentences a maintainer reads by kind (`dropped`, `stale`, `left_out`, `warnings`, `not_built`,
    `duplicates`, `repaired`, `removed`, `leftover_temps_removed`; an empty list when none), and each corpus's
    id check with the PDFs it left out."""

    corpora: tuple[CorpusExport, ...]
    pdfs_exported: int
    pdfs_stale: int
    pdfs_left_out: int
    sentences: dict[str, list[str]]
    id_reports: tuple[GateReport, ...]  # one per corpus, labelled with its name
    collisions: tuple[tuple[str, str], ...]  # (PDF, why): left out, its chunk ids collide with another PDF's


def publish_exports(
    *,
    store: PartitionStore,
    plan: CorpusPlan,
    output_dir: Path,
    corpora: Sequence[str],
    gates: Gates,
    schema_dir: Path,
    device: DeviceProfile,
    run_id: str,
    strict: bool = False,
) -> ExportOutcome:
    """Export every corpus of `output_dir` from the stage files of the PDFs of `plan` (see the module docstring);
    raises ExportRefused when the export is refused as a whole. `schema_dir` holds the suites and schemas;
    `run_id` is recorded in each PDF's `android_export` manifest."""
    fingerprint = export_fingerprint(store, plan, corpora, strict)
    keys = [pdf.key for pdf in plan.pdfs]
    with export_lock(output_dir):
        last = read_export_state(output_dir)
        changed = changed_files(output_dir, last) if last is not None else {}
        choice = _choose(store, plan, gates, schema_dir, corpora, output_dir, last, changed)
        columns_by_key, stale, left_out, duplicates = choice.columns_by_key, choice.stale, choice.left_out, choice.duplicates
        problems = sorted({**stale, **left_out}.items())
        if strict and problems:
            _record(store, run_id, {key: (LEFT_OUT, f"export refused (strict): {why}", []) for key, why in problems})
            raise ExportRefused(
                "Export refused (strict export): "
                + " / ".join(f"{key}: {why}" for key, why in problems)
                + ". Fix or remove these PDFs, or turn strict export off to ship the others."
            )
        for corpus in corpora:  # every corpus judged before any is written: none is published beside an old one
            try:
                check_llm_budget(corpus, {k: c for k, c in columns_by_key.items() if corpus_of(k, corpora) == corpus}, device)
            except ExportError as error:
                raise ExportRefused(f"Export of corpus {corpus} refused: {error}") from None

        generated = datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
        exports = []
        warnings: dict[str, list[str]] = {key: [] for key in keys}
        last_shipped = frozenset(last.shipped) if last is not None else frozenset()
        chunks = _Chunks(store, schema_dir, choice.files, choice.kept)
        leftovers = remove_leftover_temps(output_dir)
        for corpus in corpora:
            in_corpus = [key for key in keys if corpus_of(key, corpora) == corpus]
            notes = {
                "duplicates": [{"pdf": key, "duplicate_of": duplicates[key]} for key in in_corpus if key in duplicates],
                "not_built": [{"pdf": name, "reason": why} for name, why in _not_built_in(corpus, plan.not_built, corpora)],
            }
            export = _write_corpus(
                chunks, output_dir, strict, device, corpus, in_corpus, generated, columns_by_key, stale, left_out, notes,
                last_shipped, changed,
            )
            _note_neutralised(export.neutralised, columns_by_key, warnings)
            exports.append(export)
        removed = _remove_unconfigured(output_dir, last, corpora)
        record_export(
            output_dir,
            fingerprint,
            run_id,
            {export.corpus: list(export.paths.values()) for export in exports},
            {key: (corpus_of(key, corpora), source_name(key)) for key in columns_by_key},
        )
    dropped = {key: why for key, why in left_out.items() if key in last_shipped}
    _record(store, run_id, _export_states(keys, stale, left_out, warnings, duplicates, dropped))
    return ExportOutcome(
        corpora=tuple(exports),
        pdfs_exported=len(columns_by_key),
        pdfs_stale=len(stale),
        pdfs_left_out=len(left_out),
        sentences={
            "dropped": [_dropped_sentence(key, why) for key, why in sorted(dropped.items())],
            "stale": [f"{key}: {why}" for key, why in sorted(stale.items())],
            "left_out": [f"{key}: {why}" for key, why in sorted(left_out.items())],
            "warnings": [f"{key}: {note}" for key in keys for note in pdf_warnings(store, key, STAGES) + warnings[key]],
            "not_built": [why for _, why in plan.not_built],
            "duplicates": [duplicate_sentence(key, original) for key, original in sorted(duplicates.items())],
            "repaired": [_repaired_sentence(name, why) for name, why in changed.items() if name not in removed],
            "removed": [_removed_sentence(removed, corpora)] if removed else [],
            "leftover_temps_removed": [path.name for path in leftovers],
        },
        id_reports=choice.id_reports,
        collisions=choice.collisions,
    )


@dataclass(frozen=True)
class _Choice:
    """What an export ships, before anything is written: each shipped PDF's columns (`columns_by_key`), read from
    its validated file (`files`) or from the last export (`kept`); the PDFs stale and left out with why; the copies
    not shipped; each corpus's id check and the PDFs its collisions left out."""

    files: dict[str, ValidatedFile]
    kept: dict[str, list[ChunkRow]]
    columns_by_key: dict[str, Columns]
    stale: dict[str, str]
    left_out: dict[str, str]
    duplicates: dict[str, str]
    id_reports: tuple[GateReport, ...]
    collisions: tuple[tuple[str, str], ...]


def _choose(
    store: PartitionStore,
    plan: CorpusPlan,
    gates: Gates,
    schema_dir: Path,
    corpora: Sequence[str],
    output_dir: Path,
    last: ExportState | None,
    changed: Collection[str],
) -> _Choice:
    """Which PDFs ship and why the others do not (the module docstring's rules)."""
    selection = select_for_export(store, [pdf.key for pdf in plan.pdfs if pdf.duplicate_of is None])
    suite_columns = corpus_frame_columns(schema_dir)
    held = tuple(dict.fromkeys(KEY_COLUMNS + suite_columns))
    files, unreadable = _read_validated_files(store, selection.shipped, held)
    stale = {key: why for key, why in selection.stale if key not in unreadable}
    without = dict(selection.excluded + tuple(unreadable.items()))
    # A copy that shipped stands for the PDF now kept in its place until that one has chunks to ship.
    standing_in = {copy: original for copy, original in plan.duplicates.items() if original in without}
    kept = _last_exported(output_dir, last, changed, sorted([*without, *standing_in]), corpora, held)
    for key in kept:
        if key in standing_in:
            why = f"{standing_in[key]}, the copy now exported in its place, has no chunks yet"
            stale[key] = f"stale, its last exported chunks ship until {why}"
        else:
            stale[key] = f"stale, its last exported chunks ship: {without.pop(key)}"
    left_out = {key: f"left out, {why}" for key, why in without.items()}
    columns_by_key = {key: file.columns for key, file in files.items()}
    columns_by_key.update({key: {name: [row[name] for row in rows] for name in held} for key, rows in kept.items()})
    id_reports, collisions = _corpus_ids(gates, columns_by_key, suite_columns, corpora)
    for key, why in collisions:
        del columns_by_key[key]
        stale.pop(key, None)
        left_out[key] = why
    return _Choice(
        files=files,
        kept=kept,
        columns_by_key=columns_by_key,
        stale=stale,
        left_out=left_out,
        duplicates={key: original for key, original in plan.duplicates.items() if key not in kept},
        id_reports=id_reports,
        collisions=collisions,
    )


class _Chunks:
    """Where the export reads each shipped PDF's chunks: its validated file as the export read it (`files`), or,
    for a PDF whose validated chunks cannot be used now, the chunks it shipped in the last export (`kept`)."""

    def __init__(
        self, store: PartitionStore, schema_dir: Path, files: dict[str, ValidatedFile], kept: dict[str, list[ChunkRow]]
    ) -> None:
        self.schema_dir = schema_dir
        self._store = store
        self._files = files
        self._kept = kept
        self._validated = validated_chunks_as_read(store, files)

    def load(self, key: str) -> Sequence[ChunkRow]:
        return self._kept[key] if key in self._kept else self._validated(key)

    def pieces(self, keys: Sequence[str]) -> PieceFileCache:
        """The pieces kept beside the stages of the PDFs read from their validated file (the others have none)."""
        return stored_pieces(self._store, self.schema_dir, {key: self._files[key] for key in keys if key in self._files})


def _write_corpus(
    chunks: _Chunks,
    output_dir: Path,
    strict: bool,
    device: DeviceProfile,
    corpus: str,
    keys: Sequence[str],
    generated: str,
    columns_by_key: dict[str, Columns],
    stale: dict[str, str],
    left_out: dict[str, str],
    notes: Notes,
    last_shipped: Collection[str],
    changed: Collection[str],
) -> CorpusExport:
    """Write one corpus from each PDF's export piece (kept beside its stages; rendered again from its chunks when
    missing, damaged or made from another version of them); a chunk the export refuses (e.g. invalid against the
    HEPilot schema, which is not a per-PDF gate) leaves its PDF out, named, and the corpus is written again
    without it.

    Nothing is replaced until every chunk is valid, so a retry starts from the same previous export.
    Strict export refuses instead. Lines too long for the device's LLM refuse the corpus (an ExportError
    naming no chunk): no PDF is to blame, a setting is.
    """
    while True:
        shipped = [key for key in keys if key in columns_by_key]
        parts = CorpusParts(
            keys={key: columns_by_key[key] for key in shipped},
            load=chunks.load,
            piece_cache=chunks.pieces(shipped),
        )
        try:
            return write_corpus_parts(
                corpus,
                parts,
                output_dir,
                generated,
                chunks.schema_dir,
                notes=_corpus_notes(keys, columns_by_key, stale, left_out, notes, last_shipped),
                device=device,
                changed=changed,
            )
        except ExportError as error:
            culprit = next((k for k in parts.keys if error.chunk_id in parts.keys[k]["id"]), None)
            if culprit is None or strict:
                raise ExportRefused(f"Export of corpus {corpus} refused: {error}") from None
            left_out[culprit] = f"left out, its chunk cannot be exported: {error}; fix the PDF or report it"
            stale.pop(culprit, None)
            del columns_by_key[culprit]


def _read_validated_files(
    store: PartitionStore, keys: Sequence[str], columns: Sequence[str]
) -> tuple[dict[str, ValidatedFile], dict[str, str]]:
    """Each shipped PDF's validated file as the export reads it; one that cannot be read is named with why (never
    another PDF's failure)."""
    files, unreadable = {}, {}
    for key in keys:
        try:
            files[key] = read_validated(store, key, columns)
        except (OSError, pa.ArrowException) as error:
            unreadable[key] = f"its validated chunks cannot be read ({error}); build it again"
    return files, unreadable


def _last_exported(
    output_dir: Path,
    last: ExportState | None,
    changed: Collection[str],
    keys: Sequence[str],
    corpora: Sequence[str],
    held: Sequence[str],
) -> dict[str, list[ChunkRow]]:
    """The chunks each of `keys` (PDFs without validated chunks to ship now) shipped in the last export, read back
    from its corpus JSON: for those that shipped, when that file is still the one the last export published and
    its records hold the columns the export holds (`held`)."""
    if last is None:
        return {}
    wanted = {key: last.shipped[key] for key in keys if key in last.shipped and last.shipped[key][0] in corpora}
    kept: dict[str, list[ChunkRow]] = {}
    for corpus in sorted({corpus for corpus, _ in wanted.values()}):
        path = export_paths(corpus, output_dir)[MODE_B_FILE]
        if path.name in changed or path.name not in last.files:
            continue
        try:
            previous = read_previous_export(path)
        except (NotACorpusFile, KeyError, TypeError, ValueError):
            continue
        if previous is None:
            continue
        chunks = previous[1]
        for key, (in_corpus, source) in wanted.items():
            if in_corpus != corpus:
                continue
            rows = list(chunks.load([at for at, group in enumerate(chunks.groups) if group[0] == source]))
            if all(name in row for row in rows for name in held):
                kept[key] = rows
    return kept


def _corpus_ids(
    gates: Gates, columns_by_key: dict[str, Columns], suite_columns: Sequence[str], corpora: Sequence[str]
) -> tuple[tuple[GateReport, ...], tuple[tuple[str, str], ...]]:
    """The corpus suite over each corpus (ids need only be unique within one: each corpus is its own file), and
    the PDFs whose ids collide with another's of their corpus."""
    reports, collisions = [], []
    for corpus in corpora:
        in_corpus = {key: columns for key, columns in columns_by_key.items() if corpus_of(key, corpora) == corpus}
        frame = {name: [value for columns in in_corpus.values() for value in columns[name]] for name in suite_columns}
        reports.append(corpus_ids_on_columns(gates, frame, corpus))
        collisions.extend(_colliding_pdfs(in_corpus))
    return tuple(reports), tuple(collisions)


def _colliding_pdfs(columns_by_key: dict[str, Columns]) -> tuple[tuple[str, str], ...]:
    """PDFs whose chunk ids another PDF (earlier in key order) already holds: left out, both named.

    Sources keep the subfolder (`core.raw_folder.source_name`), so this takes names that
    only normalisation makes equal, e.g. `fr/a.PDF` beside `fr/a.pdf`.
    """
    owner: dict[str, str] = {}
    collisions = []
    for key in sorted(columns_by_key):
        ids = set(columns_by_key[key]["id"])
        clash = sorted(chunk_id for chunk_id in ids if chunk_id in owner)
        if clash:
            other = owner[clash[0]]
            collisions.append(
                (
                    key,
                    f"left out, its chunk ids collide with those of {other} (same source name "
                    f"{_first_source(columns_by_key[key])!r} once normalised, e.g. {clash[0]}); "
                    "rename one of the two files",
                )
            )
            continue
        owner.update((chunk_id, key) for chunk_id in ids)
    return tuple(collisions)


def _corpus_notes(
    keys: Sequence[str],
    columns_by_key: dict[str, Columns],
    stale: dict[str, str],
    left_out: dict[str, str],
    notes: Notes,
    last_shipped: Collection[str],
) -> dict[str, list[dict[str, str]]]:
    """The corpus JSON's `stale`, `left_out` (PDFs of the corpus, then files not built), `dropped` (the left out
    that shipped in the last export) and `duplicates` lists (empty lists when none)."""
    return {
        "stale": [
            {"pdf": key, "source": _first_source(columns_by_key.get(key)), "reason": stale[key]}
            for key in keys
            if key in stale
        ],
        "left_out": [{"pdf": key, "reason": left_out[key]} for key in keys if key in left_out]
        + notes["not_built"],
        "dropped": [{"pdf": key, "reason": left_out[key]} for key in keys if key in left_out and key in last_shipped],
        "duplicates": notes["duplicates"],
    }


def _not_built_in(corpus: str, not_built: Sequence[tuple[str, str]], corpora: Sequence[str]) -> list[tuple[str, str]]:
    """The files not built that a corpus lists: those under its folder, and those under no corpus folder (which
    corpus they were meant for is not known)."""
    listed = []
    for name, why in not_built:
        folder = name.split("/", 1)[0] if "/" in name else None
        if folder == corpus or folder not in corpora:
            listed.append((name, why))
    return listed


def _remove_unconfigured(output_dir: Path, last: ExportState | None, corpora: Sequence[str]) -> list[str]:
    """Remove the files the last export published for a corpus no longer configured (with the corpus JSON's
    index); returns their names. Each removal is atomic, and the set is committed by the export's record: a crash
    in between leaves them recorded, and the next export removes the rest."""
    if last is None:
        return []
    names = sorted(name for name, published in last.files.items() if published.corpus not in corpora)
    for name in names:
        index_path(output_dir / name).unlink(missing_ok=True)
        (output_dir / name).unlink(missing_ok=True)
    return names


def _removed_sentence(names: Sequence[str], corpora: Sequence[str]) -> str:
    return (
        f"removed {', '.join(names)}: the exports of a corpus no longer configured (the corpora are now "
        f"{', '.join(corpora)}: POCKET_ASSETS_CORPORA, or paths.corpora)"
    )


def _repaired_sentence(name: str, why: str) -> str:
    """A published file that is no longer what the export wrote: written again; what its loss costs the redirects."""
    if name.startswith("chunks_mode_b_"):
        cost = "; not read back, so an id whose text changed since the last export keeps only its recorded redirect"
    elif name.startswith("id_redirects_"):
        cost = "; not read back, so the ids exported before the last export no longer redirect"
    else:
        cost = ""
    return f"{name} {why}: written again{cost}"


def _dropped_sentence(key: str, why: str) -> str:
    return f"{key} shipped in the last export and is not in this one: {why}"


def _first_source(columns: Columns | None) -> str:
    """The source name a PDF's chunks carry ("" for a PDF without chunks)."""
    return columns["source"][0] if columns and columns["source"] else ""


def _note_neutralised(
    chunk_ids: Sequence[str], columns_by_key: dict[str, Columns], warnings: dict[str, list[str]]
) -> None:
    wanted = set(chunk_ids)
    for key, columns in columns_by_key.items():
        hits = [chunk_id for chunk_id in columns["id"] if chunk_id in wanted]
        if hits:
            warnings[key].append(
                f"{len(hits)} SDK line(s) held the text <chunk_splitter>, written ‹chunk_splitter› so the SDK "
                f"does not split there (first {hits[0]})"
            )


PdfState = tuple[str, str | None, list[str]]  # (status, reason, warnings)


def _export_states(
    keys: Sequence[str],
    stale: dict[str, str],
    left_out: dict[str, str],
    warnings: dict[str, list[str]],
    duplicates: Mapping[str, str],
    dropped: Collection[str],
) -> dict[str, PdfState]:
    states: dict[str, PdfState] = {}
    for key in keys:
        if key in duplicates:
            states[key] = (DUPLICATE, duplicate_sentence(key, duplicates[key]), warnings[key])
        elif key in left_out:
            why = f"dropped, it shipped in the last export: {left_out[key]}" if key in dropped else left_out[key]
            states[key] = (LEFT_OUT, why, warnings[key])
        elif key in stale:
            states[key] = (SHIPPED_STALE, stale[key], warnings[key])
        else:
            states[key] = (SHIPPED_FRESH, None, warnings[key])
    return states


def _record(store: PartitionStore, run_id: str, states: dict[str, PdfState]) -> None:
    """One `android_export` manifest per PDF: how it went into this export (the build command reads them)."""
    store.write_manifests(
        PartitionManifest(
            asset=EXPORT.name, partition_key=key, status=status, reason=reason, run_id=run_id, extra={"warnings": warnings}
        )
        for key, (status, reason, warnings) in states.items()
    )
