"""Retrieval evaluation (BM25, optional dense) to compare chunker versions on gold questions."""
