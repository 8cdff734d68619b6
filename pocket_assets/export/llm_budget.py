"""The phone's LLM budget: the lines it hands its LLM, with the question, must fit the LLM's context.

The phone hands its `top_k` best lines whole to its LLM, so the corpus's `top_k` longest lines and the
question budget must fit the device's LLM context, or the corpus is refused, naming the setting to
change. Checked before anything is written.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from pocket_assets.core.device import DeviceProfile, llm_overflow
from pocket_assets.core.records import SDK_CHUNK_TYPES
from pocket_assets.export.errors import ExportError


def check_llm_budget(corpus: str, keys: Mapping[str, Mapping[str, Sequence[Any]]], device: DeviceProfile) -> None:
    """The phone hands its `top_k` best lines whole to its LLM: any `top_k` lines of the corpus (`keys`: each
    part's KEY_COLUMNS, as `CorpusParts.keys`), with the question budget, must fit the LLM's context. Raises
    ExportError (naming no chunk: the corpus is refused, not a PDF) with the settings to change."""
    lines = (
        (chunk_id, tokens)
        for columns in keys.values()
        for chunk_id, chunk_type, tokens in zip(columns["id"], columns["chunk_type"], columns["embedded_tokens"])
        if chunk_type in SDK_CHUNK_TYPES
    )
    overflow = llm_overflow(lines, device)
    if overflow is not None:
        raise ExportError(None, overflow.message(device, corpus))
