"""Staleness as the project judges it, with the code versions the assets declare today.

The schedule, the `stale_pdfs` sensor and `pocket-assets stale` all ask here, so
they agree on what "stale" means (see `runstate/staleness.py` for why Dagster's own
verdict is not used for partitions).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from pocket_assets.core.pdf import discover_pdfs, sha256_file
from pocket_assets.runstate.staleness import Staleness, corpus_staleness
from pocket_assets.defs.assets.export import STAGE_DEFINITIONS
from pocket_assets.defs.resources import CorpusPaths


def stage_code_versions() -> dict[str, str | None]:
    """Each per-PDF stage, in lineage order, to the code version it declares to Dagster (None: unversioned)."""
    return {
        key.to_user_string(): version
        for definition in STAGE_DEFINITIONS
        for key, version in definition.code_versions_by_key.items()
    }


def current_sources(raw_dir: Path, keys: Iterable[str] | None = None) -> dict[str, str]:
    """Partition key -> sha256 of the file now in the folder (all PDFs there by default)."""
    return {key: sha256_file(raw_dir / key) for key in (discover_pdfs(raw_dir) if keys is None else keys)}


def pdf_staleness(paths: CorpusPaths, sources: dict[str, str] | None = None) -> list[Staleness]:
    """A verdict for every PDF of the folder (or of `sources`), stale or fresh, sorted by key."""
    if sources is None:
        sources = current_sources(paths.raw_path, paths.scan().keys)
    return corpus_staleness(paths.store(), sources, stage_code_versions())
