"""Show each PDF's staleness in the UI: an observation on `validated_chunks` when it changes.

The sensor launches nothing (the nightly schedule and `pocket-assets build --stale`
do the building); its tick history lists the stale PDFs with their reasons, and
each partition's events say since when and why it is stale or fresh again.
"""

from __future__ import annotations

from dagster import AssetObservation, DefaultSensorStatus, SensorEvaluationContext, SensorResult, sensor

from pocket_assets.defs.partitions import pdf_partitions
from pocket_assets.defs.resources import CorpusPaths, SettingResources, environment_versions
from pocket_assets.defs.scan_cursor import decode_states, digest, dumps, encode_states, loads
from pocket_assets.stages.corpus_scan import scan_corpus
from pocket_assets.stages.registry import VALIDATED_CHUNKS
from pocket_assets.stages.staleness import describe


@sensor(
    name="stale_pdfs",
    minimum_interval_seconds=300,
    default_status=DefaultSensorStatus.STOPPED,
    description="Lists the PDFs whose outputs are stale (changed file, chunker or policy bump, failed last "
    "attempt) and records an observation with the reasons on validated_chunks whenever a PDF turns stale or "
    "fresh. Launches nothing. Off by default: turn it on to follow staleness in the UI (`pocket-assets stale` "
    "says the same on demand).",
)
def stale_pdfs(context: SensorEvaluationContext, paths: CorpusPaths) -> SensorResult:
    state = loads(context.cursor)
    known = decode_states(state.get("files", {}))
    changes = scan_corpus(paths.raw_path, known)
    versions = environment_versions()
    sources = {key: file_state.sha256 for key, file_state in changes.states.items()}
    verdicts = SettingResources.from_environment().staleness(paths.store(), sources)
    reported: dict[str, str] = state.get("reported", {})
    current = {verdict.partition_key: "; ".join(verdict.reasons) for verdict in verdicts}
    registered = set(context.instance.get_dynamic_partitions(pdf_partitions.name))
    code_version = versions[VALIDATED_CHUNKS]
    events = [
        AssetObservation(
            asset_key=VALIDATED_CHUNKS.name,
            partition=key,
            metadata={
                "stale": bool(reasons),
                "stale_reasons": reasons or "fresh",
                "source_sha256": changes.states[key].sha256,
                "current_code_version": code_version or "",
            },
        )
        for key, reasons in sorted(current.items())
        if key in registered and reported.get(key) != digest(reasons)
    ]
    stale = [verdict for verdict in verdicts if verdict.stale]
    summary = f"{len(stale)} of {len(verdicts)} PDF(s) stale" + (f":\n{describe(stale)}" if stale else "")
    cursor = dumps(
        {
            "files": encode_states(changes.states),
            "reported": {key: digest(reasons) for key, reasons in current.items() if key in registered},
        }
    )
    return SensorResult(asset_events=events, skip_reason=summary, cursor=cursor)
