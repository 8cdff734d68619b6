"""What a build has to tell about one PDF beyond "ok": pages without text, export warnings.

The `pages` stage records, in its manifest, which pages hold no text (image-only
or empty); any stage may record `warnings` in its manifest's `extra`; the export
records per PDF whether it shipped fresh, stale or not at all, and its warnings. The build command's summary and the export's metadata
both read these, so the console and the UI say the same sentence.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import pyarrow as pa

from pocket_assets.stages.registry import PAGES, Stage
from pocket_assets.stages.store import STATUS_OK, PartitionStore

# How each PDF went into the last export: `android_export` writes one manifest per PDF (no Parquet)
# beside the stages' own, so the build summary reads it like any stage's.
EXPORT = Stage("android_export", pa.schema([]))
IMAGE_ONLY_PAGES = "image_only_pages"
EMPTY_PAGES = "empty_pages"
OCR_FAILED_PAGES = "ocr_failed_pages"  # image-only pages OCR failed on (a subset of IMAGE_ONLY_PAGES)
OCR_FAILURE = "ocr_failure"  # what failed, on the first of them
OCR_HINT = (
    "OCR (on by default) read no words on the image-only ones: a picture without text, or Tesseract missing "
    "(Debian: apt-get install tesseract-ocr tesseract-ocr-fra tesseract-ocr-eng)"
)


def pages_without_text(
    image_only: Sequence[int], empty: Sequence[int], ocr_failed: Mapping[int, str] | None = None
) -> dict[str, Any]:
    """The `pages` manifest's `extra`: page numbers (1-based) without text, by cause, and the image-only pages
    OCR failed on (`ocr_failed`: page -> what failed) with what failed on the first."""
    failed = sorted(ocr_failed or {})
    return {
        IMAGE_ONLY_PAGES: sorted(image_only),
        EMPTY_PAGES: sorted(empty),
        OCR_FAILED_PAGES: failed,
        OCR_FAILURE: (ocr_failed or {})[failed[0]] if failed else None,
    }


def text_warning(extra: Mapping[str, Any], page_count: int | None = None) -> str | None:
    """One sentence (after the PDF's key) about its pages without text, or None when every page has some: OCR
    failing on a page is said with what failed, never taken for a picture without text."""
    image_only = list(extra.get(IMAGE_ONLY_PAGES) or ())
    empty = list(extra.get(EMPTY_PAGES) or ())
    if not image_only and not empty:
        return None
    failed = [page for page in extra.get(OCR_FAILED_PAGES) or () if page in image_only]
    unread = [page for page in image_only if page not in failed]
    count = len(image_only) + len(empty)
    whole = page_count is not None and count >= page_count
    parts = []
    if image_only:
        parts.append(f"image-only page(s) {page_list(image_only)}")
    if empty:
        parts.append(f"empty page(s) {page_list(empty)}")
    subject = "holds no text at all" if whole else "has pages without text"
    hints = [f"OCR failed on page(s) {page_list(failed)}: {extra.get(OCR_FAILURE)}"] if failed else []
    if unread:
        hints.append(OCR_HINT if not failed else OCR_HINT.replace("the image-only ones", "the other image-only ones"))
    return f"{subject} ({'; '.join(parts)}), which are not in its chunks" + "".join(f"; {hint}" for hint in hints)


def page_list(pages: Sequence[int]) -> str:
    """`1, 2, 3, 7` -> `1-3, 7`: readable for a 2,000-page scan."""
    runs: list[list[int]] = []
    for page in sorted(pages):
        if runs and page == runs[-1][-1] + 1:
            runs[-1].append(page)
        else:
            runs.append([page])
    return ", ".join(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]) for run in runs)


def pdf_warnings(store: PartitionStore, key: str, stages: Sequence[Stage]) -> list[str]:
    """Every warning the PDF's last good stages recorded: pages without text, then each stage's
    `extra["warnings"]` (e.g. the chunker's text left out as below the minimum), in lineage order."""
    notes = [note for note in (pdf_text_warning(store, key),) if note]
    for stage in stages:
        manifest = store.manifest(stage, key)
        if manifest is not None and manifest.status == STATUS_OK:
            notes.extend(str(warning) for warning in manifest.extra.get("warnings") or ())
    return notes


def pdf_text_warning(store: PartitionStore, key: str) -> str | None:
    manifest = store.manifest(PAGES, key)
    if manifest is None or manifest.status != STATUS_OK:
        return None
    return text_warning(manifest.extra, manifest.rows)
