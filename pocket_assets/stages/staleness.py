"""Which PDFs need rebuilding, and why a PDF has no good output: one walk over its stages' manifests.

Dagster's own staleness for partitioned assets is unreliable (dagster issues
22704, 18921, 33708), so the project decides from its manifests: the status of
each stage's last attempt, the source sha256 its output was built from and the
version (`stages.registry`) it was built with. `first_problem` is that walk;
staleness, export selection and the build summary all word their verdicts from it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Mapping, Sequence

from pocket_assets.stages.registry import STAGES, Setting, Stage, setting_changes
from pocket_assets.stages.store import STATUS_OK, PartitionStore

SETTINGS = "settings"  # the manifest's `extra` entry: the values of the settings its output was built with

NEVER_BUILT = "never built"
NOT_OK = "not ok"  # last attempt failed or was skipped
OTHER_SOURCE = "other source"
OTHER_VERSION = "other version"


@dataclass(frozen=True)
class StageProblem:
    """The first stage, in lineage order, whose output is missing, bad or out of date for one PDF."""

    stage: Stage
    kind: str  # NEVER_BUILT, NOT_OK, OTHER_SOURCE or OTHER_VERSION
    sentence: str


def first_problem(
    store: PartitionStore,
    partition_key: str,
    source_sha256: str | None = None,
    versions: Mapping[Stage, str | None] | None = None,
    stages: Sequence[Stage] = STAGES,
    settings: Mapping[str, Setting] | None = None,
) -> StageProblem | None:
    """Walk `stages` in lineage order; None when every one holds a good output.

    With `source_sha256` an output built from another version of the file is a
    problem, with `versions` (stage -> current version, None: unversioned) one
    built with another version; `settings` (the current ones) name what changed.
    A good manifest whose file is missing or damaged is a problem too.
    """
    for stage in stages:
        manifest = store.manifest(stage, partition_key)
        if manifest is None:
            return StageProblem(stage, NEVER_BUILT, f"{stage} {NEVER_BUILT}")
        if manifest.status != STATUS_OK:
            return StageProblem(stage, NOT_OK, f"{stage} last {manifest.status}: {manifest.reason}")
        damage = store.problem(stage, partition_key, manifest)
        if damage is not None:
            return StageProblem(stage, NOT_OK, f"{stage}: {damage}")
        if source_sha256 is not None and manifest.source_sha256 != source_sha256:
            return StageProblem(
                stage,
                OTHER_SOURCE,
                f"{stage} built from another version of the file (sha256 {str(manifest.source_sha256)[:12]})",
            )
        current = versions.get(stage) if versions is not None else None
        if current is not None and manifest.code_version != current:
            changes = setting_changes(stage, manifest.extra.get(SETTINGS) or {}, settings or {})
            what = "; ".join(changes) if changes else f"{manifest.code_version}, current is {current}"
            return StageProblem(stage, OTHER_VERSION, f"{stage} built with other settings: {what}")
    return None


@dataclass(frozen=True)
class Staleness:
    partition_key: str
    reasons: tuple[str, ...]

    @property
    def stale(self) -> bool:
        return bool(self.reasons)


def partition_staleness(
    store: PartitionStore,
    partition_key: str,
    source_sha256: str,
    versions: Mapping[Stage, str | None],
    settings: Mapping[str, Setting] | None = None,
) -> Staleness:
    """`versions` maps each stage, in lineage order, to its current version (`stages.registry.stage_versions`)."""
    problem = first_problem(store, partition_key, source_sha256, versions, tuple(versions), settings)
    return Staleness(partition_key, (problem.sentence,) if problem else ())


def build_fingerprint(source_sha256: str, versions: Mapping[Stage, str | None]) -> str:
    """What a rebuild of one PDF would be built from: equal fingerprints, equal outputs.

    Run keys carry it, so a refresh that finds nothing new asks for nothing new.
    """
    by_name = json.dumps({stage.name: version for stage, version in versions.items()}, sort_keys=True, separators=(",", ":"))
    return f"{source_sha256[:16]}+{hashlib.sha256(by_name.encode()).hexdigest()[:12]}"
