"""Turn a set of PDFs into as few runs as possible.

A single run covers a contiguous range of the dynamic partitions (in the order
they were added), so a selection becomes one run per contiguous stretch.
"""

from __future__ import annotations

import hashlib
from typing import Iterable, Sequence

from dagster import RunRequest
# Private on purpose: Dagster 1.13 exports no public name for the tags that make a run a single-run
# backfill of a partition range, and spelling "dagster/asset_partition_range_start" here would drift silently.
from dagster._core.storage.tags import ASSET_PARTITION_RANGE_END_TAG, ASSET_PARTITION_RANGE_START_TAG


def contiguous_ranges(ordered_keys: Sequence[str], selected: Iterable[str]) -> list[tuple[str, str]]:
    wanted = set(selected)
    ranges: list[tuple[str, str]] = []
    start: str | None = None
    previous: str | None = None
    for key in ordered_keys:
        if key in wanted:
            start = start or key
            previous = key
        elif start is not None:
            ranges.append((start, previous))  # type: ignore[arg-type]
            start = None
    if start is not None:
        ranges.append((start, previous))  # type: ignore[arg-type]
    return ranges


def range_tags(start: str, end: str) -> dict[str, str]:
    return {ASSET_PARTITION_RANGE_START_TAG: start, ASSET_PARTITION_RANGE_END_TAG: end}


# The runs list shows a run's own tags but hides Dagster's range tags (seen in a browser, Dagster 1.13):
# a range run named no PDF there. This tag names its PDFs, short enough to read in a row.
PDFS_TAG = "pocket_assets/pdfs"
KEY_SHOWN_MAX = 40


def range_run_tags(keys: Sequence[str]) -> dict[str, str]:
    """The tags of a run over these contiguous PDFs: Dagster's range (which makes it a single-run
    backfill), and `pdfs_tag`."""
    return {**range_tags(keys[0], keys[-1]), **pdfs_tag(keys)}


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


def run_requests_for(ordered_keys: Sequence[str], selected: dict[str, str]) -> list[RunRequest]:
    """One request per contiguous range; `selected` maps key -> sha256 so run keys change with content."""
    requests = []
    for start, end in contiguous_ranges(ordered_keys, selected):
        keys = ordered_keys[ordered_keys.index(start) : ordered_keys.index(end) + 1]
        fingerprint = hashlib.sha256("\n".join(f"{key}@{selected[key]}" for key in keys).encode()).hexdigest()[:16]
        if start == end:
            requests.append(RunRequest(partition_key=start, run_key=f"{start}@{selected[start]}", tags=pdfs_tag(keys)))
        else:
            requests.append(RunRequest(run_key=f"{start}..{end}@{fingerprint}", tags=range_run_tags(keys)))
    return requests

