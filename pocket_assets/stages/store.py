"""One Parquet file per asset and partition, plus a small JSON manifest beside it.

The manifest records how the last attempt at that partition ended (ok, failed,
skipped because upstream failed), the versions it was built from and the size of
the file it declares good. A failed attempt rewrites only the manifest, so the last
good Parquet stays in place and downstream stages can tell a good input from a stale one.

State is checked before it is trusted: a manifest that does not parse reads as a
`damaged` attempt, and a good manifest whose file is missing or not the size it
recorded is not good (`problem`); either makes the PDF stale, named with the reason.
Every path stays inside the store: a partition key that would climb out of it
(`../`) is refused.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from pocket_assets.core.atomic import atomic_path, temp_owner, this_host, write_bytes_atomic
from pocket_assets.stages.arrow_rows import table_of_rows
from pocket_assets.stages.output_folder import within
from pocket_assets.stages.registry import RAW_PDF, Stage

STATUS_OK = "ok"
STATUS_FAILED = "failed"
STATUS_SKIPPED = "skipped"
STATUS_DAMAGED = "damaged"  # a manifest that cannot be read: nothing it says can be trusted
DATA_BYTES = "data_bytes"  # the manifest's `extra` entry: the size of the file it declares good
# What a PDF's files under a stage folder end with: its data, its manifest, its export piece (`export.kept_pieces`).
STAGE_FILE_SUFFIXES = (".parquet", ".manifest.json", ".piece")
# A temp file of a process that is gone, or older than this, is a killed build's: removed by the next run.
TEMP_MAX_AGE_SECONDS = 24 * 3600


class UpstreamNotReady(Exception):
    """The input partition has no good output; the stage skips this PDF and says why."""


@dataclass(frozen=True)
class PartitionManifest:
    asset: str  # the stage's name (`Stage.name`), as stored in the JSON
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
_MANIFEST_THREADS = 8


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
    """Paths are `<root>/<stage>/<partition key>.parquet`, e.g. `pages/fr/faq.pdf.parquet`
    (`stage_file_stem` shortens names too long for the file system)."""

    root: Path

    def data_path(self, stage: Stage, partition_key: str) -> Path:
        return self.stage_file(stage.name, partition_key, ".parquet")

    def manifest_path(self, stage: Stage, partition_key: str) -> Path:
        return self.stage_file(stage.name, partition_key, ".manifest.json")

    def _manifest_file(self, stage_name: str, partition_key: str) -> Path:
        return self.stage_file(stage_name, partition_key, ".manifest.json")

    def accepts(self, partition_key: str) -> bool:
        """Whether the key's stage files stay inside the store (a key added by hand may climb out)."""
        try:
            self.stage_file("", partition_key, "")
        except ValueError:
            return False
        return True

    def stage_file(self, stage_name: str, partition_key: str, suffix: str) -> Path:
        """`<root>/<stage>/<key><suffix>`, for any file of a PDF kept in the store (its export piece too); a
        key that is absolute or climbs out (`..`) is refused."""
        return within(self.root / stage_name, f"{stage_file_stem(partition_key)}{suffix}")

    def write(
        self,
        stage: Stage,
        partition_key: str,
        rows: Iterable[dict[str, Any]] | pa.Table,
        manifest: PartitionManifest,
    ) -> Path:
        """Write the rows (in the stage's schema; or a table of it, such as stage files read back) atomically,
        then the manifest that declares them good. Rows make `from_pylist`'s table, without importing pandas
        (`arrow_rows`): the same bytes."""
        if isinstance(rows, pa.Table):
            # One chunk per column, as `from_pylist` makes it: the file's pages, so its bytes, are then the same.
            table = rows.combine_chunks().cast(stage.schema)
        else:
            table = table_of_rows(list(rows), stage.schema)
        target = self.data_path(stage, partition_key)
        with atomic_path(target) as temp:
            pq.write_table(table, temp, compression="zstd")
            size = temp.stat().st_size
        self.write_manifest(replace(manifest, extra={**manifest.extra, DATA_BYTES: size}))
        return target

    def write_manifest(self, manifest: PartitionManifest) -> None:
        payload = json.dumps(asdict(manifest), sort_keys=True, indent=2, ensure_ascii=False)
        write_bytes_atomic(self._manifest_file(manifest.asset, manifest.partition_key), payload.encode("utf-8"))

    def write_manifests(self, manifests: Iterable[PartitionManifest]) -> None:
        """`write_manifest` for many PDFs at once (the export's one per PDF), written by a few threads:
        each file is still written, synced and renamed on its own (atomic alone), and a sync is a wait on
        the disk, not CPU, so several overlap instead of queueing on this process."""
        with ThreadPoolExecutor(max_workers=_MANIFEST_THREADS) as threads:
            for written in [threads.submit(self.write_manifest, manifest) for manifest in manifests]:
                written.result()

    def manifest(self, stage: Stage, partition_key: str) -> PartitionManifest | None:
        """The last attempt's manifest; None if there was none; a `damaged` one if it cannot be read."""
        path = self.manifest_path(stage, partition_key)
        if not path.is_file():
            return None
        try:
            return PartitionManifest(**json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError) as error:
            reason = f"its {stage} manifest cannot be read ({type(error).__name__}: {error})"
            return PartitionManifest(asset=stage.name, partition_key=partition_key, status=STATUS_DAMAGED, reason=reason)

    def problem(self, stage: Stage, partition_key: str, manifest: PartitionManifest) -> str | None:
        """Why a good manifest's file cannot be trusted (missing, or not the size it recorded); None if it can."""
        path = self.data_path(stage, partition_key)
        try:
            size = path.stat().st_size
        except OSError:
            return f"its {stage} file is missing ({path.name})"
        recorded = manifest.extra.get(DATA_BYTES)
        if recorded is not None and size != recorded:
            return f"its {stage} file is damaged ({size} bytes, {recorded} written)"
        return None

    def read(self, stage: Stage, partition_key: str, columns: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """Rows of the last good output (only `columns`, if given); `UpstreamNotReady` if the last
        attempt did not succeed."""
        return self.read_table(stage, partition_key, columns).to_pylist()

    def read_table(self, stage: Stage, partition_key: str, columns: Sequence[str] | None = None) -> pa.Table:
        """`read` as an Arrow table: for a stage that writes what it read (`validated_chunks`)."""
        self._require_good(stage, partition_key)
        return _table(self.data_path(stage, partition_key), columns)

    def source_sha256(self, partition_key: str) -> str:
        """The sha256 of the PDF every stage of this partition is built from (what `RAW_PDF` recorded)."""
        sha256 = self._require_good(RAW_PDF, partition_key).source_sha256
        if sha256 is None:
            raise UpstreamNotReady(f"{RAW_PDF} recorded no sha256 for {partition_key}")
        return sha256

    def _require_good(self, stage: Stage, partition_key: str) -> PartitionManifest:
        manifest = self.manifest(stage, partition_key)
        if manifest is None:
            raise UpstreamNotReady(f"{stage} has not been materialized for {partition_key}")
        if manifest.status != STATUS_OK:
            raise UpstreamNotReady(f"{stage} {manifest.status} for {partition_key}: {manifest.reason}")
        problem = self.problem(stage, partition_key, manifest)
        if problem is not None:
            raise UpstreamNotReady(f"{partition_key}: {problem}; build it again")
        return manifest

    def read_last_good(
        self, stage: Stage, partition_key: str, columns: Sequence[str] | None = None
    ) -> pa.Table | None:
        """The last good output (only `columns`, if given) as an Arrow table, whatever the latest attempt
        did; None if the stage never succeeded for this PDF. A table, not rows: the export holds a few
        columns of every PDF and makes one PDF's rows into records a batch at a time."""
        path = self.data_path(stage, partition_key)
        return _table(path, columns) if path.is_file() else None

    def delete_partition(self, partition_key: str) -> None:
        """Forget a PDF that left the corpus: every stage's file and manifest for it (stages since renamed too),
        and its export piece."""
        if not self.root.is_dir():
            return
        for stage_dir in self.root.iterdir():
            if stage_dir.is_dir():
                for suffix in STAGE_FILE_SUFFIXES:
                    self.stage_file(stage_dir.name, partition_key, suffix).unlink(missing_ok=True)


def remove_dead_temps(root: Path, now: float | None = None) -> list[Path]:
    """Delete the temp files (`core.atomic`) that a killed build left under `root`: those of a process of this
    host that is gone, and any older than `TEMP_MAX_AGE_SECONDS` (another host's). Returns them."""
    if not root.is_dir():
        return []
    removed = []
    now = time.time() if now is None else now
    for folder, _, names in os.walk(root):
        for name in names:
            if not (name.startswith(".") and name.endswith(".tmp")):
                continue
            path = Path(folder) / name
            owner = temp_owner(name)
            try:
                stale = now - path.stat().st_mtime > TEMP_MAX_AGE_SECONDS
            except OSError:
                continue
            if stale or (owner is not None and owner[0] == this_host() and not _alive(owner[1])):
                path.unlink(missing_ok=True)
                removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _table(path: Path, columns: Sequence[str] | None = None) -> pa.Table:
    """A stage file. `ParquetFile` reads the one file as `read_table` does, without the dataset
    discovery `read_table` sets up for a path (paid per file, and a build reads several per PDF).
    On this thread: Arrow's thread pool spends more CPU on a stage file's few columns than this thread
    alone, and the build's other cores have work of their own."""
    with pq.ParquetFile(path) as parquet:
        return parquet.read(columns=list(columns) if columns is not None else None, use_threads=False)
