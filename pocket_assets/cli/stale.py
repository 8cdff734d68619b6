"""`pocket-assets stale`: the PDFs a build would build, each with why, and the files it would not build."""

from __future__ import annotations

from pocket_assets.cli.paths import cli_paths
from pocket_assets.defs.planning import plan_folder
from pocket_assets.defs.resources import environment_versions
from pocket_assets.stages.output_folder import OutputFolderRefused
from pocket_assets.stages.planner import describe, duplicate_sentence


def list_stale(raw_dir: str | None, output_dir: str | None) -> int:
    """Print the PDFs a build would build, with their reasons; exit 0 either way (a listing, not a check)."""
    try:
        paths = cli_paths(raw_dir, output_dir)
    except OutputFolderRefused as error:
        print(error)
        return 2
    versions = environment_versions()
    plan, _ = plan_folder(paths)
    to_build = plan.to_build
    print(f"{len(to_build)} of {len(plan.partition_keys)} PDF(s) in {paths.raw_path} to build; current versions:")
    print("\n".join(f"  {stage}: {version}" for stage, version in versions.items() if version))
    if to_build:
        print(describe(to_build))
    for key, original in sorted(plan.duplicates.items()):
        print(duplicate_sentence(key, original))
    for _, why in plan.not_built:
        print(why)
    return 0
