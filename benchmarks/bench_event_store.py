"""What one stored Dagster event costs on the local (SQLite) instance: Dagster's own event log storage
against the build command's (`defs/event_store.py`: one engine per database and process) with SQLite's
`synchronous` FULL (SQLite's default) and NORMAL (the build command's), and NORMAL with the events handed
over in one batch (as a step's materializations of its PDFs are in the build command), alternating: CPU and wall milliseconds per event.

    python benchmarks/bench_event_store.py [--events 200] [--rounds 2]

Each measurement is a fresh process with a fresh DAGSTER_HOME storing `--events` materializations of
one partitioned asset into one run (what a step's result stores per PDF).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
BATCHED = {"held-batch": {"DAGSTER_EVENT_BATCH_SIZE": "1000"}}  # as the build command sets it
MODES = ("dagster", "held-full", "held-normal", "held-batch")


def _instance(mode: str):  # -> DagsterInstance
    import yaml
    from dagster import DagsterInstance
    from dagster._serdes import ConfigurableClassData

    from pocket_assets.defs.event_store import HeldSqliteStorage, build_instance_ref

    home = os.environ["DAGSTER_HOME"]
    if mode == "dagster":
        return DagsterInstance.get()
    config = yaml.dump({"base_dir": home, "synchronous": "FULL" if mode == "held-full" else "NORMAL"})
    storage = ConfigurableClassData(HeldSqliteStorage.__module__, HeldSqliteStorage.__name__, config)
    return DagsterInstance.from_ref(build_instance_ref(home)._replace(storage_data=storage))


def measure(mode: str, events: int) -> dict[str, float | str]:
    """In this process: `events` materializations stored, CPU and wall ms per event."""
    from dagster import AssetKey, AssetMaterialization
    from dagster._core.events import DagsterEvent, DagsterEventBatchMetadata, DagsterEventType, StepMaterializationData

    with _instance(mode) as instance:
        run_id = str(uuid.uuid4())
        with instance.event_log_storage.run_connection(run_id):
            pass  # the database exists either way before timing
        wall, cpu = time.perf_counter(), time.process_time()
        for index in range(events):
            materialization = AssetMaterialization(AssetKey("pages"), partition=f"fr/{index}.pdf", metadata={"rows": index})
            event = DagsterEvent(
                event_type_value=DagsterEventType.ASSET_MATERIALIZATION.value,
                job_name="build_corpus",
                event_specific_data=StepMaterializationData(materialization),
            )
            batch = DagsterEventBatchMetadata("bench", index == events - 1) if mode == "held-batch" else None
            instance.report_dagster_event(event, run_id, logging.DEBUG, batch_metadata=batch)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"mode": mode, "cpu_ms": 1000 * cpu / events, "wall_ms": 1000 * wall / events}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--one", choices=MODES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        sys.path.insert(0, str(REPO_ROOT))  # this checkout's code, not an installed copy
        print(json.dumps(measure(args.one, args.events)))
        return
    for _ in range(args.rounds):
        for mode in MODES:
            with tempfile.TemporaryDirectory() as home:
                Path(home, "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
                done = subprocess.run(
                    [sys.executable, __file__, "--one", mode, "--events", str(args.events)],
                    cwd=REPO_ROOT, env={**os.environ, "DAGSTER_HOME": home, **BATCHED.get(mode, {})}, capture_output=True, text=True, check=True,
                )
                result = json.loads(done.stdout.strip().splitlines()[-1])
                print(f"{mode}: {result['cpu_ms']:.1f} ms cpu, {result['wall_ms']:.1f} ms wall per event (load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
