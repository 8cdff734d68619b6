"""Retrieval evaluation: does a chunker version make the right page easier to find?

A gold file lists questions with the documents and pages (1-based) that answer
them. What is searched is what the phone embeds: one `Passage` per exported SDK
line (`passages_from_export`: the device's document prompt, context header, text and
citation, exactly `embed_text.text_to_embed`), citing one page, and of it what the
device's embedder reads (its window, `device.read_by_embedder`): a line longer than
the window is searched by its start, as on the phone. Passages are
ranked per question (BM25 here; dense and hybrid rankings come from
`embeddings.py` and `fuse_rankings`), and one shared piece of arithmetic turns
any ranking into hit@k and MRR. A hit is a retrieved passage from an expected
document whose cited page is one of the expected pages, because a citation to
the wrong page is a wrong answer for the people reading it.

Docs: docs/gold-format.md.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from pocket_assets.core.chunking.embed_text import (
    CHUNK_SPLITTER,
    fold_accents,
    line_text,
    prompt_for,
    sdk_content,
)
from pocket_assets.core.device import DeviceProfile, read_by_embedder
from pocket_assets.core.export.corpus_files import (
    MODE_B_FILE,
    SDK_CHUNK_TYPES,
    SDK_FILE,
    export_paths,
    parse_sdk_line,
    read_sdk_lines,
)
from pocket_assets.core.records import ChunkRecord

if TYPE_CHECKING:
    from pocket_assets.core.tokenizer import TokenCounter

DEFAULT_K_VALUES: tuple[int, ...] = (1, 3, 5, 10)
# What the phone searches: parents only give context to the LLM, they are never retrieved.
SEARCHABLE_CHUNK_TYPES: tuple[str, ...] = SDK_CHUNK_TYPES
# Snowball stemmer per corpus; a corpus not listed is stemmed as English.
CORPUS_LANGUAGES: Mapping[str, str] = {"fr": "french", "intl": "english"}
DEFAULT_LANGUAGE = "english"
RRF_K = 60
# How BM25 reads words: `snowball` (the evaluation's: stemmed per language, accents folded, FR+EN
# stopwords) or `plain` (bm25s's default: `\w\w+` lowercased, English stopwords, nothing else; an
# off-the-shelf BM25, for which `R01_2025_26_Regles.pdf` is one word and `règle` is not `règles`).
BM25_TOKENIZERS: tuple[str, ...] = ("snowball", "plain")

_GOLD_REQUIRED = ("id", "question", "corpus", "expected_docs", "expected_pages")
_GOLD_OPTIONAL = ("expected_chunk_id", "notes")
_WORD = re.compile(r"[^\W_]+")
_LINE_BREAK_HYPHEN = re.compile(r"(?<=[^\W\d_])-\n(?=[^\W\d_])")
_PLAIN_WORD = re.compile(r"\b\w\w+\b")


class GoldFormatError(ValueError):
    """A gold file that does not follow docs/gold-format.md; the message names file and line."""


@dataclass(frozen=True)
class GoldQuestion:
    """One question and where its answer is. An empty `expected_pages` accepts any page of the documents.

    `expected_chunk_id`, when set, makes only that chunk a hit: chunk ids change with the
    chunker, so such a gold file measures one chunker version, not a comparison.
    """

    id: str
    question: str
    corpus: str
    expected_docs: tuple[str, ...]
    expected_pages: tuple[int, ...]
    expected_chunk_id: str | None = None
    notes: str | None = None


@dataclass(frozen=True)
class Passage:
    """One string the phone searches, as it embeds it, and the page its citation names.

    `id` and `uid` are the chunk's (`id`, `chunk_uid`); `pages` is the cited page alone.
    """

    id: str
    uid: str
    corpus: str
    source: str
    pages: tuple[int, ...]
    text: str


class ExportMismatchError(ValueError):
    """An SDK file and its corpus JSON do not describe the same chunks (one of them is stale or edited)."""


@dataclass(frozen=True)
class QuestionResult:
    """One row of the per-question table: where the first hit came, and what came first."""

    question_id: str
    corpus: str
    first_hit_rank: int | None  # 1-based rank of the first hit within the ranking depth, None if missed
    top_ids: tuple[str, ...]
    top_pages: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class RetrievalReport:
    """`metrics` holds `hit@k` for each k and `mrr` (MRR@max(k)), each in [0, 1], plus `questions`."""

    method: str
    k_values: tuple[int, ...]
    metrics: dict[str, float]
    corpus_metrics: dict[str, dict[str, float]]
    rows: tuple[QuestionResult, ...]
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def table(self) -> list[dict[str, Any]]:
        """Plain rows for a metadata table or a DataFrame (ids and pages joined as text)."""
        return [
            {
                "question_id": row.question_id,
                "corpus": row.corpus,
                "first_hit_rank": row.first_hit_rank,
                "top_ids": " ".join(row.top_ids),
                "top_pages": " ".join(",".join(map(str, pages)) for pages in row.top_pages),
            }
            for row in self.rows
        ]


# --- gold file ------------------------------------------------------------------------------


def load_gold(path: Path) -> tuple[GoldQuestion, ...]:
    """Read a `.jsonl` file (one question per line) or a `.json` array; errors name the line."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        entries = [
            (number, _parse_json(line, path, number))
            for number, line in enumerate(text.splitlines(), start=1)
            if line.strip() and not line.lstrip().startswith("//")
        ]
    else:
        document = _parse_json(text, path, 1)
        if not isinstance(document, list):
            raise GoldFormatError(f"{path}: a .json gold file holds an array of questions")
        entries = [(index, entry) for index, entry in enumerate(document, start=1)]
    questions = tuple(_gold_question(entry, f"{path}:{where}") for where, entry in entries)
    _check_unique_ids(questions, path)
    return questions


def _parse_json(text: str, path: Path, line: int) -> Any:
    try:
        return json.loads(text)
    except ValueError as error:
        raise GoldFormatError(f"{path}:{line}: not valid JSON ({error})") from None


def _gold_question(entry: Any, where: str) -> GoldQuestion:
    if not isinstance(entry, dict):
        raise GoldFormatError(f"{where}: a question is a JSON object")
    missing = [key for key in _GOLD_REQUIRED if key not in entry]
    unknown = sorted(set(entry) - set(_GOLD_REQUIRED) - set(_GOLD_OPTIONAL))
    if missing or unknown:
        raise GoldFormatError(f"{where}: missing fields {missing}, unknown fields {unknown}")
    docs, pages = entry["expected_docs"], entry["expected_pages"]
    if not isinstance(docs, list) or not docs or not all(isinstance(doc, str) and doc for doc in docs):
        raise GoldFormatError(f"{where}: expected_docs must be a non-empty list of file names")
    if not isinstance(pages, list) or not all(isinstance(page, int) and page >= 1 for page in pages):
        raise GoldFormatError(f"{where}: expected_pages must be a list of 1-based page numbers")
    for key in ("id", "question", "corpus"):
        if not isinstance(entry[key], str) or not entry[key].strip():
            raise GoldFormatError(f"{where}: {key} must be a non-empty string")
    chunk_id = entry.get("expected_chunk_id")
    if chunk_id is not None and not isinstance(chunk_id, str):
        raise GoldFormatError(f"{where}: expected_chunk_id must be a string or null")
    return GoldQuestion(
        id=entry["id"],
        question=entry["question"],
        corpus=entry["corpus"],
        expected_docs=tuple(docs),
        expected_pages=tuple(sorted(set(pages))),
        expected_chunk_id=chunk_id,
        notes=entry.get("notes"),
    )


def _check_unique_ids(questions: Sequence[GoldQuestion], path: Path) -> None:
    seen: set[str] = set()
    for question in questions:
        if question.id in seen:
            raise GoldFormatError(f"{path}: question id {question.id!r} appears twice")
        seen.add(question.id)


# --- passages -------------------------------------------------------------------------------


def passages_from_chunks(
    chunks: Iterable[ChunkRecord], device: DeviceProfile | None = None, counter: TokenCounter | None = None
) -> list[Passage]:
    """The passages `passages_from_export` would give for these chunks (children and table summaries), in id
    order."""
    searchable = searchable_chunks(chunks)
    texts = [sdk_content(chunk.text, chunk.source, chunk.page, chunk.context) for chunk in searchable]
    read = as_embedded([chunk.source for chunk in searchable], texts, device, counter)
    return [
        Passage(
            id=chunk.id, uid=chunk.chunk_uid, corpus=chunk.corpus, source=chunk.source, pages=(chunk.page,), text=text
        )
        for chunk, text in zip(searchable, read)
    ]


def passages_from_export(
    export_dir: Path, corpus: str, device: DeviceProfile | None = None, counter: TokenCounter | None = None
) -> list[Passage]:
    """Every line of `chunks_{corpus}.txt`, with the id of its chunk from `chunks_mode_b_{corpus}.json`.

    Both files list the SDK chunks in the same order (`export_order`); each line is parsed back
    and must carry its chunk's header, text and citation, else `ExportMismatchError`. A passage's
    text is the line's content as `as_embedded` gives it: with `device`, its document prompt in front,
    and with `counter` too, what its embedder reads of that (the window: what the phone embeds).
    No export yet for the corpus gives no passage.
    """
    paths = export_paths(corpus, export_dir)
    if not paths[SDK_FILE].is_file() or not paths[MODE_B_FILE].is_file():
        return []
    records = json.loads(paths[MODE_B_FILE].read_text(encoding="utf-8"))["chunks"]
    chunks = [record for record in records if record["chunk_type"] in SDK_CHUNK_TYPES]
    lines = read_sdk_lines(paths[SDK_FILE])
    if len(lines) != len(chunks):
        raise ExportMismatchError(f"{paths[SDK_FILE]}: {len(lines)} lines for {len(chunks)} chunks in {MODE_B_FILE}")
    parsed_lines = []
    for number, (line, chunk) in enumerate(zip(lines, chunks), start=1):
        parsed = parse_sdk_line(line, has_context=bool(chunk.get("context")))
        expected = (chunk.get("context", ""), line_text(chunk["text"]), chunk["source"], chunk["page"])
        if (parsed.context, parsed.text, parsed.source, parsed.page) != expected:
            raise ExportMismatchError(f"{paths[SDK_FILE]}:{number}: does not match chunk {chunk['id']}")
        parsed_lines.append(parsed)
    prefix = f"{CHUNK_SPLITTER} "
    read = as_embedded(
        [parsed.source for parsed in parsed_lines], [line[len(prefix) :] for line in lines], device, counter
    )
    passages = [
        Passage(
            id=chunk["id"], uid=chunk["chunk_uid"], corpus=corpus, source=parsed.source, pages=(parsed.page,), text=text
        )
        for chunk, parsed, text in zip(chunks, parsed_lines, read)
    ]
    return sorted(passages, key=lambda passage: passage.id)


def as_embedded(
    sources: Sequence[str], contents: Sequence[str], device: DeviceProfile | None, counter: TokenCounter | None
) -> list[str]:
    """SDK line contents as the phone's embedder reads them: the device's document prompt in front, then cut
    to its window when a `counter` (the embedder's tokenizer) is given; the contents alone without a device."""
    if device is None:
        return list(contents)
    texts = [prompt_for(device.document_prompt, source) + content for source, content in zip(sources, contents)]
    return read_by_embedder(texts, device, counter) if counter is not None else texts


# --- metric arithmetic (shared by BM25, dense and hybrid) -----------------------------------


def k_values_for(device: DeviceProfile) -> tuple[int, ...]:
    """`DEFAULT_K_VALUES` and the device's `top_k` (the lines its LLM is given), in order."""
    return tuple(sorted({*DEFAULT_K_VALUES, device.top_k}))


def metric_names(device: DeviceProfile) -> tuple[str, ...]:
    """The metrics in the order a report shows them: hit@top_k first (what the phone hands its LLM), then
    the other hit@k and MRR."""
    return tuple(dict.fromkeys([f"hit@{device.top_k}", *(f"hit@{k}" for k in k_values_for(device)), "mrr"]))


def is_hit(passage: Passage, question: GoldQuestion) -> bool:
    if question.expected_chunk_id is not None:
        return passage.id == question.expected_chunk_id
    if passage.source not in question.expected_docs:
        return False
    return not question.expected_pages or not set(passage.pages).isdisjoint(question.expected_pages)


def evaluate_rankings(
    rankings: Mapping[str, Sequence[Passage]],
    questions: Sequence[GoldQuestion],
    k_values: Sequence[int] = DEFAULT_K_VALUES,
    method: str = "custom",
) -> RetrievalReport:
    """hit@k = share of questions with a hit in their top k; MRR = mean of 1/rank of the first hit
    within the top max(k) (0 when none). A question absent from `rankings` counts as a miss."""
    ks = tuple(sorted(set(k_values)))
    if not ks or ks[0] < 1:
        raise ValueError(f"k values must be positive integers, got {tuple(k_values)}")
    if not questions:
        raise ValueError("no questions to evaluate")
    depth = ks[-1]
    rows = []
    for question in questions:
        top = list(rankings.get(question.id, ()))[:depth]
        rank = next((position for position, passage in enumerate(top, start=1) if is_hit(passage, question)), None)
        rows.append(
            QuestionResult(
                question_id=question.id,
                corpus=question.corpus,
                first_hit_rank=rank,
                top_ids=tuple(passage.id for passage in top),
                top_pages=tuple(passage.pages for passage in top),
            )
        )
    corpora = sorted({row.corpus for row in rows})
    return RetrievalReport(
        method=method,
        k_values=ks,
        metrics=_metrics(rows, ks),
        corpus_metrics={corpus: _metrics([row for row in rows if row.corpus == corpus], ks) for corpus in corpora},
        rows=tuple(rows),
    )


def _metrics(rows: Sequence[QuestionResult], ks: tuple[int, ...]) -> dict[str, float]:
    ranks = [row.first_hit_rank for row in rows]
    metrics = {f"hit@{k}": sum(rank is not None and rank <= k for rank in ranks) / len(ranks) for k in ks}
    metrics["mrr"] = sum(1.0 / rank for rank in ranks if rank is not None) / len(ranks)
    metrics["questions"] = float(len(ranks))
    return metrics


def gold_warnings(passages: Sequence[Passage], questions: Sequence[GoldQuestion]) -> tuple[str, ...]:
    """Questions that cannot score whatever the ranking: their document, cited page or chunk id is absent."""
    ids = {passage.id for passage in passages}
    pages_by_doc: dict[tuple[str, str], set[int]] = {}
    for passage in passages:
        pages_by_doc.setdefault((passage.corpus, passage.source), set()).update(passage.pages)
    warnings = []
    for question in questions:
        if question.expected_chunk_id is not None and question.expected_chunk_id not in ids:
            warnings.append(f"{question.id}: expected_chunk_id {question.expected_chunk_id} is not among the chunks")
            continue
        known = [pages_by_doc.get((question.corpus, doc)) for doc in question.expected_docs]
        if all(pages is None for pages in known):
            warnings.append(f"{question.id}: none of {list(question.expected_docs)} is in corpus {question.corpus}")
        elif question.expected_pages and all(
            pages is None or pages.isdisjoint(question.expected_pages) for pages in known
        ):
            warnings.append(f"{question.id}: no passage cites pages {list(question.expected_pages)}")
    return tuple(warnings)


# --- tokenization ---------------------------------------------------------------------------


# bm25s and its stemmer are imported when retrieval runs, not when the definitions load (every build).
@functools.lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN_PLUS, STOPWORDS_FRENCH

    return frozenset(fold_accents(word) for word in (*STOPWORDS_FRENCH, *STOPWORDS_EN_PLUS))


@functools.lru_cache(maxsize=8)
def _stemmer(language: str) -> Any:
    import Stemmer

    return Stemmer.Stemmer(language)


def language_of(corpus: str) -> str:
    return CORPUS_LANGUAGES.get(corpus, DEFAULT_LANGUAGE)


def tokenize(text: str, language: str = DEFAULT_LANGUAGE) -> list[str]:
    """Lowercase words, line-break hyphens rejoined, FR+EN stopwords and one-letter words dropped,
    Snowball-stemmed in `language` (stemmers expect accents), then accent-folded."""
    joined = _LINE_BREAK_HYPHEN.sub("", unicodedata.normalize("NFKC", text).lower())
    stopwords = _stopwords()
    words = [word for word in _WORD.findall(joined) if len(word) > 1 and fold_accents(word) not in stopwords]
    return [fold_accents(stem) for stem in _stemmer(language).stemWords(words)]


@functools.lru_cache(maxsize=1)
def _plain_stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


def plain_tokenize(text: str, language: str = DEFAULT_LANGUAGE) -> list[str]:
    """bm25s's default reading (`language` unused): a check that a setting's gain is not the stemmer's."""
    stopwords = _plain_stopwords()
    return [word for word in _PLAIN_WORD.findall(text.lower()) if word not in stopwords]


def tokenizer_named(name: str) -> Callable[[str, str], list[str]]:
    if name not in BM25_TOKENIZERS:
        raise ValueError(f"BM25 tokenizer must be one of {BM25_TOKENIZERS}, got {name!r}")
    return tokenize if name == "snowball" else plain_tokenize


# --- BM25 -----------------------------------------------------------------------------------


def searchable_chunks(
    chunks: Iterable[ChunkRecord], chunk_types: Sequence[str] = SEARCHABLE_CHUNK_TYPES
) -> list[ChunkRecord]:
    """The chunks a phone would search, in id order so that ties rank the same in every run."""
    return sorted((chunk for chunk in chunks if chunk.chunk_type in chunk_types), key=lambda chunk: chunk.id)


def by_corpus(passages: Iterable[Passage]) -> dict[str, list[Passage]]:
    """Passages per corpus, in id order so that ties rank the same in every run."""
    grouped: dict[str, list[Passage]] = {}
    for passage in sorted(passages, key=lambda passage: (passage.id, passage.uid)):
        grouped.setdefault(passage.corpus, []).append(passage)
    return grouped


def bm25_rankings(
    passages: Sequence[Passage],
    questions: Sequence[GoldQuestion],
    depth: int = max(DEFAULT_K_VALUES),
    tokenizer: str = "snowball",
) -> dict[str, list[Passage]]:
    """Top `depth` passages per question, searched in the question's corpus only (one index per corpus)."""
    words_of = tokenizer_named(tokenizer)
    grouped = by_corpus(passages)
    rankings: dict[str, list[Passage]] = {}
    for corpus in sorted({question.corpus for question in questions}):
        corpus_passages = grouped.get(corpus, [])
        corpus_questions = [question for question in questions if question.corpus == corpus]
        if not corpus_passages:
            rankings.update({question.id: [] for question in corpus_questions})
            continue
        language = language_of(corpus)
        import bm25s

        retriever = bm25s.BM25()
        retriever.index([words_of(passage.text, language) for passage in corpus_passages], show_progress=False)
        for question in corpus_questions:
            scores = retriever.get_scores(words_of(question.question, language))
            rankings[question.id] = [corpus_passages[index] for index in _top_indices(scores, depth)]
    return rankings


def _top_indices(scores: np.ndarray, depth: int) -> list[int]:
    """Best first; equal scores keep index order; zero scores (no shared term) are not retrieved."""
    order = np.argsort(-scores, kind="stable")[:depth]
    return [int(index) for index in order if scores[index] > 0]


def evaluate_bm25(
    passages: Sequence[Passage],
    questions: Sequence[GoldQuestion],
    k_values: Sequence[int] = DEFAULT_K_VALUES,
    tokenizer: str = "snowball",
) -> RetrievalReport:
    """Method `bm25` with the evaluation's tokenizer, `bm25-plain` with bm25s's default one."""
    rankings = bm25_rankings(passages, questions, depth=max(k_values), tokenizer=tokenizer)
    method = "bm25" if tokenizer == "snowball" else f"bm25-{tokenizer}"
    report = evaluate_rankings(rankings, questions, k_values, method=method)
    return dataclasses.replace(report, warnings=gold_warnings(passages, questions))


# --- fusion ---------------------------------------------------------------------------------


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], k: int = RRF_K) -> list[str]:
    """Cormack et al. (2009): score(id) = sum over rankings of 1 / (k + rank). Ties: first seen first."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(scores, key=lambda item: -scores[item])


def fuse_rankings(
    per_method: Sequence[Mapping[str, Sequence[Passage]]], k: int = RRF_K
) -> dict[str, list[Passage]]:
    """Hybrid ranking per question: RRF over the passage ids of each method's ranking."""
    fused: dict[str, list[Passage]] = {}
    for question_id in sorted({question_id for rankings in per_method for question_id in rankings}):
        lists = [rankings.get(question_id, ()) for rankings in per_method]
        by_id = {chunk.id: chunk for ranking in lists for chunk in ranking}
        order = reciprocal_rank_fusion([[chunk.id for chunk in ranking] for ranking in lists], k)
        fused[question_id] = [by_id[chunk_id] for chunk_id in order]
    return fused
