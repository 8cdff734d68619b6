"""The document's canonical text: its pages joined in order, the layer every offset points into."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from pocket_assets.core.records import PAGE_SEPARATOR, Block, PageRecord


@dataclass(frozen=True)
class PageContent:
    """A page as an extractor produces it, before it is placed in the document."""

    page: int
    text: str
    blocks: tuple[Block, ...] = ()
    warnings: tuple[str, ...] = ()


def assemble_pages(contents: Iterable[PageContent]) -> tuple[PageRecord, ...]:
    """Give each page its span and first line in the joined text.

    Works page by page (no whole-document string) so memory stays bounded on
    thousand-page PDFs.
    """
    records: list[PageRecord] = []
    offset = 0
    line = 1
    separator_lines = PAGE_SEPARATOR.count("\n")
    for index, content in enumerate(contents):
        if index:
            offset += len(PAGE_SEPARATOR)
            line += separator_lines
        end = offset + len(content.text)
        records.append(
            PageRecord(
                page=content.page,
                text=content.text,
                blocks=content.blocks,
                warnings=content.warnings,
                char_start=offset,
                char_end=end,
                line_start=line,
            )
        )
        offset = end
        line += content.text.count("\n")
    return tuple(records)


def canonical_text(pages: Iterable[PageRecord]) -> str:
    return PAGE_SEPARATOR.join(page.text for page in pages)
