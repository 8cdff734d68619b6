"""`up_to_date` on `validated_chunks`: the PDFs a build would build, and why, where the UI shows checks.

Dagster's own staleness shows what its events can carry: a new code version (a setting, the
chunker, the tokenizer, a suite) and a PDF observed with a new sha256. This check shows the
whole plan, the same sentences `pocket-assets stale` prints: also a stage file missing or
damaged, a last attempt that failed, a PDF never built, a copy of another PDF, a file whose
name cannot be a partition key. `pdf_folder_sensor` records it whenever the plan changes; it can
also be executed from the asset's Checks tab.
"""

from dagster import AssetCheckExecutionContext, AssetCheckResult, asset_check

from pocket_assets.defs.planning import UP_TO_DATE_CHECK, plan_folder, up_to_date_evaluation
from pocket_assets.defs.resources import CorpusPaths
from pocket_assets.runstate.stages import VALIDATED_CHUNKS


@asset_check(
    asset=VALIDATED_CHUNKS.name,
    name=UP_TO_DATE_CHECK,
    description="Every PDF of the raw folder built with the current settings from its current bytes; lists the PDFs "
    "to build with why (as `pocket-assets stale`), the copies and the files not built. Recorded by "
    "pdf_folder_sensor when it changes.",
)
def up_to_date(context: AssetCheckExecutionContext, paths: CorpusPaths) -> AssetCheckResult:
    evaluation = up_to_date_evaluation(plan_folder(paths)[0])
    return AssetCheckResult(
        passed=evaluation.passed,
        severity=evaluation.severity,
        description=evaluation.description,
        metadata=evaluation.metadata,
    )
