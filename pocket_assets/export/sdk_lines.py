"""The SDK file's lines: one per child and table summary, written and read back.

A line is `<chunk_splitter> {context} | {text} [Source: f.pdf, Page N]` (seed SPEC-SCH-001 §6, with the
context header; `core.chunking.embed_text.sdk_line` lays it out). The SDK splits chunks on
`<chunk_splitter>`, so that text inside a chunk or a source name is written `‹chunk_splitter›` (single
guillemets, U+2039/U+203A) in the SDK line only; the corpus JSON and HEPilot files keep the text as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pocket_assets.core.chunking.embed_text import CHUNK_SPLITTER, CONTEXT_SEPARATOR, sdk_line, with_context
from pocket_assets.core.records import SDK_CHUNK_TYPES
from pocket_assets.export.errors import ExportError
from pocket_assets.export.redirects import ChunkRow

# What `<chunk_splitter>` becomes in an SDK line: visible, and read back by `restore_splitter`.
NEUTRAL_SPLITTER = "\u2039chunk_splitter\u203a"


@dataclass(frozen=True)
class SdkLine:
    """One SDK export line read back: its context header ("" without one), the folded chunk text
    and its citation."""

    context: str
    text: str
    source: str
    page: int

    @property
    def content(self) -> str:
        """What the line holds between `<chunk_splitter> ` and the citation: header and text."""
        return with_context(self.context, self.text)


def chunk_sdk_line(chunk: ChunkRow, neutralised: list[str]) -> str | None:
    """The chunk's SDK line (None for a type the phone does not embed); its id joins `neutralised`
    if `<chunk_splitter>` had to be neutralised."""
    if chunk["chunk_type"] not in SDK_CHUNK_TYPES:
        return None
    text, source, context = chunk["text"], chunk["source"], chunk["context"]
    if CHUNK_SPLITTER in text or CHUNK_SPLITTER in source or CHUNK_SPLITTER in context:
        neutralised.append(chunk["id"])
        text, source, context = neutralise_splitter(text), neutralise_splitter(source), neutralise_splitter(context)
    if "|" in context or "\n" in context:
        raise ExportError(chunk["id"], f"context header {chunk['context']!r} holds '|' or a line break")
    return sdk_line(text, source, chunk["page"], context)


def parse_sdk_file(path: Path, *, has_context: bool) -> list[SdkLine]:
    """Read an SDK export back, one SdkLine per line (what the tests and users check a file with).

    `has_context`: the file was written with a context header (`context_header` other than
    `none`); a line's text may hold ` | ` itself, so the reader must be told.
    """
    return [parse_sdk_line(line, has_context=has_context) for line in read_sdk_lines(path)]


def read_sdk_lines(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def neutralise_splitter(text: str) -> str:
    """`<chunk_splitter>` -> `‹chunk_splitter›`: the SDK must never see a chunk start inside a chunk."""
    return text.replace(CHUNK_SPLITTER, NEUTRAL_SPLITTER)


def restore_splitter(text: str) -> str:
    """The text an SDK line stood for (exact unless the PDF itself held `‹chunk_splitter›`)."""
    return text.replace(NEUTRAL_SPLITTER, CHUNK_SPLITTER)


def parse_sdk_line(line: str, *, has_context: bool) -> SdkLine:
    """The citation is the last `[Source: ..., Page N]` of the line, so a text quoting one stays text;
    the header is what precedes the first ` | ` (a header never holds `|`)."""
    prefix = f"{CHUNK_SPLITTER} "
    marker = " [Source: "
    if not line.startswith(prefix) or not line.endswith("]"):
        raise ValueError(f"not an SDK export line: {line[:80]!r}")
    cut = line.rfind(marker)
    source, separator, page = line[cut + len(marker) : -1].rpartition(", Page ")
    if cut < 0 or not separator or not page.isdigit():
        raise ValueError(f"SDK export line without a [Source: ..., Page N] citation: {line[:80]!r}")
    content = line[len(prefix) : cut]
    context = ""
    if has_context:
        context, separator, content = content.partition(CONTEXT_SEPARATOR)
        if not separator or not context:
            raise ValueError(f"SDK export line without a context header: {line[:80]!r}")
    return SdkLine(context=context, text=content, source=source, page=int(page))
