"""Whether a table's cells hold something to read: the test a grid must pass to be a table at all.

Vector graphics also draw grids: staves of music notation, charts, diagrams, form boxes,
page frames. Their cells are empty or hold stray glyphs ("h", "ª" from a notation font);
a reader sees no table there, and a summary of them ("h et h ; h : ª") says nothing.
"""

from __future__ import annotations

import re

from pocket_assets.core.records import TableCells

MIN_READABLE_CELLS = 2
MIN_READABLE_SHARE = 0.25  # of all cells, header included: sparse tables still read
_READABLE = re.compile(r"[^\W\d_]{2}|\d")  # a word of two letters or more, or a number


def is_readable(cell: str) -> bool:
    return bool(_READABLE.search(cell))


def readable_cells(cells: TableCells) -> bool:
    """At least two cells, and a quarter of them, hold a word or a number."""
    everything = [*cells.header, *(cell for row in cells.rows for cell in row)]
    readable = sum(is_readable(cell) for cell in everything)
    return readable >= MIN_READABLE_CELLS and readable >= MIN_READABLE_SHARE * len(everything)
