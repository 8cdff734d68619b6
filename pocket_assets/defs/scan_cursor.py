"""The folder sensor's cursor: what each PDF no build has read yet looked like when it was hashed.

A sensor's cursor is shown on its page in the UI and stored with each tick. A file its `raw_pdf`
recorded is known from that manifest; the cursor holds only the others (new, changed, or never
built), one `[size, mtime_ns, ctime_ns, inode, sha256]` list each, so it stays small at any corpus
size while sparing a rehash of an unchanged file at each tick (`stages.sources.file_digests`, the
build's own change detector, reads it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pocket_assets.stages.sources import FILE_CTIME_NS, FILE_INODE, FILE_MTIME_NS, FILE_SIZE, FileDigest

_STAMP = (FILE_SIZE, FILE_MTIME_NS, FILE_CTIME_NS, FILE_INODE)


def encode_digests(digests: Mapping[str, FileDigest]) -> dict[str, list[Any]]:
    return {key: [*(digest.stamp[name] for name in _STAMP), digest.sha256] for key, digest in sorted(digests.items())}


def decode_digests(encoded: Mapping[str, list[Any]]) -> dict[str, FileDigest]:
    digests = {}
    for key, values in encoded.items():
        if isinstance(values, list) and len(values) == len(_STAMP) + 1:  # an older cursor's entry: hashed again
            digests[key] = FileDigest(values[-1], dict(zip(_STAMP, values)))
    return digests


def dumps(cursor: Mapping[str, Any]) -> str:
    return json.dumps(cursor, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def loads(cursor: str | None) -> dict[str, Any]:
    try:
        loaded = json.loads(cursor) if cursor else {}
    except ValueError:
        return {}
    return loaded if isinstance(loaded, dict) else {}
