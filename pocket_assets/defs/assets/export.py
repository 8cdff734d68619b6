"""Export: the files the phone and other tools read, per corpus, from every validated PDF."""

from datetime import datetime, timezone

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

from pocket_assets.core.export.corpus_files import write_corpus_exports
from pocket_assets.runstate.export_selection import read_validated_chunks, select_for_export
from pocket_assets.core.pdf import discover_pdfs
from pocket_assets.core.records import CORPORA
from pocket_assets.core.quality.validation import validate_corpus_ids
from pocket_assets.defs.partitions import OWNERS
from pocket_assets.defs.resources import CorpusPaths, GatesResource
from pocket_assets.runstate.stages import EXPORTED


@asset(
    owners=OWNERS,
    group_name="export",
    kinds={"json"},
    pool="corpus_export",
    deps=[EXPORTED.name],
    check_specs=[
        AssetCheckSpec(
            "corpus_ids_unique", asset="android_export", description="Chunk ids unique across the whole corpus."
        )
    ],
    description="Per corpus (fr, intl): chunks_{corpus}.txt for the Google AI Edge RAG SDK, "
    "chunks_mode_b_{corpus}.json, chunks_{corpus}.hepilot.jsonl and id_redirects_{corpus}.json. "
    "Refused while any PDF's latest chunks fail their gates; a PDF removed from the folder disappears.",
)
def android_export(context: AssetExecutionContext, paths: CorpusPaths, gates: GatesResource) -> MaterializeResult:
    store = paths.store()
    selection = select_for_export(store, discover_pdfs(paths.raw_path))
    if selection.refused:
        raise Failure(
            description="Export refused: these PDFs failed their gates; fix them or remove them from the folder. "
            + " / ".join(f"{key}: {reason}" for key, reason in selection.refused),
        )
    chunks = read_validated_chunks(store, selection.included)
    id_report = validate_corpus_ids(gates.gates(paths.expectations_path), chunks)
    if not id_report.passed:
        raise Failure(description=f"Export refused: duplicate chunk ids across the corpus: {id_report.failures()}")
    generated = datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    metadata: dict = {"pdfs_exported": len(selection.included), "pdfs_excluded": len(selection.excluded)}
    if selection.excluded:
        metadata["excluded"] = MetadataValue.md("\n".join(f"- {key}: {why}" for key, why in selection.excluded))
    for corpus in CORPORA:
        export = write_corpus_exports(
            corpus, [c for c in chunks if c.corpus == corpus], paths.output_path, generated, paths.expectations_path
        )
        metadata.update({f"{corpus}_{name}": count for name, count in export.counts.items()})
        metadata.update({f"{corpus}_{name}_bytes": size for name, size in export.sizes.items()})
        metadata[f"{corpus}_sdk_file"] = MetadataValue.path(str(export.paths["sdk"]))
        metadata[f"{corpus}_sdk_preview"] = MetadataValue.md("```\n" + "\n".join(export.preview_lines) + "\n```")
        if export.redirect_stats is not None:
            metadata[f"{corpus}_redirect_one_to_one_share"] = export.redirect_stats.one_to_one_share
    for key, why in selection.excluded:
        context.log.warning(f"not exported: {key}: {why}")
    return MaterializeResult(
        metadata=metadata,
        check_results=[
            AssetCheckResult(
                check_name="corpus_ids_unique",
                passed=True,
                severity=AssetCheckSeverity.ERROR,
                metadata={"chunks": len(chunks)},
            )
        ],
    )
