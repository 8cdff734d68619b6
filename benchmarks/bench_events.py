"""One build command with a given checkout's code: wall, CPU, memory, the events its run stored, per-step seconds.

    python benchmarks/bench_events.py RAW WORK LABEL [--repo CHECKOUT]

builds the PDFs under RAW (`fr/`, `intl/`) with CHECKOUT's code (default: this one; a `git archive` of
another commit compares before and after) into `WORK/LABEL/{home,out}`, prints one JSON line and appends it
to `WORK/results.jsonl`. "Events" are the rows of the run's SQLite event log (`history/runs/<run id>.db`)
by type, `log` for the lines the steps wrote (each is an event: issue 18); the index shard repeats the
asset events. Outputs of two labels compare with `bench_build.differing_outputs(WORK/A/out, WORK/B/out)`.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sqlite3
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run_events(dagster_home: Path) -> dict[str, dict[str, int]]:
    """Rows per event type in each run's event log shard (the `index` shard included), `log` for log lines."""
    counts = {}
    for shard in sorted((dagster_home / "history" / "runs").glob("*.db")):
        with sqlite3.connect(shard) as connection:
            rows = connection.execute(
                "SELECT coalesce(dagster_event_type, 'log'), count(*) FROM event_logs GROUP BY 1"
            ).fetchall()
        counts[shard.stem] = dict(rows)
    return counts


def _bench_build(checkout: Path):
    """The checkout's own `bench_build` (its REPO_ROOT is where the build command runs, i.e. whose code)."""
    spec = importlib.util.spec_from_file_location("bench_build_of_checkout", checkout / "benchmarks" / "bench_build.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("raw", type=Path)
    parser.add_argument("work", type=Path)
    parser.add_argument("label")
    parser.add_argument("--repo", type=Path, default=HERE.parent, help="checkout whose code builds")
    args = parser.parse_args()
    bench = _bench_build(args.repo.resolve())
    measure = bench.build_command(args.work, args.raw, args.label)
    home = args.work / args.label / "home"
    events = run_events(home)
    result = {
        "label": args.label,
        "wall": round(measure.wall, 1),
        "cpu": round(measure.cpu, 1),
        "tree_mib": round(measure.tree_peak_mib),
        "largest_mib": round(measure.process_peak_mib),
        "load": round(measure.load, 1),
        "returncode": measure.returncode,
        "events": {shard: sum(types.values()) for shard, types in events.items()},
        "events_by_type": events,
        "steps": {step: round(seconds, 1) for step, seconds in bench._step_seconds(home).items()},
    }
    print(json.dumps(result))
    with (args.work / "results.jsonl").open("a", encoding="utf-8") as results:
        results.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
