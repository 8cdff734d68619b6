"""`pocket-assets forget`: delete partitions and their stage files from the instance, each named."""

from __future__ import annotations

from collections.abc import Sequence

from pocket_assets.cli.folder_lock import holding_output_folder
from pocket_assets.cli.instance_lock import open_instance
from pocket_assets.cli.paths import cli_paths
from pocket_assets.defs.partition_sync import forget_pdfs, vanished_pdfs
from pocket_assets.defs.partitions import pdf_partitions
from pocket_assets.stages.output_folder import OutputFolderRefused


def forget(pdfs: Sequence[str], missing: bool, raw_dir: str | None, output_dir: str | None) -> int:
    """Delete the named partitions (or, with `missing`, those whose file is not in the raw folder) and their
    stage files, each named, holding the output folder (a build in progress is waited for). A key that is no
    partition, or that leaves its folder (`fr/../../x.pdf`, added by hand), is said so and left; the others
    are deleted all the same."""
    try:
        paths = cli_paths(raw_dir, output_dir)
    except OutputFolderRefused as error:
        print(error)
        return 2
    store = paths.store()
    with holding_output_folder(paths.output_path, "forget"), open_instance() as instance:
        registered = set(instance.get_dynamic_partitions(pdf_partitions.name))
        unknown = [key for key in pdfs if key not in registered]
        for key in unknown:
            print(f"{key}: not a partition of this instance; nothing deleted")
        keys = sorted({key for key in pdfs if key in registered} | set(vanished_pdfs(instance, paths.scan().keys) if missing else ()))
        refused = [key for key in keys if not store.accepts(key)]
        for key in refused:
            print(
                f"{key}: refused: this partition key leaves its folder, so it names no PDF and no stage file; "
                "nothing deleted (the deployment's corpus_refresh schedule removes such a partition)"
            )
        forget_pdfs(instance, store, [key for key in keys if key not in refused])
    print(f"{len(keys) - len(refused)} partition(s) deleted")
    return 1 if unknown or refused else 0
