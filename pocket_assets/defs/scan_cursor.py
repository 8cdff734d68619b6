"""The sensors' cursors: what each PDF file looked like at the last tick, as short as JSON allows.

A sensor's cursor is shown on its page in the UI; one `[size, mtime_ns, sha256]`
triple per PDF keeps it readable and small while still sparing a rehash of every
unchanged file at each tick.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping

from pocket_assets.stages.corpus_scan import FileState


def encode_states(states: Mapping[str, FileState]) -> dict[str, list[Any]]:
    return {key: [state.size, state.mtime_ns, state.sha256] for key, state in sorted(states.items())}


def decode_states(encoded: Mapping[str, list[Any]]) -> dict[str, FileState]:
    return {key: FileState(size, mtime_ns, sha256) for key, (size, mtime_ns, sha256) in encoded.items()}


def dumps(cursor: Mapping[str, Any]) -> str:
    return json.dumps(cursor, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def loads(cursor: str | None) -> dict[str, Any]:
    return json.loads(cursor) if cursor else {}


def digest(text: str) -> str:
    """A short stand-in for a text the cursor only needs to compare, not to show."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
