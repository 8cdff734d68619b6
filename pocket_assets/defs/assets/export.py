"""Export: the files the phone and other tools read, per corpus, from every PDF that has good chunks.

The export itself is plain Python (`export.publish.publish_exports`: which PDFs ship and why the others
do not, every corpus written at once); this asset gives it the resources and reports what it did. It runs
once after the PDFs of a build or a backfill are done (`pocket-assets build`, the `corpus_export_sensor`),
never in a range run.
"""

from typing import Any

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

from pocket_assets.defs.partitions import OWNERS
from pocket_assets.defs.planning import plan_folder
from pocket_assets.defs.resources import CorpusPaths, DeviceProfileResource, GatesResource
from pocket_assets.export.publish import ExportOutcome, ExportRefused, publish_exports
from pocket_assets.export.writer import CorpusExport
from pocket_assets.stages.registry import VALIDATED_CHUNKS

CORPUS_IDS_CHECK = "corpus_ids_unique"


@asset(
    owners=OWNERS,
    group_name="export",
    kinds={"json"},
    pool="corpus_export",
    deps=[VALIDATED_CHUNKS.name],
    check_specs=[
        AssetCheckSpec(
            CORPUS_IDS_CHECK,
            asset="android_export",
            description="Chunk ids unique within each corpus (each is its own file); a PDF whose ids collide with "
            "another's of its corpus is left out.",
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
    try:
        outcome = publish_exports(
            store=paths.store(),
            plan=plan_folder(paths)[0],
            output_dir=paths.output_path,
            corpora=paths.corpus_names,
            gates=gates.gates(),
            schema_dir=gates.expectations_path,
            device=device.profile(),
            run_id=context.run.run_id,
            strict=paths.export_strict,
        )
    except ExportRefused as refusal:
        raise Failure(description=str(refusal)) from None
    metadata: dict[str, Any] = {name: value for export in outcome.corpora for name, value in _corpus_metadata(export).items()}
    metadata.update(pdfs_exported=outcome.pdfs_exported, pdfs_stale=outcome.pdfs_stale, pdfs_left_out=outcome.pdfs_left_out)
    for name, lines in outcome.sentences.items():
        if lines:
            metadata[name] = MetadataValue.md("\n".join(f"- {line}" for line in lines))
            for line in lines:
                context.log.warning(f"{name}: {line}")
    return MaterializeResult(metadata=metadata, check_results=[_corpus_ids_check(outcome)])


def _corpus_ids_check(outcome: ExportOutcome) -> AssetCheckResult:
    reports = outcome.id_reports
    return AssetCheckResult(
        check_name=CORPUS_IDS_CHECK,
        passed=all(report.passed for report in reports),
        severity=AssetCheckSeverity.ERROR,
        metadata={
            "chunks": sum(report.chunk_count for report in reports),
            "duplicates": MetadataValue.md(
                "\n".join(
                    f"- {report.partition_key}, {result.expectation}: {result.unexpected_count} duplicate(s), first "
                    + ", ".join(chunk_id for chunk_id, _ in result.offending[:5])
                    for report in reports
                    for result in report.failures()
                )
                or "none"
            ),
            "pdfs_left_out": MetadataValue.md("\n".join(f"- {k}: {w}" for k, w in outcome.collisions) or "none"),
        },
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
