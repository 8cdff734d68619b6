"""Which PDFs need rebuilding, judged from what each stage recorded when it last ran.

Dagster's own staleness for partitioned assets is unreliable (dagster issues
22704, 18921, 33708), so the project decides from its manifests: the source
sha256 each output was built from and the code version (chunker version +
policy hash) it was built with.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Mapping, Sequence

from pocket_assets.runstate.storage import STATUS_OK, PartitionStore


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
    code_versions: Mapping[str, str | None],
) -> Staleness:
    """`code_versions` maps each stage asset, in lineage order, to its current code version (None: unversioned)."""
    reasons: list[str] = []
    for asset, code_version in code_versions.items():
        manifest = store.manifest(asset, partition_key)
        if manifest is None:
            reasons.append(f"{asset} never built")
            break
        if manifest.status != STATUS_OK:
            reasons.append(f"{asset} last {manifest.status}: {manifest.reason}")
            break
        if manifest.source_sha256 != source_sha256:
            reasons.append(
                f"{asset} built from another version of the file (sha256 {str(manifest.source_sha256)[:12]})"
            )
            break
        if code_version is not None and manifest.code_version != code_version:
            reasons.append(f"{asset} built with {manifest.code_version}, current is {code_version}")
            break
    return Staleness(partition_key, tuple(reasons))


def corpus_staleness(
    store: PartitionStore,
    sources: Mapping[str, str],
    code_versions: Mapping[str, str | None],
) -> list[Staleness]:
    """A verdict, stale or fresh, for every PDF in `sources` (partition key -> current sha256), sorted."""
    return [partition_staleness(store, key, sha, code_versions) for key, sha in sorted(sources.items())]


def stale_partitions(
    store: PartitionStore,
    sources: Mapping[str, str],
    code_versions: Mapping[str, str | None],
) -> list[Staleness]:
    """Stale entries only, for every PDF in `sources` (partition key -> current sha256), sorted."""
    return [verdict for verdict in corpus_staleness(store, sources, code_versions) if verdict.stale]


def build_fingerprint(source_sha256: str, code_versions: Mapping[str, str | None]) -> str:
    """What a rebuild of one PDF would be built from: equal fingerprints, equal outputs.

    Run keys carry it, so a refresh that finds nothing new asks for nothing new.
    """
    versions = json.dumps(dict(code_versions), sort_keys=True, separators=(",", ":"))
    return f"{source_sha256[:16]}+{hashlib.sha256(versions.encode()).hexdigest()[:12]}"


def describe(stale: Sequence[Staleness]) -> str:
    return "\n".join(f"{item.partition_key}: {'; '.join(item.reasons)}" for item in stale)
