"""Table summaries placed as chunks: one short `table_summary` chunk per table, so a question finds the table.

A table's own chunk is rows of cells, which embeds poorly; a sentence saying what the table is
about is what a question like "quand a lieu la ronde 5 ?" lands on. The sentence comes from a
`Summarizer` (`extractive`, offline and the default, or `llm`); this module finds the tables,
asks the `SummaryCache` first (keyed by the table's Markdown, its caption or heading, its language
and the summarizer's `cache_key_parts()`: an unchanged PDF makes no new LLM call), files each
summary under the heading and article in force at its table and fits it to the device's window.

Numbering: the `n` of `{source}-p{page:03d}-table{n:03d}` counts tables in document reading order
from 000 (like parents, seed SPEC-SCH-001 §3.1), and is the summary's `chunk_index`; ids are unique
because `n` is.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Sequence

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
from pocket_assets.core.tables.cache import SummaryCache, summary_cache_key
from pocket_assets.core.tables.extractive import ELLIPSIS
from pocket_assets.core.tables.readable import readable_cells
from pocket_assets.core.tables.summarizer import LANGUAGES, Summarizer, SummaryError, SummaryText, TableContext
from pocket_assets.core.tables.types import classify_table
from pocket_assets.core.tokenizer import TextCounter

_HEADING_MARKS = re.compile(r"^\s*#{1,6}\s*")
_CAPTION_LIKE = re.compile(r"^\s*(?:tableau|table|tab\.|grille|annexe)\b", re.IGNORECASE)
_STOPWORDS = {
    "fr": frozenset("le la les des du et est une un pour dans par sur au aux qui que ne pas avec sont".split()),
    "en": frozenset("the of and to in is are for on with by be this that it from as or an".split()),
}
_WORD = re.compile(r"[^\W\d_]+")


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
            if fits(" ".join(words[:middle]) + ELLIPSIS):
                low = middle
            else:
                high = middle - 1
        text = " ".join(words[:low]).rstrip(" ,;:") + ELLIPSIS
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
