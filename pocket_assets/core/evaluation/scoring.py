"""hit@k and MRR: one shared piece of arithmetic turns any ranking (BM25, dense, hybrid) into metrics.

A hit is a retrieved passage from an expected document whose cited page is one of the expected
pages, because a citation to the wrong page is a wrong answer for the people reading it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from pocket_assets.core.device import DeviceProfile
from pocket_assets.core.evaluation.gold import GoldQuestion
from pocket_assets.core.evaluation.passages import Passage

DEFAULT_K_VALUES: tuple[int, ...] = (1, 3, 5, 10)


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
