"""Pure library: extraction, tokenizer, chunker, ids, tables, gates, evaluation. No Dagster.

`from pocket_assets.core import chunk_document` works for every name below, but nothing is imported
until it is used: PyMuPDF, the tokenizer and Great Expectations cost seconds to load, and a caller
that only needs records or the policy should not pay for them.

Subpackages by job: `extract/` (PDF pages to canonical Markdown), `chunking/` (parents and children),
`tables/` (table types and summaries), `quality/` (the gates), `evaluation/` (retrieval on gold
questions). The phone's files are written by `pocket_assets.export`, which reads this library.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_PUBLIC: dict[str, str] = {
    # records, policy and the phone they are for
    "PdfIdentity": "records",
    "PageRecord": "records",
    "ChunkRecord": "records",
    "Block": "records",
    "TableCells": "records",
    "ChunkPolicy": "policy",
    "DeviceProfile": "device",
    "device_profile": "device",
    "PdfError": "errors",
    # reading PDFs
    "inspect_pdf": "pdf",
    "discover_pdfs": "raw_folder",
    "extract_pages": "extract",
    "ExtractionOptions": "extract",
    "EXTRACTOR_VERSION": "extract",
    # tokens and chunks
    "TokenCounter": "tokenizer",
    "load_tokenizer": "tokenizer",
    "chunk_document": "chunking.chunker",
    "ChunkedDocument": "chunking.chunker",
    # tables
    "summarize_tables": "tables.summaries",
    # gates
    "load_gates": "quality.suites",
    "validate_partition": "quality.partition_gates",
    "validate_corpus_ids": "quality.suites",
    # evaluation
    "load_gold": "evaluation.gold",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
