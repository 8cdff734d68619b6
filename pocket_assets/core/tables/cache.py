"""A persistent cache of table summaries, so an unchanged PDF costs no new LLM call.

SQLite (standard library) rather than a JSON-lines file: several partitions may
summarize at once in separate processes, and SQLite's locking and journal make
each write atomic and safe under concurrency, with no lock files of our own.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Sequence

CACHE_FILE_NAME = "table_summaries.sqlite3"
_SCHEMA = "CREATE TABLE IF NOT EXISTS summaries (key TEXT PRIMARY KEY, kind TEXT NOT NULL, text TEXT NOT NULL)"


def summary_cache_key(parts: Sequence[str]) -> str:
    """sha256 over the JSON list of parts: unambiguous where joining strings would not be."""
    encoded = json.dumps(list(parts), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return hashlib.sha256(encoded).hexdigest()


class SummaryCache:
    """Summaries by key in `<folder>/table_summaries.sqlite3`.

    Each call opens its own short connection, so one cache object can be shared
    by threads and a crashed writer leaves no open handle behind.
    """

    def __init__(self, folder: Path, timeout_seconds: float = 30.0) -> None:
        self.path = Path(folder) / CACHE_FILE_NAME
        self.timeout_seconds = timeout_seconds
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(self._connect()) as connection, connection:
            connection.execute(_SCHEMA)

    def get(self, key: str) -> str | None:
        with closing(self._connect()) as connection:
            row = connection.execute("SELECT text FROM summaries WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def put_many(self, entries: Sequence[tuple[str, str, str]]) -> None:
        """(key, kind, text) entries in one transaction: each commit is a wait for a disk sync, so a
        document's summaries go in together rather than one commit per table."""
        if not entries:
            return
        with closing(self._connect()) as connection, connection:
            connection.executemany("INSERT OR REPLACE INTO summaries (key, kind, text) VALUES (?, ?, ?)", entries)

    def __len__(self) -> int:
        with closing(self._connect()) as connection:
            return int(connection.execute("SELECT COUNT(*) FROM summaries").fetchone()[0])

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=self.timeout_seconds)
