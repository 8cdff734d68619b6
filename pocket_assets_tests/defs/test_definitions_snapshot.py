"""A snapshot of the definitions, so that a lineage change shows as a reviewed diff (as dagster-open-platform does).

The asset keys, their groups, kinds and dependencies, partitions and backfill policies, the checks, jobs,
schedules and sensors of the code location, as JSON in `snapshots/definitions.json`. A change fails this
test with the diff; once reviewed, write the new snapshot with `UPDATE_DEFINITIONS_SNAPSHOT=1` and commit it.
"""

import difflib
import json
import os
from pathlib import Path
from typing import Any

from dagster import Definitions, load_from_defs_folder

import pocket_assets.definitions as location

SNAPSHOT = Path(__file__).parent / "snapshots" / "definitions.json"


def definitions_snapshot(definitions: Definitions) -> dict[str, Any]:
    graph = definitions.resolve_asset_graph()
    assets = {}
    for key in sorted(graph.get_all_asset_keys(), key=lambda key: key.to_user_string()):
        node = graph.get(key)
        policy = node.backfill_policy
        assets[key.to_user_string()] = {
            "group": node.group_name,
            "kinds": sorted(node.kinds),
            "deps": sorted(parent.to_user_string() for parent in node.parent_keys),
            "partitions": getattr(node.partitions_def, "name", None) if node.partitions_def else None,
            "backfill_policy": (
                {"type": policy.policy_type.value, "max_partitions_per_run": policy.max_partitions_per_run}
                if policy is not None
                else None
            ),
            "owners": sorted(node.owners),
        }
    jobs = {
        job.name: sorted(key.to_user_string() for key in definitions.resolve_job_def(job.name).asset_layer.executable_asset_keys)
        for job in definitions.jobs or []
    }
    return {
        "assets": assets,
        "checks": sorted(f"{key.asset_key.to_user_string()}:{key.name}" for key in graph.asset_check_keys),
        "jobs": dict(sorted(jobs.items())),
        "schedules": {
            schedule.name: {"job": schedule.job_name, "cron": schedule.cron_schedule, "default": schedule.default_status.value}
            for schedule in sorted(definitions.schedules or [], key=lambda schedule: schedule.name)
        },
        "sensors": {
            sensor.name: {
                "jobs": sorted(job.name for job in sensor.jobs) if sensor.has_jobs else [],
                "default": sensor.default_status.value,
                "minimum_interval_seconds": sensor.minimum_interval_seconds,
            }
            for sensor in sorted(definitions.sensors or [], key=lambda sensor: sensor.name)
        },
        "resources": sorted(definitions.resources or {}),
    }


def test_the_definitions_match_their_reviewed_snapshot(monkeypatch) -> None:
    for name in ("POCKET_ASSETS_RANGE_SIZE", "POCKET_ASSETS_REFRESH_CRON"):
        monkeypatch.delenv(name, raising=False)  # the defaults are what is reviewed
    current = json.dumps(
        definitions_snapshot(load_from_defs_folder(path_within_project=Path(location.__file__).parent)), indent=2
    ) + "\n"
    if os.environ.get("UPDATE_DEFINITIONS_SNAPSHOT") == "1":
        SNAPSHOT.write_text(current, encoding="utf-8")
    recorded = SNAPSHOT.read_text(encoding="utf-8") if SNAPSHOT.exists() else ""
    diff = "".join(difflib.unified_diff(recorded.splitlines(True), current.splitlines(True), "snapshot", "code"))
    assert not diff, f"the definitions changed; review, then UPDATE_DEFINITIONS_SNAPSHOT=1 pytest {__file__}:\n{diff}"
