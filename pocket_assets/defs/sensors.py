"""Watch the raw folder: new PDF -> partition + run, changed sha256 -> run, removed -> partition deleted."""

import dataclasses
import json

from dagster import SensorEvaluationContext, SensorResult, sensor

from pocket_assets.runstate.corpus_scan import FileState, scan_corpus
from pocket_assets.defs.jobs import build_corpus_job
from pocket_assets.defs.partition_ranges import run_requests_for
from pocket_assets.defs.partitions import pdf_partitions
from pocket_assets.defs.resources import CorpusPaths


@sensor(
    job=build_corpus_job,
    minimum_interval_seconds=30,
    description="Watches the raw PDF folder: a new PDF becomes a partition and is built, a PDF whose sha256 "
    "changed is rebuilt, a removed PDF's partition and stage files are deleted. New PDFs found together "
    "are built in one run.",
)
def raw_pdf_sensor(context: SensorEvaluationContext, paths: CorpusPaths) -> SensorResult:
    known = {key: FileState(**state) for key, state in json.loads(context.cursor or "{}").items()}
    changes = scan_corpus(paths.raw_path, known, paths.corpus_names)
    instance_keys = context.instance.get_dynamic_partitions(pdf_partitions.name)
    registered = [key for key in instance_keys if key in changes.states]
    removed = sorted(set(changes.removed) | {key for key in instance_keys if key not in changes.states})
    new_partitions = sorted(key for key in changes.states if key not in registered)
    for key in removed:
        paths.store().delete_partition(key)
    to_build = {key: changes.states[key].sha256 for key in sorted({*changes.added, *changes.changed, *new_partitions})}
    requests = []
    if new_partitions:
        requests.append(pdf_partitions.build_add_request(new_partitions))
    if removed:
        requests.append(pdf_partitions.build_delete_request(removed))
    cursor = json.dumps({key: dataclasses.asdict(state) for key, state in changes.states.items()}, sort_keys=True)
    return SensorResult(
        run_requests=run_requests_for(registered + new_partitions, to_build),
        dynamic_partitions_requests=requests,
        cursor=cursor,
    )
