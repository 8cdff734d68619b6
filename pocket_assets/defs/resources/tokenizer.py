"""The embedding model's tokenizer, which every token count is made with."""

from __future__ import annotations

from dagster import ConfigurableResource, InitResourceContext
from pydantic import Field, PrivateAttr

from pocket_assets.core.tokenizer import (
    DEFAULT_TOKENIZER,
    TOKENIZER_ENV,
    TokenCounter,
    load_tokenizer,
    tokenizer_identity,
)


class TokenizerResource(ConfigurableResource):
    """The embedding model's tokenizer; loaded once per process, never with model weights."""

    name: str = Field(
        default=DEFAULT_TOKENIZER,
        description=f"'gemma3' (vendored EmbeddingGemma/Gemma 3 tokenizer), a tokenizer.json path, a model folder "
        f"(sentence-transformers or Hugging Face snapshot), or a cached Hugging Face id; env {TOKENIZER_ENV}.",
    )
    _counter: TokenCounter | None = PrivateAttr(default=None)

    def setup_for_execution(self, context: InitResourceContext) -> None:
        self._counter = load_tokenizer(self.name)

    def counter(self) -> TokenCounter:
        return self._counter if self._counter is not None else load_tokenizer(self.name)

    def identity(self) -> str:
        """What versions its chunks: the vendored name, or the content hash of the file it names."""
        return tokenizer_identity(self.name)
