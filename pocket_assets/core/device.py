"""The phone a corpus is built for: what its embedder reads of an SDK line, what its LLM reads of the top k.

On the phone, the Google AI Edge RAG SDK embeds every line of `chunks_{corpus}.txt` with a
LiteRT embedding model of a fixed window (EmbeddingGemma-300M comes as `seq256`, `seq512`,
`seq1024` and `seq2048`): the model reads its document prompt, the line, and the special
tokens its tokenizer adds, and drops whatever passes the window. A line longer than that is
searched by its start alone. At question time the app hands the `top_k` best lines whole to an
on-device LLM whose context (`setMaxTokens`) must hold them, the question, the app's prompt
template and the answer.

A `DeviceProfile` says all of that in one record. The chunker budgets every line so that
prompt + line + special tokens fit `embed_max_tokens`, the gates check it, the export checks
that the `top_k` longest lines and `question_tokens` fit `llm_context_tokens`, and the
retrieval evaluation reads the lines through the same window. It is part of the chunk policy
(and of its hash), so another phone re-chunks.
"""

from __future__ import annotations

import dataclasses
import heapq
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

if TYPE_CHECKING:
    from pocket_assets.core.tokenizer import TokenCounter

# EmbeddingGemma's document prompt (its model card: `title: {title | "none"} | text: {content}`); the
# SDK gives no title. Its tokenizer adds <bos> and <eos> around what it encodes.
EMBEDDINGGEMMA_DOCUMENT_PROMPT = "title: none | text: "
EMBEDDINGGEMMA_SPECIAL_TOKENS = 2
# The windows of the LiteRT EmbeddingGemma-300M models.
EMBEDDINGGEMMA_WINDOWS: tuple[int, ...] = (256, 512, 1024, 2048)


@dataclass(frozen=True)
class DeviceProfile:
    """One phone's embedder and LLM, as far as the lines it is given must fit them.

    `embed_max_tokens` is the embedder's window, counted as the model counts: its
    `document_prompt`, the line (what follows `<chunk_splitter> `) and the `special_tokens`
    its tokenizer adds. `llm_context_tokens` is the LLM's whole context (MediaPipe's
    `setMaxTokens`: prompt and answer together); it must hold the `top_k` lines the app
    retrieves plus `question_tokens`, kept for the question, the app's prompt template and
    the answer.
    """

    embed_max_tokens: int = 512
    document_prompt: str = EMBEDDINGGEMMA_DOCUMENT_PROMPT
    special_tokens: int = EMBEDDINGGEMMA_SPECIAL_TOKENS
    llm_context_tokens: int = 2048
    top_k: int = 3
    question_tokens: int = 256

    def __post_init__(self) -> None:
        if self.embed_max_tokens < 32:
            raise ValueError(f"embed_max_tokens must be at least 32, got {self.embed_max_tokens}")
        if self.special_tokens < 0:
            raise ValueError(f"special_tokens must not be negative, got {self.special_tokens}")
        if self.top_k < 1:
            raise ValueError(f"top_k must be at least 1, got {self.top_k}")
        if self.question_tokens < 0:
            raise ValueError(f"question_tokens must not be negative, got {self.question_tokens}")
        if self.llm_context_tokens <= self.question_tokens:
            raise ValueError(
                f"llm_context_tokens ({self.llm_context_tokens}) must be more than question_tokens "
                f"({self.question_tokens}): no room is left for a line"
            )


def _embeddinggemma(window: int) -> DeviceProfile:
    """A LiteRT EmbeddingGemma variant, with an LLM context of four windows: the top 3 lines at their
    longest (a window each, less the prompt and special tokens) and a window for the question."""
    return DeviceProfile(embed_max_tokens=window, llm_context_tokens=4 * window)


PRESETS: Mapping[str, DeviceProfile] = {
    f"embeddinggemma-{window}": _embeddinggemma(window) for window in EMBEDDINGGEMMA_WINDOWS
}
# The seed's 512-token cap (SPEC-SCH-001 §7.2).
DEFAULT_PRESET = "embeddinggemma-512"


def device_profile(preset: str = DEFAULT_PRESET, **changes: int | str | None) -> DeviceProfile:
    """The preset, with the fields given in `changes` replaced (a None leaves the preset's)."""
    if preset not in PRESETS:
        raise ValueError(f"device preset must be one of {sorted(PRESETS)}, got {preset!r}")
    given = {name: value for name, value in changes.items() if value is not None}
    return dataclasses.replace(PRESETS[preset], **given) if given else PRESETS[preset]


def read_by_embedder(texts: Sequence[str], device: DeviceProfile, counter: TokenCounter) -> list[str]:
    """What the embedder reads of each string (its prompt already in front): the part whose tokens, with
    the special tokens, fit the window; the model drops the rest."""
    room = device.embed_max_tokens - device.special_tokens
    read = []
    for text, encoding in zip(texts, counter.encode_batch(texts)):
        if len(encoding.ids) <= room:
            read.append(text)
            continue
        kept = room
        cut = text[: encoding.offsets[kept - 1][1]]
        while counter.count(cut) > room:  # the cut undid a merge: one token fewer
            kept -= 1
            cut = text[: encoding.offsets[kept - 1][1]]
        read.append(cut)
    return read


@dataclass(frozen=True)
class LlmOverflow:
    """The `top_k` longest lines of a corpus and the question budget, when they do not fit the LLM."""

    line_ids: tuple[str, ...]
    line_tokens: int
    needed_tokens: int

    def message(self, device: DeviceProfile, corpus: str) -> str:
        return (
            f"corpus {corpus}: the {device.top_k} longest SDK lines ({', '.join(self.line_ids)}) hold up to "
            f"{self.line_tokens} tokens; with question_tokens ({device.question_tokens}) the phone's LLM would "
            f"need {self.needed_tokens} tokens, more than llm_context_tokens ({device.llm_context_tokens}). Set the "
            f"device profile's llm_context_tokens (the app's setMaxTokens) to at least {self.needed_tokens}, lower "
            "its top_k, or choose a smaller window (its preset, or EMBED_MAX_TOKENS)"
        )


def llm_overflow(lines: Iterable[tuple[str, int]], device: DeviceProfile) -> LlmOverflow | None:
    """None when any `top_k` of the lines (id, embedded tokens) fit the LLM with the question budget.

    A line's embedded count, less the special tokens, bounds what the LLM reads of it from above:
    it also counts the embedder's prompt, which the LLM is not given.
    """
    longest = heapq.nlargest(device.top_k, lines, key=lambda line: (line[1], line[0]))
    line_tokens = sum(max(tokens - device.special_tokens, 0) for _, tokens in longest)
    needed = line_tokens + device.question_tokens
    if needed <= device.llm_context_tokens:
        return None
    return LlmOverflow(tuple(line_id for line_id, _ in longest), line_tokens, needed)
