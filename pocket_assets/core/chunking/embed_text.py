"""The exact string the phone embeds for a chunk, built in one place.

The Android export line's content and the model's document prompt are both
part of what the embedding model reads, so the 512-token cap is checked on
this string, never on the chunk text alone.
"""

from __future__ import annotations

CHUNK_SPLITTER = "<chunk_splitter>"


def fold_whitespace(text: str) -> str:
    """Newlines and runs of whitespace become one space; nothing else changes."""
    return " ".join(text.split())


def citation(source: str, page: int) -> str:
    return f"[Source: {source}, Page {page}]"


def sdk_content(text: str, source: str, page: int) -> str:
    """What follows `<chunk_splitter> ` on an export line."""
    return f"{fold_whitespace(text)} {citation(source, page)}"


def sdk_line(text: str, source: str, page: int) -> str:
    return f"{CHUNK_SPLITTER} {sdk_content(text, source, page)}"


def text_to_embed(text: str, source: str, page: int, document_prompt: str = "") -> str:
    """`document_prompt` may use `{title}` (the source file name), e.g. EmbeddingGemma's
    `title: {title} | text: `."""
    prompt = document_prompt.replace("{title}", source) if document_prompt else ""
    return prompt + sdk_content(text, source, page)
