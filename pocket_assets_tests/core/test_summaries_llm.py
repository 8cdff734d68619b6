"""`LlmSummarizer` against a real OpenAI-compatible HTTP server on loopback (no patched client)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

from pocket_assets.core.policy import ChunkPolicy
from pocket_assets.core.tables.cache import SummaryCache
from pocket_assets.core.tables.extractive import ExtractiveSummarizer
from pocket_assets.core.tables.llm import LlmSummarizer
from pocket_assets.core.tables.summaries import summarize_tables
from pocket_assets.core.tables.summarizer import SummaryError, TableContext
from pocket_assets.core.tokenizer import TokenCounter, load_tokenizer
from pocket_assets_tests.core.test_summaries import CALENDAR, IDENTITY, build_pages, build_parents, pipe

REPLY = "Calendrier des trois rondes du championnat des clubs, avec la date et l'horaire de chaque ronde."


class FakeEndpoint:
    """An OpenAI-compatible chat endpoint that plays a script: one step per request, the last repeats.

    Steps: ("ok", text) answers, ("status", code) fails with that HTTP status,
    ("sleep", seconds) answers after a delay. Every request body is kept.
    """

    def __init__(self) -> None:
        self.script: list[tuple[str, object]] = [("ok", REPLY)]
        self.requests: list[dict] = []
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with endpoint.lock:
                    endpoint.requests.append({"path": self.path, **body})
                    endpoint.headers.append({name.lower(): value for name, value in self.headers.items()})
                    step = endpoint.script[min(len(endpoint.requests), len(endpoint.script)) - 1]
                action, value = step
                if action == "sleep":
                    time.sleep(float(value))  # type: ignore[arg-type]
                    value = REPLY
                if action == "status":
                    self.send_error(int(value), explain="upstream model crashed")  # type: ignore[arg-type]
                    return
                message = {"role": "assistant", "content": value}
                reply = {"object": "chat.completion", "choices": [{"index": 0, "message": message}]}
                payload = json.dumps(reply).encode("utf-8")
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout case)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_port}/v1"


@pytest.fixture
def endpoint() -> Iterator[FakeEndpoint]:
    fake = FakeEndpoint()
    thread = threading.Thread(target=fake.server.serve_forever, daemon=True)
    thread.start()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return load_tokenizer()


EXTRACTIVE = ExtractiveSummarizer(load_tokenizer())


def table() -> TableContext:
    return TableContext("A02.pdf", 4, 2, "fr", "3.2 Calendrier des rondes", CALENDAR, pipe(CALENDAR))


def summarizer(endpoint: FakeEndpoint, **changes: object) -> LlmSummarizer:
    settings: dict = {
        "base_url": endpoint.base_url,
        "model": "qwen2.5:3b",
        "api_key": "sk-test",
        "extractive": EXTRACTIVE,
    }
    return LlmSummarizer(**{**settings, **changes})


def test_a_reply_becomes_the_summary_and_the_request_is_openai_shaped(endpoint: FakeEndpoint) -> None:
    summary = summarizer(endpoint).summarize(table())
    assert (summary.text, summary.requests, summary.fallback) == (REPLY, 1, None)
    (request,) = endpoint.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["model"] == "qwen2.5:3b" and request["temperature"] == 0
    system, user = request["messages"]
    assert system["role"] == "system" and "in French" in system["content"]
    assert user["content"].startswith("Title: 3.2 Calendrier des rondes\nTable (3 rows):\n| Ronde | Date | Horaire |")
    assert endpoint.headers[0]["authorization"] == "Bearer sk-test"


def test_a_server_error_is_retried(endpoint: FakeEndpoint) -> None:
    endpoint.script = [("status", 500), ("status", 503), ("ok", REPLY)]
    summary = summarizer(endpoint, max_retries=2).summarize(table())
    assert (summary.text, summary.requests) == (REPLY, 3)
    assert len(endpoint.requests) == 3


def test_a_persistent_failure_names_the_table(endpoint: FakeEndpoint) -> None:
    endpoint.script = [("status", 500)]
    with pytest.raises(SummaryError) as raised:
        summarizer(endpoint, max_retries=2).summarize(table())
    message = str(raised.value)
    assert message.startswith("A02.pdf, page 4, table 2: LLM endpoint http://127.0.0.1:")
    assert "(model qwen2.5:3b) failed after 3 attempt(s): HTTP 500" in message
    assert (raised.value.source, raised.value.page, raised.value.table_index) == ("A02.pdf", 4, 2)
    assert len(endpoint.requests) == 3


def test_a_client_error_is_not_retried(endpoint: FakeEndpoint) -> None:
    endpoint.script = [("status", 401)]
    with pytest.raises(SummaryError, match=r"failed after 1 attempt\(s\): HTTP 401"):
        summarizer(endpoint, max_retries=3).summarize(table())
    assert len(endpoint.requests) == 1


def test_a_slow_server_times_out_then_is_retried(endpoint: FakeEndpoint) -> None:
    endpoint.script = [("sleep", 2.0), ("ok", REPLY)]
    summary = summarizer(endpoint, timeout_seconds=0.3, max_retries=1).summarize(table())
    assert (summary.text, summary.requests) == (REPLY, 2)


def test_a_server_that_always_times_out_fails_with_a_clear_error(endpoint: FakeEndpoint) -> None:
    endpoint.script = [("sleep", 2.0)]
    with pytest.raises(SummaryError, match=r"table 2: .* failed after 2 attempt\(s\): no answer within 0.3 s"):
        summarizer(endpoint, timeout_seconds=0.3, max_retries=1).summarize(table())


def test_an_unreachable_endpoint_fails_with_a_clear_error() -> None:
    unreachable = LlmSummarizer(base_url="http://127.0.0.1:9/v1", model="m", extractive=EXTRACTIVE, max_retries=1)
    with pytest.raises(SummaryError, match=r"failed after 2 attempt\(s\): cannot reach the endpoint"):
        unreachable.summarize(table())


def test_a_too_short_reply_is_refused(endpoint: FakeEndpoint) -> None:
    endpoint.script = [("ok", "Calendrier.")]
    with pytest.raises(SummaryError, match="shorter than 50 characters"):
        summarizer(endpoint).summarize(table())


def test_fallback_mode_uses_the_extractive_summary_and_reports_it(
    endpoint: FakeEndpoint, counter: TokenCounter, tmp_path: Path
) -> None:
    endpoint.script = [("status", 500)]
    pages = build_pages()
    fallback = ExtractiveSummarizer(counter)
    llm = summarizer(endpoint, max_retries=1, extractive=fallback, fallback_on_failure=True)
    cache = SummaryCache(tmp_path)
    batch = summarize_tables(IDENTITY, pages, build_parents(pages), ChunkPolicy(), counter, llm, cache)
    extractive = summarize_tables(IDENTITY, pages, build_parents(pages), ChunkPolicy(), counter, fallback)
    assert [chunk.text for chunk in batch.chunks] == [chunk.text for chunk in extractive.chunks]
    assert batch.stats.llm_calls == 4 and len(batch.stats.fallbacks) == 2
    assert batch.stats.fallbacks[0].startswith("A02_Championnat_de_France_des_Clubs.pdf, page 1, table 0: LLM endpoint")
    assert len(cache) == 0  # a fallback is not cached: the next run asks the endpoint again


def test_without_fallback_the_partition_fails(endpoint: FakeEndpoint, counter: TokenCounter) -> None:
    endpoint.script = [("status", 500)]
    pages = build_pages()
    with pytest.raises(SummaryError, match=r"page 1, table 0"):
        summarize_tables(
            IDENTITY, pages, build_parents(pages), ChunkPolicy(), counter, summarizer(endpoint, max_retries=0)
        )


def test_an_unchanged_pdf_makes_no_second_llm_call(
    endpoint: FakeEndpoint, counter: TokenCounter, tmp_path: Path
) -> None:
    pages = build_pages()
    parents = build_parents(pages)
    llm = summarizer(endpoint)
    first = summarize_tables(IDENTITY, pages, parents, ChunkPolicy(), counter, llm, SummaryCache(tmp_path))
    assert len(endpoint.requests) == 2 and first.stats.llm_calls == 2 and first.stats.llm_seconds > 0
    second = summarize_tables(IDENTITY, pages, parents, ChunkPolicy(), counter, llm, SummaryCache(tmp_path))
    assert len(endpoint.requests) == 2
    assert (second.stats.cache_hits, second.stats.llm_calls, second.stats.llm_seconds) == (2, 0, 0.0)
    assert second.chunks == first.chunks
    assert all(chunk.text == REPLY for chunk in second.chunks)
    other_model = summarizer(endpoint, model="llama3.2")
    summarize_tables(IDENTITY, pages, parents, ChunkPolicy(), counter, other_model, SummaryCache(tmp_path))
    assert len(endpoint.requests) == 4  # the model is part of the key


SECRET = "sk-planted-Secret-0123456789"


class EchoingEndpoint(FakeEndpoint):
    """Answers 401 with an error page that repeats the request's Authorization header, as some proxies do."""

    def __init__(self) -> None:
        super().__init__()
        endpoint = self

        class Handler(self.server.RequestHandlerClass):  # type: ignore[misc,name-defined]
            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers["Content-Length"]))
                endpoint.headers.append({name.lower(): value for name, value in self.headers.items()})
                page = f"401 Unauthorized: bad credentials in 'Authorization: {self.headers['authorization']}'"
                payload = page.encode("utf-8")
                self.send_response(401)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server.RequestHandlerClass = Handler


def test_an_endpoint_echoing_the_key_never_puts_it_in_the_error() -> None:
    echo = EchoingEndpoint()
    thread = threading.Thread(target=echo.server.serve_forever, daemon=True)
    thread.start()
    try:
        with pytest.raises(SummaryError) as raised:
            summarizer(echo, api_key=SECRET).summarize(table())  # type: ignore[arg-type]
    finally:
        echo.server.shutdown()
        echo.server.server_close()
    assert echo.headers[0]["authorization"] == f"Bearer {SECRET}"  # the key was sent, and echoed back
    message = str(raised.value)
    assert "HTTP 401" in message and "Bearer ***" in message
    assert SECRET not in message


def test_a_base_url_with_credentials_is_refused_without_repeating_them() -> None:
    with pytest.raises(ValueError) as raised:
        LlmSummarizer(base_url=f"http://user:{SECRET}@127.0.0.1:9/v1", model="m", extractive=EXTRACTIVE)
    assert SECRET not in str(raised.value) and "***@127.0.0.1" in str(raised.value)


def test_a_key_is_sent_over_plain_http_only_to_this_machine() -> None:
    with pytest.raises(ValueError, match="not https"):
        LlmSummarizer(base_url="http://llm.example.org/v1", model="m", api_key=SECRET, extractive=EXTRACTIVE)
    LlmSummarizer(base_url="https://llm.example.org/v1", model="m", api_key=SECRET, extractive=EXTRACTIVE)
    LlmSummarizer(base_url="http://localhost:11434/v1", model="m", api_key=SECRET, extractive=EXTRACTIVE)
    LlmSummarizer(base_url="http://llm.example.org/v1", model="m", extractive=EXTRACTIVE)  # no key, nothing to expose


def test_a_summary_that_repeats_the_key_is_refused_for_the_extractive_one(
    endpoint: FakeEndpoint, counter: TokenCounter, tmp_path: Path
) -> None:
    """An endpoint (a compromised or misconfigured proxy) whose successful answer quotes the key: the table keeps
    its extractive summary, the warning names the table, and nothing of the answer is cached."""
    endpoint.script = [("ok", f"Calendrier des rondes du championnat des clubs (clé {SECRET}), dates et horaires.")]
    pages = build_pages()
    llm = summarizer(endpoint, api_key=SECRET, extractive=ExtractiveSummarizer(counter))
    cache = SummaryCache(tmp_path)
    batch = summarize_tables(IDENTITY, pages, build_parents(pages), ChunkPolicy(), counter, llm, cache)
    extractive = summarize_tables(IDENTITY, pages, build_parents(pages), ChunkPolicy(), counter, ExtractiveSummarizer(counter))
    assert [chunk.text for chunk in batch.chunks] == [chunk.text for chunk in extractive.chunks]
    assert all(SECRET not in chunk.text for chunk in batch.chunks)
    assert len(batch.stats.fallbacks) == 2
    assert batch.stats.fallbacks[0].startswith("A02_Championnat_de_France_des_Clubs.pdf, page 1, table 0: the summary")
    assert "refused: it holds the API key" in batch.stats.fallbacks[0]
    assert all(SECRET not in why for why in batch.stats.fallbacks)
    assert len(cache) == 0


def test_a_summary_holding_a_credential_shaped_word_is_refused(endpoint: FakeEndpoint) -> None:
    endpoint.script = [("ok", "Calendrier des rondes ; Authorization: Bearer abcdef0123456789xyz ; dates et horaires.")]
    summary = summarizer(endpoint).summarize(table())
    assert summary.fallback is not None and "refused" in summary.fallback
    assert summary.text == EXTRACTIVE.summarize(table()).text


def test_without_a_key_no_authorization_is_sent_not_even_another_variables(
    endpoint: FakeEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)  # the client's own variable: never a fallback for ours
    summary = summarizer(endpoint, api_key="").summarize(table())
    assert summary.text == REPLY
    assert "authorization" not in endpoint.headers[0]
    assert all(SECRET not in value for value in endpoint.headers[0].values())
