"""The offline summarizer: one sentence from the table's own words, deterministic, no endpoint.

Built from the caption or nearest heading, the header row, the row count and the key values of
the first text column ("Tableau « Calendrier » de 9 lignes : Ronde, Date, Heure"), grown item by
item to about `target_tokens` with the configured tokenizer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pocket_assets.core.chunking.embed_text import fold_whitespace
from pocket_assets.core.records import TableCells
from pocket_assets.core.tables.summarizer import MIN_SUMMARY_CHARS, SummaryText, TableContext
from pocket_assets.core.tokenizer import TextCounter

EXTRACTIVE_VERSION = "extractive-v1"  # bump when the sentence template changes: it is part of the cache key
_MAX_ITEM_CHARS = 40
_MAX_TITLE_CHARS = 90
ELLIPSIS = "…"
_HAS_WORD_OR_NUMBER = re.compile(r"\w")  # "..." or "—" is filler, not a key value
_NUMERIC = re.compile(r"^[\d\s.,:/%+\-–½=]*$")

_PHRASES = {
    "en": {
        "titled": 'Table "{title}"',
        "untitled": "Table",
        "shape": " with {rows} and {columns}",
        "row": ("row", "rows"),
        "column": ("column", "columns"),
        "more": "and {count} more",
        "and": "and",
        "first_column": "first column",
        "colon": ":",
        "semicolon": ";",
        "padding": " — a table of the document",
    },
    "fr": {
        "titled": "Tableau « {title} »",
        "untitled": "Tableau",
        "shape": " de {rows} et {columns}",
        "row": ("ligne", "lignes"),
        "column": ("colonne", "colonnes"),
        "more": "et {count} autres",
        "and": "et",
        "first_column": "première colonne",
        "colon": " :",
        "semicolon": " ;",
        "padding": " — un tableau du document",
    },
}


@dataclass(frozen=True)
class ExtractiveSummarizer:
    """One sentence from the table's own words, grown item by item up to `target_tokens`.

    The title and the shape always appear; then header names and key values are
    added alternately while the sentence stays within the target, so a wide
    table still names some of its rows and a long one some of its columns.
    """

    counter: TextCounter  # a step's `PieceCounter`: a sentence tried costs no tokenizer call
    target_tokens: int = 50
    kind: str = field(default="extractive", init=False)

    def cache_key_parts(self) -> tuple[str, ...]:
        return (self.kind, EXTRACTIVE_VERSION, self.counter.name, str(self.target_tokens))

    def summarize(self, table: TableContext) -> SummaryText:
        phrases = _PHRASES[table.language]
        columns = [_clip(name) for name in table.cells.header if fold_whitespace(name)]
        key_label, key_values = _key_column(table.cells)
        label = _clip(key_label) if key_label else phrases["first_column"]
        shown_columns = min(2, len(columns))
        shown_values = min(1, len(key_values))

        def sentence(column_count: int, value_count: int) -> str:
            return _sentence(table, phrases, columns[:column_count], len(columns), label, key_values, value_count)

        grew = True
        while grew:
            grew = False
            for more_columns, more_values in ((1, 0), (0, 1)):
                columns_next, values_next = shown_columns + more_columns, shown_values + more_values
                if columns_next > len(columns) or values_next > len(key_values):
                    continue
                if self.counter.count(sentence(columns_next, values_next)) <= self.target_tokens:
                    shown_columns, shown_values, grew = columns_next, values_next, True
        text = sentence(shown_columns, shown_values)
        if len(text) < MIN_SUMMARY_CHARS:
            text = text[:-1] + phrases["padding"] + "."
        return SummaryText(text)


def _sentence(
    table: TableContext,
    phrases: dict,
    columns: list[str],
    column_total: int,
    label: str,
    key_values: list[str],
    value_count: int,
) -> str:
    title = _clip(table.caption_or_heading or "", _MAX_TITLE_CHARS)
    row_count = len(table.cells.rows)
    width = max([len(table.cells.header)] + [len(row) for row in table.cells.rows])
    text = phrases["titled"].format(title=title) if title else phrases["untitled"]
    text += phrases["shape"].format(
        rows=_counted(row_count, phrases["row"]), columns=_counted(width, phrases["column"])
    )
    if columns:
        text += phrases["colon"] + " " + _listing(columns, column_total, phrases)
    if value_count:
        text += (
            phrases["semicolon"]
            + f" {label}{phrases['colon']} "
            + _listing(key_values[:value_count], len(key_values), phrases)
        )
    return text + "."


def _counted(count: int, nouns: tuple[str, str]) -> str:
    return f"{count} {nouns[0] if count == 1 else nouns[1]}"


def _listing(items: list[str], total: int, phrases: dict) -> str:
    """`a, b, c and 4 more`, or `a, b and c` when every item is shown."""
    if len(items) < total:
        return ", ".join(items) + " " + phrases["more"].format(count=total - len(items))
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + f" {phrases['and']} " + items[-1]


def _clip(text: str, limit: int = _MAX_ITEM_CHARS) -> str:
    flat = fold_whitespace(text)
    if len(flat) <= limit:
        return flat
    cut = flat[:limit]
    return (cut[: cut.rfind(" ")] if " " in cut else cut).rstrip(" ,;:") + ELLIPSIS


def _key_column(cells: TableCells) -> tuple[str, list[str]]:
    """The first non-empty column, with its distinct values in order: what the rows are about.

    A column without a name holding only numbers is row numbering, not keys: it is skipped.
    """
    width = max([len(cells.header)] + [len(row) for row in cells.rows])
    for column in range(width):
        name = fold_whitespace(cells.header[column]) if column < len(cells.header) else ""
        values = [fold_whitespace(row[column]) for row in cells.rows if column < len(row)]
        distinct = list(dict.fromkeys(_clip(value) for value in values if _HAS_WORD_OR_NUMBER.search(value)))
        if distinct and (name or any(not _NUMERIC.match(value) for value in distinct)):
            return name, distinct
    return "", []


