"""`pocket-assets prune`: delete old runs and their events, keeping every run that holds a PDF's current state."""

from __future__ import annotations

import time
from datetime import datetime, timezone

from dagster import RunsFilter

from pocket_assets.cli.instance_lock import open_instance
from pocket_assets.cli.paths import cli_paths
from pocket_assets.defs.partitions import pdf_partitions
from pocket_assets.stages.pdf_notes import EXPORT
from pocket_assets.stages.registry import STAGES

SECONDS_PER_DAY = 86_400


def prune(older_than_days: float, raw_dir: str | None, output_dir: str | None) -> int:
    """Delete the runs (with their events) older than `older_than_days` that hold no PDF's current state: a run
    whose materializations are still the latest of some stage file (its manifest names the run) is kept."""
    paths = cli_paths(raw_dir, output_dir)
    store = paths.store()
    cutoff = time.time() - older_than_days * SECONDS_PER_DAY
    with open_instance() as instance:
        keys = instance.get_dynamic_partitions(pdf_partitions.name)
        current = {
            manifest.run_id
            for key in filter(store.accepts, keys)
            for stage in (*STAGES, EXPORT)
            if (manifest := store.manifest(stage, key)) is not None and manifest.run_id
        }
        old = [record for record in instance.get_run_records(RunsFilter(created_before=datetime.fromtimestamp(cutoff, tz=timezone.utc)))]
        deleted = [record.dagster_run.run_id for record in old if record.dagster_run.run_id not in current]
        for run_id in deleted:
            instance.delete_run(run_id)
    print(f"{len(deleted)} run(s) older than {older_than_days:g} day(s) deleted; {len(old) - len(deleted)} kept (they hold a PDF's current state)")
    return 0
