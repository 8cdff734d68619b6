"""Watch the raw folder: new PDF -> partition + run, changed sha256 -> run, removed -> partition deleted.

The first tick has no cursor, so every PDF looks new; it builds only the PDFs
whose stages are missing or stale, so turning the sensor on over an instance
that already holds fresh builds launches nothing.
"""

from dagster import SensorEvaluationContext, SensorResult, sensor

from pocket_assets.defs.scan_cursor import decode_states, dumps, encode_states, loads
from pocket_assets.defs.staleness import pdf_staleness
from pocket_assets.runstate.corpus_scan import scan_corpus
from pocket_assets.defs.jobs import build_corpus_job
from pocket_assets.defs.partition_ranges import run_requests_for
from pocket_assets.defs.partitions import pdf_partitions
from pocket_assets.defs.resources import CorpusPaths


@sensor(
    job=build_corpus_job,
    minimum_interval_seconds=30,
    description="Watches the raw PDF folder: a new PDF becomes a partition and is built, a PDF whose sha256 "
    "changed is rebuilt, a removed PDF's partition and stage files are deleted. New PDFs found together "
    "are built in one run. Its first tick builds only what is missing or stale. Off by default.",
)
def raw_pdf_sensor(context: SensorEvaluationContext, paths: CorpusPaths) -> SensorResult:
    known = decode_states(loads(context.cursor))
    changes = scan_corpus(paths.raw_path, known, paths.corpus_names)
    instance_keys = context.instance.get_dynamic_partitions(pdf_partitions.name)
    registered = [key for key in instance_keys if key in changes.states]
    removed = sorted(set(changes.removed) | {key for key in instance_keys if key not in changes.states})
    new_partitions = sorted(key for key in changes.states if key not in registered)
    for key in removed:
        paths.store().delete_partition(key)
    candidates = sorted({*changes.added, *changes.changed, *new_partitions})
    if context.cursor is None:
        fresh = pdf_staleness(paths, {key: changes.states[key].sha256 for key in candidates})
        candidates = [verdict.partition_key for verdict in fresh if verdict.stale]
    to_build = {key: changes.states[key].sha256 for key in candidates}
    requests = []
    if new_partitions:
        requests.append(pdf_partitions.build_add_request(new_partitions))
    if removed:
        requests.append(pdf_partitions.build_delete_request(removed))
    return SensorResult(
        run_requests=run_requests_for(registered + new_partitions, to_build),
        dynamic_partitions_requests=requests,
        cursor=dumps(encode_states(changes.states)),
    )
