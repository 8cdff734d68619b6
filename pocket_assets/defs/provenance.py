"""Each PDF's materializations carry what Dagster's staleness reads, so the UI says which PDFs are stale and why.

Dagster calls a partition stale when the code version its latest materialization recorded is not
its asset's code version now ("has a new code version"), or when an upstream partition got a new
data version since ("has a new dependency data version"). It reads both from tags on the
materialization event. A run over a range of partitions that returns one output per asset would
give every partition the same data version (dagster-io/dagster#34013), so the per-PDF step
reports each PDF's materializations itself, with the tags Dagster's own outputs carry:

- `dagster/code_version`: the stage's version under the run's settings (the asset's code version
  is the same function of the environment's settings, computed when the code location loads);
- `dagster/data_version`: for `raw_pdf` the file's sha256, for the others a digest of it and the
  stage's version (a build is deterministic: the same file and settings give the same bytes);
- `dagster/input_data_version/<upstream>` and `dagster/input_event_pointer/<upstream>`: the
  upstream partition's data version and the storage id of its latest event.

`pdf_file`, an external asset upstream of `raw_pdf`, is the file in the raw folder: observed with
its sha256 as data version (by `pdf_folder_sensor`, and by a build that finds the file changed
since the last observation), so an edited or replaced PDF makes its `raw_pdf` stale.

The tag names are the strings Dagster writes on its own materializations (and accepts on ours:
`AssetMaterialization` validates other tags, not these); they are not exported as constants.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from dagster import AssetKey, AssetObservation, AssetRecordsFilter, DagsterInstance

from pocket_assets.defs.assets.pdf_file import PDF_FILE
from pocket_assets.stages.registry import RAW_PDF, Stage

CODE_VERSION_TAG = "dagster/code_version"
DATA_VERSION_TAG = "dagster/data_version"
INPUT_DATA_VERSION_PREFIX = "dagster/input_data_version/"
INPUT_EVENT_POINTER_PREFIX = "dagster/input_event_pointer/"
NO_EVENT = "NULL"  # Dagster's pointer for an input that has no event yet

def pdf_file_observation(key: str, sha256: str) -> AssetObservation:
    return AssetObservation(PDF_FILE, partition=key, tags={DATA_VERSION_TAG: sha256}, metadata={"sha256": sha256})


def observed_sha256(instance: DagsterInstance, key: str) -> str | None:
    """The sha256 `pdf_file` was last observed with for this PDF, if any."""
    records = instance.fetch_observations(AssetRecordsFilter(asset_key=AssetKey(PDF_FILE), asset_partitions=[key]), limit=1)
    if not records.records:
        return None
    observation = records.records[0].event_log_entry.asset_observation
    return observation.tags.get(DATA_VERSION_TAG) if observation is not None else None


def data_version(stage: Stage, sha256: str, version: str | None) -> str:
    """What a stage's output of this file under this version is: the file's own sha256 for `raw_pdf`."""
    if stage is RAW_PDF:
        return sha256
    return hashlib.sha256(f"{stage.name}\0{sha256}\0{version or ''}".encode()).hexdigest()[:24]


def provenance_tags(
    instance: DagsterInstance,
    stage: Stage,
    key: str,
    sha256: str,
    versions: Mapping[Stage, str | None],
    run_id: str,
) -> dict[str, str]:
    """The tags of one PDF's materialization of `stage` (see the module docstring). The upstream partition's
    latest event is looked up now: the step yields each PDF's events in lineage order, so it is the one just
    stored when the upstream stage was built in the same run."""
    version = versions.get(stage)
    tags = {CODE_VERSION_TAG: version or run_id, DATA_VERSION_TAG: data_version(stage, sha256, version)}
    upstreams = [(PDF_FILE, sha256)] if stage is RAW_PDF else [
        (upstream.name, data_version(upstream, sha256, versions.get(upstream))) for upstream in stage.upstream
    ]
    for name, upstream_version in upstreams:
        records_filter = AssetRecordsFilter(asset_key=AssetKey(name), asset_partitions=[key])
        fetch = instance.fetch_observations if name == PDF_FILE else instance.fetch_materializations
        records = fetch(records_filter, limit=1).records
        tags[INPUT_DATA_VERSION_PREFIX + name] = upstream_version
        tags[INPUT_EVENT_POINTER_PREFIX + name] = str(records[0].storage_id) if records else NO_EVENT
    return tags
