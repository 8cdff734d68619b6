"""BM25 ranking of the passages per question, in the question's corpus, and how its words are read.

Does a chunker version make the right page easier to find? Passages are ranked per question with
BM25 (`bm25s`, one index per corpus), words read by the evaluation's tokenizer (Snowball-stemmed per
corpus language, accents folded, FR+EN stopwords) or bm25s's plain one; `evaluate_bm25` scores the
rankings (`scoring`). Dense and hybrid rankings come from `embeddings.py` and `fusion.py`.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import unicodedata
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from pocket_assets.core.chunking.embed_text import fold_accents
from pocket_assets.core.evaluation.gold import GoldQuestion
from pocket_assets.core.evaluation.passages import Passage, by_corpus
from pocket_assets.core.evaluation.scoring import DEFAULT_K_VALUES, RetrievalReport, evaluate_rankings, gold_warnings

# Snowball stemmer per corpus; a corpus not listed is stemmed as English.
CORPUS_LANGUAGES: Mapping[str, str] = {"fr": "french", "intl": "english"}
DEFAULT_LANGUAGE = "english"
# How BM25 reads words: `snowball` (the evaluation's: stemmed per language, accents folded, FR+EN
# stopwords) or `plain` (bm25s's default: `\w\w+` lowercased, English stopwords, nothing else; an
# off-the-shelf BM25, for which `R01_2025_26_Regles.pdf` is one word and `règle` is not `règles`).
BM25_TOKENIZERS: tuple[str, ...] = ("snowball", "plain")
_WORD = re.compile(r"[^\W_]+")
_LINE_BREAK_HYPHEN = re.compile(r"(?<=[^\W\d_])-\n(?=[^\W\d_])")
_PLAIN_WORD = re.compile(r"\b\w\w+\b")


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
