"""The chunk policy: every knob that changes the chunks, hashed into a version stamp."""

from __future__ import annotations

import bisect
import dataclasses
import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Mapping

import blake3

from pocket_assets.core.device import DeviceProfile

CHUNKER_VERSION = "pocket-hier-v5"
PAGE_MODES: tuple[str, ...] = ("span", "pdf-page-v1")
# What the header in front of an embedded chunk holds (core/chunking/context.py).
CONTEXT_HEADERS: tuple[str, ...] = ("none", "title", "title+section")
# Seed SPEC-SCH-001 §7.2: a child or table summary holds at most 512 tokens of text, whatever the
# window (expectations/chunks.partition.json, `searchable_tokens_cap`, says the same).
SEARCHABLE_MAX_TOKENS = 512


@dataclass(frozen=True)
class ChunkSizes:
    """The child target and overlap and the context header's bound chosen for an embedder window."""

    child_tokens: int
    child_overlap: int
    context_max_tokens: int


# Chosen per window on both gold sets (benchmarks/bench_retrieval.py; the sweeps in benchmarks/README.md):
# children as large as the window allows, the seed's 450 (at 256 the window binds first: up to ~165 tokens
# of text behind the prompt, a header and the citation), with the seed's 15 % overlap of what fits (24 at
# 256, 68 above) and a 60-token header bound. At 256, smaller children (110, 140), no overlap or twice as
# much, and a header bound of 30 or 45 lost on BM25 (MRR on both gold sets); at 512 and 1024 nothing beat
# these by more than a question, a 40-token header lost on the regulations and 80-100 gave no more.
SIZES_BY_WINDOW: Mapping[int, ChunkSizes] = {
    256: ChunkSizes(child_tokens=450, child_overlap=24, context_max_tokens=60),
    512: ChunkSizes(child_tokens=450, child_overlap=68, context_max_tokens=60),
    1024: ChunkSizes(child_tokens=450, child_overlap=68, context_max_tokens=60),
    2048: ChunkSizes(child_tokens=450, child_overlap=68, context_max_tokens=60),
}


def sizes_for_window(window: int) -> ChunkSizes:
    """The sizes measured for the largest window not above `window` (the smallest one's below them all)."""
    windows = sorted(SIZES_BY_WINDOW)
    return SIZES_BY_WINDOW[windows[max(bisect.bisect_right(windows, window) - 1, 0)]]


_DEFAULT_SIZES = sizes_for_window(DeviceProfile().embed_max_tokens)


@dataclass(frozen=True)
class ChunkPolicy:
    """Sizes are hard limits in tokens of the configured tokenizer.

    `device` says what the phone embeds and how much of it (`core.device`): a child's or
    summary's export line content (context header, text and its `[Source: ..., Page N]`
    citation), with the embedder's document prompt in front and its special tokens, fits
    the device's window (`max_tokens`). Parents are capped by `parent_tokens`.
    `context_header` says what the header holds (`none`, the document `title`,
    or `title+section`: title > section path > article), and
    `context_max_tokens` bounds it (and a quarter of `max_tokens`), so a deep
    section path cannot crowd out the text.

    The child sizes and the header bound follow the device's window (`for_device`, `SIZES_BY_WINDOW`)
    unless given; the defaults are those of the default device.
    """

    chunker_version: str = CHUNKER_VERSION
    # Page-bounded children always cite the page holding all their text; a child spanning pages cites one of
    # them, often not the one holding the answer (benchmarks/bench_page_citation.py). A wrong page is a wrong
    # answer.
    page_mode: str = "pdf-page-v1"
    parent_tokens: int = 1024
    parent_overlap: int = 154
    child_tokens: int = _DEFAULT_SIZES.child_tokens
    child_overlap: int = _DEFAULT_SIZES.child_overlap
    summary_tokens: int = 50
    min_chars: int = 50
    tokenizer: str = "gemma3"
    context_header: str = "title+section"
    context_max_tokens: int = _DEFAULT_SIZES.context_max_tokens
    device: DeviceProfile = field(default_factory=DeviceProfile)

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
        if self.child_tokens > SEARCHABLE_MAX_TOKENS:
            raise ValueError(f"child size must be at most {SEARCHABLE_MAX_TOKENS} tokens, got {self.child_tokens}")
        if self.context_header not in CONTEXT_HEADERS:
            raise ValueError(f"context_header must be one of {CONTEXT_HEADERS}, got {self.context_header!r}")
        if self.context_max_tokens < 4:
            raise ValueError(f"context_max_tokens must be at least 4, got {self.context_max_tokens}")

    @classmethod
    def for_device(
        cls,
        device: DeviceProfile,
        *,
        child_tokens: int | None = None,
        child_overlap: int | None = None,
        context_max_tokens: int | None = None,
        **fields: object,
    ) -> ChunkPolicy:
        """The policy for `device`: the sizes measured for its window, but for those given."""
        sizes = sizes_for_window(device.embed_max_tokens)
        return cls(
            device=device,
            child_tokens=sizes.child_tokens if child_tokens is None else child_tokens,
            child_overlap=sizes.child_overlap if child_overlap is None else child_overlap,
            context_max_tokens=sizes.context_max_tokens if context_max_tokens is None else context_max_tokens,
            **fields,  # type: ignore[arg-type]
        )

    @property
    def max_tokens(self) -> int:
        """The cap on what the phone embeds of a line, special tokens included: the device's window."""
        return self.device.embed_max_tokens

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


# Environment variables the Dagster layer reads (seed SPEC chunking names the first two), and the fields they set.
ENVIRONMENT_SIZES: Mapping[str, str] = {
    "CHUNK_SIZE_TOKENS": "child_tokens",
    "CHUNK_OVERLAP_TOKENS": "child_overlap",
    "EMBED_MAX_TOKENS": "embed_max_tokens",
}


def sizes_from_environment(environ: Mapping[str, str]) -> dict[str, int]:
    """The fields `ENVIRONMENT_SIZES` sets, from the variables that are set (children's size and overlap,
    the embedder's window).

    The environment is passed in, not read here, so the library stays free of hidden inputs.
    """
    sizes: dict[str, int] = {}
    for variable, field_name in ENVIRONMENT_SIZES.items():
        raw = environ.get(variable, "").strip()
        if raw:
            try:
                sizes[field_name] = int(raw)
            except ValueError:
                raise ValueError(f"{variable} must be an integer number of tokens, got {raw!r}") from None
    return sizes

