"""What one stored Dagster event costs on the local (SQLite) instance, with and without the run's event
databases held open (`defs/event_shards.py`), alternating: CPU and wall milliseconds per event.

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
from contextlib import nullcontext
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def measure(held: bool, events: int) -> dict[str, float]:
    """In this process: `events` materializations stored, CPU and wall ms per event."""
    from dagster import AssetKey, AssetMaterialization, DagsterInstance
    from dagster._core.events import DagsterEvent, DagsterEventType, StepMaterializationData

    from pocket_assets.defs.event_shards import event_log_held_open

    with DagsterInstance.get() as instance:
        run_id = str(uuid.uuid4())
        with instance.event_log_storage.run_connection(run_id):
            pass  # the database exists either way before timing
        with event_log_held_open(instance, run_id) if held else nullcontext():
            wall, cpu = time.perf_counter(), time.process_time()
            for index in range(events):
                materialization = AssetMaterialization(AssetKey("pages"), partition=f"fr/{index}.pdf", metadata={"rows": index})
                event = DagsterEvent(
                    event_type_value=DagsterEventType.ASSET_MATERIALIZATION.value,
                    job_name="build_corpus",
                    event_specific_data=StepMaterializationData(materialization),
                )
                instance.report_dagster_event(event, run_id, logging.DEBUG)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"held": held, "cpu_ms": 1000 * cpu / events, "wall_ms": 1000 * wall / events}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--one", choices=("held", "free"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        sys.path.insert(0, str(REPO_ROOT))  # this checkout's code, not an installed copy
        print(json.dumps(measure(args.one == "held", args.events)))
        return
    for _ in range(args.rounds):
        for mode in ("free", "held"):
            with tempfile.TemporaryDirectory() as home:
                Path(home, "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
                done = subprocess.run(
                    [sys.executable, __file__, "--one", mode, "--events", str(args.events)],
                    cwd=REPO_ROOT, env={**os.environ, "DAGSTER_HOME": home}, capture_output=True, text=True, check=True,
                )
                result = json.loads(done.stdout.strip().splitlines()[-1])
                print(f"{mode}: {result['cpu_ms']:.1f} ms cpu, {result['wall_ms']:.1f} ms wall per event (load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
