"""The folders a command acts on: the environment's settings, with the folders the command line names."""

from __future__ import annotations

from pocket_assets.defs.resources import CorpusPaths, default_paths


def cli_paths(raw_dir: str | None, output_dir: str | None) -> CorpusPaths:
    """The environment's paths and settings, as the code location `dagster dev` loads reads them, with the
    folders the command line names; an output folder a build must not write into is refused here."""
    defaults = default_paths()
    paths = CorpusPaths(
        raw_dir=raw_dir or defaults.raw_dir,
        output_dir=output_dir or defaults.output_dir,
        corpora=defaults.corpora,
        export_strict=defaults.export_strict,
        keep_duplicates=defaults.keep_duplicates,
    )
    paths.output_path  # noqa: B018 - refuses `/`, a home folder or the raw folder before anything runs
    return paths
