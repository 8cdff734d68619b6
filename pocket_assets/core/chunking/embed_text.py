"""The exact string the phone embeds for a chunk, built in one place.

The Android export line's content and the model's document prompt are both
part of what the embedding model reads, and its tokenizer adds special tokens
around them, so the device's window is checked on this string's count plus those
(`count_embedded`), never on the chunk text alone. A line is

    <chunk_splitter> {context} | {text on one line} [Source: file.pdf, Page N]

where the text on one line is `line_text` (without Markdown's marks); or, without a context header
(`context_header = none`), `<chunk_splitter> {text on one line} [Source: file.pdf, Page N]`. A header never
holds `|` (`core.chunking.context` replaces it), so the first ` | ` of a line
written with a header ends the header.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    from pocket_assets.core.device import DeviceProfile
    from pocket_assets.core.tokenizer import TextCounter

CHUNK_SPLITTER = "<chunk_splitter>"
CONTEXT_SEPARATOR = " | "
# Markdown's marks at the start of a line, which the phone's embedder would read as words: heading marks,
# a list bullet, an escape; and the lines that are only marks: code and equation fences, a table's rule.
_LINE_MARKS = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+|[-*+][ \t]+|\\(?=\S))")
_MARK_LINE = re.compile(r"^[ \t]*(?:```|~~~|\$\$|\|?[ \t]*:?-{3,}[-:| \t]*)[ \t]*$")


def fold_whitespace(text: str) -> str:
    """Newlines and runs of whitespace become one space; nothing else changes."""
    return " ".join(text.split())


def fold_accents(text: str) -> str:
    """`é` -> `e`, `ﬁ` -> `fi`: PDFs, file names and people spell the same word with and without them."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(character for character in decomposed if not unicodedata.combining(character))


def citation(source: str, page: int) -> str:
    return f"[Source: {source}, Page {page}]"


def with_context(context: str, folded_text: str) -> str:
    """The header in front of the one-line text; the text alone when there is no header."""
    return f"{context}{CONTEXT_SEPARATOR}{folded_text}" if context else folded_text


def line_text(text: str) -> str:
    """A chunk's text as its SDK line holds it: on one line, without Markdown's marks (`#`, `-` bullets,
    `\\` escapes, fences, a table's rule), which the phone's embedder would read as words and which take
    room in its window. The chunk's `text` keeps them (the corpus JSON's Markdown)."""
    lines = (_LINE_MARKS.sub("", line) for line in text.split("\n") if not _MARK_LINE.match(line))
    return fold_whitespace("\n".join(lines))


def sdk_content(text: str, source: str, page: int, context: str = "") -> str:
    """What follows `<chunk_splitter> ` on an export line."""
    return f"{with_context(context, line_text(text))} {citation(source, page)}"


def sdk_line(text: str, source: str, page: int, context: str = "") -> str:
    return f"{CHUNK_SPLITTER} {sdk_content(text, source, page, context)}"


def prompt_for(document_prompt: str, source: str) -> str:
    """`document_prompt` may use `{title}` (the source file name), e.g. EmbeddingGemma's
    `title: {title} | text: `."""
    return document_prompt.replace("{title}", source) if document_prompt else ""


def text_to_embed(text: str, source: str, page: int, document_prompt: str = "", context: str = "") -> str:
    """The document prompt, then the export line's content: what the model reads for this chunk.

    The context header and the text come first and the citation last, as seed SPEC-SCH-001 §6 puts
    it; the whole string fits the window (the chunker budgets it), citation included."""
    return prompt_for(document_prompt, source) + sdk_content(text, source, page, context)


def count_embedded(counter: TextCounter, strings: Iterable[str], device: DeviceProfile) -> list[int]:
    """Tokens the device's embedder reads of each `text_to_embed` string: the string's, and the special
    tokens its tokenizer adds (`counter` counts text alone). This is what `embedded_tokens` records and
    the window caps."""
    return [count + device.special_tokens for count in counter.count_batch(strings)]
