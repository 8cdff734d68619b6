"""The id redirect file (`id_redirects_{c}.json`): the history carried from the last export, written streamed.

Every id ever exported in the corpus is mapped to the id now covering the same text, or to null, beside
the history of meanings it is made from (`export.redirects.carry_history`). The first export writes the
current ids mapped to themselves and `"previous_generated": null`.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring  # type: ignore[attr-defined]  # the C encoder, as indented_json uses it
from pathlib import Path
from typing import Any, Collection, Iterable, TextIO

from pocket_assets.export.errors import ExportError
from pocket_assets.export.indented_json import indented_json
from pocket_assets.export.previous_export import NotACorpusFile, read_previous_export
from pocket_assets.export.redirects import CurrentChunks, Meaning, RedirectHistory, carry_history


def carried_history(
    redirect_file: Path, corpus_json: Path, current: CurrentChunks, min_overlap: float, changed: Collection[str] = ()
) -> tuple[RedirectHistory, str | None]:
    """The redirect history carried over from the last export's redirect file and corpus JSON, and
    when that export was generated. The previous corpus JSON is read through its index, not held (`previous_export`).

    A file named in `changed` is not the bytes the last export published (`export.fingerprint.changed_files`):
    it is not read back. Without the corpus JSON, the history alone says where each id went; without the
    redirect file, the corpus JSON's ids are the history."""
    history = [] if redirect_file.name in changed else _read_history(redirect_file)
    try:
        previous = None if corpus_json.name in changed else read_previous_export(corpus_json)
        carried = carry_history(history, previous[1] if previous else None, current, min_overlap)
    except NotACorpusFile as error:
        raise ExportError(None, str(error)) from None
    except (KeyError, TypeError, ValueError) as error:
        reason = f"a previous chunk lacks a usable id, source, chunk_type or text, or a redirect its id or hash ({error!r})"
        raise ExportError(None, f"{corpus_json} / {redirect_file}: {reason}") from None
    return carried, previous[0].get("generated") if previous else None


def _read_history(path: Path) -> list[dict[str, Any]]:
    """The meanings of a previous redirect file; an older file without `history` gives none.

    An unreadable file is an error, not "no history": ignoring it would drop every old id.
    """
    if not path.exists():
        return []
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as error:
        raise ExportError(None, f"{path}: previous redirect file is not valid JSON ({error})") from None
    history = document.get("history", []) if isinstance(document, dict) else None
    if not isinstance(history, list):
        raise ExportError(None, f'{path}: previous redirect file has no "history" list')
    return history


def write_redirect_file(
    handle: TextIO,
    corpus: str,
    generated: str,
    previous_generated: str | None,
    history: RedirectHistory,
    min_overlap: float,
) -> None:
    """The plain map, its counts, and the history it is made from (read back by the next export).

    The stats are those of the re-key from the previous export (zero and a null
    share without one); `ever_exported` and `ambiguous` count the whole history.
    """
    stats = history.stats
    metadata = {
        "corpus": corpus,
        "generated": generated,
        "previous_generated": previous_generated,
        "previous_total": stats.previous_total if stats else 0,
        "mapped": stats.mapped if stats else 0,
        "unmapped": stats.unmapped if stats else 0,
        "unchanged": stats.unchanged if stats else 0,
        "one_to_one": stats.one_to_one if stats else 0,
        "one_to_one_share": stats.one_to_one_share if stats else None,
        "min_overlap": min_overlap,
        "ever_exported": len(history.redirects),
        "ambiguous": len(history.ambiguous),
    }
    # Streamed entry by entry, yet byte-identical to `indented_json(document) + "\n"`: the history of a large
    # corpus is tens of MB as one string.
    handle.write('{\n  "metadata": ' + indented_json(metadata, 2) + ',\n  "redirects": ')
    _write_members(handle, (f"{encode_basestring(key)}: {_string_or_null(to)}" for key, to in history.redirects.items()), "{}")
    handle.write(',\n  "history": ')
    _write_members(handle, map(_meaning_json, history.meanings), "[]")
    handle.write("\n}\n")


def _meaning_json(meaning: Meaning) -> str:
    """`indented_json(to_dict(meaning), 4)`, laid out here: the generic writer, once per meaning, is a large
    part of a large corpus's export, every export."""
    return (
        f'{{\n      "id": {encode_basestring(meaning.id)},\n      "hash": {encode_basestring(meaning.hash)},'
        f'\n      "to": {_string_or_null(meaning.to)},\n      "to_hash": {_string_or_null(meaning.to_hash)}\n    }}'
    )


def _string_or_null(value: str | None) -> str:
    return "null" if value is None else encode_basestring(value)


def _write_members(handle: TextIO, members: Iterable[str], brackets: str) -> None:
    """A dict's or list's members (each already laid out at its depth) as `indented_json` lays them out at depth 2."""
    opening, closing = brackets
    separator = opening
    for member in members:
        handle.write(separator + "\n    " + member)
        separator = ","
    handle.write(f"{opening}{closing}" if separator == opening else "\n  " + closing)
