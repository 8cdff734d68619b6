"""Hybrid ranking: reciprocal rank fusion of the rankings of several methods (BM25 and dense)."""

from __future__ import annotations

from typing import Mapping, Sequence

from pocket_assets.core.evaluation.passages import Passage

RRF_K = 60


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
