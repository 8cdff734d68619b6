"""Where the raw folder is and which files in it are PDFs, without PyMuPDF.

The command line counts the PDFs before anything heavy is imported (it decides whether Great
Expectations starts loading at once), so this stays free of `pymupdf`; `core.pdf` judges the files.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator, Mapping

# The folders' environment variables: the code location `dagster dev` loads reads them (`defs/resources.py`).
RAW_DIR_ENV = "POCKET_ASSETS_RAW_DIR"
OUTPUT_DIR_ENV = "POCKET_ASSETS_OUTPUT_DIR"


def raw_dir_from(environ: Mapping[str, str], root: Path) -> Path:
    """`POCKET_ASSETS_RAW_DIR`, else `data/raw` under the project root."""
    return Path(environ.get(RAW_DIR_ENV, str(root / "data" / "raw")))


def pdf_files(raw_dir: Path) -> Iterator[Path]:
    """Files whose name ends in `.pdf`, any case, at any depth; unreadable folders are skipped, not fatal."""
    for folder, _subfolders, files in os.walk(raw_dir):
        for name in files:
            if name.lower().endswith(".pdf"):
                path = Path(folder) / name
                if path.is_file():
                    yield path


def count_pdf_files(raw_dir: Path) -> int:
    """How many `.pdf` files the scan will look at (refused and ignored ones too), without judging them."""
    return sum(1 for _ in pdf_files(raw_dir))
