"""The export of an output folder: which PDFs ship and why the others do not, then every corpus written at once.

One PDF never blocks the others: a PDF whose latest chunks failed ships its last good ones, listed as
stale, or is left out, listed; a PDF whose chunk ids collide with another's is left out, named; a copy of
another PDF (the same bytes) is named as its duplicate. Strict export refuses the whole export instead
while any PDF is stale or left out.

The export holds a few columns of every chunk (ids, hashes, sort keys: `KEY_COLUMNS` and the corpus
suite's) and copies each PDF's export piece, rendered when its validated chunks were written
(`kept_pieces`), one piece at a time: after one PDF changed, only that PDF's chunks are rendered again.
Every corpus is judged against the phone's LLM budget before any is written, so that none is published
beside an old one; each PDF's way into the export is recorded in its `android_export` manifest (the
build command reads them), and what the export was made from beside it (`fingerprint`).

It runs once after the PDFs of a build or a backfill are done, never in a range run: the published files
always hold a whole corpus.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

import pyarrow as pa

from pocket_assets.core.device import DeviceProfile
from pocket_assets.core.quality.gate_results import GateReport
from pocket_assets.core.quality.suites import Gates, corpus_frame_columns, corpus_ids_on_columns
from pocket_assets.core.raw_folder import RawFolderScan, corpus_of
from pocket_assets.export.errors import ExportError
from pocket_assets.export.fingerprint import export_fingerprint, record_export
from pocket_assets.export.kept_pieces import stored_pieces
from pocket_assets.export.llm_budget import check_llm_budget
from pocket_assets.export.lock import export_lock
from pocket_assets.export.selection import select_for_export
from pocket_assets.export.validated_files import ValidatedFile, read_validated, validated_chunks_as_read
from pocket_assets.export.writer import (
    KEY_COLUMNS,
    CorpusExport,
    CorpusParts,
    remove_leftover_temps,
    write_corpus_parts,
)
from pocket_assets.stages.pdf_notes import EXPORT, pdf_warnings
from pocket_assets.stages.planner import duplicate_sentence, duplicates_within_corpus
from pocket_assets.stages.registry import STAGES
from pocket_assets.stages.sources import current_sha256
from pocket_assets.stages.store import STATUS_OK, PartitionManifest, PartitionStore

# How each PDF went into the export, in its `android_export` manifest (read by the build command).
SHIPPED_FRESH, SHIPPED_STALE, LEFT_OUT, DUPLICATE = STATUS_OK, "stale", "left_out", "duplicate"

Columns = dict[str, list[Any]]  # column -> values, in the PDF's validated file's row order


class ExportRefused(Exception):
    """The whole export refused (strict export and a PDF stale or left out, a corpus over the phone's LLM
    budget): nothing was published; the message says why and what to change."""


@dataclass(frozen=True)
class ExportOutcome:
    """What an export published: each corpus's files, how many PDFs shipped (fresh or stale) and were left out,
    the sentences a maintainer reads by kind (`stale`, `left_out`, `warnings`, `not_built`, `duplicates`,
    `leftover_temps_removed`; an empty list when none), and the corpus-wide id check with the PDFs it left out."""

    corpora: tuple[CorpusExport, ...]
    pdfs_exported: int
    pdfs_stale: int
    pdfs_left_out: int
    sentences: dict[str, list[str]]
    id_report: GateReport
    collisions: tuple[tuple[str, str], ...]  # (PDF, why): left out, its chunk ids collide with another PDF's


def publish_exports(
    *,
    store: PartitionStore,
    scan: RawFolderScan,
    raw_dir: Path,
    output_dir: Path,
    corpora: Sequence[str],
    gates: Gates,
    schema_dir: Path,
    device: DeviceProfile,
    run_id: str,
    strict: bool = False,
    keep_duplicates: bool = False,
) -> ExportOutcome:
    """Export every corpus of `output_dir` from the stage files of the PDFs `scan` found (see the module
    docstring); raises ExportRefused when the export is refused as a whole. `schema_dir` holds the suites and
    schemas; `run_id` is recorded in each PDF's `android_export` manifest."""
    fingerprint = export_fingerprint(store, scan.keys, strict)
    duplicates = {} if keep_duplicates else duplicates_within_corpus(store, current_sha256(store, raw_dir, scan.keys), corpora)
    selection = select_for_export(store, [key for key in scan.keys if key not in duplicates])
    suite_columns = corpus_frame_columns(schema_dir)
    held = tuple(dict.fromkeys(KEY_COLUMNS + suite_columns))
    files, unreadable = _read_validated_files(store, selection.shipped, held)
    columns_by_key = {key: file.columns for key, file in files.items()}
    id_report = corpus_ids_on_columns(
        gates,
        {name: [value for columns in columns_by_key.values() for value in columns[name]] for name in suite_columns},
    )
    collisions = _colliding_pdfs(columns_by_key)
    for key, _ in collisions:
        del columns_by_key[key]
    stale = {key: why for key, why in selection.stale if key not in unreadable}
    left_out = dict(selection.excluded + tuple(unreadable.items()) + collisions)
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
    warnings: dict[str, list[str]] = {key: [] for key in scan.keys}
    with export_lock(output_dir):
        leftovers = remove_leftover_temps(output_dir)
        for corpus in corpora:
            keys = [key for key in scan.keys if corpus_of(key, corpora) == corpus]
            notes = {"duplicates": [{"pdf": key, "duplicate_of": duplicates[key]} for key in keys if key in duplicates]}
            export = _write_corpus(
                store, output_dir, schema_dir, strict, device, corpus, keys, generated, files, columns_by_key, stale,
                left_out, notes,
            )
            _note_neutralised(export.neutralised, columns_by_key, warnings)
            exports.append(export)
        record_export(output_dir, fingerprint, run_id)
    _record(store, run_id, _export_states(scan.keys, stale, left_out, warnings, duplicates))
    return ExportOutcome(
        corpora=tuple(exports),
        pdfs_exported=len(columns_by_key),
        pdfs_stale=len(stale),
        pdfs_left_out=len(left_out),
        sentences={
            "stale": [f"{key}: {why}" for key, why in sorted(stale.items())],
            "left_out": [f"{key}: {why}" for key, why in sorted(left_out.items())],
            "warnings": [f"{key}: {note}" for key in scan.keys for note in pdf_warnings(store, key, STAGES) + warnings[key]],
            "not_built": [why for _, why in scan.refused + scan.ignored],
            "duplicates": [duplicate_sentence(key, original) for key, original in sorted(duplicates.items())],
            "leftover_temps_removed": [path.name for path in leftovers],
        },
        id_report=id_report,
        collisions=collisions,
    )


def _write_corpus(
    store: PartitionStore,
    output_dir: Path,
    schema_dir: Path,
    strict: bool,
    device: DeviceProfile,
    corpus: str,
    keys: Sequence[str],
    generated: str,
    files: dict[str, ValidatedFile],
    columns_by_key: dict[str, Columns],
    stale: dict[str, str],
    left_out: dict[str, str],
    duplicates: dict[str, list[dict[str, str]]],
) -> CorpusExport:
    """Write one corpus from each PDF's export piece (kept beside its stages; rendered again from its validated
    chunks when missing, damaged or made from another version of them); a chunk the export refuses (e.g.
    invalid against the HEPilot schema, which is not a per-PDF gate) leaves its PDF out, named, and the corpus
    is written again without it.

    Nothing is replaced until every chunk is valid, so a retry starts from the same previous export.
    Strict export refuses instead. Lines too long for the device's LLM refuse the corpus (an ExportError
    naming no chunk): no PDF is to blame, a setting is.
    """
    load = validated_chunks_as_read(store, files)
    while True:
        shipped = {key: files[key] for key in keys if key in columns_by_key}
        parts = CorpusParts(
            keys={key: columns_by_key[key] for key in shipped},
            load=load,
            piece_cache=stored_pieces(store, schema_dir, shipped),
        )
        notes = {**_corpus_notes(keys, columns_by_key, stale, left_out), **duplicates}
        try:
            return write_corpus_parts(
                corpus,
                parts,
                output_dir,
                generated,
                schema_dir,
                notes=notes,
                device=device,
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
    """Each shipped PDF's validated file as the export reads it; one that cannot be read is left out, named
    (never another PDF's failure)."""
    files, unreadable = {}, {}
    for key in keys:
        try:
            files[key] = read_validated(store, key, columns)
        except (OSError, pa.ArrowException) as error:
            unreadable[key] = f"left out, its validated chunks cannot be read ({error}); build it again"
    return files, unreadable


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
    keys: Sequence[str], columns_by_key: dict[str, Columns], stale: dict[str, str], left_out: dict[str, str]
) -> dict[str, list[dict[str, str]]]:
    """The corpus JSON's `stale` and `left_out` lists, for the PDFs of one corpus (empty lists when none)."""
    return {
        "stale": [
            {"pdf": key, "source": _first_source(columns_by_key.get(key)), "reason": stale[key]}
            for key in keys
            if key in stale
        ],
        "left_out": [{"pdf": key, "reason": left_out[key]} for key in keys if key in left_out],
    }


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


ExportState = tuple[str, str | None, list[str]]  # (status, reason, warnings)


def _export_states(
    keys: Sequence[str],
    stale: dict[str, str],
    left_out: dict[str, str],
    warnings: dict[str, list[str]],
    duplicates: dict[str, str],
) -> dict[str, ExportState]:
    states: dict[str, ExportState] = {}
    for key in keys:
        if key in duplicates:
            states[key] = (DUPLICATE, duplicate_sentence(key, duplicates[key]), warnings[key])
        elif key in left_out:
            states[key] = (LEFT_OUT, left_out[key], warnings[key])
        elif key in stale:
            states[key] = (SHIPPED_STALE, stale[key], warnings[key])
        else:
            states[key] = (SHIPPED_FRESH, None, warnings[key])
    return states


def _record(store: PartitionStore, run_id: str, states: dict[str, ExportState]) -> None:
    """One `android_export` manifest per PDF: how it went into this export (the build command reads them)."""
    store.write_manifests(
        PartitionManifest(
            asset=EXPORT.name, partition_key=key, status=status, reason=reason, run_id=run_id, extra={"warnings": warnings}
        )
        for key, (status, reason, warnings) in states.items()
    )
