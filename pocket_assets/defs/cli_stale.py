"""`pocket-assets stale` and `pocket-assets build --stale`: the project's staleness, from the command line."""

from __future__ import annotations

from typing import Sequence

from pocket_assets.cli import preload_for_build
from pocket_assets.runstate.staleness import describe
from pocket_assets.defs.cli_build import cli_paths, run_build
from pocket_assets.defs.resources import environment_versions
from pocket_assets.defs.staleness import pdf_staleness


def list_stale(raw_dir: str | None, output_dir: str | None) -> int:
    """Print the stale PDFs with their reasons; exit 0 either way (a listing, not a check)."""
    paths = cli_paths(raw_dir, output_dir)
    versions = environment_versions()
    verdicts = pdf_staleness(paths, versions=versions)
    stale = [verdict for verdict in verdicts if verdict.stale]
    print(f"{len(stale)} of {len(verdicts)} PDF(s) in {paths.raw_path} stale; current versions:")
    print("\n".join(f"  {stage}: {version}" for stage, version in versions.items() if version))
    if stale:
        print(describe(stale))
    return 0


def build_stale(select: Sequence[str], raw_dir: str | None, output_dir: str | None) -> int:
    """Rebuild every stale PDF; all of them in one run when they are the whole corpus (a chunker bump)."""
    paths = cli_paths(raw_dir, output_dir)
    stale = [verdict.partition_key for verdict in pdf_staleness(paths) if verdict.stale]
    if not stale:
        print(f"nothing stale in {paths.raw_path}")
        return 0
    preload_for_build(select)
    return run_build(pdfs=stale, select=select, raw_dir=raw_dir, output_dir=output_dir)
