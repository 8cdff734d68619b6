"""Assemble assets, checks, jobs, sensors, schedules and resources into Definitions."""

from __future__ import annotations

import os
from pathlib import Path

from dagster import Definitions

from pocket_assets.defs.assets.chunking import children, parents, table_summaries
from pocket_assets.defs.assets.evaluation import child_embeddings, retrieval_eval
from pocket_assets.defs.assets.export import STAGES, android_export
from pocket_assets.defs.assets.ingest import pages, raw_pdf
from pocket_assets.defs.assets.quality import validated_chunks
from pocket_assets.defs.jobs import build_corpus_job
from pocket_assets.defs.pdf_workers import WorkersResource
from pocket_assets.defs.resources import (
    ChunkPolicyResource,
    CorpusPaths,
    EvaluationResource,
    ExtractionResource,
    GatesResource,
    SummarizerResource,
    TokenizerResource,
    default_paths,
    environment_policy,
)
from pocket_assets.defs.schedules import corpus_refresh
from pocket_assets.defs.sensors import raw_pdf_sensor
from pocket_assets.defs.stale_sensor import stale_pdfs

ASSETS = [
    raw_pdf,
    pages,
    parents,
    children,
    table_summaries,
    validated_chunks,
    android_export,
    retrieval_eval,
    child_embeddings,
]
# The per-PDF stages, in lineage order, whose manifests say how each PDF fared.
STAGE_ASSETS = STAGES


def build_resources(paths: CorpusPaths | None = None) -> dict[str, object]:
    """The resources every asset, sensor and schedule uses; tests pass their own paths."""
    return {
        "paths": paths or default_paths(),
        "tokenizer": TokenizerResource(name=os.environ.get("POCKET_ASSETS_TOKENIZER", "gemma3")),
        "chunk_policy": ChunkPolicyResource.from_policy(environment_policy()),
        "summarizer": SummarizerResource(),
        "gates": GatesResource(),
        "extraction": ExtractionResource(),
        "workers": WorkersResource(),
        "evaluation": EvaluationResource(
            gold_path=os.environ.get("POCKET_ASSETS_GOLD", str(Path.cwd() / "data" / "gold" / "sample_gold.jsonl"))
        ),
    }


def build_definitions(paths: CorpusPaths | None = None) -> Definitions:
    return Definitions(
        assets=ASSETS,
        jobs=[build_corpus_job],
        schedules=[corpus_refresh],
        sensors=[raw_pdf_sensor, stale_pdfs],
        resources=build_resources(paths),
    )
