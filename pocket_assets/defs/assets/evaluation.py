"""Evaluation (on demand, off the export path): are answers easy to find in what the phone embeds?

Both assets read the exported SDK files back (`export.read_back.passages_from_export`), so they measure
the strings the phone embeds (the device's document prompt, context header, text, citation, cut to
its embedder's window) and the page each line cites, not the chunk records behind them.
"""

from pathlib import Path

from dagster import (
    AssetExecutionContext,
    MaterializeResult,
    MetadataValue,
    TableColumn,
    TableRecord,
    TableSchema,
    asset,
)

from pocket_assets.core.evaluation.bm25 import bm25_rankings, evaluate_bm25
from pocket_assets.core.evaluation.embeddings import dense_rankings, embed_passages
from pocket_assets.core.evaluation.fusion import fuse_rankings
from pocket_assets.core.evaluation.gold import load_gold
from pocket_assets.core.evaluation.passages import Passage
from pocket_assets.core.evaluation.scoring import RetrievalReport, evaluate_rankings, k_values_for, metric_names
from pocket_assets.defs.assets.export import android_export
from pocket_assets.defs.partitions import OWNERS
from pocket_assets.defs.resources import (
    ChunkPolicyResource,
    CorpusPaths,
    DeviceProfileResource,
    EvaluationResource,
    TokenizerResource,
)
from pocket_assets.export.read_back import passages_from_export


def _exported_passages(
    paths: CorpusPaths, device: DeviceProfileResource, tokenizer: TokenizerResource
) -> list[Passage]:
    return [
        passage
        for corpus in paths.corpus_names
        for passage in passages_from_export(paths.output_path, corpus, device.profile(), tokenizer.counter())
    ]


def _store_path(paths: CorpusPaths) -> Path:
    return paths.output_path / "embeddings" / "child_embeddings.parquet"


@asset(
    owners=OWNERS,
    group_name="evaluation",
    kinds={"parquet"},
    deps=[android_export],
    description="On demand (not part of build_corpus): vectors of every exported SDK line (the string the phone embeds, "
    "document prompt included), keyed by chunk_uid and text hash so a re-run embeds only what changed. Needs the [embed] extra.",
)
def child_embeddings(
    paths: CorpusPaths, evaluation: EvaluationResource, device: DeviceProfileResource, tokenizer: TokenizerResource
) -> MaterializeResult:
    update = embed_passages(
        _exported_passages(paths, device, tokenizer),
        evaluation.embedding_model,
        evaluation.expected_dim,
        _store_path(paths),
    )
    return MaterializeResult(
        metadata={
            "vectors": update.total,
            "embedded": update.embedded,
            "reused": update.reused,
            "removed": update.removed,
            "dimension": update.dimension,
            "model": update.model,
            "path": MetadataValue.path(str(update.store_path)),
        }
    )


@asset(
    owners=OWNERS,
    group_name="evaluation",
    kinds={"json"},
    deps=[android_export],
    description="On demand (not part of build_corpus): retrieval quality on the gold questions over the exported SDK lines: "
    "cited-page hit@1/3/5/10 and MRR for BM25 (and dense and hybrid when configured), stamped with the chunker version, "
    "policy hash and context header setting so versions and settings compare in the UI plots.",
)
def retrieval_eval(
    context: AssetExecutionContext,
    paths: CorpusPaths,
    evaluation: EvaluationResource,
    tokenizer: TokenizerResource,
    chunk_policy: ChunkPolicyResource,
    device: DeviceProfileResource,
) -> MaterializeResult:
    passages = _exported_passages(paths, device, tokenizer)
    questions = load_gold(Path(evaluation.gold_path))
    reports = [evaluate_bm25(passages, questions, k_values_for(device.profile()))]
    if evaluation.dense:
        bm25 = bm25_rankings(passages, questions)
        dense = dense_rankings(
            passages, questions, _store_path(paths), evaluation.embedding_model, query_prompt=evaluation.query_prompt
        )
        reports += [
            evaluate_rankings(dense, questions, reports[0].k_values, method="dense"),
            evaluate_rankings(fuse_rankings([bm25, dense]), questions, reports[0].k_values, method="hybrid"),
        ]
    for warning in reports[0].warnings:
        context.log.warning(warning)
    policy = chunk_policy.policy(tokenizer, device)
    metadata: dict = {
        "questions": len(questions),
        "passages": len(passages),
        "chunker_version": policy.chunker_version,
        "policy_hash": policy.policy_hash,
        "context_header": policy.context_header,
        "context_max_tokens": policy.context_max_tokens,
    }
    for report in reports:
        metadata.update(
            {f"{report.method}_{name}": float(report.metrics[name]) for name in metric_names(device.profile())}
        )
    metadata["per_question"] = _per_question_table(reports[0])
    # context_header is metadata only: Dagster tag values may not hold '+'.
    return MaterializeResult(metadata=metadata, tags={"policy_hash": policy.policy_hash})


def _per_question_table(report: RetrievalReport) -> MetadataValue:
    rows = report.table()
    columns = list(rows[0]) if rows else ["question_id"]
    return MetadataValue.table(
        records=[TableRecord({name: _cell(row[name]) for name in columns}) for row in rows],
        schema=TableSchema(columns=[TableColumn(name, "string") for name in columns]),
    )


def _cell(value: object) -> str:
    return "" if value is None else str(value)
