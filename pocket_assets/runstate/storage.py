"""One Parquet file per asset and partition, plus a small JSON manifest beside it.

The manifest records how the last attempt at that partition ended (ok, failed,
skipped because upstream failed) and the versions it was built from. A failed
attempt rewrites only the manifest, so the last good Parquet stays in place and
downstream stages can tell a good input from a stale one.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable

import pyarrow as pa
import pyarrow.parquet as pq

from pocket_assets.core.atomic import atomic_path, write_bytes_atomic

STATUS_OK = "ok"
STATUS_FAILED = "failed"
STATUS_SKIPPED = "skipped"


class UpstreamNotReady(Exception):
    """The input partition has no good output; the stage skips this PDF and says why."""


@dataclass(frozen=True)
class PartitionManifest:
    asset: str
    partition_key: str
    status: str
    reason: str | None = None
    rows: int = 0
    source_sha256: str | None = None
    code_version: str | None = None
    run_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


# A file name may hold 255 bytes. A stage file name is the PDF's name plus `.manifest.json`, and its
# atomic temp adds `.` + 8 random + `.tmp` (core.atomic): names longer than this are shortened.
MAX_STEM_BYTES = 200
_HASH_CHARS = 16


def stage_file_stem(partition_key: str) -> str:
    """`fr/sub/faq.pdf` as the stage files' path without suffix: the key itself while it fits.

    A last component too long for the file system once suffixed becomes a
    readable prefix plus `~` and 16 hex of the sha256 of the whole key, so two
    long names never share files and every reader (this class) derives the same path.
    """
    folder, _, name = partition_key.rpartition("/")
    if len(name.encode("utf-8", "surrogateescape")) <= MAX_STEM_BYTES:
        return partition_key
    digest = hashlib.sha256(partition_key.encode("utf-8", "surrogateescape")).hexdigest()[:_HASH_CHARS]
    prefix = name.encode("utf-8", "surrogateescape")[: MAX_STEM_BYTES - _HASH_CHARS - 1]
    short = f"{prefix.decode('utf-8', 'ignore')}~{digest}"
    return f"{folder}/{short}" if folder else short


@dataclass(frozen=True)
class PartitionStore:
    """Paths are `<root>/<asset>/<partition key>.parquet`, e.g. `pages/fr/faq.pdf.parquet`
    (`stage_file_stem` shortens names too long for the file system)."""

    root: Path

    def data_path(self, asset: str, partition_key: str) -> Path:
        return self.root / asset / f"{stage_file_stem(partition_key)}.parquet"

    def manifest_path(self, asset: str, partition_key: str) -> Path:
        return self.root / asset / f"{stage_file_stem(partition_key)}.manifest.json"

    def write(
        self,
        asset: str,
        partition_key: str,
        rows: Iterable[dict[str, Any]],
        schema: pa.Schema,
        manifest: PartitionManifest,
    ) -> Path:
        """Write the rows atomically, then the manifest that declares them good."""
        table = pa.Table.from_pylist(list(rows), schema=schema)
        target = self.data_path(asset, partition_key)
        with atomic_path(target) as temp:
            pq.write_table(table, temp, compression="zstd")
        self.write_manifest(manifest)
        return target

    def write_manifest(self, manifest: PartitionManifest) -> None:
        payload = json.dumps(asdict(manifest), sort_keys=True, indent=2, ensure_ascii=False)
        write_bytes_atomic(self.manifest_path(manifest.asset, manifest.partition_key), payload.encode("utf-8"))

    def manifest(self, asset: str, partition_key: str) -> PartitionManifest | None:
        path = self.manifest_path(asset, partition_key)
        if not path.is_file():
            return None
        return PartitionManifest(**json.loads(path.read_text(encoding="utf-8")))

    def read(self, asset: str, partition_key: str) -> list[dict[str, Any]]:
        """Rows of the last good output; `UpstreamNotReady` if the last attempt did not succeed."""
        manifest = self.manifest(asset, partition_key)
        if manifest is None:
            raise UpstreamNotReady(f"{asset} has not been materialized for {partition_key}")
        if manifest.status != STATUS_OK:
            raise UpstreamNotReady(f"{asset} {manifest.status} for {partition_key}: {manifest.reason}")
        return pq.read_table(self.data_path(asset, partition_key)).to_pylist()

    def read_last_good(self, asset: str, partition_key: str) -> list[dict[str, Any]] | None:
        path = self.data_path(asset, partition_key)
        return pq.read_table(path).to_pylist() if path.is_file() else None

    def delete_partition(self, partition_key: str) -> None:
        """Forget a PDF that left the corpus: every asset's file and manifest for it."""
        if not self.root.is_dir():
            return
        for asset_dir in self.root.iterdir():
            if asset_dir.is_dir():
                self.data_path(asset_dir.name, partition_key).unlink(missing_ok=True)
                self.manifest_path(asset_dir.name, partition_key).unlink(missing_ok=True)
