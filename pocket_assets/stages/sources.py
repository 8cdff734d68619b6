"""Each PDF's sha256 now, without reading every file again at every build.

Whether a PDF changed is decided on its bytes (sha256), and hashing a folder of 20,000 pages reads
it whole (~1 GB) at each `pocket-assets build`, even when nothing changed. `raw_pdf` records, beside the
sha256 it hashed, the file's size and modification time as it found them; a file whose size and
modification time (and inode and change time) are still those gets that sha256 again, any other is
hashed; a sensor keeps the same stamps in its cursor for the files no build has read yet.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pocket_assets.core.raw_folder import sha256_file
from pocket_assets.stages.registry import RAW_PDF
from pocket_assets.stages.store import STATUS_OK, PartitionStore

# The `raw_pdf` manifest's `extra` entries: the file as it was hashed. The inode and the change time catch what
# size and modification time miss: a file replaced by another (`mv`), or rewritten with its old time put back
# (`cp -p`, an archive's extraction); nothing sets a change time back.
FILE_SIZE = "file_size"
FILE_MTIME_NS = "file_mtime_ns"
FILE_CTIME_NS = "file_ctime_ns"
FILE_INODE = "file_inode"


def file_stamp(path: Path) -> dict[str, int]:
    """What `raw_pdf` records of the file it hashes (taken before hashing: a change after it is seen next time)."""
    status = os.stat(path)
    return {
        FILE_SIZE: status.st_size,
        FILE_MTIME_NS: status.st_mtime_ns,
        FILE_CTIME_NS: status.st_ctime_ns,
        FILE_INODE: status.st_ino,
    }


@dataclass(frozen=True)
class FileDigest:
    """A file's sha256 and the stamp (`file_stamp`) it had when it was hashed."""

    sha256: str
    stamp: Mapping[str, int]


def file_digests(
    store: PartitionStore, raw_dir: Path, keys: Sequence[str], known: Mapping[str, FileDigest] | None = None
) -> dict[str, FileDigest]:
    """Key -> the file's digest now; a key whose file is gone or unreadable is left out.

    The one change detector: a file keeps the sha256 its `raw_pdf` recorded, or that `known` (a sensor's
    cursor) holds, while its stamp is the one recorded with it; any other file is read and hashed.
    """
    digests = {}
    for key in keys:
        path = raw_dir / key
        try:
            stamp = file_stamp(path)
        except OSError:
            continue
        recorded = store.manifest(RAW_PDF, key) if store.accepts(key) else None
        previous = (known or {}).get(key)
        if recorded is not None and recorded.status == STATUS_OK and recorded.source_sha256 and _same(recorded.extra, stamp):
            digests[key] = FileDigest(recorded.source_sha256, stamp)
        elif previous is not None and _same(previous.stamp, stamp):
            digests[key] = previous
        else:
            try:
                digests[key] = FileDigest(sha256_file(path), stamp)
            except OSError:  # removed or made unreadable since: as a file that is gone (its build says why)
                continue
    return digests


def recorded_by_build(store: PartitionStore, key: str, digest: FileDigest) -> bool:
    """Whether `raw_pdf` recorded this very file (same sha256, same stamp): what a build read, no cursor need hold it."""
    recorded = store.manifest(RAW_PDF, key) if store.accepts(key) else None
    return (
        recorded is not None
        and recorded.status == STATUS_OK
        and recorded.source_sha256 == digest.sha256
        and _same(recorded.extra, digest.stamp)
    )


def current_sha256(store: PartitionStore, raw_dir: Path, keys: Sequence[str]) -> dict[str, str]:
    """Key -> sha256 of the file now in the folder (`file_digests` without a cursor)."""
    return {key: digest.sha256 for key, digest in file_digests(store, raw_dir, keys).items()}


def _same(extra: Mapping[str, object], stamp: Mapping[str, int]) -> bool:
    return all(extra.get(name) == value for name, value in stamp.items())
