"""The chunk policy: sizes, overlaps, page mode and context header; its hash versions the chunking stages."""

from __future__ import annotations

import os
from typing import Optional

from dagster import ConfigurableResource
from pydantic import Field

from pocket_assets.core.policy import ChunkPolicy, sizes_from_environment
from pocket_assets.defs.resources.device import DeviceProfileResource
from pocket_assets.defs.resources.tokenizer import TokenizerResource


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
