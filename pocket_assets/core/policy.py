"""The chunk policy: every knob that changes the chunks, hashed into a version stamp."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from functools import cached_property
from typing import Mapping

import blake3

CHUNKER_VERSION = "pocket-hier-v4"
PAGE_MODES: tuple[str, ...] = ("span", "pdf-page-v1")
# What the header in front of an embedded chunk holds (core/chunking/context.py).
CONTEXT_HEADERS: tuple[str, ...] = ("none", "title", "title+section")


@dataclass(frozen=True)
class ChunkPolicy:
    """Sizes are hard limits in tokens of the configured tokenizer.

    `max_tokens` caps what the phone embeds: a child's or summary's export line
    content (context header, text and its `[Source: ..., Page N]` citation) with
    the `document_prompt` in front of it. Parents are capped by `parent_tokens`.
    `context_header` says what the header holds (`none`, the document `title`,
    or `title+section`: title > section path > article), and
    `context_max_tokens` bounds it (and a quarter of `max_tokens`), so a deep
    section path cannot crowd out the text.
    """

    chunker_version: str = CHUNKER_VERSION
    # Measured (benchmarks/bench_page_citation.py, dev corpus): page-bounded children cite the page
    # holding all their text 100% of the time, spanning ones 60.5%. A wrong page is a wrong answer.
    page_mode: str = "pdf-page-v1"
    parent_tokens: int = 1024
    parent_overlap: int = 154
    child_tokens: int = 450
    child_overlap: int = 68
    summary_tokens: int = 50
    max_tokens: int = 512
    min_chars: int = 50
    tokenizer: str = "gemma3"
    document_prompt: str = ""
    context_header: str = "title+section"
    context_max_tokens: int = 60

    def __post_init__(self) -> None:
        if self.page_mode not in PAGE_MODES:
            raise ValueError(f"page_mode must be one of {PAGE_MODES}, got {self.page_mode!r}")
        for size, overlap, name in (
            (self.parent_tokens, self.parent_overlap, "parent"),
            (self.child_tokens, self.child_overlap, "child"),
        ):
            if size < 16:
                raise ValueError(f"{name} size must be at least 16 tokens, got {size}")
            if not 0 <= overlap < size // 2:
                raise ValueError(f"{name} overlap must be in [0, size/2), got {overlap} for size {size}")
        if self.child_tokens > self.parent_tokens:
            raise ValueError("children must not be larger than their parents")
        if self.max_tokens < 32:
            raise ValueError(f"max_tokens must be at least 32, got {self.max_tokens}")
        if self.context_header not in CONTEXT_HEADERS:
            raise ValueError(f"context_header must be one of {CONTEXT_HEADERS}, got {self.context_header!r}")
        if self.context_max_tokens < 4:
            raise ValueError(f"context_max_tokens must be at least 4, got {self.context_max_tokens}")

    @property
    def header_tokens(self) -> int:
        """The header's bound in force: `context_max_tokens`, and never more than a quarter of the cap."""
        return 0 if self.context_header == "none" else min(self.context_max_tokens, self.max_tokens // 4)

    def canonical_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    @cached_property
    def policy_hash(self) -> str:
        """First 16 hex chars of blake3 over the canonical JSON (seed pdf-page-v1).

        Cached: every chunk record is stamped with it (`records.new_chunk`), and the policy is frozen."""
        return blake3.blake3(self.canonical_json().encode("utf-8")).hexdigest()[:16]

    @property
    def code_version(self) -> str:
        """What the chunking assets report to Dagster, so a bump marks them stale."""
        return f"{self.chunker_version}+{self.policy_hash}"


def policy_from_environment(environ: Mapping[str, str], base: ChunkPolicy | None = None) -> ChunkPolicy:
    """Apply `CHUNK_SIZE_TOKENS` / `CHUNK_OVERLAP_TOKENS` (children, seed SPEC chunking).

    The environment is passed in, not read here, so the library stays free of hidden inputs.
    """
    policy = base or ChunkPolicy()
    changes: dict[str, int] = {}
    for variable, field_name in (("CHUNK_SIZE_TOKENS", "child_tokens"), ("CHUNK_OVERLAP_TOKENS", "child_overlap")):
        raw = environ.get(variable, "").strip()
        if raw:
            try:
                changes[field_name] = int(raw)
            except ValueError:
                raise ValueError(f"{variable} must be an integer number of tokens, got {raw!r}") from None
    return dataclasses.replace(policy, **changes) if changes else policy
