"""What a table summarizer reads and returns, whatever makes the summary (our own words or an LLM's).

A summary is one sentence that says what a table is about, so that a question lands on the table
even though the table's own chunk is rows of cells. `summaries.summarize_tables` asks a
`Summarizer` for each table and places the result as a `table_summary` chunk.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Self

from pocket_assets.core.records import TableCells

LANGUAGES = ("fr", "en")
MIN_SUMMARY_CHARS = 50


@dataclass(frozen=True)
class TableContext:
    """Everything a summarizer may read about one table."""

    source: str
    page: int
    table_index: int  # the table's `n` in the document's reading order, from 0
    language: str  # "fr" or "en"
    caption_or_heading: str | None
    cells: TableCells
    markdown: str  # the table's text in the canonical document (a pipe table)


@dataclass(frozen=True)
class SummaryText:
    """A summary and what it cost: HTTP requests made, seconds spent waiting, and a fallback reason."""

    text: str
    requests: int = 0
    seconds: float = 0.0
    fallback: str | None = None  # set when the text comes from the fallback summarizer


class Summarizer(Protocol):
    kind: str  # "extractive" | "llm"

    def cache_key_parts(self) -> tuple[str, ...]:
        """Everything besides the table that changes the summary (kind, model, prompt, version)."""
        ...

    def summarize(self, table: TableContext) -> SummaryText: ...


class SummaryError(Exception):
    """A table that could not be summarized, named so a maintainer can find it."""

    def __init__(self, source: str, page: int, table_index: int, reason: str) -> None:
        self.source = source
        self.page = page
        self.table_index = table_index
        self.reason = reason
        super().__init__(f"{source}, page {page}, table {table_index}: {reason}")

    @classmethod
    def about(cls, table: TableContext, reason: str) -> Self:
        return cls(table.source, table.page, table.table_index, reason)


class EndpointError(SummaryError):
    """A table the LLM endpoint did not summarize (an HTTP error, no answer, a reply without a summary): the
    endpoint's to fix (its URL, model or key), neither the PDF's nor a bug."""
