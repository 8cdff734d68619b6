"""`pocket-assets prune`: delete old runs and their events, keeping every run that holds a PDF's current state, and
give back the disk they held."""

from __future__ import annotations

import os
import shutil
import time
from datetime import datetime, timezone
from pathlib import Path

from dagster import RunsFilter

from pocket_assets.cli.folder_lock import holding_output_folder
from pocket_assets.cli.instance_lock import open_instance
from pocket_assets.cli.paths import cli_paths
from pocket_assets.defs.partitions import pdf_partitions
from pocket_assets.stages.pdf_notes import EXPORT
from pocket_assets.stages.registry import STAGES

SECONDS_PER_DAY = 86_400


def prune(older_than_days: float, raw_dir: str | None, output_dir: str | None) -> int:
    """Delete the runs (with their events and logs) older than `older_than_days` that hold no PDF's current state:
    a run whose materializations are still the latest of some stage file (its manifest names the run) is kept,
    and so is a run not finished. Holds the output folder: a build in progress is waited for."""
    paths = cli_paths(raw_dir, output_dir)
    store = paths.store()
    cutoff = time.time() - older_than_days * SECONDS_PER_DAY
    with holding_output_folder(paths.output_path, "prune"), open_instance() as instance:
        home = Path(instance.root_directory)
        before = _disk_usage(home)
        keys = instance.get_dynamic_partitions(pdf_partitions.name)
        current = {
            manifest.run_id
            for key in filter(store.accepts, keys)
            for stage in (*STAGES, EXPORT)
            if (manifest := store.manifest(stage, key)) is not None and manifest.run_id
        }
        old = [record for record in instance.get_run_records(RunsFilter(created_before=datetime.fromtimestamp(cutoff, tz=timezone.utc)))]
        deleted = [run.run_id for run in (record.dagster_run for record in old) if run.is_finished and run.run_id not in current]
        for run_id in deleted:
            instance.delete_run(run_id)
            instance.compute_log_manager.delete_logs(prefix=[run_id])
        _remove_run_files(home, set(deleted))
        freed = max(0, before - _disk_usage(home))
    print(
        f"{len(deleted)} run(s) older than {older_than_days:g} day(s) deleted, {freed / 1024:,.0f} KiB freed in {home}; "
        f"{len(old) - len(deleted)} kept (they hold a PDF's current state, or are not finished)"
    )
    return 0


def _remove_run_files(home: Path, run_ids: set[str]) -> None:
    """What Dagster leaves under DAGSTER_HOME of runs it deleted: every file or folder named after one of them
    (a local instance keeps each run's event database, `history/runs/<run id>.db`, emptied). A run id is a
    UUID: nothing else is named after it."""
    for folder, subfolders, files in os.walk(home):
        for name in [name for name in subfolders if name in run_ids]:
            shutil.rmtree(Path(folder) / name)
            subfolders.remove(name)
        for name in files:
            if name.partition(".")[0] in run_ids:
                (Path(folder) / name).unlink()


def _disk_usage(folder: Path) -> int:
    """Bytes the files under `folder` take on the disk (their allocated blocks)."""
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                total += (Path(root) / name).lstat().st_blocks * 512
            except FileNotFoundError:  # gone since listed: a run of the UI writes beside
                pass
    return total
