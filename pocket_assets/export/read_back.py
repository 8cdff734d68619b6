"""The exported files read back as the retrieval evaluation's passages: what the phone really embeds.

Each line of `chunks_{corpus}.txt` is parsed back and joined with its chunk's record in
`chunks_mode_b_{corpus}.json`, so the evaluation measures the exported strings and the page each line
cites, not the chunk records behind them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from pocket_assets.core.chunking.embed_text import CHUNK_SPLITTER, line_text
from pocket_assets.core.device import DeviceProfile
from pocket_assets.core.evaluation.passages import Passage, as_embedded
from pocket_assets.core.records import SDK_CHUNK_TYPES
from pocket_assets.export.sdk_lines import parse_sdk_line, read_sdk_lines
from pocket_assets.export.writer import MODE_B_FILE, SDK_FILE, export_paths

if TYPE_CHECKING:
    from pocket_assets.core.tokenizer import TokenCounter


class ExportMismatchError(ValueError):
    """An SDK file and its corpus JSON do not describe the same chunks (one of them is stale or edited)."""


def passages_from_export(
    export_dir: Path, corpus: str, device: DeviceProfile | None = None, counter: TokenCounter | None = None
) -> list[Passage]:
    """Every line of `chunks_{corpus}.txt`, with the id of its chunk from `chunks_mode_b_{corpus}.json`.

    Both files list the SDK chunks in the same order (`export_order`); each line is parsed back
    and must carry its chunk's header, text and citation, else `ExportMismatchError`. A passage's
    text is the line's content as `as_embedded` gives it: with `device`, its document prompt in front,
    and with `counter` too, what its embedder reads of that (the window: what the phone embeds).
    No export yet for the corpus gives no passage.
    """
    paths = export_paths(corpus, export_dir)
    if not paths[SDK_FILE].is_file() or not paths[MODE_B_FILE].is_file():
        return []
    records = json.loads(paths[MODE_B_FILE].read_text(encoding="utf-8"))["chunks"]
    chunks = [record for record in records if record["chunk_type"] in SDK_CHUNK_TYPES]
    lines = read_sdk_lines(paths[SDK_FILE])
    if len(lines) != len(chunks):
        raise ExportMismatchError(f"{paths[SDK_FILE]}: {len(lines)} lines for {len(chunks)} chunks in {MODE_B_FILE}")
    parsed_lines = []
    for number, (line, chunk) in enumerate(zip(lines, chunks), start=1):
        parsed = parse_sdk_line(line, has_context=bool(chunk.get("context")))
        expected = (chunk.get("context", ""), line_text(chunk["text"]), chunk["source"], chunk["page"])
        if (parsed.context, parsed.text, parsed.source, parsed.page) != expected:
            raise ExportMismatchError(f"{paths[SDK_FILE]}:{number}: does not match chunk {chunk['id']}")
        parsed_lines.append(parsed)
    prefix = f"{CHUNK_SPLITTER} "
    read = as_embedded(
        [parsed.source for parsed in parsed_lines], [line[len(prefix) :] for line in lines], device, counter
    )
    passages = [
        Passage(
            id=chunk["id"], uid=chunk["chunk_uid"], corpus=corpus, source=parsed.source, pages=(parsed.page,), text=text
        )
        for chunk, parsed, text in zip(chunks, parsed_lines, read)
    ]
    return sorted(passages, key=lambda passage: passage.id)
