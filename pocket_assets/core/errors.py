"""Errors that name the file (and page) they are about, so a maintainer knows what to fix."""

from __future__ import annotations


class PdfError(Exception):
    """A PDF that cannot be used: not a PDF, truncated, encrypted, empty, or a page that fails."""

    def __init__(self, source: str, reason: str, page: int | None = None) -> None:
        self.source = source
        self.reason = reason
        self.page = page
        where = f"{source}, page {page}" if page is not None else source
        super().__init__(f"{where}: {reason}")


class TokenizerError(Exception):
    """A tokenizer that cannot be loaded offline from what was configured."""
