"""How tables get their summaries: offline extractive, or an OpenAI-compatible endpoint named by variables."""

from __future__ import annotations

import os

from dagster import ConfigurableResource
from pydantic import Field

from pocket_assets.core.redaction import has_credentials, url_without_credentials
from pocket_assets.core.tables.extractive import ExtractiveSummarizer
from pocket_assets.core.tables.llm import LlmSummarizer
from pocket_assets.core.tables.summarizer import Summarizer
from pocket_assets.core.tokenizer import TextCounter
from pocket_assets.stages.registry import Setting

# Only variables named so are read for the endpoint and its key: a run config naming another variable
# (AWS_SECRET_ACCESS_KEY, DAGSTER_PG_PASSWORD, ...) would otherwise send its value to whatever endpoint it names.
LLM_ENV_PREFIX = "POCKET_ASSETS_LLM_"
DEFAULT_LLM_BASE_URL = "http://127.0.0.1:11434/v1"


class SummarizerResource(ConfigurableResource):
    """How tables get their ~50-token summaries: offline extractive (default) or an LLM endpoint.

    The endpoint's URL and key are named by environment variables, never given as values: a run's config
    is stored in the instance (and shown in the UI) before any code of ours can look at it, so a URL
    holding a password, or a key, typed there would stay in the run's record.
    """

    kind: str = Field(default="extractive", description="'extractive' (offline, deterministic) or 'llm'.")
    base_url_env: str = Field(
        default="POCKET_ASSETS_LLM_BASE_URL",
        description=f"Environment variable holding the OpenAI-compatible API base URL (unset: {DEFAULT_LLM_BASE_URL}); "
        f"its name must start with {LLM_ENV_PREFIX}. A URL holding credentials is refused.",
    )
    model: str = Field(default="", description="Model name for the chat endpoint.")
    api_key_env: str = Field(
        default="POCKET_ASSETS_LLM_API_KEY",
        description=f"Environment variable holding the API key; its name must start with {LLM_ENV_PREFIX} "
        "(no other variable of the process can be sent). The key goes over https only (plain http to localhost).",
    )
    timeout_seconds: float = 60.0
    max_retries: int = 2
    fallback_to_extractive: bool = Field(
        default=False, description="On endpoint failure use the extractive summary (flagged) instead of failing the PDF."
    )

    def base_url(self) -> str:
        """The endpoint's URL, from the variable `base_url_env` names; refused when it holds credentials."""
        url = self._environment(self.base_url_env, "base_url_env").strip() or DEFAULT_LLM_BASE_URL
        if has_credentials(url):
            raise ValueError(
                f"{self.base_url_env} ({url_without_credentials(url)}) holds credentials: give the key in the variable "
                f"api_key_env names ({self.api_key_env}), never in the URL"
            )
        return url

    def setting(self) -> Setting:
        """What versions the summaries: the kind, and for an LLM its model and endpoint (never the key;
        retries and timeouts change when a summary comes, not what it says)."""
        if self.kind != "llm":
            return Setting(self.kind, {"kind": self.kind})
        return Setting(
            f"llm:{self.model}",
            {
                "kind": self.kind,
                "model": self.model,
                "base_url": url_without_credentials(self._environment(self.base_url_env, "base_url_env")),
                "fallback": self.fallback_to_extractive,
            },
        )

    def summarizer(self, counter: TextCounter, target_tokens: int) -> Summarizer:
        extractive = ExtractiveSummarizer(counter, target_tokens=target_tokens)
        if self.kind == "extractive":
            return extractive
        if self.kind != "llm":
            raise ValueError(f"summarizer kind must be 'extractive' or 'llm', got {self.kind!r}")
        if not self.model:
            raise ValueError("the llm summarizer needs a model name (resource config 'model')")
        return LlmSummarizer(
            base_url=self.base_url(),
            model=self.model,
            extractive=extractive,
            api_key=self._environment(self.api_key_env, "api_key_env"),
            timeout_seconds=self.timeout_seconds,
            max_retries=self.max_retries,
            target_tokens=target_tokens,
            fallback_on_failure=self.fallback_to_extractive,
        )

    @staticmethod
    def _environment(name: str, field_name: str) -> str:
        if not name.startswith(LLM_ENV_PREFIX):
            raise ValueError(
                f"summarizer {field_name} {name!r} is not allowed: the variable must be named {LLM_ENV_PREFIX}... "
                "(e.g. POCKET_ASSETS_LLM_API_KEY)"
            )
        return os.environ.get(name, "")
