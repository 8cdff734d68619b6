"""What changed in the raw folder since the last look: new, changed and removed PDFs.

Hashing every PDF on every tick would be wasteful, so a file whose size and
mtime are unchanged keeps its known sha256.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from pocket_assets.core.raw_folder import discover_pdfs, sha256_file
from pocket_assets.core.records import CORPORA


@dataclass(frozen=True)
class FileState:
    size: int
    mtime_ns: int
    sha256: str


@dataclass(frozen=True)
class CorpusChanges:
    added: tuple[str, ...]
    changed: tuple[str, ...]
    removed: tuple[str, ...]
    states: dict[str, FileState]  # the new state of every PDF present


def scan_corpus(
    raw_dir: Path, known: Mapping[str, FileState], corpora: Sequence[str] = CORPORA
) -> CorpusChanges:
    states: dict[str, FileState] = {}
    added: list[str] = []
    changed: list[str] = []
    for key in discover_pdfs(raw_dir, corpora):
        stat = (raw_dir / key).stat()
        previous = known.get(key)
        if previous and previous.size == stat.st_size and previous.mtime_ns == stat.st_mtime_ns:
            states[key] = previous
            continue
        state = FileState(stat.st_size, stat.st_mtime_ns, sha256_file(raw_dir / key))
        states[key] = state
        if previous is None:
            added.append(key)
        elif previous.sha256 != state.sha256:
            changed.append(key)
    removed = tuple(sorted(set(known) - set(states)))
    return CorpusChanges(tuple(added), tuple(changed), removed, states)
