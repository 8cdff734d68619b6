"""Each PDF's sha256 now, without reading every file again at every build.

Whether a PDF changed is decided on its bytes (sha256), and hashing a folder of 20,000 pages reads
it whole (~1 GB) at each `pocket-assets build`, even when nothing changed. `raw_pdf` records, beside the
sha256 it hashed, the file's size and modification time as it found them; a file whose size and
modification time are still those gets that sha256 again, any other is hashed (as the raw-folder
sensor's cursor does).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
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


def current_sha256(store: PartitionStore, raw_dir: Path, keys: Sequence[str]) -> dict[str, str]:
    """Key -> sha256 of the file now in the folder; a key whose file is gone or unreadable is left out."""
    shas = {}
    for key in keys:
        path = raw_dir / key
        try:
            stamp = file_stamp(path)
        except OSError:
            continue
        recorded = store.manifest(RAW_PDF, key) if store.accepts(key) else None
        if recorded is not None and recorded.status == STATUS_OK and recorded.source_sha256 and _same(recorded.extra, stamp):
            shas[key] = recorded.source_sha256
        else:
            try:
                shas[key] = sha256_file(path)
            except OSError:  # removed or made unreadable since: as a file that is gone (its build says why)
                continue
    return shas


def _same(extra: Mapping[str, object], stamp: Mapping[str, int]) -> bool:
    return all(extra.get(name) == value for name, value in stamp.items())
