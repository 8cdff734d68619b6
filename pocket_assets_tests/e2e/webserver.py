"""A `dagster-webserver` subprocess on a loopback port, driven through its GraphQL API (and a `dagster-daemon`).

The browser test needs what a maintainer has: a webserver over a real instance
with real runs. Runs are launched with `launchRun` (not a backfill) so that no
daemon is needed: the instance's `DefaultRunCoordinator` hands the run straight
to the default launcher, which executes it in a subprocess.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RANGE_START_TAG = "dagster/asset_partition_range_start"
RANGE_END_TAG = "dagster/asset_partition_range_end"

# No telemetry, and runs start at once without a daemon.
INSTANCE_YAML = """\
telemetry:
  enabled: false
run_coordinator:
  module: dagster._core.run_coordinator
  class: DefaultRunCoordinator
"""

# What `dagster dev` has: runs wait in the instance's queue until the daemon starts them (backfills and sensors
# need the daemon anyway, and the backfill dialog warns about launching backfills without the queue).
QUEUED_INSTANCE_YAML = """\
telemetry:
  enabled: false
"""

FINISHED_RUN_STATUSES = ("SUCCESS", "FAILURE", "CANCELED")


class WebserverError(AssertionError):
    """The webserver did not start, refused a request, or a run did not succeed."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def write_instance_yaml(dagster_home: Path, queued: bool = False) -> None:
    """The instance's dagster.yaml: runs start at once, or (`queued`) through the daemon's run queue."""
    dagster_home.mkdir(parents=True, exist_ok=True)
    (dagster_home / "dagster.yaml").write_text(QUEUED_INSTANCE_YAML if queued else INSTANCE_YAML)


@dataclass(frozen=True)
class Webserver:
    """A running webserver: its base URL, the repository it serves and its log file."""

    url: str
    log_path: Path

    def graphql(self, query: str, variables: Mapping[str, Any] | None = None, timeout: float = 60) -> dict[str, Any]:
        body = json.dumps({"query": query, "variables": dict(variables or {})}).encode()
        request = urllib.request.Request(
            f"{self.url}/graphql", data=body, headers={"Content-Type": "application/json"}, method="POST"
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            answer = json.loads(response.read())
        if answer.get("errors"):
            raise WebserverError(f"GraphQL errors: {answer['errors']}")
        return answer["data"]

    def log_tail(self, characters: int = 4000) -> str:
        return self.log_path.read_text(errors="replace")[-characters:] if self.log_path.exists() else ""


@contextmanager
def running_webserver(
    workspace: Path, cwd: Path, env: Mapping[str, str], log_path: Path, executable: Path, start_timeout: float = 120
) -> Iterator[Webserver]:
    """Start the webserver, wait until it answers, and always stop it (and the runs it spawned)."""
    port = free_port()
    command = [str(executable), "-h", "127.0.0.1", "-p", str(port), "-w", str(workspace)]
    with open(log_path, "wb") as log:
        # Its own process group: teardown stops the code server and run workers with it.
        process = subprocess.Popen(
            command, cwd=cwd, env=dict(env), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    server = Webserver(url=f"http://127.0.0.1:{port}", log_path=log_path)
    try:
        _wait_until_answering(server, process, start_timeout)
        yield server
    finally:
        _stop_process_group(process)


@contextmanager
def running_daemon(workspace: Path, cwd: Path, env: Mapping[str, str], log_path: Path, executable: Path) -> Iterator[None]:
    """`dagster-daemon run` (run queue, backfills, sensors, schedules) in its own process group, always stopped
    with the code server and the runs it launched."""
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [str(executable), "run", "-w", str(workspace)],
            cwd=cwd,
            env=dict(env),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield
    finally:
        _stop_process_group(process)


DAEMON_HEALTH_QUERY = """
{ instance { daemonHealth { allDaemonStatuses { daemonType required healthy } } } }
"""


def wait_for_daemons(server: Webserver, daemon_types: Sequence[str], timeout: float = 120) -> None:
    """Until each named daemon (QUEUED_RUN_COORDINATOR, BACKFILL, SENSOR, ...) reports healthy, as the UI's
    Deployment > Daemons page shows them."""
    deadline = time.monotonic() + timeout
    statuses: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        statuses = server.graphql(DAEMON_HEALTH_QUERY)["instance"]["daemonHealth"]["allDaemonStatuses"]
        healthy = {status["daemonType"] for status in statuses if status["healthy"]}
        if set(daemon_types) <= healthy:
            return
        time.sleep(2)
    raise WebserverError(f"daemons not healthy after {timeout:.0f} s: {statuses}")


def _wait_until_answering(server: Webserver, process: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise WebserverError(f"dagster-webserver exited with {process.returncode}:\n{server.log_tail()}")
        try:
            with urllib.request.urlopen(f"{server.url}/server_info", timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(1)
    raise WebserverError(f"dagster-webserver did not answer /server_info within {timeout:.0f} s:\n{server.log_tail()}")


def _stop_process_group(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


@dataclass(frozen=True)
class RepositoryAddress:
    """Where a job lives: the code location (named by workspace.yaml) and the repository."""

    location: str
    repository: str

    def selector(self) -> dict[str, str]:
        return {"repositoryLocationName": self.location, "repositoryName": self.repository}


WORKSPACE_QUERY = """
{
  workspaceOrError {
    __typename
    ... on Workspace {
      locationEntries {
        name
        loadStatus
        locationOrLoadError {
          __typename
          ... on RepositoryLocation { repositories { name jobs { name } } }
          ... on PythonError { message }
        }
      }
    }
    ... on PythonError { message }
  }
}
"""


def find_job(server: Webserver, job_name: str, timeout: float = 120) -> RepositoryAddress:
    """The repository holding `job_name`, once its code location has loaded."""
    deadline = time.monotonic() + timeout
    last_seen: Any = None
    while time.monotonic() < deadline:
        workspace = server.graphql(WORKSPACE_QUERY)["workspaceOrError"]
        last_seen = workspace
        entries = workspace.get("locationEntries", [])
        for entry in entries:
            loaded = entry["locationOrLoadError"] or {}
            if loaded.get("__typename") == "PythonError":
                raise WebserverError(f"code location {entry['name']} failed to load: {loaded['message']}")
            for repository in loaded.get("repositories", []):
                if any(job["name"] == job_name for job in repository["jobs"]):
                    return RepositoryAddress(location=entry["name"], repository=repository["name"])
        time.sleep(1)
    raise WebserverError(f"no loaded code location has job {job_name!r} after {timeout:.0f} s: {last_seen}")


ADD_PARTITION_MUTATION = """
mutation AddPartition($repository: RepositorySelector!, $definition: String!, $key: String!) {
  addDynamicPartition(repositorySelector: $repository, partitionsDefName: $definition, partitionKey: $key) {
    __typename
    ... on AddDynamicPartitionSuccess { partitionKey }
    ... on DuplicateDynamicPartitionError { partitionName }
    ... on UnauthorizedError { message }
    ... on PythonError { message }
  }
}
"""


def add_dynamic_partitions(server: Webserver, address: RepositoryAddress, definition: str, keys: Sequence[str]) -> None:
    for key in keys:
        answer = server.graphql(
            ADD_PARTITION_MUTATION, {"repository": address.selector(), "definition": definition, "key": key}
        )["addDynamicPartition"]
        if answer["__typename"] not in ("AddDynamicPartitionSuccess", "DuplicateDynamicPartitionError"):
            raise WebserverError(f"could not add partition {key!r} to {definition!r}: {answer}")


LAUNCH_RUN_MUTATION = """
mutation Launch($params: ExecutionParams!) {
  launchRun(executionParams: $params) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on PythonError { message }
    ... on RunConfigValidationInvalid { errors { message } }
    ... on InvalidSubsetError { message }
    ... on PipelineNotFoundError { message }
    ... on UnauthorizedError { message }
  }
}
"""


def launch_partition_range_run(
    server: Webserver, address: RepositoryAddress, job_name: str, first_key: str, last_key: str
) -> str:
    """One run of the job over a contiguous range of partitions (what a single-run backfill makes)."""
    params = {
        "selector": {**address.selector(), "jobName": job_name},
        "runConfigData": {},
        "executionMetadata": {
            "tags": [{"key": RANGE_START_TAG, "value": first_key}, {"key": RANGE_END_TAG, "value": last_key}]
        },
    }
    answer = server.graphql(LAUNCH_RUN_MUTATION, {"params": params})["launchRun"]
    if answer["__typename"] != "LaunchRunSuccess":
        raise WebserverError(f"launchRun of {job_name} refused: {answer}")
    return answer["run"]["runId"]


RUN_STATUS_QUERY = """
query Status($runId: ID!) {
  runOrError(runId: $runId) { __typename ... on Run { status } ... on PythonError { message } }
}
"""

RUN_ERRORS_QUERY = """
query Errors($runId: ID!) {
  logsForRun(runId: $runId, limit: 5000) {
    ... on EventConnection {
      events {
        __typename
        ... on MessageEvent { message level stepKey }
        ... on ExecutionStepFailureEvent { error { message } }
        ... on RunFailureEvent { pipelineFailureError: error { message } }
      }
    }
  }
}
"""


def wait_for_run_end(server: Webserver, run_id: str, timeout: float = 360) -> str:
    """Poll the run until it finishes; returns its status (SUCCESS, FAILURE or CANCELED)."""
    deadline = time.monotonic() + timeout
    status = "UNKNOWN"
    while time.monotonic() < deadline:
        answer = server.graphql(RUN_STATUS_QUERY, {"runId": run_id})["runOrError"]
        status = answer.get("status", answer["__typename"])
        if status in FINISHED_RUN_STATUSES:
            return status
        time.sleep(2)
    raise WebserverError(f"run {run_id} still {status} after {timeout:.0f} s:\n{run_errors(server, run_id)}")


def run_errors(server: Webserver, run_id: str) -> str:
    events = server.graphql(RUN_ERRORS_QUERY, {"runId": run_id})["logsForRun"].get("events", [])
    lines = []
    for event in events:
        if event.get("level") not in ("ERROR", "CRITICAL"):
            continue
        error = event.get("error") or event.get("pipelineFailureError") or {}
        lines.append(f"[{event.get('stepKey') or 'run'}] {event.get('message', '')} {error.get('message', '')}".strip())
    return "\n".join(lines) or "(no error events)"


def mark_first_visit_done(server: Webserver) -> None:
    """Dismiss the community sign-up dialog for good: it covers the page and loads dagster.io in an iframe."""
    server.graphql("mutation { setNuxSeen }")
