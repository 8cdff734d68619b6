"""Export: the files the phone and other tools read, per corpus, from every PDF that has good chunks.

One PDF never blocks the others (issue 14): a PDF whose latest chunks failed
ships its last good ones, listed as stale, or is left out, listed; a PDF whose
chunk ids collide with another's is left out, named. `paths.export_strict`
refuses the whole export instead while any PDF is in one of those lists.

Cost (issue 31): the step holds a few columns of every chunk (ids, hashes, sort keys:
`KEY_COLUMNS` and the corpus suite's) and copies each PDF's export piece, rendered when
its validated chunks were written (`runstate.export_pieces`), one piece at a time: after
one PDF changed, only that PDF's chunks are rendered again.

It runs once after the PDFs of a build or a backfill are done (`pocket-assets build`, the
`corpus_export_sensor`), never in a range run: the published files always hold a whole corpus.
"""

from datetime import datetime, timezone
from typing import Any, Sequence

import pyarrow as pa
from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetExecutionContext,
    Failure,
    MaterializeResult,
    MetadataValue,
    asset,
)

from pocket_assets.core.device import DeviceProfile
from pocket_assets.core.export.corpus_files import (
    KEY_COLUMNS,
    CorpusExport,
    CorpusParts,
    ExportError,
    check_llm_budget,
    remove_leftover_temps,
    write_corpus_parts,
)
from pocket_assets.core.quality.validation import corpus_frame_columns, corpus_ids_on_columns
from pocket_assets.core.raw_folder import corpus_of
from pocket_assets.defs.partitions import OWNERS
from pocket_assets.defs.resources import CorpusPaths, DeviceProfileResource, GatesResource
from pocket_assets.runstate.export_lock import export_lock
from pocket_assets.runstate.export_pieces import ValidatedFile, read_validated, stored_pieces, validated_chunks_as_read
from pocket_assets.runstate.export_selection import select_for_export
from pocket_assets.runstate.export_state import export_fingerprint, record_export
from pocket_assets.runstate.pdf_notes import EXPORT, pdf_warnings
from pocket_assets.runstate.planner import duplicate_sentence, duplicates_within_corpus
from pocket_assets.runstate.sources import current_sha256
from pocket_assets.runstate.stages import EXPORTED, STAGES
from pocket_assets.runstate.storage import STATUS_OK, PartitionManifest, PartitionStore

CORPUS_IDS_CHECK = "corpus_ids_unique"
# How each PDF went into the export, in its `android_export` manifest (read by the build command).
SHIPPED_FRESH, SHIPPED_STALE, LEFT_OUT, DUPLICATE = STATUS_OK, "stale", "left_out", "duplicate"

Columns = dict[str, list[Any]]  # column -> values, in the PDF's validated file's row order


@asset(
    owners=OWNERS,
    group_name="export",
    kinds={"json"},
    pool="corpus_export",
    deps=[EXPORTED.name],
    check_specs=[
        AssetCheckSpec(
            CORPUS_IDS_CHECK,
            asset="android_export",
            description="Chunk ids unique across the whole corpus; a PDF whose ids collide with another's is left out.",
        )
    ],
    description="Per corpus: chunks_{corpus}.txt for the Google AI Edge RAG SDK, chunks_mode_b_{corpus}.json, "
    "chunks_{corpus}.hepilot.jsonl and id_redirects_{corpus}.json, from every PDF with good chunks. A PDF whose "
    "latest chunks failed ships its last good ones (listed as stale) or is left out (listed); strict export "
    "(POCKET_ASSETS_EXPORT_STRICT) refuses instead. A PDF removed from the folder disappears.",
)
def android_export(
    context: AssetExecutionContext, paths: CorpusPaths, gates: GatesResource, device: DeviceProfileResource
) -> MaterializeResult:
    store = paths.store()
    scan = paths.scan()
    fingerprint = export_fingerprint(store, scan.keys, paths.export_strict)
    duplicates = (
        {} if paths.keep_duplicates
        else duplicates_within_corpus(store, current_sha256(store, paths.raw_path, scan.keys), paths.corpus_names)
    )
    selection = select_for_export(store, [key for key in scan.keys if key not in duplicates])
    suite_columns = corpus_frame_columns(gates.expectations_path)
    held = tuple(dict.fromkeys(KEY_COLUMNS + suite_columns))
    files, unreadable = _read_validated_files(store, selection.shipped, held)
    columns_by_key = {key: file.columns for key, file in files.items()}
    id_report = corpus_ids_on_columns(
        gates.gates(),
        {name: [value for columns in columns_by_key.values() for value in columns[name]] for name in suite_columns},
    )
    collisions = _colliding_pdfs(columns_by_key)
    for key, _ in collisions:
        del columns_by_key[key]
    stale = {key: why for key, why in selection.stale if key not in unreadable}
    left_out = dict(selection.excluded + tuple(unreadable.items()) + collisions)
    problems = sorted({**stale, **left_out}.items())
    run_id = context.run.run_id
    if paths.export_strict and problems:
        _record(store, run_id, {key: (LEFT_OUT, f"export refused (strict): {why}", []) for key, why in problems})
        raise Failure(
            description="Export refused (strict export): "
            + " / ".join(f"{key}: {why}" for key, why in problems)
            + ". Fix or remove these PDFs, or turn strict export off to ship the others."
        )

    profile = device.profile()
    for corpus in paths.corpus_names:  # every corpus judged before any is written: none is published beside an old one
        try:
            check_llm_budget(
                corpus, {k: c for k, c in columns_by_key.items() if corpus_of(k, paths.corpus_names) == corpus}, profile
            )
        except ExportError as error:
            raise Failure(description=f"Export of corpus {corpus} refused: {error}") from None

    generated = datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    metadata: dict[str, Any] = {}
    warnings: dict[str, list[str]] = {key: [] for key in scan.keys}
    with export_lock(paths.output_path):
        leftovers = remove_leftover_temps(paths.output_path)
        for corpus in paths.corpus_names:
            keys = [key for key in scan.keys if corpus_of(key, paths.corpus_names) == corpus]
            notes = {"duplicates": [{"pdf": key, "duplicate_of": duplicates[key]} for key in keys if key in duplicates]}
            export = _write_corpus(
                paths, gates, corpus, keys, generated, files, columns_by_key, stale, left_out, notes, profile
            )
            _note_neutralised(export.neutralised, columns_by_key, warnings)
            metadata.update(_corpus_metadata(export))
        record_export(paths.output_path, fingerprint, run_id)
    _record(store, run_id, _export_states(scan.keys, stale, left_out, warnings, duplicates))
    metadata.update(pdfs_exported=len(columns_by_key), pdfs_stale=len(stale), pdfs_left_out=len(left_out))

    sentences = {
        "stale": [f"{key}: {why}" for key, why in sorted(stale.items())],
        "left_out": [f"{key}: {why}" for key, why in sorted(left_out.items())],
        "warnings": [f"{key}: {note}" for key in scan.keys for note in pdf_warnings(store, key, STAGES) + warnings[key]],
        "not_built": [why for _, why in scan.refused + scan.ignored],
        "duplicates": [duplicate_sentence(key, original) for key, original in sorted(duplicates.items())],
        "leftover_temps_removed": [path.name for path in leftovers],
    }
    for name, lines in sentences.items():
        if lines:
            metadata[name] = MetadataValue.md("\n".join(f"- {line}" for line in lines))
            for line in lines:
                context.log.warning(f"{name}: {line}")
    return MaterializeResult(
        metadata=metadata,
        check_results=[
            AssetCheckResult(
                check_name=CORPUS_IDS_CHECK,
                passed=id_report.passed,
                severity=AssetCheckSeverity.ERROR,
                metadata={
                    "chunks": id_report.chunk_count,
                    "duplicates": MetadataValue.md(
                        "\n".join(
                            f"- {result.expectation}: {result.unexpected_count} duplicate(s), first "
                            + ", ".join(chunk_id for chunk_id, _ in result.offending[:5])
                            for result in id_report.failures()
                        )
                        or "none"
                    ),
                    "pdfs_left_out": MetadataValue.md("\n".join(f"- {k}: {w}" for k, w in collisions) or "none"),
                },
            )
        ],
    )


def _write_corpus(
    paths: CorpusPaths,
    gates: GatesResource,
    corpus: str,
    keys: Sequence[str],
    generated: str,
    files: dict[str, ValidatedFile],
    columns_by_key: dict[str, Columns],
    stale: dict[str, str],
    left_out: dict[str, str],
    duplicates: dict[str, list[dict[str, str]]],
    device: DeviceProfile,
) -> CorpusExport:
    """Write one corpus from each PDF's export piece (kept beside its stages; rendered again from its validated
    chunks when missing, damaged or made from another version of them); a chunk the export refuses (e.g.
    invalid against the HEPilot schema, which is not a per-PDF gate) leaves its PDF out, named, and the corpus
    is written again without it.

    Nothing is replaced until every chunk is valid, so a retry starts from the same previous export.
    Strict export refuses instead. Lines too long for the device's LLM refuse the corpus (an ExportError
    naming no chunk): no PDF is to blame, a setting is.
    """
    store = paths.store()
    load = validated_chunks_as_read(store, files)
    while True:
        shipped = {key: files[key] for key in keys if key in columns_by_key}
        parts = CorpusParts(
            keys={key: columns_by_key[key] for key in shipped},
            load=load,
            shelf=stored_pieces(store, gates.expectations_path, shipped),
        )
        notes = {**_corpus_notes(keys, columns_by_key, stale, left_out), **duplicates}
        try:
            return write_corpus_parts(
                corpus,
                parts,
                paths.output_path,
                generated,
                gates.expectations_path,
                notes=notes,
                device=device,
            )
        except ExportError as error:
            culprit = next((k for k in parts.keys if error.chunk_id in parts.keys[k]["id"]), None)
            if culprit is None or paths.export_strict:
                raise Failure(description=f"Export of corpus {corpus} refused: {error}") from None
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


def _corpus_metadata(export: CorpusExport) -> dict[str, Any]:
    corpus = export.corpus
    metadata: dict[str, Any] = {f"{corpus}_{name}": count for name, count in export.counts.items()}
    metadata.update({f"{corpus}_{name}_bytes": size for name, size in export.sizes.items()})
    metadata.update({f"{corpus}_{name}_file": MetadataValue.path(str(path)) for name, path in export.paths.items()})
    metadata[f"{corpus}_sdk_preview"] = MetadataValue.md("```\n" + "\n".join(export.preview_lines) + "\n```")
    if export.redirect_stats is not None:
        metadata[f"{corpus}_redirect_one_to_one_share"] = export.redirect_stats.one_to_one_share
    metadata[f"{corpus}_redirect_ambiguous_ids"] = len(export.ambiguous_ids)
    return metadata
