"""What Dagster says of each PDF (through the webserver's GraphQL, as the UI asks) is what `pocket-assets stale` says.

A real build of three PDFs with the command line, then two changes a maintainer makes: a setting
(`CHUNK_SIZE_TOKENS=300`, the code location started again with it) and a PDF edited in the folder
(observed by `pdf_folder_sensor`, as the daemon runs it). After each, the PDFs that Dagster shows
as needing a build (a partition of any stage stale, missing or failed) are exactly those the
command line lists, and Dagster's causes say why (a new code version; a new version of the file).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest
from dagster import AssetObservation, DagsterInstance, build_sensor_context

from pocket_assets.defs.resources import CorpusPaths
from pocket_assets.defs.sensors import pdf_folder_sensor
from pocket_assets.stages.registry import STAGES
from pocket_assets_tests.e2e.webserver import running_webserver, write_instance_yaml
from pocket_assets_tests.pdf_factory import ARTICLE_FR, REPO_ROOT, small_corpus, text_pdf

pytestmark = pytest.mark.timeout(600)

STALENESS = """
query Staleness($key: AssetKeyInput!, $partitions: [String!]!) {
  assetNodeOrError(assetKey: $key) {
    __typename
    ... on AssetNode {
      staleStatusByPartition(partitions: $partitions)
      staleCausesByPartition(partitions: $partitions) { reason category }
      assetPartitionStatuses { ... on DefaultPartitionStatuses { materializedPartitions failedPartitions } }
    }
  }
}
"""


def _cli(env: Mapping[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "pocket_assets.cli", *args], env=dict(env), cwd=REPO_ROOT, capture_output=True, text=True
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return done.stdout


def _listed_stale(env: Mapping[str, str], raw: Path, out: Path) -> set[str]:
    """The PDFs `pocket-assets stale` lists (its lines `key: reason`)."""
    printed = _cli(env, "stale", "--raw-dir", str(raw), "--output-dir", str(out))
    return {line.split(": ", 1)[0] for line in printed.splitlines() if line.startswith(("fr/", "intl/"))}


def _dagster_verdicts(env: Mapping[str, str], root: Path, keys: list[str]) -> dict[str, list[str]]:
    """Per PDF, what Dagster says needs a build: `stage: STALE (causes)`, `stage: MISSING` or `stage: failed`."""
    verdicts: dict[str, list[str]] = {key: [] for key in keys}
    with running_webserver(
        workspace=REPO_ROOT / "workspace.yaml",
        cwd=REPO_ROOT,
        env=env,
        log_path=root / "webserver.log",
        executable=Path(sys.executable).parent / "dagster-webserver",
    ) as server:
        for stage in STAGES:
            node = server.graphql(STALENESS, {"key": {"path": [stage.name]}, "partitions": keys})["assetNodeOrError"]
            failed = set(node["assetPartitionStatuses"]["failedPartitions"])
            for key, status, causes in zip(keys, node["staleStatusByPartition"], node["staleCausesByPartition"]):
                if key in failed:
                    verdicts[key].append(f"{stage.name}: failed")
                elif status != "FRESH":
                    verdicts[key].append(f"{stage.name}: {status} ({'; '.join(c['reason'] for c in causes)})")
    return verdicts


def test_dagster_and_the_command_line_agree_pdf_by_pdf(tmp_path: Path) -> None:
    raw, out, home = tmp_path / "raw", tmp_path / "out", tmp_path / "home"
    keys = sorted([*small_corpus(raw), "fr/statuts.pdf"])
    text_pdf(raw / "fr" / "statuts.pdf", [ARTICLE_FR * 3])
    write_instance_yaml(home)
    env = {**os.environ, "DAGSTER_HOME": str(home), "POCKET_ASSETS_RAW_DIR": str(raw), "POCKET_ASSETS_OUTPUT_DIR": str(out)}
    for variable in ("CHUNK_SIZE_TOKENS", "CHUNK_OVERLAP_TOKENS", "EMBED_MAX_TOKENS", "POCKET_ASSETS_DEVICE_PRESET"):
        env.pop(variable, None)
    _cli(env, "build", "--raw-dir", str(raw), "--output-dir", str(out))
    assert _listed_stale(env, raw, out) == set()
    assert _dagster_verdicts(env, tmp_path, keys) == {key: [] for key in keys}, "a fresh build: nothing to build"

    smaller = {**env, "CHUNK_SIZE_TOKENS": "300"}
    assert _listed_stale(smaller, raw, out) == set(keys)
    verdicts = _dagster_verdicts(smaller, tmp_path, keys)
    assert {key for key, said in verdicts.items() if said} == set(keys)
    assert all(any("parents: STALE (has a new code version)" in line for line in said) for said in verdicts.values())

    text_pdf(raw / "fr" / "statuts.pdf", [ARTICLE_FR * 3, "Un article ajouté, qui change le fichier."])
    os.environ["DAGSTER_HOME"] = str(home)  # the sensor's tick runs here, against the same instance
    try:
        with DagsterInstance.get() as instance:
            paths = CorpusPaths(raw_dir=str(raw), output_dir=str(out))
            with build_sensor_context(instance=instance, resources={"paths": paths}) as context:
                tick = pdf_folder_sensor(context)
            for event in tick.asset_events:  # as the daemon stores a sensor's events
                if isinstance(event, AssetObservation):
                    instance.report_runless_asset_event(event)
    finally:
        del os.environ["DAGSTER_HOME"]
    assert _listed_stale(env, raw, out) == {"fr/statuts.pdf"}
    verdicts = _dagster_verdicts(env, tmp_path, keys)
    assert {key for key, said in verdicts.items() if said} == {"fr/statuts.pdf"}
    assert verdicts["fr/statuts.pdf"] == ["raw_pdf: STALE (has a new data version)"], "pdf_file has a new data version"
