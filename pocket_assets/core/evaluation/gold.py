"""Gold questions: which documents and pages (1-based) answer each question (docs/gold-format.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

_GOLD_REQUIRED = ("id", "question", "corpus", "expected_docs", "expected_pages")
_GOLD_OPTIONAL = ("expected_chunk_id", "notes")


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
