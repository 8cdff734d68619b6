"""The run's verdict: a run in which any PDF failed a stage ends FAILED, after the others are exported.

Dagster shows a partition failed only when its run failed (see `per_pdf`), and
the build command's exit code and the Runs page should say the same. Failing the
stage's step would skip the export of every other PDF, so this check on the
export fails the run instead, once the export is written.
"""

from dagster import AssetCheckExecutionContext, AssetCheckResult, AssetCheckSeverity, MetadataValue, asset_check

from pocket_assets.defs.assets.export import android_export
from pocket_assets.defs.partitions import pdf_partitions
from pocket_assets.defs.per_pdf import EVERY_PDF_BUILT
from pocket_assets.defs.resources import CorpusPaths
from pocket_assets.runstate.stages import STAGES
from pocket_assets.runstate.storage import STATUS_FAILED


@asset_check(
    asset=android_export,
    name=EVERY_PDF_BUILT.name,
    blocking=True,
    description="Fails the run when a PDF of the run failed a stage (named with its reason), so that the run, "
    "the build command's exit code and the PDF's partition (failed, in the Partitions tab) all say so.",
)
def every_pdf_built(context: AssetCheckExecutionContext, paths: CorpusPaths) -> AssetCheckResult:
    store = paths.store()
    failures = [
        (key, stage, manifest.reason or "")
        for key in context.instance.get_dynamic_partitions(pdf_partitions.name)
        for stage in STAGES
        if (manifest := store.manifest(stage, key)) is not None
        and manifest.run_id == context.run.run_id
        and manifest.status == STATUS_FAILED
    ]
    lines = ["| PDF | stage | reason |", "|---|---|---|"]
    lines += [f"| {key} | {stage} | {reason.replace('|', '/')} |" for key, stage, reason in failures]
    return AssetCheckResult(
        passed=not failures,
        severity=AssetCheckSeverity.ERROR,
        description=(
            f"{len(failures)} PDF(s) failed in this run: " + ", ".join(sorted({key for key, _, _ in failures}))
            if failures
            else "every PDF of this run was built"
        ),
        metadata={
            "pdfs_failed": len(failures),
            "failures": MetadataValue.md("\n".join(lines) if failures else "none"),
        },
    )
