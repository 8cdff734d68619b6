"""PDF pages to canonical text (plain text for now; Markdown extraction lands with issue 3)."""

from __future__ import annotations

from pathlib import Path

from pocket_assets.core.document import PageContent, assemble_pages
from pocket_assets.core.pdf import iter_pdf_pages
from pocket_assets.core.records import Block, PageRecord


def extract_pages(path: Path) -> tuple[PageRecord, ...]:
    contents = []
    for number, page in iter_pdf_pages(path):
        text = page.get_text().strip()
        warnings = () if text else ("empty page",)
        blocks = (Block("paragraph", 0, len(text)),) if text else ()
        contents.append(PageContent(number, text, blocks, warnings))
    return assemble_pages(contents)
