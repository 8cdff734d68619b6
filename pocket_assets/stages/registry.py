"""The per-PDF stages, in one place: name, upstream stages, Arrow schema, and what versions each.

Everything that walks the stages (the Dagster assets, the partition store,
staleness, export selection, the build summary) reads this registry, so a
stage is named once and referred to by its object, never by a string.

A stage's version says what its output was built with besides the PDF: the
settings it reads itself (`Stage.settings`) and, through its upstream stages,
every setting its input was built with. So a new extraction option changes the
version of `pages` and of every stage after it; a new summarizer changes
`table_summaries` and `validated_chunks` only. The settings' values are
resolved by the caller (the Dagster layer, from the resources a run really
uses) and given here as `Setting`s; this module only combines them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping

import blake3
import pyarrow as pa

from pocket_assets.core.schemas import CHUNK_SCHEMA, PAGE_SCHEMA, PDF_IDENTITY_SCHEMA

# The settings a stage's output can depend on, by name (keys of the mapping given to `Stage.version`).
EXTRACTION = "extraction"  # extractor version and extraction options (OCR, its languages, table detection)
CHUNKING = "chunking"  # chunker version and chunk policy, tokenizer identity included
SUMMARIZER = "summarizer"  # how tables are summarized (kind; model and endpoint for an LLM)
GATES = "gates"  # the suites and schemas the chunks are judged by (their files' contents)
SETTING_ORDER = (EXTRACTION, CHUNKING, SUMMARIZER, GATES)


@dataclass(frozen=True)
class Setting:
    """One resolved setting: a short readable `label` and the canonical (JSON-able) `value` that is hashed."""

    label: str
    value: Mapping[str, Any]


@dataclass(frozen=True)
class Stage:
    """One per-PDF stage; its output is stored per PDF as Parquet with this `schema`."""

    name: str
    schema: pa.Schema = field(repr=False)
    upstream: tuple["Stage", ...] = ()
    settings: tuple[str, ...] = ()  # settings this stage reads itself (its upstream's come on top)

    def __hash__(self) -> int:
        """By name (unique per stage): stages key dicts per PDF, and the dataclass's hash would hash the schemas."""
        return hash(self.name)

    def __reduce__(self) -> tuple[object, tuple[str]]:
        """Unpickled as the registry's own stage (an outcome built in a worker names its stages by identity)."""
        return (stage_named, (self.name,))

    def setting_names(self) -> tuple[str, ...]:
        """Every setting its output depends on, its own and its upstream stages', in `SETTING_ORDER`."""
        names = set(self.settings)
        for stage in self.upstream:
            names.update(stage.setting_names())
        return tuple(name for name in SETTING_ORDER if name in names)

    def version(self, settings: Mapping[str, Setting]) -> str | None:
        """`<labels>+<digest>` of the settings it depends on; None for a stage that depends on none.

        `settings` must hold at least `setting_names()`; a missing one is a programming error.
        """
        names = self.setting_names()
        if not names:
            return None
        missing = [name for name in names if name not in settings]
        if missing:
            raise KeyError(f"stage {self.name} needs settings {missing} to be versioned")
        canonical = json.dumps(
            {name: settings[name].value for name in names}, sort_keys=True, separators=(",", ":"), ensure_ascii=False
        )
        digest = blake3.blake3(canonical.encode("utf-8")).hexdigest()[:12]
        return "+".join([*(settings[name].label for name in names), digest])

    def __str__(self) -> str:
        return self.name


RAW_PDF = Stage("raw_pdf", PDF_IDENTITY_SCHEMA)
PAGES = Stage("pages", PAGE_SCHEMA, upstream=(RAW_PDF,), settings=(EXTRACTION,))
PARENTS = Stage("parents", CHUNK_SCHEMA, upstream=(PAGES,), settings=(CHUNKING,))
CHILDREN = Stage("children", CHUNK_SCHEMA, upstream=(PARENTS,), settings=(CHUNKING,))
TABLE_SUMMARIES = Stage("table_summaries", CHUNK_SCHEMA, upstream=(CHILDREN,), settings=(SUMMARIZER,))
# The gates judge every chunk stage against the pages and the policy's caps.
VALIDATED_CHUNKS = Stage("validated_chunks", CHUNK_SCHEMA, upstream=(TABLE_SUMMARIES,), settings=(CHUNKING, GATES))

# Lineage order: a stage comes after every stage it reads.
STAGES: tuple[Stage, ...] = (RAW_PDF, PAGES, PARENTS, CHILDREN, TABLE_SUMMARIES, VALIDATED_CHUNKS)
# The stages holding a PDF's chunks; validated together, exported together.
CHUNK_STAGES: tuple[Stage, ...] = (PARENTS, CHILDREN, TABLE_SUMMARIES)

_BY_NAME = {stage.name: stage for stage in STAGES}


def stage_named(name: str) -> Stage:
    """The stage behind a name read from outside (a Dagster asset key, a manifest, the command line)."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"{name!r} is not a per-PDF stage; stages are {', '.join(_BY_NAME)}") from None


def stage_versions(settings: Mapping[str, Setting]) -> dict[Stage, str | None]:
    """Every stage, in lineage order, to its version under `settings` (all of `SETTING_ORDER`)."""
    return {stage: stage.version(settings) for stage in STAGES}


# The settings' fields a user sets through the environment, named as they set them.
ENVIRONMENT_NAMES = {
    "child_tokens": "CHUNK_SIZE_TOKENS",
    "child_overlap": "CHUNK_OVERLAP_TOKENS",
    "embed_max_tokens": "EMBED_MAX_TOKENS",
    "tokenizer": "POCKET_ASSETS_TOKENIZER",
}


def setting_changes(stage: Stage, recorded: Mapping[str, Mapping[str, Any]], current: Mapping[str, Setting]) -> list[str]:
    """What changed between the settings a stage's output recorded and the current ones, one phrase per field
    (`child_tokens (CHUNK_SIZE_TOKENS) 450 → 300`); empty when the record is missing or nothing differs."""
    changes = []
    for name in stage.setting_names():
        before, after = recorded.get(name), current.get(name)
        if before is None or after is None:
            continue
        changes += _field_changes("", before, after.value)
    return changes


def _field_changes(prefix: str, before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """One phrase per field that differs; a field holding fields (the device profile in the chunk policy)
    is looked into, so the phrase names the field inside (`device.embed_max_tokens (EMBED_MAX_TOKENS) 512 → 256`)."""
    changes = []
    for field_name in sorted(set(before) | set(after)):
        old, new = before.get(field_name), after.get(field_name)
        if old == new:
            continue
        if isinstance(old, Mapping) and isinstance(new, Mapping):
            changes += _field_changes(f"{prefix}{field_name}.", old, new)
            continue
        label = f"{prefix}{field_name}"
        if field_name in ENVIRONMENT_NAMES:
            label += f" ({ENVIRONMENT_NAMES[field_name]})"
        changes.append(f"{label} {_shown(old)} → {_shown(new)}")
    return changes


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    return text if len(text) <= 40 else text[:39] + "…"
