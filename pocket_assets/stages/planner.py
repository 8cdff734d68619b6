"""What a build has to do, PDF by PDF, and why: the one decision every caller asks for.

The build command, `pocket-assets stale`, the nightly schedule, the sensors and the export all
need the same answer: which files of the raw folder are PDFs to build, which of them are
missing, changed, failed or built with other settings (and why, in one sentence), which are
copies of another PDF of their corpus, and which files are not built at all (a name a
partition key cannot hold, a file outside every corpus folder). `plan_corpus` gives it from
the folder's scan, each file's sha256 now (`sources.current_sha256`, the one change detector)
and the settings a build started now would use.

A copy is judged within its corpus only: the same bytes under two names of one corpus are
one document, built and exported as the key that sorts first (the other is named as its copy),
while the same file in `fr/` and `intl/` belongs to both corpora, each shipping it in its own
export. Which copy stays depends on the folder alone, never on what was built before, so that
the next build of a folder exports what a fresh build of it would: a copy arriving under a name
that sorts first takes the document over (its old ids redirect to the same texts under the new
name, `export.redirects`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pocket_assets.core.raw_folder import RawFolderScan, corpus_of
from pocket_assets.stages.registry import Setting, Stage
from pocket_assets.stages.sources import current_sha256
from pocket_assets.stages.staleness import partition_staleness
from pocket_assets.stages.store import PartitionStore


@dataclass(frozen=True)
class PdfPlan:
    """One PDF of the folder: its sha256 now, why it must be built (empty: up to date), or the key it copies."""

    key: str
    sha256: str
    reasons: tuple[str, ...] = ()
    duplicate_of: str | None = None

    @property
    def to_build(self) -> bool:
        return bool(self.reasons) and self.duplicate_of is None


@dataclass(frozen=True)
class CorpusPlan:
    """Every PDF of the folder (sorted by key) and every file of it that is not built, with why."""

    pdfs: tuple[PdfPlan, ...]
    not_built: tuple[tuple[str, str], ...]  # (shown name, sentence): names that cannot be keys, files outside corpora

    @property
    def to_build(self) -> list[PdfPlan]:
        return [pdf for pdf in self.pdfs if pdf.to_build]

    @property
    def up_to_date(self) -> list[PdfPlan]:
        return [pdf for pdf in self.pdfs if not pdf.reasons and pdf.duplicate_of is None]

    @property
    def duplicates(self) -> dict[str, str]:
        """Each copy's key to the key of the PDF built in its place."""
        return {pdf.key: pdf.duplicate_of for pdf in self.pdfs if pdf.duplicate_of is not None}

    @property
    def partition_keys(self) -> list[str]:
        """The PDFs that are partitions: every PDF of the folder but the duplicates."""
        return [pdf.key for pdf in self.pdfs if pdf.duplicate_of is None]

    @property
    def sha256(self) -> dict[str, str]:
        return {pdf.key: pdf.sha256 for pdf in self.pdfs}


def plan_corpus(
    store: PartitionStore,
    scan: RawFolderScan,
    sha256: Mapping[str, str],
    versions: Mapping[Stage, str | None],
    settings: Mapping[str, Setting],
    corpora: Sequence[str],
    keep_duplicates: bool = False,
) -> CorpusPlan:
    """The plan for the folder `scan` saw: `sha256` holds each PDF's digest now (a PDF missing from it vanished or
    could not be read since the scan, and is not planned); `versions` and `settings` are a build's now."""
    present = {key: sha256[key] for key in scan.keys if key in sha256}
    duplicates = {} if keep_duplicates else duplicates_within_corpus(present, corpora)
    pdfs = []
    for key, digest in sorted(present.items()):
        if key in duplicates:
            pdfs.append(PdfPlan(key, digest, duplicate_of=duplicates[key]))
            continue
        verdict = partition_staleness(store, key, digest, versions, settings)
        pdfs.append(PdfPlan(key, digest, verdict.reasons))
    return CorpusPlan(tuple(pdfs), scan.refused + scan.ignored)


def duplicates_within_corpus(sha256_by_key: Mapping[str, str], corpora: Sequence[str]) -> dict[str, str]:
    """Each copy's key to the key kept for the same bytes in the same corpus: the first in key order."""
    groups: dict[tuple[str, str], list[str]] = {}
    for key in sorted(sha256_by_key):
        groups.setdefault((corpus_of(key, corpora), sha256_by_key[key]), []).append(key)
    return {key: keys[0] for keys in groups.values() for key in keys[1:]}


def duplicates_among(
    store: PartitionStore, raw_dir: Path, folder_keys: Sequence[str], keys: Sequence[str], corpora: Sequence[str]
) -> dict[str, str]:
    """`duplicates_within_corpus` for `keys` only (a run's PDFs): only files of the size of one of them, in its
    corpus, are hashed (a copy has the same size), so a run does not read the whole folder."""
    sizes: dict[str, int] = {}
    for key in folder_keys:
        try:
            sizes[key] = (raw_dir / key).stat().st_size
        except OSError:
            continue
    wanted = {(corpus_of(key, corpora), sizes[key]) for key in keys if key in sizes}
    candidates = [key for key in sizes if (corpus_of(key, corpora), sizes[key]) in wanted]
    duplicates = duplicates_within_corpus(current_sha256(store, raw_dir, candidates), corpora)
    return {key: original for key, original in duplicates.items() if key in set(keys)}


def duplicate_sentence(key: str, original: str) -> str:
    return (
        f"{key} is a copy of {original} (the same bytes in the same corpus): built and exported once, as "
        f"{original}; set POCKET_ASSETS_KEEP_DUPLICATES=1 to keep both"
    )


def describe(pdfs: Sequence[PdfPlan]) -> str:
    return "\n".join(f"{pdf.key}: {'; '.join(pdf.reasons)}" for pdf in pdfs)
