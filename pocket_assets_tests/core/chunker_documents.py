"""Documents built block by block, shared by the chunker tests."""

from __future__ import annotations

import hashlib
import json
from typing import Sequence

from pocket_assets.core.chunking.chunker import ChunkedDocument
from pocket_assets.core.device import DeviceProfile
from pocket_assets.core.document import PageContent, assemble_pages
from pocket_assets.core.records import Block, PageRecord, PdfIdentity, to_dict

BlockSpec = tuple[str, str, int]  # (kind, text, heading level)


def build_pages(page_specs: Sequence[Sequence[BlockSpec]]) -> tuple[PageRecord, ...]:
    """Blocks of a page joined by blank lines, each recorded with its exact span."""
    contents = []
    for number, specs in enumerate(page_specs, start=1):
        parts: list[str] = []
        blocks: list[Block] = []
        offset = 0
        for kind, text, level in specs:
            if parts:
                offset += 2
            blocks.append(Block(kind, offset, offset + len(text), level))
            parts.append(text)
            offset += len(text)
        text = "\n\n".join(parts)
        contents.append(PageContent(number, text, tuple(blocks) if text else (), () if text else ("empty page",)))
    return assemble_pages(contents)


def identity_for(pages: Sequence[PageRecord], key: str = "fr/sample.pdf") -> PdfIdentity:
    corpus, source = key.split("/")
    return PdfIdentity(key, corpus, source, "0" * 64, 0, len(pages))


def bare_device(window: int) -> DeviceProfile:
    """A device whose embedder adds nothing to a line (no prompt, no special tokens): the window caps the line
    alone, as the cap did before device profiles; small windows keep the tests' documents small."""
    return DeviceProfile(embed_max_tokens=window, document_prompt="", special_tokens=0)


def markdown_table(rows: int, columns: int = 3) -> str:
    header = "| " + " | ".join(f"Colonne {column}" for column in range(columns)) + " |"
    separator = "|" + "|".join("---" for _ in range(columns)) + "|"
    body = [
        "| " + " | ".join(f"valeur {row}.{column} ronde" for column in range(columns)) + " |" for row in range(rows)
    ]
    return "\n".join([header, separator, *body])


def fingerprint(result: ChunkedDocument) -> str:
    """sha256 of every record as JSON: equal fingerprints mean byte-identical chunks and ids."""
    rows = [to_dict(record) for record in result.parents + result.children]
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode("utf-8")).hexdigest()
