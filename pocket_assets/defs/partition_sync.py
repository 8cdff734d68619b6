"""The dynamic partitions and the raw folder: who may add, and who may remove.

Anyone building a folder adds its PDFs as partitions (`register_pdfs`): on a shared instance each
machine adds what it sees and never touches the rest. The deployment's own sensor and schedule
watch the deployment's folder and make the partitions match it (`sync_partitions`): a PDF dropped
in is added, and a partition whose file left the folder, that is a copy of another PDF of its
corpus, or that names no PDF of a corpus folder (a key typed by hand in the UI's "Add partition"
dialog) is deleted with its stage files, each named with why. `pocket-assets forget` deletes
partitions on request.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from dagster import DagsterInstance

from pocket_assets.defs.partitions import pdf_partitions
from pocket_assets.stages.planner import CorpusPlan
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


def sync_partitions(
    instance: DagsterInstance, store: PartitionStore, plan: CorpusPlan, log: Callable[[str], None] = print
) -> tuple[list[str], dict[str, str]]:
    """Make the partitions the plan's PDFs: add the missing ones, delete the others with their stage files.
    Returns the keys added and, for each key deleted, why."""
    added = register_pdfs(instance, plan.partition_keys)
    for key in added:
        log(f"added partition {key}: a new PDF of the raw folder")
    duplicates = plan.duplicates
    wanted = set(plan.partition_keys)
    removed = {
        key: f"a copy of {duplicates[key]} (the same bytes in the same corpus)"
        if key in duplicates
        else "no such PDF in a corpus folder of the raw folder"
        for key in instance.get_dynamic_partitions(pdf_partitions.name)
        if key not in wanted
    }
    for key, why in sorted(removed.items()):
        forget_pdfs(instance, store, [key], log=lambda line, why=why: log(f"{line}: {why}"))
    return added, removed


def forget_pdfs(
    instance: DagsterInstance, store: PartitionStore, keys: Sequence[str], log: Callable[[str], None] = print
) -> None:
    """Delete these partitions and their stage files, each named in `log`."""
    for key in keys:
        instance.delete_dynamic_partition(pdf_partitions.name, key)
        if store.accepts(key):
            store.delete_partition(key)
        log(f"removed partition {key} and its stage files")
