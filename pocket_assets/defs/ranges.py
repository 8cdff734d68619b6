"""A set of PDFs as runs over ranges of partitions, as the run queue and the UI know them.

A run over a range of partitions carries Dagster's documented range tags
(`dagster/asset_partition_range_start` / `_end`: what the UI's "launch as one run" and a
multi-run backfill set); a one-PDF run carries its partition key. A range covers every
partition between its ends in the order they were added, so a selection becomes ranges of
contiguous selected PDFs, each at most the range size.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

from dagster import RunRequest

RANGE_START_TAG = "dagster/asset_partition_range_start"
RANGE_END_TAG = "dagster/asset_partition_range_end"
# The runs list shows a run's own tags; this one names its PDFs, short enough to read in a row.
PDFS_TAG = "pocket_assets/pdfs"
KEY_SHOWN_MAX = 40


def pdf_ranges(ordered_keys: Sequence[str], selected: Sequence[str], size: int) -> list[list[str]]:
    """The selected keys as runs of contiguous keys (in `ordered_keys`' order), each of at most `size`."""
    wanted = set(selected)
    ranges: list[list[str]] = []
    stretch: list[str] = []
    for key in ordered_keys:
        if key in wanted and len(stretch) < size:
            stretch.append(key)
            continue
        if stretch:
            ranges.append(stretch)
        stretch = [key] if key in wanted else []
    if stretch:
        ranges.append(stretch)
    return ranges


def run_tags(keys: Sequence[str]) -> dict[str, str]:
    """The tags of a run over these contiguous PDFs: the range (none for one PDF, which has its partition key)
    and `PDFS_TAG`."""
    tags = pdfs_tag(keys)
    if len(keys) > 1:
        tags.update({RANGE_START_TAG: keys[0], RANGE_END_TAG: keys[-1]})
    return tags


def pdfs_tag(keys: Sequence[str]) -> dict[str, str]:
    """PDFS_TAG: the PDF, or how many and the first and last (long keys elided)."""
    first, last = _shown(keys[0]), _shown(keys[-1])
    return {PDFS_TAG: first if len(keys) == 1 else f"{len(keys)} PDFs: {first} .. {last}"}


def _shown(key: str) -> str:
    """The key, or its start and end around an ellipsis: the corpus folder and the file name stay readable."""
    if len(key) <= KEY_SHOWN_MAX:
        return key
    head = KEY_SHOWN_MAX // 2 - 1
    return f"{key[:head]}…{key[-(KEY_SHOWN_MAX - head - 1):]}"


def run_requests(ordered_keys: Sequence[str], selected: Mapping[str, str], size: int, job_name: str) -> list[RunRequest]:
    """One request per range; `selected` maps key -> fingerprint (its sha256 and versions) so that a run key
    names what it builds, and the same content is never requested twice by the same sensor."""
    requests = []
    for keys in pdf_ranges(ordered_keys, list(selected), size):
        content = hashlib.sha256("\n".join(f"{key}@{selected[key]}" for key in keys).encode()).hexdigest()[:16]
        requests.append(
            RunRequest(
                job_name=job_name,
                partition_key=keys[0] if len(keys) == 1 else None,
                run_key=f"{keys[0]}@{content}" if len(keys) == 1 else f"{keys[0]}..{keys[-1]}@{content}",
                tags=run_tags(keys),
            )
        )
    return requests
