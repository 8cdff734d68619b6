"""The deployment's watchers: the raw folder (`raw_pdf_sensor`) and the export (`corpus_export_sensor`).

`raw_pdf_sensor` watches the deployment's raw folder: a new PDF becomes a partition and is
built, a changed one (sha256) is rebuilt, a removed one's partition and stage files are deleted
and the export is requested in the same tick. Its first tick has no cursor, so every PDF looks
new; it builds only those missing or stale, so turning it on over fresh builds launches nothing.

`corpus_export_sensor` runs the export once the PDFs of a build or a backfill are done: when no
run of the per-PDF stages or of the export is queued or running, and the stage files no longer
match what the last export was made from (`export.fingerprint`). Before any PDF was built and
any export made (a deployment's first start) there is nothing to export, and it waits.
"""

from __future__ import annotations

from dagster import (
    AssetKey,
    DagsterRunStatus,
    DefaultSensorStatus,
    RunRequest,
    RunsFilter,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    sensor,
)

from pocket_assets.defs.jobs import BUILD_CORPUS, build_corpus_job, export_corpus_job
from pocket_assets.defs.partition_sync import forget_pdfs, vanished_pdfs
from pocket_assets.defs.partitions import pdf_partitions, range_size
from pocket_assets.defs.ranges import run_requests
from pocket_assets.defs.resources import CorpusPaths, SettingResources
from pocket_assets.defs.scan_cursor import decode_states, dumps, encode_states, loads
from pocket_assets.export.fingerprint import export_fingerprint, exported_fingerprint
from pocket_assets.stages.corpus_scan import scan_corpus
from pocket_assets.stages.duplicates import duplicate_pdfs
from pocket_assets.stages.registry import STAGES, VALIDATED_CHUNKS

# Runs not finished yet, whatever launched them (a backfill from the asset graph runs under another job name).
_UNFINISHED = RunsFilter(
    statuses=[
        DagsterRunStatus.QUEUED,
        DagsterRunStatus.NOT_STARTED,
        DagsterRunStatus.STARTING,
        DagsterRunStatus.STARTED,
        DagsterRunStatus.CANCELING,
    ]
)
_BUILT_OR_EXPORTED = frozenset({AssetKey(stage.name) for stage in STAGES} | {AssetKey("android_export")})


@sensor(
    jobs=[build_corpus_job, export_corpus_job],
    minimum_interval_seconds=30,
    description="Watches the raw PDF folder: a new PDF becomes a partition and is built, a PDF whose sha256 changed "
    "is rebuilt, a removed PDF's partition and stage files are deleted and the export redone. PDFs found together "
    "are built in ranges. Its first tick builds only what is missing or stale. Off by default.",
)
def raw_pdf_sensor(context: SensorEvaluationContext, paths: CorpusPaths) -> SensorResult:
    known = decode_states(loads(context.cursor))
    changes = scan_corpus(paths.raw_path, known, paths.corpus_names)
    registered = context.instance.get_dynamic_partitions(pdf_partitions.name)
    removed = vanished_pdfs(context.instance, list(changes.states))
    forget_pdfs(context.instance, paths.store(), removed, log=context.log.info)
    new_partitions = sorted(key for key in changes.states if key not in registered)
    sources = {key: state.sha256 for key, state in changes.states.items()}
    duplicates = {} if paths.keep_duplicates else duplicate_pdfs(sources)
    candidates = sorted({*changes.added, *changes.changed, *new_partitions} - set(duplicates))
    if context.cursor is None:
        verdicts = SettingResources.from_environment().staleness(
            paths.store(), {key: changes.states[key].sha256 for key in candidates}
        )
        candidates = [verdict.partition_key for verdict in verdicts if verdict.stale]
    ordered = [key for key in registered if key in changes.states] + new_partitions
    requests = run_requests(ordered, {key: changes.states[key].sha256 for key in candidates}, range_size(), BUILD_CORPUS)
    if removed:
        fingerprint = export_fingerprint(paths.store(), list(changes.states), paths.export_strict)
        requests.append(RunRequest(job_name=export_corpus_job.name, run_key=f"export@{fingerprint}"))
    return SensorResult(
        run_requests=requests,
        dynamic_partitions_requests=[pdf_partitions.build_add_request(new_partitions)] if new_partitions else [],
        cursor=dumps(encode_states(changes.states)),
    )


@sensor(
    job=export_corpus_job,
    minimum_interval_seconds=30,
    default_status=DefaultSensorStatus.RUNNING,
    description="Runs android_export once the PDFs of a build or backfill are done: when no run of the per-PDF "
    "stages or of the export is queued or running and the export is behind the stage files.",
)
def corpus_export_sensor(context: SensorEvaluationContext, paths: CorpusPaths) -> RunRequest | SkipReason:
    busy = [
        record.dagster_run.run_id
        for record in context.instance.get_run_records(filters=_UNFINISHED)
        if (record.dagster_run.asset_selection or frozenset()) & _BUILT_OR_EXPORTED
    ]
    if busy:
        return SkipReason(f"{len(busy)} run(s) of the PDFs or the export not finished; the export waits for them")
    keys = paths.scan().keys
    store = paths.store()
    exported = exported_fingerprint(paths.output_path)
    if exported is None and not any(store.manifest(VALIDATED_CHUNKS, key) is not None for key in keys):
        # A deployment's first start: an export now would publish empty files, every PDF "never built".
        return SkipReason(f"none of the {len(keys)} PDF(s) built yet and no export made: nothing to export")
    fingerprint = export_fingerprint(store, keys, paths.export_strict)
    if fingerprint == exported:
        return SkipReason(f"the export is up to date with the {len(keys)} PDF(s)")
    return RunRequest(run_key=f"export@{fingerprint}")
