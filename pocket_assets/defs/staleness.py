"""Staleness as the project judges it, against the stage versions of the environment's resources.

The schedule, the `stale_pdfs` sensor and `pocket-assets stale` all ask here, so
they agree on what "stale" means (see `runstate/staleness.py` for why Dagster's own
verdict is not used for partitions). The reference is what a build started now
would stamp: the versions of the tokenizer, chunk policy, summarizer and
extraction options the environment configures (`SettingResources.from_environment`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from pocket_assets.core.pdf import discover_pdfs, sha256_file
from pocket_assets.defs.resources import CorpusPaths, SettingResources
from pocket_assets.runstate.staleness import Staleness, corpus_staleness


def current_sources(raw_dir: Path, keys: Iterable[str] | None = None) -> dict[str, str]:
    """Partition key -> sha256 of the file now in the folder (all PDFs there by default)."""
    return {key: sha256_file(raw_dir / key) for key in (discover_pdfs(raw_dir) if keys is None else keys)}


def pdf_staleness(
    paths: CorpusPaths, sources: dict[str, str] | None = None, resources: SettingResources | None = None
) -> list[Staleness]:
    """A verdict for every PDF of the folder (or of `sources`), stale or fresh, sorted by key; against the
    settings of `resources` (the environment's by default), a changed setting named in the reason."""
    resources = resources or SettingResources.from_environment()
    return corpus_staleness(
        paths.store(),
        current_sources(paths.raw_path, paths.scan().keys) if sources is None else sources,
        resources.versions(),
        resources.settings(),
    )
