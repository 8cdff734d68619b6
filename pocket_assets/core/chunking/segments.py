"""The stretches of text the chunker cuts into windows, and the text too short to make a chunk.

No chunk may be shorter than `min_chars` (the gates refuse it), so the unit of
planning is never shorter either. In `span` mode the document is one stretch.
In page mode (`pdf-page-v1`) each page is one, except that a page whose whole
text is below the minimum (a heading alone on its page, a title page, a lone
page counter, a few glyphs) joins the pages after it until the stretch reaches
the minimum: its text opens the next chunk, which records both pages and is
cited by the page holding most of its text. Text with nothing after it to join
(short last pages, a document shorter than the minimum) is left out of the
chunks with a `text_below_minimum` warning naming its page and text; the
coverage gate asks this module what was left out, so the rule, not the
chunker's say-so, decides what may be missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from pocket_assets.core.records import PageRecord

PAGE_MODE_SPAN = "span"
PAGE_MODE_PAGE = "pdf-page-v1"
TEXT_BELOW_MINIMUM = "text_below_minimum"

Span = tuple[int, int]


@dataclass(frozen=True)
class TextBelowMinimum:
    """A page's text left out of the chunks: shorter than `min_chars` with nothing after it to join.

    Offsets are the text's first and past-last non-space characters in the canonical text.
    """

    page: int
    char_start: int
    char_end: int
    text: str
    min_chars: int

    def warning(self) -> str:
        """One line for the console and the UI, in the pages' `p<N>: ...` warning style."""
        return (
            f"p{self.page}: {TEXT_BELOW_MINIMUM}: {self.text!r} ({len(self.text)} characters, minimum"
            f" {self.min_chars}) has no following text to join and is left out of the chunks"
        )


@dataclass(frozen=True)
class Segments:
    spans: tuple[Span, ...]
    left_out: tuple[TextBelowMinimum, ...]


def plan_segments(pages: Sequence[PageRecord], page_mode: str, min_chars: int) -> Segments:
    """Stretches of the canonical text (each holding at least `min_chars`) and the text left out."""
    filled = [page for page in pages if page.text.strip()]
    groups = [filled] if page_mode == PAGE_MODE_SPAN else [[page] for page in filled]
    spans: list[Span] = []
    pending: list[PageRecord] = []
    for group in groups:
        pending.extend(group)
        if _visible_length(pending) >= min_chars:
            spans.append((pending[0].char_start, pending[-1].char_end))
            pending = []
    left_out = tuple(_left_out(page, min_chars) for page in pending)
    return Segments(spans=tuple(spans), left_out=left_out)


def _visible_length(pages: Sequence[PageRecord]) -> int:
    """Characters a chunk over these pages would hold: from the first to the last non-space one."""
    if not pages:
        return 0
    first, last = pages[0], pages[-1]
    start = first.char_start + len(first.text) - len(first.text.lstrip())
    return last.char_start + len(last.text.rstrip()) - start


def _left_out(page: PageRecord, min_chars: int) -> TextBelowMinimum:
    text = page.text.strip()
    start = page.char_start + len(page.text) - len(page.text.lstrip())
    return TextBelowMinimum(page.page, start, start + len(text), text, min_chars)
