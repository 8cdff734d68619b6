"""Evaluation (on demand, off the export path): are answers easy to find with these chunks?"""

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

from pocket_assets.core.evaluation.embeddings import dense_rankings, embed_chunks
from pocket_assets.runstate.export_selection import read_validated_chunks, select_for_export
from pocket_assets.core.records import ChunkRecord
from pocket_assets.core.evaluation.retrieval import (
    RetrievalReport,
    bm25_rankings,
    evaluate_bm25,
    evaluate_rankings,
    fuse_rankings,
    load_gold,
    searchable_chunks,
)
from pocket_assets.defs.assets.export import STAGES
from pocket_assets.defs.assets.quality import validated_chunks
from pocket_assets.defs.partitions import OWNERS
from pocket_assets.defs.resources import ChunkPolicyResource, CorpusPaths, EvaluationResource, TokenizerResource


def _corpus_chunks(paths: CorpusPaths) -> list[ChunkRecord]:
    store = paths.store()
    return read_validated_chunks(store, select_for_export(store, paths.scan().keys, STAGES).included)


def _store_path(paths: CorpusPaths) -> Path:
    return paths.output_path / "embeddings" / "child_embeddings.parquet"


@asset(
    owners=OWNERS,
    group_name="evaluation",
    kinds={"parquet"},
    deps=[validated_chunks],
    description="On demand (not part of build_corpus): vectors of every validated child and table summary (the string the phone embeds), keyed by "
    "chunk_uid and text hash so a re-run embeds only what changed. Needs the [embed] extra.",
)
def child_embeddings(
    paths: CorpusPaths, evaluation: EvaluationResource, chunk_policy: ChunkPolicyResource
) -> MaterializeResult:
    update = embed_chunks(
        searchable_chunks(_corpus_chunks(paths)),
        evaluation.embedding_model,
        evaluation.expected_dim,
        _store_path(paths),
        document_prompt=chunk_policy.document_prompt,
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
    deps=[validated_chunks],
    description="On demand (not part of build_corpus): retrieval quality on the gold questions: hit@1/3/5/10 and MRR for BM25 (and dense and hybrid "
    "when configured), stamped with the chunker version and policy hash so versions compare in the UI plots.",
)
def retrieval_eval(
    context: AssetExecutionContext,
    paths: CorpusPaths,
    evaluation: EvaluationResource,
    tokenizer: TokenizerResource,
    chunk_policy: ChunkPolicyResource,
) -> MaterializeResult:
    chunks = _corpus_chunks(paths)
    questions = load_gold(Path(evaluation.gold_path))
    reports = [evaluate_bm25(chunks, questions)]
    if evaluation.dense:
        bm25 = bm25_rankings(chunks, questions)
        dense = dense_rankings(
            chunks,
            questions,
            _store_path(paths),
            evaluation.embedding_model,
            query_prompt=evaluation.query_prompt,
            document_prompt=chunk_policy.document_prompt,
        )
        reports += [
            evaluate_rankings(dense, questions, reports[0].k_values, method="dense"),
            evaluate_rankings(fuse_rankings([bm25, dense]), questions, reports[0].k_values, method="hybrid"),
        ]
    for warning in reports[0].warnings:
        context.log.warning(warning)
    policy = chunk_policy.policy(tokenizer.name)
    metadata: dict = {
        "questions": len(questions),
        "chunker_version": policy.chunker_version,
        "policy_hash": policy.policy_hash,
    }
    for report in reports:
        metadata.update(
            {f"{report.method}_{name}": float(value) for name, value in report.metrics.items() if name != "questions"}
        )
    metadata["per_question"] = _per_question_table(reports[0])
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
