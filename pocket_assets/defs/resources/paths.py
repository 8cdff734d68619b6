"""Where files live: the PDF folder and its corpora, the output folder, and how strict the export is."""

from __future__ import annotations

import os
from pathlib import Path

from dagster import ConfigurableResource
from pydantic import Field

from pocket_assets.core.raw_folder import OUTPUT_DIR_ENV, RAW_DIR_ENV, RawFolderScan, scan_raw_folder
from pocket_assets.core.records import CORPORA, parse_corpora
from pocket_assets.stages.output_folder import checked_output_dir
from pocket_assets.stages.store import PartitionStore

TRUE_WORDS = ("1", "true", "yes", "on")
CORPORA_ENV = "POCKET_ASSETS_CORPORA"
EXPORT_STRICT_ENV = "POCKET_ASSETS_EXPORT_STRICT"
KEEP_DUPLICATES_ENV = "POCKET_ASSETS_KEEP_DUPLICATES"


class CorpusPaths(ConfigurableResource):
    """The PDF folder and its corpora, the output folder, how strict the export is."""

    raw_dir: str = Field(description=f"Folder holding the corpus PDFs, one subfolder per corpus (fr/, intl/); env {RAW_DIR_ENV}.")
    output_dir: str = Field(description=f"Folder for the stage files, reports and exports; env {OUTPUT_DIR_ENV}.")
    corpora: str = Field(
        default=",".join(CORPORA),
        description=f"Corpus folders under raw_dir, comma-separated; env {CORPORA_ENV}. A name outside the seed "
        "schema's corpus enum (fr, intl) also needs adding to the expectations folder to pass the gates.",
    )
    export_strict: bool = Field(
        default=False,
        description=f"Refuse the whole export while any PDF failed (env {EXPORT_STRICT_ENV}=1). Default: ship every "
        "PDF that passed, and failed PDFs' last good chunks listed as stale.",
    )
    keep_duplicates: bool = Field(
        default=False,
        description=f"Build and export every copy of a PDF found twice under other names (env {KEEP_DUPLICATES_ENV}=1). "
        "Default: the copy whose key sorts first, the others named as its duplicates.",
    )

    @property
    def corpus_names(self) -> tuple[str, ...]:
        return parse_corpora(self.corpora)

    def scan(self) -> RawFolderScan:
        """The PDFs to build, and those refused or ignored with a sentence each."""
        return scan_raw_folder(self.raw_path, self.corpus_names)

    @property
    def raw_path(self) -> Path:
        return Path(self.raw_dir)

    @property
    def output_path(self) -> Path:
        """The output folder, refused when it is one a build must never write into (`/`, home, the raw folder)."""
        return checked_output_dir(Path(self.output_dir), self.raw_path)

    def store(self) -> PartitionStore:
        return PartitionStore(self.output_path / "stages")


def default_paths(root: Path | None = None) -> CorpusPaths:
    """The folders and settings the environment configures; `data/raw` and `data/processed` under `root`
    (the current folder: the project a command or `dagster dev` is started in) otherwise."""
    base = root or Path.cwd()
    return CorpusPaths(
        raw_dir=os.environ.get(RAW_DIR_ENV, str(base / "data" / "raw")),
        output_dir=os.environ.get(OUTPUT_DIR_ENV, str(base / "data" / "processed")),
        corpora=os.environ.get(CORPORA_ENV, ",".join(CORPORA)),
        export_strict=os.environ.get(EXPORT_STRICT_ENV, "").strip().lower() in TRUE_WORDS,
        keep_duplicates=os.environ.get(KEEP_DUPLICATES_ENV, "").strip().lower() in TRUE_WORDS,
    )
