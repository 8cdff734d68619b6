"""The phone the lines are for: its embedder's window and prompt, its LLM's context and top-k."""

from __future__ import annotations

import os
from typing import Optional

from dagster import ConfigurableResource
from pydantic import Field

from pocket_assets.core.device import DEFAULT_PRESET, PRESETS, DeviceProfile, device_profile
from pocket_assets.core.policy import sizes_from_environment

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
