"""`pocket-assets ui`: the folder's PDFs added as partitions, then `dagster dev` on the same instance."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NoReturn, Sequence

from pocket_assets.cli.instance_lock import open_instance
from pocket_assets.cli.paths import cli_paths
from pocket_assets.core.raw_folder import OUTPUT_DIR_ENV, RAW_DIR_ENV
from pocket_assets.defs.partition_sync import register_pdfs
from pocket_assets.defs.partitions import pdf_partitions


def register_folder(raw_dir: str | None, output_dir: str | None) -> list[str]:
    """The folder's PDFs added as partitions, as a build adds them, without building: what `pocket-assets ui`
    does before the UI starts (it removes none)."""
    paths = cli_paths(raw_dir, output_dir)
    with open_instance() as instance:
        added = register_pdfs(instance, paths.scan().keys)
        total = len(instance.get_dynamic_partitions(pdf_partitions.name))
    print(f"{len(added)} PDF(s) of {paths.raw_path} added as partitions, {total} in all (DAGSTER_HOME={instance.root_directory})")
    return added


def start_ui(raw_dir: str | None, output_dir: str | None, dagster_args: Sequence[str]) -> NoReturn:
    """`dagster dev` on this instance, with the folder's PDFs added as partitions first: the UI then offers
    them at once, before any build or sensor tick. The folders reach the code location `dagster dev` loads
    through the environment variables its resources read."""
    register_folder(raw_dir, output_dir)
    environment = dict(os.environ)
    for name, folder in ((RAW_DIR_ENV, raw_dir), (OUTPUT_DIR_ENV, output_dir)):
        if folder:
            environment[name] = str(Path(folder).resolve())
    dagster = Path(sys.executable).with_name("dagster")  # the venv's, even when it is not activated
    workspace = Path(__file__).resolve().parents[2] / "workspace.yaml"
    target = ["-w", str(workspace)] if workspace.is_file() else ["-m", "pocket_assets.definitions"]
    os.execve(dagster, [str(dagster), "dev", *target, *dagster_args], environment)
