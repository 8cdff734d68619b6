"""Staleness as the project judges it, against the stage versions of the environment's resources.

The schedule, the `stale_pdfs` sensor and `pocket-assets stale` all ask here, so
they agree on what "stale" means (see `runstate/staleness.py` for why Dagster's own
verdict is not used for partitions). The reference is what a build started now
would stamp: the versions of the tokenizer, chunk policy, summarizer and
extraction options the environment configures (`SettingResources.from_environment`).
"""

from __future__ import annotations

from collections.abc import Sequence

from pocket_assets.defs.resources import CorpusPaths, SettingResources
from pocket_assets.runstate.sources import current_sha256
from pocket_assets.runstate.staleness import Staleness, corpus_staleness


def current_sources(paths: CorpusPaths, keys: Sequence[str] | None = None) -> dict[str, str]:
    """Partition key -> sha256 of the file now in the folder (all its PDFs by default); a file `raw_pdf`
    hashed that kept its size and modification time is not read again (`runstate.sources`)."""
    return current_sha256(paths.store(), paths.raw_path, paths.scan().keys if keys is None else keys)


def pdf_staleness(
    paths: CorpusPaths, sources: dict[str, str] | None = None, resources: SettingResources | None = None
) -> list[Staleness]:
    """A verdict for every PDF of the folder (or of `sources`), stale or fresh, sorted by key; against the
    settings of `resources` (the environment's by default), a changed setting named in the reason."""
    resources = resources or SettingResources.from_environment()
    return corpus_staleness(
        paths.store(),
        current_sources(paths) if sources is None else sources,
        resources.versions(),
        resources.settings(),
    )
