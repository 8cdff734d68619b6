"""`pocket-assets stale`: the PDFs a build would build, each with why."""

from __future__ import annotations

from pocket_assets.cli.paths import cli_paths
from pocket_assets.defs.resources import SettingResources, environment_versions
from pocket_assets.stages.output_folder import OutputFolderRefused
from pocket_assets.stages.staleness import describe


def list_stale(raw_dir: str | None, output_dir: str | None) -> int:
    """Print the PDFs a build would build, with their reasons; exit 0 either way (a listing, not a check)."""
    try:
        paths = cli_paths(raw_dir, output_dir)
    except OutputFolderRefused as error:
        print(error)
        return 2
    versions = environment_versions()
    verdicts = SettingResources.from_environment().staleness(paths.store(), paths.sources())
    stale = [verdict for verdict in verdicts if verdict.stale]
    print(f"{len(stale)} of {len(verdicts)} PDF(s) in {paths.raw_path} to build; current versions:")
    print("\n".join(f"  {stage}: {version}" for stage, version in versions.items() if version))
    if stale:
        print(describe(stale))
    return 0
