"""PDFs that are copies of another (the same bytes under another name): built and exported once.

A corpus folder often holds the same file twice (`R01.pdf` and `R01 (1).pdf`); the phone would
retrieve the same text twice, under two citations. The copy whose key sorts first is kept; every
other is named as its duplicate (in the build's summary, the export's metadata and log) and left
out of the builds and exports, unless the setting that keeps both is on.
"""

from __future__ import annotations

from collections.abc import Mapping


def duplicate_pdfs(sha256_by_key: Mapping[str, str]) -> dict[str, str]:
    """Each duplicate's key to the key of the copy kept (the first in key order with the same sha256)."""
    kept: dict[str, str] = {}
    duplicates = {}
    for key in sorted(sha256_by_key):
        original = kept.setdefault(sha256_by_key[key], key)
        if original != key:
            duplicates[key] = original
    return duplicates


def duplicate_sentence(key: str, original: str) -> str:
    return (
        f"{key} is a copy of {original} (the same bytes): built and exported once, as {original}; "
        "set POCKET_ASSETS_KEEP_DUPLICATES=1 to keep both"
    )
