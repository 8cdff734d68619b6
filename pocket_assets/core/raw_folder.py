"""Where the raw folder is, which files in it are PDFs, their keys, corpora and citable names, without PyMuPDF.

Deciding what a build has to do (the folder's PDFs, which changed) must not pay for PyMuPDF's import, one
of the largest: a build with nothing to do imports none of it. `core.pdf` opens and judges the files.
"""

from __future__ import annotations

import hashlib
import os
import unicodedata
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Iterator, Sequence

from pocket_assets.core.errors import PdfError
from pocket_assets.core.records import CORPORA

# The folders' environment variables: the code location `dagster dev` loads reads them (`defs/resources/paths.py`).
RAW_DIR_ENV = "POCKET_ASSETS_RAW_DIR"
OUTPUT_DIR_ENV = "POCKET_ASSETS_OUTPUT_DIR"


def pdf_files(raw_dir: Path) -> Iterator[Path]:
    """Files whose name ends in `.pdf`, any case, at any depth; unreadable folders are skipped, not fatal."""
    for folder, _subfolders, files in os.walk(raw_dir):
        for name in files:
            if name.lower().endswith(".pdf"):
                path = Path(folder) / name
                if path.is_file():
                    yield path


# What Dagster refuses in a partition key (dagster/_core/definitions/partitions/utils/base.py).
INVALID_KEY_PARTS = ("...", "\a", "\b", "\f", "\n", "\r", "\t", "\v", "\0")


def corpus_of(partition_key: str, corpora: Sequence[str] = CORPORA) -> str:
    """`fr/x.pdf` -> `fr`; the first folder under the raw root names the corpus."""
    parts = PurePosixPath(partition_key).parts
    if len(parts) < 2 or parts[0] not in corpora:
        raise PdfError(
            PurePosixPath(partition_key).name,
            f"{partition_key!r} is not under a corpus folder; put it in one of {', '.join(corpora)}",
        )
    return parts[0]


def source_name(partition_key: str) -> str:
    """The name chunks cite: the path under the corpus folder, e.g. `faq.pdf` or `sub/faq.pdf`.

    Keeping the subfolder makes `fr/faq.pdf` and `fr/sub/faq.pdf` two sources
    (two sets of ids) instead of one duplicated. The name is made citable
    whatever the file system allowed: Unicode NFC (macOS writes NFD), runs of
    whitespace and control characters folded to one space (a newline would end
    the SDK line), and the extension written `.pdf` (the seed schema's pattern).
    """
    under_corpus = "/".join(PurePosixPath(partition_key).parts[1:]) or partition_key
    folded = " ".join("".join(" " if unicodedata.category(c)[0] == "C" else c for c in under_corpus).split())
    normalized = unicodedata.normalize("NFC", folded)
    stem, dot, suffix = normalized.rpartition(".")
    return f"{stem}.pdf" if dot and suffix.lower() == "pdf" else normalized


@dataclass(frozen=True)
class RawFolderScan:
    """What a look at the raw folder found.

    `keys`: partition keys of the PDFs to build, sorted. `refused`: (name, sentence)
    for PDFs that cannot be a partition (the name cannot be stored), each refused
    alone. `ignored`: (path, sentence) for PDFs outside every corpus folder,
    with what to do.
    """

    keys: tuple[str, ...]
    refused: tuple[tuple[str, str], ...]
    ignored: tuple[tuple[str, str], ...]


def scan_raw_folder(raw_dir: Path, corpora: Sequence[str] = CORPORA) -> RawFolderScan:
    """Every `.pdf` (any case) under `raw_dir`: built, refused alone, or ignored with a reason; never raises."""
    keys: list[str] = []
    refused: list[tuple[str, str]] = []
    ignored: list[tuple[str, str]] = []
    for path in sorted(pdf_files(raw_dir)):
        key = path.relative_to(raw_dir).as_posix()
        shown = printable_name(key)
        problem = partition_key_problem(key)
        if key.split("/", 1)[0] not in corpora or "/" not in key:
            where = "at the top of the raw folder" if "/" not in key else f"in {key.split('/', 1)[0]!r}, not a corpus"
            ignored.append(
                (
                    shown,
                    f"{shown} is {where}, so it is not built; move it into one of "
                    f"{', '.join(corpora)} or add its folder to the corpora (POCKET_ASSETS_CORPORA)",
                )
            )
        elif problem:
            refused.append((shown, f"{shown} is not built: {problem}; rename the file"))
        else:
            keys.append(key)
    return RawFolderScan(tuple(keys), tuple(refused), tuple(ignored))


def discover_pdfs(raw_dir: Path, corpora: Sequence[str] = CORPORA) -> list[str]:
    """Partition keys of every buildable PDF under the corpus folders, sorted (the corpus registry)."""
    return list(scan_raw_folder(raw_dir, corpora).keys)


def partition_key_problem(key: str) -> str | None:
    """Why a path cannot be a Dagster partition key (None when it can)."""
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        return "its name is not valid UTF-8 (bytes from another encoding)"
    if any(part in key for part in INVALID_KEY_PARTS):
        return "its name holds a control character (newline, tab) or '...', which partition keys cannot"
    return None


def printable_name(key: str) -> str:
    """The name as a sentence can show it: undecodable bytes as \\xNN, control characters escaped."""
    raw = os.fsencode(key).decode("utf-8", errors="backslashreplace")
    return "".join(c if unicodedata.category(c)[0] != "C" else repr(c)[1:-1] for c in raw)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
