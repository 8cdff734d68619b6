"""Table summaries from an OpenAI-compatible chat endpoint (Ollama, vLLM, llama.cpp server, a hosted API).

The HTTP calls, their timeout and their retries (408/409/429/5xx, timeouts and lost connections, with
back-off and the server's Retry-After) are the `openai` client's. What is ours is that the key never
leaves its variable: it is sent over https only (plain http to this machine), every text that comes
back is checked for it, an error is reported with the key and any credential masked, and a summary
that holds the key or a credential is refused: the table keeps its extractive summary, and the
warning names the table. An endpoint that repeats what it was sent (a compromised or misconfigured
proxy) then puts nothing secret in a chunk, a cache, a stage file or a log.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from pocket_assets.core.chunking.embed_text import fold_whitespace
from pocket_assets.core.redaction import has_credentials, is_local, redact, url_without_credentials
from pocket_assets.core.tables.summarizer import (
    MIN_SUMMARY_CHARS,
    EndpointError,
    Summarizer,
    SummaryError,
    SummaryText,
    TableContext,
)

DEFAULT_SYSTEM_PROMPT = (
    "You summarize tables from regulation documents so that a search engine can find them. "
    "Write a single sentence of about {target_tokens} tokens in {language}: say what the table is for, "
    "name its columns and what its rows list. Plain text only: no Markdown, no preamble."
)
USER_PROMPT = "Title: {title}\nTable ({rows} rows):\n{markdown}"
_LANGUAGE_NAMES = {"fr": "French", "en": "English"}


class _EndpointFailure(Exception):
    """An answer that gives no summary; `attempts` is how many requests it took to find out."""

    def __init__(self, reason: str, attempts: int) -> None:
        super().__init__(reason)
        self.attempts = attempts


@dataclass(frozen=True)
class LlmSummarizer:
    """A chat endpoint's one-sentence summary of each table.

    `api_key` is the key itself (the Dagster resource reads it from the environment). `extractive`
    summarizes a table whose LLM summary is refused (it holds the key or a credential) and, when
    `fallback_on_failure` is set, a table the endpoint failed to summarize; otherwise a failure raises
    an `EndpointError` naming the table.
    """

    base_url: str
    model: str
    extractive: Summarizer
    api_key: str = ""
    timeout_seconds: float = 60.0
    max_retries: int = 2
    target_tokens: int = 50
    max_table_chars: int = 6000
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    fallback_on_failure: bool = False
    kind: str = field(default="llm", init=False)
    _client: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if has_credentials(self.base_url):
            raise ValueError(
                f"summarizer base_url {url_without_credentials(self.base_url)} holds credentials: give the key in "
                "the environment variable the summarizer names (api_key_env), never in the URL"
            )
        if self.api_key and urlsplit(self.base_url).scheme != "https" and not is_local(self.base_url):
            raise ValueError(
                f"summarizer base_url {self.base_url} is not https: an API key is sent only over https, or over "
                "plain http to this machine (localhost); use an https URL or unset the key"
            )
        from openai import OpenAI  # only a build that asks an LLM pays for the client's import

        client = OpenAI(
            base_url=self.base_url,
            # Never None: the client would then send OPENAI_API_KEY, another variable's secret. Without a key
            # the placeholder is not sent either: each request omits the Authorization header (`_ask`).
            api_key=self.api_key or "no-key",
            timeout=self.timeout_seconds,
            max_retries=self.max_retries,
        )
        object.__setattr__(self, "_client", client)

    @property
    def endpoint(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    def cache_key_parts(self) -> tuple[str, ...]:
        """The base URL is left out: the same model behind another host gives the same summary."""
        return (
            self.kind,
            self.model,
            self.system_prompt,
            USER_PROMPT,
            str(self.target_tokens),
            str(self.max_table_chars),
        )

    def summarize(self, table: TableContext) -> SummaryText:
        started = time.perf_counter()
        try:
            text, requests = self._ask(table)
        except _EndpointFailure as failure:
            error = EndpointError.about(
                table,
                f"LLM endpoint {url_without_credentials(self.endpoint)} (model {self.model}) failed after "
                f"{failure.attempts} attempt(s): {self._scrubbed(str(failure))}",
            )
            if not self.fallback_on_failure:
                raise error from None
            return self._extractive(table, failure.attempts, started, str(error))
        if self._scrubbed(text) != text:
            refusal = SummaryError.about(
                table,
                f"the summary from LLM endpoint {url_without_credentials(self.endpoint)} (model {self.model}) was "
                "refused: it holds the API key or a credential; the extractive summary is used",
            )
            return self._extractive(table, requests, started, str(refusal))
        return SummaryText(text, requests=requests, seconds=time.perf_counter() - started)

    def _extractive(self, table: TableContext, requests: int, started: float, why: str) -> SummaryText:
        text = self.extractive.summarize(table).text
        return SummaryText(text, requests=requests, seconds=time.perf_counter() - started, fallback=why)

    def _scrubbed(self, text: str) -> str:
        return redact(text, (self.api_key,))

    def _ask(self, table: TableContext) -> tuple[str, int]:
        """The reply's text and the requests it took (retries included), or `_EndpointFailure` saying why."""
        import openai

        attempts_if_retried = self.max_retries + 1
        try:
            response = self._client.chat.completions.with_raw_response.create(
                **self._payload(table), extra_headers=None if self.api_key else {"Authorization": openai.omit}
            )
            completion = response.parse()
        except openai.APITimeoutError:
            raise _EndpointFailure(f"no answer within {self.timeout_seconds:g} s", attempts_if_retried) from None
        except openai.APIConnectionError as error:
            raise _EndpointFailure(f"cannot reach the endpoint ({error.__cause__ or error})", attempts_if_retried) from None
        except openai.APIStatusError as error:
            retried = error.status_code in (408, 409, 429) or error.status_code >= 500
            detail = error.response.text[:300].strip()
            raise _EndpointFailure(
                f"HTTP {error.status_code} {error.response.reason_phrase}: {detail}",
                attempts_if_retried if retried else 1,
            ) from None
        except openai.APIResponseValidationError as error:
            raise _EndpointFailure(f"reply is not a chat completion ({error.message})", 1) from None
        requests = response.retries_taken + 1
        try:
            content = completion.choices[0].message.content
        except (AttributeError, IndexError, TypeError):
            raise _EndpointFailure(f"reply has no choices[0].message.content: {response.text[:200]}", requests) from None
        text = fold_whitespace(content or "")
        if len(text) < MIN_SUMMARY_CHARS:
            raise _EndpointFailure(f"reply shorter than {MIN_SUMMARY_CHARS} characters: {text!r}", requests)
        return text, requests

    def _payload(self, table: TableContext) -> dict[str, Any]:
        system = self.system_prompt.format(target_tokens=self.target_tokens, language=_LANGUAGE_NAMES[table.language])
        user = USER_PROMPT.format(
            title=fold_whitespace(table.caption_or_heading or "") or "-",
            rows=len(table.cells.rows),
            markdown=_first_lines(table.markdown, self.max_table_chars),
        )
        return {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "temperature": 0,
            "max_tokens": self.target_tokens * 4,
        }


def _first_lines(text: str, limit: int) -> str:
    """The table's first lines within `limit` characters: header and leading rows say what it is."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    return cut[: cut.rfind("\n")] if "\n" in cut else cut
