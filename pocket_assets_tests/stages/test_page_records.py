"""Page records read back from the `pages` stage file column by column are the records written."""

from pathlib import Path

import pytest

from pocket_assets.core.records import Block, PageRecord, TableCells, to_dict
from pocket_assets.stages.page_records import read_pages
from pocket_assets.stages.registry import PAGES
from pocket_assets.stages.store import PartitionManifest, PartitionStore, UpstreamNotReady

TABLE = TableCells(header=("Team", "Points"), rows=(("A", "3"), ("B", "")), caption=None)
PAGE_RECORDS = (
    PageRecord(1, "# Rules\n\nPlay fair.", (Block("heading", 0, 7, level=1), Block("paragraph", 9, 19)), (), 0, 19, 1),
    PageRecord(2, "", (), ("no text layer",), 21, 21, 5),  # no blocks: the next page's are not shifted onto it
    PageRecord(
        3,
        "| Team | Points |\n\nTable 1",
        (Block("table", 0, 16, table=TABLE), Block("paragraph", 18, 25, table=None)),
        ("a warning", "another"),
        23,
        48,
        7,
    ),
    PageRecord(4, "x", (Block("table", 0, 1, table=TableCells(("h",), (), caption="Scores")),), (), 50, 51, 10),
)


def test_pages_read_back_column_by_column_are_the_records_written(tmp_path: Path) -> None:
    store = PartitionStore(tmp_path)
    manifest = PartitionManifest(PAGES.name, "fr/a.pdf", "ok", rows=len(PAGE_RECORDS))
    store.write(PAGES, "fr/a.pdf", [to_dict(page) for page in PAGE_RECORDS], manifest)
    assert read_pages(store, "fr/a.pdf") == PAGE_RECORDS
    store.write(PAGES, "fr/empty.pdf", [], PartitionManifest(PAGES.name, "fr/empty.pdf", "ok"))
    assert read_pages(store, "fr/empty.pdf") == ()
    store.write_manifest(PartitionManifest(PAGES.name, "fr/a.pdf", "failed", reason="broken"))
    with pytest.raises(UpstreamNotReady, match="broken"):
        read_pages(store, "fr/a.pdf")
