"""How pages are read: OCR of pages without text, table detection."""

from __future__ import annotations

import dataclasses

from dagster import ConfigurableResource
from pydantic import Field

from pocket_assets.core.extract import EXTRACTOR_VERSION, ExtractionOptions
from pocket_assets.stages.registry import Setting


class ExtractionResource(ConfigurableResource):
    """How pages are read: OCR of scanned pages (needs Debian tesseract-ocr) and table detection."""

    ocr: bool = Field(
        default=True,
        description="OCR pages without a text layer with Tesseract (on by default; without Tesseract they are told, not read).",
    )
    ocr_language: str = Field(default="fra+eng", description="Tesseract languages joined with '+'.")
    detect_tables: bool = Field(default=True, description="Detect ruled tables and write them as pipe tables.")

    def options(self) -> ExtractionOptions:
        return ExtractionOptions(ocr=self.ocr, ocr_language=self.ocr_language, detect_tables=self.detect_tables)

    def setting(self) -> Setting:
        """The extractor's version and every option: OCR on or off changes the pages of a scanned PDF."""
        return Setting(EXTRACTOR_VERSION, {"extractor": EXTRACTOR_VERSION, **dataclasses.asdict(self.options())})
