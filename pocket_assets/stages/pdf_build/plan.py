"""What every PDF of a run is built with, decided once in the run's process."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pocket_assets.core.extract import ExtractionOptions
from pocket_assets.core.json_schema import Validator
from pocket_assets.core.policy import ChunkPolicy
from pocket_assets.core.tables.summaries import Summarizer
from pocket_assets.core.tokenizer import TokenCounter
from pocket_assets.stages.registry import Setting, Stage
from pocket_assets.stages.store import PartitionStore


@dataclass(frozen=True)
class BuildPlan:
    """What every PDF of a run is built with: loaded once in the run's process, inherited by its workers."""

    store: PartitionStore
    raw_dir: Path
    corpora: tuple[str, ...]
    stages: tuple[Stage, ...]  # the selected stages, in lineage order
    versions: Mapping[Stage, str | None]
    settings: Mapping[str, Setting]  # what the versions are made of: recorded, so a stale reason names the change
    run_id: str
    extraction: ExtractionOptions
    counter: TokenCounter
    policy: ChunkPolicy
    summarizer: Summarizer
    summary_cache: Path | None  # an LLM's summaries are cached there; None: no cache
    chunk_schema: Validator
    reports_dir: Path
    duplicates: Mapping[str, str] = field(default_factory=dict)  # a copy's key -> the PDF built in its place
