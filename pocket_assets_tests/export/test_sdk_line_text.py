"""The line the phone embeds holds no Markdown marks, which its embedder would read as words; the corpus JSON
keeps the Markdown (a real page: corpus-regs 08's `# Objet ## Article 1er`, its `1°` list, its table)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pocket_assets.core.chunking.chunker import chunk_document
from pocket_assets.core.extract import extract_pages
from pocket_assets.core.pdf import inspect_pdf
from pocket_assets.core.policy import ChunkPolicy
from pocket_assets.core.tokenizer import load_tokenizer
from pocket_assets.export.sdk_lines import parse_sdk_file
from pocket_assets.export.writer import MODE_B_FILE, SDK_FILE, write_corpus_exports

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
SCHEMA_DIR = Path(__file__).resolve().parents[2] / "expectations"


def test_sdk_lines_of_a_real_page_hold_no_marks_and_the_corpus_json_keeps_the_markdown(tmp_path: Path) -> None:
    path = REAL / "regs-two-column-subheads.pdf"
    pages = extract_pages(path)
    children = chunk_document(inspect_pdf(path, f"fr/{path.name}"), pages, ChunkPolicy(), load_tokenizer()).children
    exports = write_corpus_exports("fr", list(children), tmp_path, "2026-01-14T10:30:00Z", SCHEMA_DIR)
    lines = parse_sdk_file(exports.paths[SDK_FILE], has_context=True)
    assert lines and not any(re.search(r"(?:^|\s)(?:#{1,6}|-)\s", line.text) for line in lines)
    records = json.loads(exports.paths[MODE_B_FILE].read_text(encoding="utf-8"))["chunks"]
    assert any(record["text"].startswith("# Objet\n\n## Article 1er") for record in records)
