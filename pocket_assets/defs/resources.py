"""Configuration as Dagster resources: where files live, which tokenizer, which chunk policy.

Defaults come from the environment variables the design names, read here (the
Dagster layer) and never in `core`; every field can also be set from the UI's
launchpad or run config.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from dagster import ConfigurableResource
from pydantic import Field

from pocket_assets.core.policy import ChunkPolicy, policy_from_environment
from pocket_assets.core.storage import PartitionStore
from pocket_assets.core.tokenizer import TokenCounter, load_tokenizer


class CorpusPaths(ConfigurableResource):
    """The PDF folder, the output folder and the expectations folder."""

    raw_dir: str = Field(description="Folder holding the corpus PDFs under fr/ and intl/.")
    output_dir: str = Field(description="Folder for Parquet stages, reports and exports.")
    expectations_dir: str = Field(description="Folder of the Great Expectations suites and JSON Schemas.")

    @property
    def raw_path(self) -> Path:
        return Path(self.raw_dir)

    @property
    def output_path(self) -> Path:
        return Path(self.output_dir)

    @property
    def expectations_path(self) -> Path:
        return Path(self.expectations_dir)

    def store(self) -> PartitionStore:
        return PartitionStore(self.output_path / "stages")


class TokenizerResource(ConfigurableResource):
    """The embedding model's tokenizer; loaded once per process, never with model weights."""

    name: str = Field(
        default="gemma3",
        description="'gemma3' (vendored EmbeddingGemma/Gemma 3 tokenizer), a tokenizer.json path, "
        "a model folder (sentence-transformers or Hugging Face snapshot), or a cached Hugging Face id.",
    )

    def counter(self) -> TokenCounter:
        return load_tokenizer(self.name)


class ChunkPolicyResource(ConfigurableResource):
    """The chunk policy (DESIGN.md section 4); its hash versions the chunking assets."""

    page_mode: str = Field(default="span", description="'span' (chunks may cross pages) or 'pdf-page-v1'.")
    parent_tokens: int = 1024
    parent_overlap: int = 154
    child_tokens: int = Field(default=450, description="Child size; env CHUNK_SIZE_TOKENS.")
    child_overlap: int = Field(default=68, description="Child overlap; env CHUNK_OVERLAP_TOKENS.")
    summary_tokens: int = 50
    max_tokens: int = Field(default=512, description="Cap on the string the phone embeds (256 for the SDK sample model).")
    min_chars: int = 50
    document_prompt: str = Field(default="", description="Embedding prompt, e.g. 'title: {title} | text: '.")

    @classmethod
    def from_policy(cls, policy: ChunkPolicy) -> "ChunkPolicyResource":
        values = dataclasses.asdict(policy)
        return cls(**{name: values[name] for name in cls.model_fields})

    def policy(self, tokenizer: str) -> ChunkPolicy:
        return ChunkPolicy(tokenizer=tokenizer, **{name: getattr(self, name) for name in type(self).model_fields})


def environment_policy() -> ChunkPolicy:
    """The policy the code location starts with: defaults plus the design's environment overrides."""
    return policy_from_environment(os.environ)


def default_paths(project_root: Path | None = None) -> CorpusPaths:
    root = project_root or Path.cwd()
    return CorpusPaths(
        raw_dir=os.environ.get("POCKET_ASSETS_RAW_DIR", str(root / "data" / "raw")),
        output_dir=os.environ.get("POCKET_ASSETS_OUTPUT_DIR", str(root / "data" / "processed")),
        expectations_dir=os.environ.get("POCKET_ASSETS_EXPECTATIONS_DIR", str(root / "expectations")),
    )
