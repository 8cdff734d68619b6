"""The settings the stage versions are made of, from the resources a run really uses.

`stage_settings` turns those resources into the settings the stage versions are derived from
(`stages.registry`); `SettingResources` holds them together, as the environment configures them or a run's
launchpad overrides them, and judges the PDFs' staleness against them (`stages.staleness`).
"""

from __future__ import annotations

import dataclasses
import json
import os

from dagster import ConfigurableResource

from pocket_assets.core.tokenizer import DEFAULT_TOKENIZER, TOKENIZER_ENV
from pocket_assets.defs.resources.chunk_policy import ChunkPolicyResource
from pocket_assets.defs.resources.device import DeviceProfileResource
from pocket_assets.defs.resources.extraction import ExtractionResource
from pocket_assets.defs.resources.gates import GatesResource, default_gates
from pocket_assets.defs.resources.summarizer import SummarizerResource
from pocket_assets.defs.resources.tokenizer import TokenizerResource
from pocket_assets.stages.registry import CHUNKING, EXTRACTION, GATES, SUMMARIZER, Setting, Stage, stage_versions


def stage_settings(
    *,
    extraction: ExtractionResource | None = None,
    tokenizer: TokenizerResource | None = None,
    chunk_policy: ChunkPolicyResource | None = None,
    device: DeviceProfileResource | None = None,
    summarizer: SummarizerResource | None = None,
    gates: GatesResource | None = None,
) -> dict[str, Setting]:
    """The settings (`stages.registry`) of the given resources; a stage asks for the ones its output depends on."""
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
    """The resources the stage versions depend on (see `stages.registry`)."""

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
