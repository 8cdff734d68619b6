"""The asset checks of the per-PDF step: which PDFs are unreadable, which currently fail each gate, which are to build.

`readable_pdf` (on `raw_pdf`) lists the PDFs of the run that could not be opened. The three
gate checks (on `validated_chunks`) give the corpus as it stands: which PDFs currently fail
that gate, whichever run last judged them, with the offending chunks' ids, pages and the
start of their text (kept in each PDF's `validated_chunks` manifest). They do not block:
a PDF that fails a gate is reported failed itself, and the others go on to the export.
`up_to_date` (on `validated_chunks`) is the plan after the run: the PDFs of the folder still
to build, each with its reason (`defs.planning`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from dagster import (
    AssetCheckKey,
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetExecutionContext,
    AssetKey,
    MetadataValue,
)

from pocket_assets.core.quality.gate_findings import GateFinding, findings_from_json, findings_markdown
from pocket_assets.core.quality.gate_results import COVERAGE_GATE, EXPECTATIONS_GATE, PARTITION_GATES, SCHEMA_GATE
from pocket_assets.defs.partitions import pdf_partitions
from pocket_assets.defs.pdf_events import failure_table
from pocket_assets.defs.planning import UP_TO_DATE_CHECK, plan_folder, up_to_date_evaluation
from pocket_assets.defs.resources import CorpusPaths
from pocket_assets.stages.pdf_build.gates import FINDINGS
from pocket_assets.stages.pdf_build.outcomes import StageResult
from pocket_assets.stages.registry import RAW_PDF, VALIDATED_CHUNKS
from pocket_assets.stages.store import STATUS_FAILED, PartitionStore

READABLE_PDF = "readable_pdf"
CHECK_SPECS = [
    AssetCheckSpec(
        READABLE_PDF,
        asset=RAW_PDF.name,
        description="Every PDF of the run is a readable, unencrypted PDF with pages; lists those that are not.",
    ),
    AssetCheckSpec(
        EXPECTATIONS_GATE,
        asset=VALIDATED_CHUNKS.name,
        description="Great Expectations suite chunks.partition.json: unique ids, text lengths, token caps, pages, "
        "sources, parent ids, chunk types and corpora; lists the PDFs that currently fail it.",
    ),
    AssetCheckSpec(
        SCHEMA_GATE,
        asset=VALIDATED_CHUNKS.name,
        description="Every chunk record valid against the seed's Draft-07 schema chunk.schema.json.",
    ),
    AssetCheckSpec(
        COVERAGE_GATE,
        asset=VALIDATED_CHUNKS.name,
        description="Every page with text has a chunk; chunk texts are exact slices; children cover the text.",
    ),
    AssetCheckSpec(
        UP_TO_DATE_CHECK,
        asset=VALIDATED_CHUNKS.name,
        description="Every PDF of the raw folder built from its current bytes with the current settings; lists the PDFs "
        "to build with why (as `pocket-assets stale` does), the copies and the files not built. Recorded at the end of "
        "every build and by pdf_folder_sensor whenever it changes.",
    ),
]
_FAILED_COUNT_NAMES = {
    EXPECTATIONS_GATE: "expectations_failed",
    SCHEMA_GATE: "schema_rules_failed",
    COVERAGE_GATE: "coverage_rules_failed",
}


def gate_check_results(
    context: AssetExecutionContext, paths: CorpusPaths, failed: Mapping[str, StageResult]
) -> Iterator[AssetCheckResult]:
    """A result for each selected check; `failed`: the run's PDFs that did not pass, by their first failed stage."""
    store = paths.store()
    selected = context.selected_asset_check_keys
    if AssetCheckKey(AssetKey(RAW_PDF.name), READABLE_PDF) in selected:
        unreadable = {key: result for key, result in failed.items() if result.stage is RAW_PDF}
        yield AssetCheckResult(
            asset_key=AssetKey(RAW_PDF.name),
            check_name=READABLE_PDF,
            passed=not unreadable,
            severity=AssetCheckSeverity.ERROR,
            metadata={
                "pdfs_checked": len(context.partition_keys),
                "pdfs_failed": len(unreadable),
                "failures": MetadataValue.md(failure_table(unreadable) if unreadable else "none"),
            },
        )
    gates = [gate for gate in PARTITION_GATES if AssetCheckKey(AssetKey(VALIDATED_CHUNKS.name), gate) in selected]
    if gates:
        judged = stored_findings(store, context.instance.get_dynamic_partitions(pdf_partitions.name))
        for gate in gates:
            yield _gate_check(gate, judged)
    if AssetCheckKey(AssetKey(VALIDATED_CHUNKS.name), UP_TO_DATE_CHECK) in selected:
        evaluation = up_to_date_evaluation(plan_folder(paths)[0])
        yield AssetCheckResult(
            asset_key=evaluation.asset_key,
            check_name=evaluation.check_name,
            passed=evaluation.passed,
            severity=evaluation.severity,
            description=evaluation.description,
            metadata=evaluation.metadata,
        )


def stored_findings(store: PartitionStore, keys: Sequence[str]) -> dict[str, list[GateFinding]]:
    """Every PDF's findings from the last run that judged it (a PDF never judged is left out)."""
    judged = {}
    for key in filter(store.accepts, keys):
        manifest = store.manifest(VALIDATED_CHUNKS, key)
        if manifest is not None and FINDINGS in manifest.extra:
            judged[key] = findings_from_json(manifest.extra[FINDINGS]) if manifest.status == STATUS_FAILED else []
    return judged


def _gate_check(gate: str, judged: Mapping[str, list[GateFinding]]) -> AssetCheckResult:
    rows = [(key, finding) for key, findings in sorted(judged.items()) for finding in findings if finding.gate == gate]
    return AssetCheckResult(
        asset_key=AssetKey(VALIDATED_CHUNKS.name),
        check_name=gate,
        passed=not rows,
        severity=AssetCheckSeverity.ERROR,
        metadata={
            "pdfs_judged": len(judged),
            "pdfs_failing": len({key for key, _ in rows}),
            _FAILED_COUNT_NAMES[gate]: len(rows),
            "failures": MetadataValue.md(findings_markdown(rows)),
        },
    )
