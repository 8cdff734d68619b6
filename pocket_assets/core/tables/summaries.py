"""Table summaries: one short `table_summary` chunk per table, so a question finds the table.

A table's own chunk is rows of cells, which embeds poorly; a sentence saying what
the table is about ("Tableau « Calendrier » de 9 lignes : Ronde, Date, Heure")
is what a question like "quand a lieu la ronde 5 ?" lands on. Two summarizers
share one protocol:

- `ExtractiveSummarizer` (default): offline and deterministic, built from the
  caption or nearest heading, the header row, the row count and the key values
  of the first text column, grown to about `target_tokens` with the configured
  tokenizer;
- `LlmSummarizer`: any OpenAI-compatible `POST {base_url}/chat/completions`
  endpoint, with a timeout, bounded retries with exponential back-off, and an
  error naming the table; optionally falling back to another summarizer.

`summarize_tables` turns a document's table blocks into `ChunkRecord`s. It asks
the `SummaryCache` first, keyed by the table's Markdown, its caption or
heading, its language and the summarizer's `cache_key_parts()` (kind, model,
prompt...), so re-materializing an unchanged PDF makes no new LLM call.

Numbering: the `n` of `{source}-p{page:03d}-table{n:03d}` counts tables in
document reading order from 000 (like parents, seed SPEC-SCH-001 §3.1), and is
the summary's `chunk_index`; ids are unique because `n` is.
"""

from __future__ import annotations

import bisect
import json
import re
import time
import urllib.error
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Protocol, Sequence
from urllib.parse import urlsplit

from pocket_assets.core import ids
from pocket_assets.core.chunking.context import ContextHeaders
from pocket_assets.core.chunking.embed_text import count_embedded, fold_whitespace, text_to_embed
from pocket_assets.core.chunking.sections import build_section_index
from pocket_assets.core.chunking.segments import plan_segments
from pocket_assets.core.policy import ChunkPolicy
from pocket_assets.core.records import (
    Block,
    ChunkRecord,
    ContentFeatures,
    PageRecord,
    PdfIdentity,
    PlacedChunk,
    TableCells,
    new_chunk,
)
from pocket_assets.core.redaction import has_credentials, is_local, redact, url_without_credentials
from pocket_assets.core.tables.cache import SummaryCache, summary_cache_key
from pocket_assets.core.tables.readable import readable_cells
from pocket_assets.core.tables.types import classify_table
from pocket_assets.core.tokenizer import TextCounter

LANGUAGES = ("fr", "en")
EXTRACTIVE_VERSION = "extractive-v1"  # bump when the sentence template changes: it is part of the cache key
MIN_SUMMARY_CHARS = 50
_MAX_ITEM_CHARS = 40
_MAX_TITLE_CHARS = 90
_ELLIPSIS = "…"
_HEADING_MARKS = re.compile(r"^\s*#{1,6}\s*")
_CAPTION_LIKE = re.compile(r"^\s*(?:tableau|table|tab\.|grille|annexe)\b", re.IGNORECASE)
_HAS_WORD_OR_NUMBER = re.compile(r"\w")  # "..." or "—" is filler, not a key value
_NUMERIC = re.compile(r"^[\d\s.,:/%+\-–½=]*$")
_STOPWORDS = {
    "fr": frozenset("le la les des du et est une un pour dans par sur au aux qui que ne pas avec sont".split()),
    "en": frozenset("the of and to in is are for on with by be this that it from as or an".split()),
}
_WORD = re.compile(r"[^\W\d_]+")
_RETRYABLE_HTTP = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


@dataclass(frozen=True)
class TableContext:
    """Everything a summarizer may read about one table."""

    source: str
    page: int
    table_index: int  # the table's `n` in the document (see module docstring)
    language: str  # "fr" or "en"
    caption_or_heading: str | None
    cells: TableCells
    markdown: str  # the table's text in the canonical document (a pipe table)


@dataclass(frozen=True)
class SummaryText:
    """A summary and what it cost: HTTP requests made, seconds spent waiting, and a fallback reason."""

    text: str
    requests: int = 0
    seconds: float = 0.0
    fallback: str | None = None  # set when the text comes from the fallback summarizer


class Summarizer(Protocol):
    kind: str  # "extractive" | "llm"

    def cache_key_parts(self) -> tuple[str, ...]:
        """Everything besides the table that changes the summary (kind, model, prompt, version)."""
        ...

    def summarize(self, table: TableContext) -> SummaryText: ...


class SummaryError(Exception):
    """A table that could not be summarized, named so a maintainer can find it."""

    def __init__(self, source: str, page: int, table_index: int, reason: str) -> None:
        self.source = source
        self.page = page
        self.table_index = table_index
        self.reason = reason
        super().__init__(f"{source}, page {page}, table {table_index}: {reason}")

    @classmethod
    def about(cls, table: TableContext, reason: str) -> SummaryError:
        return cls(table.source, table.page, table.table_index, reason)


@dataclass(frozen=True)
class SummaryStats:
    """What the asset reports: counts are numbers so the UI can plot them."""

    tables: int
    tables_per_page: dict[int, int]
    table_types: dict[str, int]
    summaries: int
    cache_hits: int
    llm_calls: int  # HTTP requests sent, retries included
    llm_seconds: float
    fallbacks: tuple[str, ...]  # one reason per table that fell back, naming the table


@dataclass(frozen=True)
class SummaryBatch:
    chunks: tuple[ChunkRecord, ...]
    stats: SummaryStats


# --- the extractive summarizer -------------------------------------------------------------------

_PHRASES = {
    "en": {
        "titled": 'Table "{title}"',
        "untitled": "Table",
        "shape": " with {rows} and {columns}",
        "row": ("row", "rows"),
        "column": ("column", "columns"),
        "more": "and {count} more",
        "and": "and",
        "first_column": "first column",
        "colon": ":",
        "semicolon": ";",
        "padding": " — a table of the document",
    },
    "fr": {
        "titled": "Tableau « {title} »",
        "untitled": "Tableau",
        "shape": " de {rows} et {columns}",
        "row": ("ligne", "lignes"),
        "column": ("colonne", "colonnes"),
        "more": "et {count} autres",
        "and": "et",
        "first_column": "première colonne",
        "colon": " :",
        "semicolon": " ;",
        "padding": " — un tableau du document",
    },
}


@dataclass(frozen=True)
class ExtractiveSummarizer:
    """One sentence from the table's own words, grown item by item up to `target_tokens`.

    The title and the shape always appear; then header names and key values are
    added alternately while the sentence stays within the target, so a wide
    table still names some of its rows and a long one some of its columns.
    """

    counter: TextCounter  # a step's `PieceCounter`: a sentence tried costs no tokenizer call
    target_tokens: int = 50
    kind: str = field(default="extractive", init=False)

    def cache_key_parts(self) -> tuple[str, ...]:
        return (self.kind, EXTRACTIVE_VERSION, self.counter.name, str(self.target_tokens))

    def summarize(self, table: TableContext) -> SummaryText:
        phrases = _PHRASES[table.language]
        columns = [_clip(name) for name in table.cells.header if fold_whitespace(name)]
        key_label, key_values = _key_column(table.cells)
        label = _clip(key_label) if key_label else phrases["first_column"]
        shown_columns = min(2, len(columns))
        shown_values = min(1, len(key_values))

        def sentence(column_count: int, value_count: int) -> str:
            return _sentence(table, phrases, columns[:column_count], len(columns), label, key_values, value_count)

        grew = True
        while grew:
            grew = False
            for more_columns, more_values in ((1, 0), (0, 1)):
                columns_next, values_next = shown_columns + more_columns, shown_values + more_values
                if columns_next > len(columns) or values_next > len(key_values):
                    continue
                if self.counter.count(sentence(columns_next, values_next)) <= self.target_tokens:
                    shown_columns, shown_values, grew = columns_next, values_next, True
        text = sentence(shown_columns, shown_values)
        if len(text) < MIN_SUMMARY_CHARS:
            text = text[:-1] + phrases["padding"] + "."
        return SummaryText(text)


def _sentence(
    table: TableContext,
    phrases: dict,
    columns: list[str],
    column_total: int,
    label: str,
    key_values: list[str],
    value_count: int,
) -> str:
    title = _clip(table.caption_or_heading or "", _MAX_TITLE_CHARS)
    row_count = len(table.cells.rows)
    width = max([len(table.cells.header)] + [len(row) for row in table.cells.rows])
    text = phrases["titled"].format(title=title) if title else phrases["untitled"]
    text += phrases["shape"].format(
        rows=_counted(row_count, phrases["row"]), columns=_counted(width, phrases["column"])
    )
    if columns:
        text += phrases["colon"] + " " + _listing(columns, column_total, phrases)
    if value_count:
        text += (
            phrases["semicolon"]
            + f" {label}{phrases['colon']} "
            + _listing(key_values[:value_count], len(key_values), phrases)
        )
    return text + "."


def _counted(count: int, nouns: tuple[str, str]) -> str:
    return f"{count} {nouns[0] if count == 1 else nouns[1]}"


def _listing(items: list[str], total: int, phrases: dict) -> str:
    """`a, b, c and 4 more`, or `a, b and c` when every item is shown."""
    if len(items) < total:
        return ", ".join(items) + " " + phrases["more"].format(count=total - len(items))
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + f" {phrases['and']} " + items[-1]


def _clip(text: str, limit: int = _MAX_ITEM_CHARS) -> str:
    flat = fold_whitespace(text)
    if len(flat) <= limit:
        return flat
    cut = flat[:limit]
    return (cut[: cut.rfind(" ")] if " " in cut else cut).rstrip(" ,;:") + _ELLIPSIS


def _key_column(cells: TableCells) -> tuple[str, list[str]]:
    """The first non-empty column, with its distinct values in order: what the rows are about.

    A column without a name holding only numbers is row numbering, not keys: it is skipped.
    """
    width = max([len(cells.header)] + [len(row) for row in cells.rows])
    for column in range(width):
        name = fold_whitespace(cells.header[column]) if column < len(cells.header) else ""
        values = [fold_whitespace(row[column]) for row in cells.rows if column < len(row)]
        distinct = list(dict.fromkeys(_clip(value) for value in values if _HAS_WORD_OR_NUMBER.search(value)))
        if distinct and (name or any(not _NUMERIC.match(value) for value in distinct)):
            return name, distinct
    return "", []


# --- the LLM summarizer --------------------------------------------------------------------------

DEFAULT_SYSTEM_PROMPT = (
    "You summarize tables from regulation documents so that a search engine can find them. "
    "Write a single sentence of about {target_tokens} tokens in {language}: say what the table is for, "
    "name its columns and what its rows list. Plain text only: no Markdown, no preamble."
)
USER_PROMPT = "Title: {title}\nTable ({rows} rows):\n{markdown}"
_LANGUAGE_NAMES = {"fr": "French", "en": "English"}


class _EndpointFailure(Exception):
    def __init__(self, reason: str, retryable: bool) -> None:
        super().__init__(reason)
        self.retryable = retryable


@dataclass(frozen=True)
class LlmSummarizer:
    """An OpenAI-compatible chat endpoint (Ollama, vLLM, llama.cpp server, a hosted API).

    `api_key` is the key itself (the Dagster resource reads it from the
    environment). It is sent over https, or plain http to this machine only, and never
    written anywhere: every error text is `redact`ed of it (an endpoint may echo the
    `Authorization` header in its error page); a base URL holding credentials is refused.
    A request that times out, cannot connect or gets 408/429/5xx
    is retried `max_retries` times, waiting `backoff_seconds * 2**k`; other
    errors fail at once. When every attempt fails, `summarize` raises a
    `SummaryError` naming the table, unless `fallback` is set: then the
    fallback's text is returned, flagged with the reason.
    """

    base_url: str
    model: str
    api_key: str = ""
    timeout_seconds: float = 60.0
    max_retries: int = 2
    backoff_seconds: float = 1.0
    target_tokens: int = 50
    max_table_chars: int = 6000
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    fallback: Summarizer | None = None
    kind: str = field(default="llm", init=False)

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
        requests = 0
        reason = ""
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(self.backoff_seconds * 2 ** (attempt - 1))
            requests += 1
            try:
                text = self._reply_text(self._post(self._payload(table)))
                return SummaryText(text, requests=requests, seconds=time.perf_counter() - started)
            except _EndpointFailure as failure:
                reason = redact(str(failure), (self.api_key,))
                if not failure.retryable:
                    break
        error = SummaryError.about(
            table, f"LLM endpoint {self.endpoint} (model {self.model}) failed after {requests} attempt(s): {reason}"
        )
        if self.fallback is None:
            raise error
        fallback = self.fallback.summarize(table)
        return SummaryText(fallback.text, requests=requests, seconds=time.perf_counter() - started, fallback=str(error))

    def _payload(self, table: TableContext) -> dict:
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

    def _post(self, payload: dict) -> dict:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(
            self.endpoint, data=json.dumps(payload).encode("utf-8"), headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_seconds) as response:
                body = response.read()
        except urllib.error.HTTPError as error:
            detail = error.read(300).decode("utf-8", "replace").strip()
            retryable = error.code in _RETRYABLE_HTTP
            raise _EndpointFailure(f"HTTP {error.code} {error.reason}: {detail}", retryable) from None
        except TimeoutError:
            raise _EndpointFailure(f"no answer within {self.timeout_seconds:g} s", True) from None
        except urllib.error.URLError as error:
            if isinstance(error.reason, TimeoutError):
                raise _EndpointFailure(f"no answer within {self.timeout_seconds:g} s", True) from None
            raise _EndpointFailure(f"cannot reach the endpoint ({error.reason})", True) from None
        except OSError as error:  # connection reset, broken pipe, ...
            raise _EndpointFailure(f"connection failed ({error})", True) from None
        try:
            return json.loads(body)
        except ValueError:
            raise _EndpointFailure(f"reply is not JSON: {body[:200]!r}", False) from None

    @staticmethod
    def _reply_text(reply: dict) -> str:
        try:
            content = reply["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise _EndpointFailure(f"reply has no choices[0].message.content: {str(reply)[:200]}", False) from None
        text = fold_whitespace(content or "")
        if len(text) < MIN_SUMMARY_CHARS:
            raise _EndpointFailure(f"reply shorter than {MIN_SUMMARY_CHARS} characters: {text!r}", False)
        return text


def _first_lines(text: str, limit: int) -> str:
    """The table's first lines within `limit` characters: header and leading rows say what it is."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    return cut[: cut.rfind("\n")] if "\n" in cut else cut


# --- from table blocks to chunk records ----------------------------------------------------------


def document_language(corpus: str, text: str) -> str:
    """The corpus's language (`fr` -> French, `intl` -> English) unless the text clearly says otherwise:
    the other language's common words must be at least twice as frequent, and at least 10."""
    default = "fr" if corpus == "fr" else "en"
    other = "en" if default == "fr" else "fr"
    words = Counter(word.lower() for word in _WORD.findall(text))
    hits = {language: sum(words[word] for word in _STOPWORDS[language]) for language in LANGUAGES}
    return other if hits[other] >= 10 and hits[other] >= 2 * hits[default] else default


def has_table_blocks(pages: Iterable[PageRecord]) -> bool:
    """Whether any page holds a table block: without one, `summarize_tables` reads nothing of the chunks."""
    return any(block.kind == "table" for page in pages for block in page.blocks)


def summarize_tables(
    identity: PdfIdentity,
    pages: Sequence[PageRecord],
    parents: Sequence[PlacedChunk],
    policy: ChunkPolicy,
    counter: TextCounter,
    summarizer: Summarizer,
    cache: SummaryCache | None = None,
    *,
    children: Sequence[PlacedChunk] = (),
) -> SummaryBatch:
    """One `table_summary` record per table block with cells to read, in reading order, linked to the parent holding it.

    Canonical ids number a summary's block after the blocks `parents` and `children`
    already use in its section and page, so no two records of a document share one. Of them,
    only their places are read (`ChunkPlace`): the stored chunks' texts need not be loaded.

    Each summary is filed (section path, article, context header: title > section path >
    article) under the heading and article in force at its table, which a parent starting
    before an earlier heading does not give; its text is folded to one line and trimmed (at a
    word, with `…`) until `text_to_embed` with that header fits the device's window (`policy.max_tokens`). Raises `SummaryError`
    naming the table when a summarizer fails without fallback, when no parent
    holds a table, or when a summary cannot be at least `policy.min_chars` long.
    """
    pages = tuple(pages)
    parent_finder = _ParentFinder(parents)
    # A table in text the chunker leaves out (below the minimum, nothing to join) has no parent: no summary.
    left_out = plan_segments(pages, policy.page_mode, policy.min_chars).left_out
    tables = [
        table
        for table in _locate_tables(identity, pages)
        if not any(short.char_start <= table.char_start < short.char_end for short in left_out)
    ]
    holders = [parent_finder.holding(table.context, table.char_start) for table in tables]  # before any LLM call
    # Filed under the heading and article in force at the table, not at its parent's start: a parent
    # opening in ARTICLE 16 may hold ARTICLE 19's table, which a reader cites as article 19's.
    sections = build_section_index(pages)
    places = [sections.section_at(table.char_start) for table in tables]
    articles = [sections.article_at(table.char_start) for table in tables]
    headers = ContextHeaders.for_document(identity, pages, policy, counter)
    contexts = [headers.header(place.section_path, article) for place, article in zip(places, articles)]
    texts: list[str] = []
    cache_hits = requests = 0
    seconds = 0.0
    fallbacks: list[str] = []
    # Summaries made here go to the cache in one transaction at the end, even when a later table fails;
    # a table repeated in the document finds its twin's among them, as it would in the cache.
    made: dict[str, str] = {}
    try:
        for table, header in zip(tables, contexts):
            context = table.context
            key = summary_cache_key(
                (context.markdown, context.caption_or_heading or "", context.language, *summarizer.cache_key_parts())
            )
            cached = made.get(key) if key in made else cache.get(key) if cache is not None else None
            if cached is not None:
                cache_hits += 1
                summary = SummaryText(cached)
            else:
                summary = summarizer.summarize(context)
                if cache is not None and summary.fallback is None:
                    made[key] = summary.text
            requests += summary.requests
            seconds += summary.seconds
            if summary.fallback is not None:
                fallbacks.append(summary.fallback)
            texts.append(_fit_cap(context, header, fold_whitespace(summary.text), policy, counter))
    finally:
        if cache is not None:
            cache.put_many([(key, summarizer.kind, text) for key, text in made.items()])

    document_id = ids.document_uuid(identity.partition_key)
    doc_uid = ids.doc_uid(identity.partition_key)
    # The revision the holding parents were made with (the same text's hash): not the whole text hashed again.
    revision = ids.canonical_revision(holders[0].canonical_id) if holders else ""
    token_counts = counter.count_batch(texts)
    embedded_counts = count_embedded(
        counter,
        [
            text_to_embed(text, identity.source, table.context.page, policy.device.document_prompt, header)
            for table, text, header in zip(tables, texts, contexts)
        ],
        policy.device,
    )
    next_block = _next_free_blocks((*parents, *children))
    records = []
    for table, parent, section, article, text, tokens, header, embedded in zip(
        tables, holders, places, articles, texts, token_counts, contexts, embedded_counts
    ):
        context = table.context
        record_id = ids.table_summary_id(identity.source, context.page, context.table_index)
        place = ids.canonical_place(doc_uid, revision, section.section_id, context.page)
        block = next_block.get(place, 0)
        next_block[place] = block + 1
        records.append(
            new_chunk(
                identity,
                document_id,
                policy,
                id=record_id,
                text=text,
                anchor_text=text,
                chunk_type="table_summary",
                page=context.page,
                pages=(context.page,),
                tokens=tokens,
                section=section.section,
                section_path=section.section_path,
                section_id=section.section_id,
                article_num=article,
                parent_id=parent.id,
                table_type=classify_table(context.cells, context.caption_or_heading).table_type,
                char_start=table.char_start,
                char_end=table.char_end,
                line_from=table.line_from,
                line_to=table.line_to,
                canonical_id=ids.canonical_id(doc_uid, revision, section.section_id, context.page, block),
                chunk_index=context.table_index,
                total_chunks=len(tables),
                has_overlap_previous=False,
                has_overlap_next=False,
                content_type="table",
                content_features=ContentFeatures(table_count=1),
                context=header,
                embedded_tokens=embedded,
            )
        )
    stats = SummaryStats(
        tables=len(tables),
        tables_per_page=dict(Counter(table.context.page for table in tables)),
        table_types=dict(Counter(record.table_type for record in records)),
        summaries=len(records),
        cache_hits=cache_hits,
        llm_calls=requests,
        llm_seconds=seconds,
        fallbacks=tuple(fallbacks),
    )
    return SummaryBatch(chunks=tuple(records), stats=stats)


@dataclass(frozen=True)
class _LocatedTable:
    """A table's context and where it sits: document span and 1-based lines."""

    context: TableContext
    char_start: int
    char_end: int
    line_from: int
    line_to: int


def _next_free_blocks(chunks: Iterable[PlacedChunk]) -> dict[str, int]:
    """Per canonical place (document, revision, section, page): the first block number no chunk uses."""
    next_block: dict[str, int] = {}
    for chunk in chunks:
        place, block = ids.split_canonical_id(chunk.canonical_id)
        if block is not None:
            next_block[place] = max(next_block.get(place, 0), block + 1)
    return next_block


def _locate_tables(identity: PdfIdentity, pages: tuple[PageRecord, ...]) -> list[_LocatedTable]:
    """Every table block with cells to read, in reading order, with its title and language.

    The title is the table's caption, else a caption-like paragraph just before
    it ("Tableau 2 - ..."), else the nearest heading before it in the document.
    """
    found = []
    last_heading: str | None = None
    for page in pages:
        language: str | None = None  # read only on pages that hold a table
        previous: Block | None = None
        for block in page.blocks:
            block_text = page.text[block.char_start : block.char_end]
            if block.kind == "heading":
                last_heading = fold_whitespace(_HEADING_MARKS.sub("", block_text)) or last_heading
            elif block.kind == "table":
                cells = block.table or cells_from_markdown(block_text)
                if not readable_cells(cells):  # empty or unreadable cells: nothing a summary could say
                    previous = block
                    continue
                language = language or document_language(identity.corpus, page.text)
                title = cells.caption or last_heading
                if previous is not None and previous.kind == "paragraph":
                    previous_text = fold_whitespace(page.text[previous.char_start : previous.char_end])
                    if len(previous_text) <= 150 and _CAPTION_LIKE.match(previous_text):
                        title = cells.caption or previous_text
                context = TableContext(
                    source=identity.source,
                    page=page.page,
                    table_index=len(found),
                    language=language,
                    caption_or_heading=title,
                    cells=cells,
                    markdown=block_text,
                )
                found.append(
                    _LocatedTable(
                        context=context,
                        char_start=page.char_start + block.char_start,
                        char_end=page.char_start + block.char_end,
                        line_from=page.line_start + page.text.count("\n", 0, block.char_start),
                        line_to=page.line_start + page.text.count("\n", 0, max(block.char_end - 1, 0)),
                    )
                )
            previous = block
    return found


def cells_from_markdown(markdown: str) -> TableCells:
    """Cells read back from a pipe table, for a table block that came without them."""
    rows = []
    for line in markdown.splitlines():
        stripped = line.strip()
        if not stripped.startswith("|") or set(stripped) <= set("|-: "):
            continue
        cells = re.split(r"(?<!\\)\|", stripped.strip("|"))
        rows.append(tuple(cell.strip().replace("\\|", "|") for cell in cells))
    if not rows:
        return TableCells(header=(), rows=((fold_whitespace(markdown),),))
    return TableCells(header=rows[0], rows=tuple(rows[1:]))


def _fit_cap(context: TableContext, header: str, text: str, policy: ChunkPolicy, counter: TextCounter) -> str:
    """The longest word prefix (plus `…`) whose embedded string, behind `header`, fits the device's window."""

    def fits(candidate: str) -> bool:
        embedded = text_to_embed(candidate, context.source, context.page, policy.device.document_prompt, header)
        return count_embedded(counter, [embedded], policy.device)[0] <= policy.max_tokens

    if not fits(text):
        words = text.split(" ")
        low, high = 0, len(words) - 1  # the longest fitting prefix has `low` words
        while low < high:
            middle = (low + high + 1) // 2
            if fits(" ".join(words[:middle]) + _ELLIPSIS):
                low = middle
            else:
                high = middle - 1
        text = " ".join(words[:low]).rstrip(" ,;:") + _ELLIPSIS
    if len(text) < policy.min_chars:
        raise SummaryError.about(
            context,
            f"summary {text!r} is shorter than {policy.min_chars} characters within the device's {policy.max_tokens}-token window",
        )
    return text


class _ParentFinder:
    """The first parent (in reading order) whose span holds a given offset, by binary search.

    Parents come in reading order, so their ends increase: the first parent
    ending after the offset is the first that can hold it.
    """

    def __init__(self, parents: Sequence[PlacedChunk]) -> None:
        self.parents = sorted(parents, key=lambda parent: (parent.char_start, parent.char_end))
        self.ends = [parent.char_end for parent in self.parents]

    def holding(self, table: TableContext, offset: int) -> PlacedChunk:
        index = bisect.bisect_right(self.ends, offset)
        if index < len(self.parents) and self.parents[index].char_start <= offset:
            return self.parents[index]
        raise SummaryError.about(table, f"no parent chunk holds offset {offset}; chunk the document before summarizing")
