"""The documented PostgreSQL deployment, end to end: a backfill launched as the UI launches it.

Started for each test, as an operator starts them (docs/operations.md): a throwaway PostgreSQL server
(`postgres_server`), a DAGSTER_HOME holding `deploy/postgres/dagster.yaml` copied as is (only the
DAGSTER_PG_* variables it reads are set), `dagster-daemon run` and `dagster-webserver` of the venv
in the repository with `-w workspace.yaml`, over a temporary corpus of 30 small text PDFs in fr/
and intl/ and one broken file (random bytes named .pdf), 8 PDFs per run
(POCKET_ASSETS_RANGE_SIZE) and one worker per run (POCKET_ASSETS_WORKERS=1).

Everything goes through the webserver's GraphQL, as the UI sends it: the PDFs are registered as
partitions (`addDynamicPartition`), and a backfill is launched with `launchPartitionBackfill` with
the variables the Dagster 1.13 partition dialog sends (read from its bundled JavaScript):

- from the asset graph (the six per-PDF assets and `android_export` selected, "Materialize
  selected", the PDFs chosen): a pure asset backfill, `{tags, assetSelection, partitionNames,
  fromFailure: false}`;
- from Jobs > build_corpus > Materialize all: the same plus `selector: {partitionSetName:
  "build_corpus_partition_set", repositorySelector}`, a job backfill.

Asserted for the asset backfill: its runs are the ranges of the backfill policy and at least two
of them ran at the same time; for each per-PDF asset exactly the broken PDF is failed and every
other materialized (`assetPartitionStatuses`); the backfill ends COMPLETED_FAILED and its per-asset
counts on the Backfills page (`assetBackfillData`) agree (30 materialized, 1 failed); the backfill
does not run `android_export` (downstream of a failure) and `corpus_export_sensor` does, once,
after the backfill; the exported files hold every good PDF once, list the broken one as left out,
and equal those `pocket-assets build` writes from the same folder into another output folder and
DAGSTER_HOME (the real command line). For the job backfill: the partitions are exact too, and the
Backfills page counts each PDF by the status of the run that held it (Dagster's rule for a ranged
job backfill: every PDF of the failed range counts failed).

Skipped without the PostgreSQL binaries or the Dagster executables, except under CI=true (fails).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pocket_assets.core.raw_folder import discover_pdfs
from pocket_assets.export.sdk_lines import parse_sdk_file
from pocket_assets_tests.e2e.webserver import (
    RepositoryAddress,
    Webserver,
    WebserverError,
    add_dynamic_partitions,
    find_job,
    run_errors,
    running_daemon,
    running_webserver,
    wait_for_daemons,
)
from pocket_assets_tests.pdf_factory import ARTICLE_EN, ARTICLE_FR, REPO_ROOT, random_bytes_pdf, text_pdf
from pocket_assets_tests.postgres_server import DOCUMENTED_YAML, require_postgres, skip_or_fail, throwaway_postgres

pytestmark = pytest.mark.timeout(900)

PER_PDF = ("raw_pdf", "pages", "parents", "children", "table_summaries", "validated_chunks")
EXPORT = "android_export"
BUILD_JOB, EXPORT_JOB = "build_corpus", "export_corpus"
PARTITIONS_DEFINITION = "pdfs"
RANGE_SIZE = 8
BROKEN = "fr/reglement-13-illisible.pdf"  # sorts 13th: inside the second range of 8
FINISHED_BACKFILL = ("COMPLETED", "COMPLETED_SUCCESS", "COMPLETED_FAILED", "FAILED", "CANCELED")
BIN = Path(sys.executable).parent  # the venv running pytest


def artifacts() -> Path:
    """`test-artifacts/deployment/` (gitignored), or under the folder named by POCKET_ASSETS_ARTIFACTS: the
    Backfills page's answers and the daemon's and webserver's logs, for a human to read."""
    base = Path(os.environ.get("POCKET_ASSETS_ARTIFACTS") or REPO_ROOT / "test-artifacts")
    folder = base / "deployment"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def keep(name: str, answer: Any) -> None:
    (artifacts() / name).write_text(json.dumps(answer, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


@dataclass
class Deployment:
    server: Webserver
    address: RepositoryAddress
    keys: list[str]  # every PDF, in the order registered (the partitions' order)
    raw: Path
    out: Path
    root: Path
    env: dict[str, str]

    @property
    def good(self) -> list[str]:
        return [key for key in self.keys if key != BROKEN]


def make_corpus(raw: Path) -> list[str]:
    """30 short text PDFs (20 French rules, 10 English ones), each its own words, and one unreadable file."""
    for number in range(1, 21):
        opening = f"Règlement régional numéro {number}. Compétitions du comité {number}. "
        text_pdf(
            raw / "fr" / f"reglement-{number:02d}.pdf",
            [opening + ARTICLE_FR * (2 + number % 4), ARTICLE_FR * (1 + number % 3)],
        )
    for number in range(1, 11):
        opening = f"Tournament rules number {number} of the international federation. "
        text_pdf(raw / "intl" / f"rules-{number:02d}.pdf", [opening + ARTICLE_EN * (3 + number % 3)])
    random_bytes_pdf(raw / BROKEN)
    keys = discover_pdfs(raw)
    assert len(keys) == 31 and BROKEN in keys
    return keys


def deployment_env(dagster_home: Path, raw: Path, out: Path, postgres: Mapping[str, str]) -> dict[str, str]:
    """The machine's environment without any Dagster or pocket_assets setting of the caller's, and the deployment's."""
    env = {name: value for name, value in os.environ.items() if not name.startswith(("DAGSTER_", "POCKET_ASSETS_"))}
    return {
        **env,
        **postgres,
        "DAGSTER_HOME": str(dagster_home),
        "POCKET_ASSETS_RAW_DIR": str(raw),
        "POCKET_ASSETS_OUTPUT_DIR": str(out),
        "POCKET_ASSETS_RANGE_SIZE": str(RANGE_SIZE),
        "POCKET_ASSETS_WORKERS": "1",
    }


def _require_executables() -> None:
    missing = [name for name in ("dagster-daemon", "dagster-webserver", "pocket-assets") if not (BIN / name).exists()]
    if missing:
        skip_or_fail(f"the deployment test needs {', '.join(missing)} in {BIN} (pip install -e '.[dev]')")


@pytest.fixture
def postgres_server() -> Iterator[dict[str, str]]:
    """A server of its own for each test: a backfill's runs, partitions and statuses never carry over to the next."""
    with throwaway_postgres(require_postgres()) as server:
        yield server


@pytest.fixture
def deployment(postgres_server: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    _require_executables()
    root = tmp_path_factory.mktemp("deployment")
    raw, out, home = root / "raw", root / "processed", root / "dagster_home"
    keys = make_corpus(raw)
    home.mkdir()
    shutil.copy(DOCUMENTED_YAML, home / "dagster.yaml")
    env = deployment_env(home, raw, out, postgres_server)
    workspace = REPO_ROOT / "workspace.yaml"
    # Started together, as the documented yaml's header starts them.
    with (
        running_daemon(workspace, REPO_ROOT, env, root / "daemon.log", BIN / "dagster-daemon"),
        running_webserver(workspace, REPO_ROOT, env, root / "webserver.log", BIN / "dagster-webserver") as server,
    ):
        try:
            address = find_job(server, BUILD_JOB)
            add_dynamic_partitions(server, address, PARTITIONS_DEFINITION, keys)
            wait_for_daemons(server, ["QUEUED_RUN_COORDINATOR", "BACKFILL", "SENSOR"])
            yield Deployment(server, address, keys, raw, out, root, env)
        except BaseException:
            print(_logs(root))
            raise
        finally:
            for log in ("daemon.log", "webserver.log"):
                if (root / log).exists():
                    shutil.copy(root / log, artifacts() / log)


def _logs(root: Path, characters: int = 6000) -> str:
    parts = []
    for name in ("daemon.log", "webserver.log"):
        path = root / name
        text = path.read_text(errors="replace")[-characters:] if path.exists() else "(none)"
        parts.append(f"--- {name} (tail) ---\n{text}")
    return "\n".join(parts)


# --- GraphQL, as the UI sends it -----------------------------------------------------------------------------

LAUNCH_BACKFILL = """
mutation LaunchPartitionBackfill($backfillParams: LaunchBackfillParams!) {
  launchPartitionBackfill(backfillParams: $backfillParams) {
    __typename
    ... on LaunchBackfillSuccess { backfillId }
    ... on PartitionSetNotFoundError { message }
    ... on PartitionKeysNotFoundError { message }
    ... on UnauthorizedError { message }
    ... on PythonError { message }
  }
}
"""

# The Backfills page: its table row (BackfillTableFragment) and the backfill's own page
# (BackfillDetailsBackfillFragment: assetBackfillData for an asset backfill, partitionStatuses for a job one).
BACKFILL = """
query Backfill($id: String!) {
  partitionBackfillOrError(backfillId: $id) {
    __typename
    ... on PartitionBackfill {
      id
      status
      isAssetBackfill
      numPartitions
      partitionSetName
      endTimestamp
      error { message }
      assetBackfillData {
        assetBackfillStatuses {
          __typename
          ... on AssetPartitionsStatusCounts {
            assetKey { path }
            numPartitionsTargeted
            numPartitionsInProgress
            numPartitionsMaterialized
            numPartitionsFailed
          }
          ... on UnpartitionedAssetStatus { assetKey { path } inProgress materialized failed }
        }
      }
      partitionStatuses { results { partitionName runId runStatus } }
      partitionStatusCounts { runStatus count }
      runs { runId status startTime endTime tags { key value } }
    }
    ... on BackfillNotFoundError { message }
    ... on PythonError { message }
  }
}
"""

PARTITION_STATUSES = """
query Statuses($key: AssetKeyInput!) {
  assetNodeOrError(assetKey: $key) {
    ... on AssetNode {
      partitionStats { numMaterialized numMaterializing numPartitions numFailed }
      assetPartitionStatuses {
        ... on DefaultPartitionStatuses {
          materializedPartitions failedPartitions materializingPartitions unmaterializedPartitions
        }
      }
    }
  }
}
"""

RUNS_OF_JOB = """
query Runs($job: String!) {
  runsOrError(filter: {pipelineName: $job}) {
    ... on Runs { results { runId status startTime endTime tags { key value } } }
    ... on PythonError { message }
  }
}
"""

SENSOR_TICKS = """
query Ticks($selector: SensorSelector!) {
  sensorOrError(sensorSelector: $selector) {
    ... on Sensor { sensorState { status ticks(limit: 8) { status timestamp skipReason runIds error { message } } } }
  }
}
"""


def launch_backfill(server: Webserver, params: Mapping[str, Any]) -> str:
    answer = server.graphql(LAUNCH_BACKFILL, {"backfillParams": dict(params)})["launchPartitionBackfill"]
    assert answer["__typename"] == "LaunchBackfillSuccess", answer
    return answer["backfillId"]


def asset_graph_params(keys: Sequence[str]) -> dict[str, Any]:
    """The dialog's variables from the asset graph (selected assets, chosen PDFs): a pure asset backfill."""
    return {
        "tags": [],
        "assetSelection": [{"path": [asset]} for asset in (*PER_PDF, EXPORT)],
        "partitionNames": list(keys),
        "fromFailure": False,
    }


def job_page_params(address: RepositoryAddress, keys: Sequence[str]) -> dict[str, Any]:
    """The dialog's variables from Jobs > build_corpus > Materialize all: a job backfill."""
    return {
        "tags": [],
        "assetSelection": [{"path": [asset]} for asset in PER_PDF],
        "partitionNames": list(keys),
        "fromFailure": False,
        "selector": {"partitionSetName": f"{BUILD_JOB}_partition_set", "repositorySelector": address.selector()},
    }


def backfill(server: Webserver, backfill_id: str) -> dict[str, Any]:
    answer = server.graphql(BACKFILL, {"id": backfill_id})["partitionBackfillOrError"]
    assert answer["__typename"] == "PartitionBackfill", answer
    return answer


BACKFILL_STATUS = """
query Status($id: String!) { partitionBackfillOrError(backfillId: $id) { ... on PartitionBackfill { status } } }
"""


def wait_for_backfill(deployment: Deployment, backfill_id: str, timeout: float = 480) -> dict[str, Any]:
    """The Backfills page's answer once the backfill is done (polled by its status alone: the page's counts cost
    the webserver a query of every run and partition)."""
    deadline = time.monotonic() + timeout
    status = None
    while time.monotonic() < deadline:
        status = deployment.server.graphql(BACKFILL_STATUS, {"id": backfill_id})["partitionBackfillOrError"]["status"]
        if status in FINISHED_BACKFILL:
            return backfill(deployment.server, backfill_id)
        time.sleep(5)
    raise WebserverError(f"backfill {backfill_id} still {status} after {timeout:.0f} s\n{_logs(deployment.root)}")


def partition_statuses(server: Webserver, asset: str) -> tuple[dict[str, list[str]], dict[str, int]]:
    """The asset's Partitions tab (each PDF's status) and its badge's counts (the asset graph and page)."""
    node = server.graphql(PARTITION_STATUSES, {"key": {"path": [asset]}})["assetNodeOrError"]
    return node["assetPartitionStatuses"], node["partitionStats"]


def runs_of_job(server: Webserver, job: str) -> list[dict[str, Any]]:
    return server.graphql(RUNS_OF_JOB, {"job": job})["runsOrError"]["results"]


def export_sensor_ticks(deployment: Deployment) -> list[dict[str, Any]]:
    selector = {**deployment.address.selector(), "sensorName": "corpus_export_sensor"}
    answer = deployment.server.graphql(SENSOR_TICKS, {"selector": selector})["sensorOrError"]
    return answer["sensorState"]["ticks"]


def wait_for_export_after(deployment: Deployment, moment: float, timeout: float = 300) -> dict[str, Any]:
    """The export run started after `moment` (launched by the sensor), once finished."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        later = [run for run in runs_of_job(deployment.server, EXPORT_JOB) if (run["startTime"] or math.inf) > moment]
        finished = [run for run in later if run["status"] in ("SUCCESS", "FAILURE", "CANCELED")]
        if finished:
            return finished[0]
        time.sleep(5)
    raise WebserverError(
        f"no export ran after the backfill within {timeout:.0f} s; export sensor's last ticks: "
        f"{export_sensor_ticks(deployment)}\n{_logs(deployment.root)}"
    )


def tags_of(run: Mapping[str, Any]) -> dict[str, str]:
    return {tag["key"]: tag["value"] for tag in run["tags"]}


def range_of(run: Mapping[str, Any], keys: Sequence[str]) -> list[str]:
    tags = tags_of(run)
    start, end = tags["dagster/asset_partition_range_start"], tags["dagster/asset_partition_range_end"]
    return list(keys[keys.index(start) : keys.index(end) + 1])


def assert_partitions_exact(deployment: Deployment, built: Sequence[str]) -> None:
    """(b) For each per-PDF asset, Dagster's own partition statuses: of the PDFs `built`, the broken one failed and
    every other materialized; the PDFs not built are unmaterialized; the badge counts agree."""
    good = [key for key in built if key != BROKEN]
    for asset in PER_PDF:
        statuses, badge = partition_statuses(deployment.server, asset)
        assert {
            "failed": statuses["failedPartitions"],
            "materialized": sorted(statuses["materializedPartitions"]),
            "materializing": statuses["materializingPartitions"],
            "unmaterialized": sorted(statuses["unmaterializedPartitions"]),
        } == {
            "failed": [BROKEN],
            "materialized": sorted(good),
            "materializing": [],
            # Dagster's "unmaterialized": every partition without a materialization, the failed one included.
            "unmaterialized": sorted(key for key in deployment.keys if key not in good),
        }, asset
        total = len(deployment.keys)
        assert badge == {
            "numMaterialized": len(good),
            "numMaterializing": 0,
            "numPartitions": total,
            "numFailed": 1,
        }, (asset, badge)


def assert_failed_for_the_broken_pdf_only(deployment: Deployment, run_id: str) -> None:
    """The failed run's errors (its step's `Failure`, the PDF's own error line) name the broken PDF, no other."""
    errors = run_errors(deployment.server, run_id)
    assert BROKEN in errors, errors
    named = [key for key in deployment.good if key in errors]
    assert named == [], f"run {run_id} failed naming good PDFs {named}:\n{errors}"


# --- the exports ------------------------------------------------------------------------------------------------


def exported(out: Path) -> dict[str, Any]:
    """Every export file, the build's timestamps taken out (`metadata.generated`, and the redirects' previous one)."""
    files: dict[str, Any] = {}
    for path in sorted(out.glob("chunks_*")) + sorted(out.glob("id_redirects_*")):
        if path.suffix == ".json":
            document = json.loads(path.read_text(encoding="utf-8"))
            document["metadata"].pop("generated")
            document["metadata"].pop("previous_generated", None)
            files[path.name] = document
        else:
            files[path.name] = path.read_text(encoding="utf-8")
    return files


def assert_every_good_pdf_once(out: Path, good: Sequence[str]) -> None:
    for corpus in ("fr", "intl"):
        expected = sorted(key.split("/", 1)[1] for key in good if key.startswith(f"{corpus}/"))
        document = json.loads((out / f"chunks_mode_b_{corpus}.json").read_text(encoding="utf-8"))
        ids = Counter(chunk["id"] for chunk in document["chunks"])
        assert max(ids.values()) == 1, f"{corpus}: ids exported twice: {[i for i, n in ids.items() if n > 1][:5]}"
        assert sorted({chunk["source"] for chunk in document["chunks"]}) == expected, corpus
        lines = parse_sdk_file(out / f"chunks_{corpus}.txt", has_context=True)
        assert sorted({line.source for line in lines}) == expected, corpus
        left_out = [entry["pdf"] for entry in document["metadata"]["left_out"]]
        assert left_out == ([BROKEN] if BROKEN.startswith(f"{corpus}/") else []), (
            corpus,
            document["metadata"]["left_out"],
        )
        assert document["metadata"]["stale"] == [], corpus


def start_reference_build(deployment: Deployment) -> tuple[subprocess.Popen, Path]:
    """`pocket-assets build` on the same folder into another output folder and DAGSTER_HOME (a local instance),
    with the default range size (one run of the 31 PDFs): the exports do not depend on how PDFs are grouped."""
    reference = deployment.root / "reference"
    (reference / "dagster_home").mkdir(parents=True)
    env = {**deployment.env, "DAGSTER_HOME": str(reference / "dagster_home")}
    for name in ("DAGSTER_PG_HOST", "DAGSTER_PG_PORT", "DAGSTER_PG_DB", "DAGSTER_PG_USERNAME", "DAGSTER_PG_PASSWORD"):
        env.pop(name)
    env.pop("POCKET_ASSETS_RANGE_SIZE")
    command = [
        str(BIN / "pocket-assets"),
        "build",
        "--raw-dir",
        str(deployment.raw),
        "--output-dir",
        str(reference / "out"),
    ]
    log = open(reference / "build.log", "wb")
    process = subprocess.Popen(command, cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    log.close()
    return process, reference


# --- the tests --------------------------------------------------------------------------------------------------


def test_asset_backfill_from_the_asset_graph(deployment: Deployment) -> None:
    server, keys = deployment.server, deployment.keys
    backfill_id = launch_backfill(server, asset_graph_params(keys))
    # The command line's build of the same folder, while the backfill daemon takes up the backfill (every 30 s).
    reference_build, reference = start_reference_build(deployment)
    try:
        done = wait_for_backfill(deployment, backfill_id)
        keep("asset_backfill.json", done)
        # (a) one run per range of the backfill policy, at least two of them at the same time.
        runs = done["runs"]
        ranges = sorted((range_of(run, keys) for run in runs), key=lambda pdfs: keys.index(pdfs[0]))
        assert ranges == [keys[i : i + RANGE_SIZE] for i in range(0, len(keys), RANGE_SIZE)], ranges
        failed = [run for run in runs if run["status"] == "FAILURE"]
        assert len(failed) == 1 and BROKEN in range_of(failed[0], keys), [
            (r["status"], range_of(r, keys)) for r in runs
        ]
        assert all(run["status"] == "SUCCESS" for run in runs if run is not failed[0])
        assert_failed_for_the_broken_pdf_only(deployment, failed[0]["runId"])
        overlapping = [
            (a["runId"], b["runId"])
            for i, a in enumerate(runs)
            for b in runs[i + 1 :]
            if max(a["startTime"], b["startTime"]) < min(a["endTime"], b["endTime"])
        ]
        assert overlapping, [(run["startTime"], run["endTime"]) for run in runs]

        # (b) exactly the broken PDF failed, for every per-PDF asset.
        assert_partitions_exact(deployment, keys)

        # (c) the Backfills page: its status and per-asset counts agree with the partitions.
        assert done["isAssetBackfill"] is True and done["status"] == "COMPLETED_FAILED", done["status"]
        assert done["numPartitions"] == len(keys)
        counts = {tuple(s["assetKey"]["path"]): s for s in done["assetBackfillData"]["assetBackfillStatuses"]}
        for asset in PER_PDF:
            assert {name: counts[(asset,)][name] for name in counts[(asset,)] if name.startswith("num")} == {
                "numPartitionsTargeted": len(keys),
                "numPartitionsInProgress": 0,
                "numPartitionsMaterialized": len(keys) - 1,
                "numPartitionsFailed": 1,
            }, (asset, counts[(asset,)])
        # Dagster runs nothing downstream of a failure: the export is failed in the backfill, never run by it.
        assert counts[(EXPORT,)] == {
            "__typename": "UnpartitionedAssetStatus",
            "assetKey": {"path": [EXPORT]},
            "inProgress": False,
            "materialized": False,
            "failed": True,
        }, counts[(EXPORT,)]
        assert done["partitionStatuses"] is None and done["partitionStatusCounts"] == []

        # (d) the export sensor exports once every run of the backfill has finished: once, after them. (The
        # backfill itself is marked done by the daemon's next pass, which may come after that export.)
        export = wait_for_export_after(deployment, max(run["endTime"] for run in runs))
        assert export["status"] == "SUCCESS", export
        assert tags_of(export).get("dagster/sensor_name") == "corpus_export_sensor", export["tags"]
        exports = [(run["runId"], run["status"], run["startTime"]) for run in runs_of_job(server, EXPORT_JOB)]
        assert exports == [(export["runId"], "SUCCESS", export["startTime"])], (
            f"one export, after the backfill: {exports}"
        )
        assert_every_good_pdf_once(deployment.out, deployment.good)
    except BaseException:
        reference_build.kill()
        raise
    finally:
        reference_build.wait(timeout=300)
    build_log = (reference / "build.log").read_text(errors="replace")
    assert reference_build.returncode == 1, build_log  # one PDF failed: the build says so
    assert f"{BROKEN}: FAILED" in build_log, build_log
    assert exported(deployment.out) == exported(reference / "out")


def test_job_backfill_from_the_job_page(deployment: Deployment) -> None:
    """Jobs > build_corpus > Materialize all, two ranges chosen (16 PDFs, the broken one in the second)."""
    server, keys = deployment.server, deployment.keys
    chosen = keys[: 2 * RANGE_SIZE]
    backfill_id = launch_backfill(server, job_page_params(deployment.address, chosen))
    done = wait_for_backfill(deployment, backfill_id)
    keep("job_backfill.json", done)

    runs = done["runs"]
    assert sorted((range_of(run, keys) for run in runs), key=lambda pdfs: keys.index(pdfs[0])) == [
        chosen[:RANGE_SIZE],
        chosen[RANGE_SIZE:],
    ]
    (failed,) = [run for run in runs if run["status"] == "FAILURE"]
    failed_range = range_of(failed, keys)
    assert BROKEN in failed_range
    assert_failed_for_the_broken_pdf_only(deployment, failed["runId"])

    # The partitions themselves are exact on this route too (the PDFs not chosen were never built).
    assert_partitions_exact(deployment, chosen)

    # The Backfills page of a job backfill: its status, and each PDF counted by the status of its range's run.
    assert done["isAssetBackfill"] is False and done["assetBackfillData"] is None
    assert done["status"] == "COMPLETED_FAILED" and done["numPartitions"] == len(chosen)
    by_pdf = {result["partitionName"]: result["runStatus"] for result in done["partitionStatuses"]["results"]}
    assert by_pdf == {key: "FAILURE" if key in failed_range else "SUCCESS" for key in chosen}, by_pdf
    assert sorted((c["runStatus"], c["count"]) for c in done["partitionStatusCounts"]) == [
        ("FAILURE", RANGE_SIZE),
        ("SUCCESS", RANGE_SIZE),
    ], done["partitionStatusCounts"]
