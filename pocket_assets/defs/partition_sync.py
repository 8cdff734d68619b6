"""Keep the dynamic partitions equal to the PDFs in the raw folder."""

from __future__ import annotations

from typing import Callable

from dagster import DagsterInstance

from pocket_assets.defs.partitions import pdf_partitions
from pocket_assets.defs.resources import CorpusPaths


def sync_partitions(instance: DagsterInstance, paths: CorpusPaths, log: Callable[[str], None] = print) -> list[str]:
    """Every PDF in the folder becomes a partition (sorted); partitions of vanished files go."""
    keys = list(paths.scan().keys)
    registered = instance.get_dynamic_partitions(pdf_partitions.name)
    missing = [key for key in keys if key not in registered]
    if missing:
        instance.add_dynamic_partitions(pdf_partitions.name, missing)
    for key in sorted(set(registered) - set(keys)):
        instance.delete_dynamic_partition(pdf_partitions.name, key)
        paths.store().delete_partition(key)
        log(f"removed partition {key} (file gone)")
    return keys
