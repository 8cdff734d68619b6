"""`pocket-assets forget`: delete partitions and their stage files from the instance, each named."""

from __future__ import annotations

from collections.abc import Sequence

from pocket_assets.cli.instance_lock import open_instance
from pocket_assets.cli.paths import cli_paths
from pocket_assets.defs.partition_sync import forget_pdfs, vanished_pdfs
from pocket_assets.defs.partitions import pdf_partitions
from pocket_assets.stages.output_folder import OutputFolderRefused


def forget(pdfs: Sequence[str], missing: bool, raw_dir: str | None, output_dir: str | None) -> int:
    """Delete the named partitions (or, with `missing`, those whose file is not in the raw folder) and their
    stage files, each named; a key that is no partition is said so and left."""
    try:
        paths = cli_paths(raw_dir, output_dir)
    except OutputFolderRefused as error:
        print(error)
        return 2
    with open_instance() as instance:
        registered = set(instance.get_dynamic_partitions(pdf_partitions.name))
        unknown = [key for key in pdfs if key not in registered]
        for key in unknown:
            print(f"{key}: not a partition of this instance; nothing deleted")
        keys = [key for key in pdfs if key in registered] + (vanished_pdfs(instance, paths.scan().keys) if missing else [])
        forget_pdfs(instance, paths.store(), sorted(set(keys)))
    print(f"{len(set(keys))} partition(s) deleted")
    return 1 if unknown else 0
