"""The whole lineage on the shipped sample corpus, materialized for real in one run."""

import json
from pathlib import Path
from typing import Iterator

import pandas as pd
import pytest
from dagster import AssetKey, DagsterInstance, instance_for_test, materialize

from pocket_assets.core.policy import ChunkPolicy
from pocket_assets.defs.assembly import ASSETS, build_resources
from pocket_assets.defs.resources import CorpusPaths
from pocket_assets.export.sdk_lines import parse_sdk_file
from pocket_assets.stages.registry import STAGES, TABLE_SUMMARIES, VALIDATED_CHUNKS
from pocket_assets_tests.defs.conftest import (
    materialize_corpus,
    materialize_export,
    partition_metadata,
    partition_states,
)
from pocket_assets_tests.pdf_factory import SAMPLE_RAW

SAMPLE_KEYS = ["fr/f-array.pdf", "fr/faq.pdf", "intl/R-data.pdf"]
PER_PDF = [stage.name for stage in STAGES]


@pytest.fixture(scope="module")
def sample_build(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DagsterInstance, CorpusPaths]]:
    out = tmp_path_factory.mktemp("sample")
    paths = CorpusPaths(raw_dir=str(SAMPLE_RAW), output_dir=str(out))
    with instance_for_test() as instance:
        result = materialize_corpus(instance, paths)
        assert result.success, [event.message for event in result.all_events if event.is_failure]
        assert materialize_export(instance, paths).success
        yield instance, paths


def test_every_pdf_is_materialized_through_every_stage(sample_build) -> None:
    instance, paths = sample_build
    for asset in PER_PDF:
        assert instance.get_materialized_partitions(AssetKey(asset)) == set(SAMPLE_KEYS), asset
    store = paths.store()
    for key in SAMPLE_KEYS:
        frame = pd.read_parquet(store.data_path(VALIDATED_CHUNKS, key))
        assert set(frame["chunk_type"]) >= {"parent", "child"}
        assert frame["id"].is_unique
        assert (frame.loc[frame["chunk_type"] != "parent", "tokens"] <= 512).all()
    summaries = pd.read_parquet(store.data_path(TABLE_SUMMARIES, "fr/f-array.pdf"))
    assert len(summaries) >= 1 and (summaries["chunk_type"] == "table_summary").all()


def test_checks_pass_and_metadata_is_numeric(sample_build) -> None:
    instance, _ = sample_build
    for check in ("expectations", "json_schema", "coverage"):
        record = instance.event_log_storage.get_latest_asset_check_execution_by_key(
            [__import__("dagster").AssetCheckKey(AssetKey("validated_chunks"), check)]
        )
        evaluation = next(iter(record.values())).event.dagster_event.event_specific_data
        assert evaluation.passed, check
    for asset in ("parents", "children", "validated_chunks"):
        assert partition_states(instance, asset) == {"materialized": set(SAMPLE_KEYS), "failed": set()}
    own = {key: partition_metadata(instance, "children", key) for key in SAMPLE_KEYS}
    assert sum(numbers["chunks"] for numbers in own.values()) > 100
    validated = {key: partition_metadata(instance, "validated_chunks", key) for key in SAMPLE_KEYS}
    assert sum(numbers["chunks_child"] for numbers in validated.values()) == sum(n["chunks"] for n in own.values())
    assert all(isinstance(numbers["tokens_median"], float) for numbers in own.values())
    assert len({numbers["dagster/row_count"] for numbers in own.values()}) == len(SAMPLE_KEYS), "each its own count"


def test_the_run_log_names_every_pdf_once_on_shared_progress_lines(sample_build) -> None:
    """A built PDF is not a log line of its own (`run_progress`): the step's lines name all of them, once."""
    instance, _ = sample_build
    first_run = instance.get_runs()[-1]
    lines = [entry.user_message for entry in instance.all_logs(first_run.run_id) if entry.dagster_event is None]
    step = "+".join(PER_PDF)
    progress = [line for line in lines if line.startswith(f"{step} [")]
    assert any(line.startswith(f"{step} [3/3 done, 0 failed] ") for line in progress), progress
    for key in SAMPLE_KEYS:
        assert sum(f"{key}: " in line for line in progress) == 1, (key, progress)
    assert all(" rows in " in line for line in progress)


def test_exports_parse_back_and_cover_every_pdf(sample_build) -> None:
    _, paths = sample_build
    out = paths.output_path
    lines = parse_sdk_file(out / "chunks_fr.txt", has_context=True)
    assert {line.source for line in lines} == {"f-array.pdf", "faq.pdf"}
    assert all(line.page >= 1 and line.text for line in lines)
    corpus = json.loads((out / "chunks_mode_b_intl.json").read_text(encoding="utf-8"))
    assert corpus["metadata"]["corpus"] == "intl"
    assert corpus["metadata"]["total_chunks"] == len(corpus["chunks"]) > 0
    hepilot = (out / "chunks_intl.hepilot.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(hepilot) == len(corpus["chunks"])


def test_a_second_build_gives_the_same_bytes(sample_build, tmp_path: Path) -> None:
    _, first = sample_build
    paths = CorpusPaths(raw_dir=first.raw_dir, output_dir=str(tmp_path))
    with instance_for_test() as instance:
        assert materialize_corpus(instance, paths, selection=PER_PDF).success
    for stage in STAGES:
        for key in SAMPLE_KEYS:
            assert paths.store().data_path(stage, key).read_bytes() == first.store().data_path(stage, key).read_bytes()


def test_retrieval_eval_reports_metrics_stamped_with_the_policy(sample_build) -> None:
    instance, paths = sample_build
    result = materialize(ASSETS, instance=instance, resources=build_resources(paths), selection=["retrieval_eval"])
    assert result.success
    metadata = result.asset_materializations_for_node("retrieval_eval")[0].metadata
    assert metadata["questions"].value >= 20
    assert 0.6 <= metadata["bm25_hit@10"].value <= 1.0
    assert metadata["bm25_mrr"].value <= metadata["bm25_hit@10"].value
    assert metadata["chunker_version"].value == "pocket-hier-v5"
    assert metadata["context_header"].value == "title+section"
    assert metadata["context_max_tokens"].value == ChunkPolicy().context_max_tokens
    assert metadata["passages"].value == sum(1 for _ in (paths.output_path / "chunks_fr.txt").open()) + sum(
        1 for _ in (paths.output_path / "chunks_intl.txt").open()
    )
    assert len(metadata["per_question"].value.records) == metadata["questions"].value


def test_each_pdfs_materializations_stay_small(sample_build) -> None:
    """What a maintainer reads (counts, token figures, warnings, a short preview), not the PDF's
    content: the event log grows by a few KB per PDF and build, whatever the PDF's length."""
    from dagster import AssetRecordsFilter, serialize_value

    instance, _ = sample_build
    for key in SAMPLE_KEYS:
        size = sum(
            len(serialize_value(record.event_log_entry))
            for asset in PER_PDF
            for record in instance.fetch_materializations(
                AssetRecordsFilter(asset_key=AssetKey(asset), asset_partitions=[key]), limit=1
            ).records
        )
        assert 2_000 < size < 20_000, (key, size)
