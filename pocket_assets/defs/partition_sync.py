"""The dynamic partitions and the raw folder: who may add, and who may remove.

Anyone building a folder adds its PDFs as partitions (`register_pdfs`): on a shared
instance each machine adds what it sees and never touches the rest. Only the
deployment's own sensor and schedule (which watch the deployment's folder) and the
explicit `pocket-assets forget` remove partitions, with their stage files
(`forget_pdfs`), naming what they remove.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from dagster import DagsterInstance

from pocket_assets.defs.partitions import pdf_partitions
from pocket_assets.stages.store import PartitionStore


def register_pdfs(instance: DagsterInstance, keys: Sequence[str]) -> list[str]:
    """Add the keys that are not partitions yet (in their order); return those added."""
    registered = set(instance.get_dynamic_partitions(pdf_partitions.name))
    added = [key for key in keys if key not in registered]
    if added:
        instance.add_dynamic_partitions(pdf_partitions.name, added)
    return added


def vanished_pdfs(instance: DagsterInstance, keys: Sequence[str]) -> list[str]:
    """Registered partitions whose file is not among `keys` (the deployment's folder), sorted."""
    present = set(keys)
    return sorted(key for key in instance.get_dynamic_partitions(pdf_partitions.name) if key not in present)


def forget_pdfs(
    instance: DagsterInstance, store: PartitionStore, keys: Sequence[str], log: Callable[[str], None] = print
) -> None:
    """Delete these partitions and their stage files, each named in `log`."""
    for key in keys:
        instance.delete_dynamic_partition(pdf_partitions.name, key)
        store.delete_partition(key)
        log(f"removed partition {key} and its stage files")
