"""The build plan (`stages.planner`) as the Dagster layer asks for it, and what Dagster is told of it.

Every caller (the build command, `pocket-assets stale`, the nightly schedule, the sensors) plans
with the settings a build started now would use (the environment's, as the code location reads
them), so they all say the same thing of each PDF. The plan's verdict is shown in the UI as the
`up_to_date` check of `validated_chunks`: the PDFs to build, each with its reason, including what
Dagster's own staleness cannot see (a stage file missing or damaged, a copy of another PDF).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from dagster import AssetCheckEvaluation, AssetCheckSeverity, AssetKey, MetadataValue

from pocket_assets.defs.resources import CorpusPaths, SettingResources
from pocket_assets.stages.planner import CorpusPlan, plan_corpus
from pocket_assets.stages.registry import VALIDATED_CHUNKS
from pocket_assets.stages.sources import FileDigest, file_digests

UP_TO_DATE_CHECK = "up_to_date"
# How many PDFs the check's table lists (the count says how many there are in all).
LISTED_PDFS = 200


def plan_folder(
    paths: CorpusPaths, known: Mapping[str, FileDigest] | None = None, resources: SettingResources | None = None
) -> tuple[CorpusPlan, dict[str, FileDigest]]:
    """The plan for the folder now, and each PDF's digest (for a sensor's cursor: `known` is the last one)."""
    resources = resources or SettingResources.from_environment()
    store = paths.store()
    scan = paths.scan()
    digests = file_digests(store, paths.raw_path, scan.keys, known)
    plan = plan_corpus(
        store,
        scan,
        {key: digest.sha256 for key, digest in digests.items()},
        resources.versions(),
        resources.settings(),
        paths.corpus_names,
        paths.keep_duplicates,
    )
    return plan, digests


def plan_digest(plan: CorpusPlan) -> str:
    """A short stand-in for the verdicts, so that a sensor reports the check only when they change."""
    text = "\n".join(f"{pdf.key}\0{pdf.duplicate_of}\0{'; '.join(pdf.reasons)}" for pdf in plan.pdfs)
    text += "\n" + "\n".join(why for _, why in plan.not_built)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def up_to_date_evaluation(plan: CorpusPlan) -> AssetCheckEvaluation:
    """The plan as the `up_to_date` check of `validated_chunks`: passed when no PDF of the folder needs a build."""
    to_build = plan.to_build
    rows = ["| PDF | why it is to build |", "|---|---|"]
    rows += [f"| {pdf.key} | {'; '.join(pdf.reasons).replace('|', '/')} |" for pdf in to_build[:LISTED_PDFS]]
    others = ["| file | why it is not built |", "|---|---|"]
    others += [f"| {key} | copy of {original} |" for key, original in sorted(plan.duplicates.items())]
    others += [f"| {name} | {why.replace('|', '/')} |" for name, why in plan.not_built]
    return AssetCheckEvaluation(
        asset_key=AssetKey(VALIDATED_CHUNKS.name),
        check_name=UP_TO_DATE_CHECK,
        passed=not to_build,
        severity=AssetCheckSeverity.WARN,
        description=f"{len(to_build)} of {len(plan.partition_keys)} PDF(s) to build",
        metadata={
            "pdfs": len(plan.partition_keys),
            "pdfs_to_build": len(to_build),
            "to_build": MetadataValue.md("\n".join(rows) if to_build else "none: every PDF is up to date"),
            "not_built": MetadataValue.md("\n".join(others) if len(others) > 2 else "none"),
        },
    )
