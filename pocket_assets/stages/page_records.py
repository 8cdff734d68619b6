"""A PDF's page records read back from its `pages` stage file, column by column.

`chunks`, `table_summaries` and `validated_chunks` each read every page of every PDF back, and
a large corpus holds thousands of pages and tens of thousands of blocks. Going through rows
(`to_pylist`: a dict per page and per block, then a record made of each dict) spends most of that
CPU on dicts; here each column becomes one Python list (`to_pylist` on the column, a C loop) and
the records are zipped from those lists. A block's table (rare) is read from its
non-null entries only.
"""

from __future__ import annotations

import pyarrow as pa

from pocket_assets.core.records import Block, PageRecord, TableCells
from pocket_assets.stages.registry import PAGES
from pocket_assets.stages.store import PartitionStore


def read_pages(store: PartitionStore, partition_key: str) -> tuple[PageRecord, ...]:
    """The PDF's pages, in stored order (`UpstreamNotReady` if its last `pages` attempt failed)."""
    return pages_of_table(store.read_table(PAGES, partition_key))


def pages_of_table(table: pa.Table) -> tuple[PageRecord, ...]:
    """The page records a `PAGE_SCHEMA` table holds."""
    blocks = _blocks_per_page(table.column("blocks").combine_chunks())
    warnings = map(tuple, table.column("warnings").to_pylist())
    columns = [table.column(name).to_pylist() for name in ("page", "text", "char_start", "char_end", "line_start")]
    return tuple(
        PageRecord(page, text, page_blocks, page_warnings, char_start, char_end, line_start)
        for (page, text, char_start, char_end, line_start), page_blocks, page_warnings in zip(zip(*columns), blocks, warnings)
    )


def _blocks_per_page(blocks: pa.ListArray) -> list[tuple[Block, ...]]:
    """Each page's blocks: the list column's values made records at once, cut back at its offsets."""
    offsets = blocks.offsets.to_pylist()
    kind, char_start, char_end, level, table = blocks.flatten().flatten()
    tables = _tables(table)
    flat = [
        Block(*values)
        for values in zip(
            kind.to_pylist(),
            char_start.to_pylist(),
            char_end.to_pylist(),
            [value or 0 for value in level.to_pylist()],
            tables,
        )
    ]
    base = offsets[0]
    return [tuple(flat[start - base : end - base]) for start, end in zip(offsets, offsets[1:])]


def _tables(tables: pa.StructArray) -> list[TableCells | None]:
    """Each block's table cells, None for a block that is not a table."""
    cells: list[TableCells | None] = [None] * len(tables)
    if tables.null_count == len(tables):
        return cells
    for place, table in enumerate(tables.to_pylist()):
        if table is not None:
            cells[place] = TableCells(
                header=tuple(table["header"]),
                rows=tuple(tuple(row) for row in table["rows"]),
                caption=table["caption"],
            )
    return cells
