"""A PDF whose name holds a comma, backfilled from the UI's partition dialog in a real browser, like any other PDF.

Dagster's UI has known trouble with commas in partition keys (dagster-io/dagster#15105: a key holding one was
taken for two). In Dagster 1.13 the backfill dialog's Custom list selects keys whole, so the partition key
stays the file's path under the raw folder, comma included (one key for every place that maps a key to its
file: stage files, exports, citations). What the UI still refuses is typing such a name in its "Add a
partition" box (commas, spaces, brackets, `...`): the PDFs become partitions through `pocket-assets build`,
`pocket-assets ui`, the sensor or the schedule instead, which this test stands for with the same
`addDynamicPartition` call.

A webserver and a daemon over a folder of three PDFs; headless Chromium opens Jobs > build_corpus >
Materialize…, chooses the comma PDF and the next one in the Custom list, previews and launches the
backfill; the backfill targets exactly those two keys, the daemon runs it as one range run, both PDFs are
built under their own names, and the asset's Partitions tab shows the comma PDF materialized. Screenshots
land in `test-artifacts/screenshots/` (or $POCKET_ASSETS_ARTIFACTS).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import pytest

from pocket_assets.core.raw_folder import discover_pdfs
from pocket_assets.stages.registry import VALIDATED_CHUNKS
from pocket_assets.stages.store import STATUS_OK, PartitionStore
from pocket_assets_tests.e2e.system_browser import require_browser
from pocket_assets_tests.e2e.webserver import (
    Webserver,
    WebserverError,
    add_dynamic_partitions,
    find_job,
    mark_first_visit_done,
    running_daemon,
    running_webserver,
    wait_for_daemons,
    write_instance_yaml,
)
from pocket_assets_tests.pdf_factory import ARTICLE_EN, ARTICLE_FR, COMMA_NAME, REPO_ROOT, text_pdf

if TYPE_CHECKING:
    from pocket_assets_tests.e2e.browser import Browser

JOB = "build_corpus"
NEXT = "fr/a.pdf"  # after the comma PDF in the partitions' order: the two make one range
KEYS = (COMMA_NAME, NEXT, "intl/b.pdf")
BIN = Path(sys.executable).parent
FINISHED = ("COMPLETED", "COMPLETED_SUCCESS", "COMPLETED_FAILED", "FAILED", "CANCELED")

pytestmark = pytest.mark.timeout(600)


@dataclass(frozen=True)
class Ui:
    server: Webserver
    out: Path


@pytest.fixture(scope="module")
def ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ui]:
    require_browser()
    root = tmp_path_factory.mktemp("comma")
    raw, out, home = root / "raw", root / "processed", root / "dagster_home"
    text_pdf(raw / COMMA_NAME, ["Règlement intérieur, version 2024. " + ARTICLE_FR * 4])
    text_pdf(raw / NEXT, [ARTICLE_FR * 3])
    text_pdf(raw / "intl" / "b.pdf", [ARTICLE_EN * 3])
    assert tuple(discover_pdfs(raw)) == KEYS
    write_instance_yaml(home)
    env = {**os.environ, "DAGSTER_HOME": str(home), "POCKET_ASSETS_RAW_DIR": str(raw), "POCKET_ASSETS_OUTPUT_DIR": str(out)}
    workspace = REPO_ROOT / "workspace.yaml"
    # The webserver first: it makes the new SQLite instance's tables, which the daemon started with it raced on.
    with (
        running_webserver(workspace, REPO_ROOT, env, root / "webserver.log", BIN / "dagster-webserver") as server,
        running_daemon(workspace, REPO_ROOT, env, root / "daemon.log", BIN / "dagster-daemon"),
    ):
        add_dynamic_partitions(server, find_job(server, JOB), "pdfs", KEYS)
        wait_for_daemons(server, ["BACKFILL"])
        mark_first_visit_done(server)
        yield Ui(server, out)


def test_the_dialog_backfills_a_pdf_whose_name_holds_a_comma(ui: Ui, browser: Browser, screenshots: Path) -> None:
    browser.open(f"{ui.server.url}/locations/pocket_assets/jobs/{JOB}")
    browser.click("//button[contains(normalize-space(.), 'Materialize')]")
    browser.wait_for_texts(["Partition selection", "Custom"])
    browser.click("//*[contains(text(), 'Select a partition or create one')]/ancestor::*[self::div or self::button][1]")
    browser.wait_for_texts(list(KEYS))
    browser.click(f"//*[normalize-space(text())='{COMMA_NAME}']")
    browser.click(f"//*[normalize-space(text())='{NEXT}']")
    browser.press_escape()
    browser.wait_for_texts(["2 partitions", "Launch backfill"])
    browser.screenshot(screenshots / "comma_01_dialog_two_pdfs_chosen.png")
    browser.click("//*[normalize-space(text())='Preview']")
    browser.wait_for_texts(["Backfill preview", COMMA_NAME, NEXT])
    browser.screenshot(screenshots / "comma_02_preview_whole_keys.png")
    browser.click("//button[normalize-space()='OK']")
    browser.click("//button[normalize-space()='Launch backfill']")

    backfill = _only_backfill(ui.server)
    assert backfill["partitionNames"] == [COMMA_NAME, NEXT], "each key whole, not split at its comma"
    done = _wait_for_backfill(ui.server, backfill["id"])
    assert done["status"] == "COMPLETED_SUCCESS", done
    [run] = done["runs"]
    tags = {tag["key"]: tag["value"] for tag in run["tags"]}
    assert (tags["dagster/asset_partition_range_start"], tags["dagster/asset_partition_range_end"]) == (COMMA_NAME, NEXT)
    store = PartitionStore(ui.out / "stages")
    for key in (COMMA_NAME, NEXT):
        manifest = store.manifest(VALIDATED_CHUNKS, key)
        assert manifest is not None and manifest.status == STATUS_OK and manifest.run_id == run["runId"], key
    assert store.data_path(VALIDATED_CHUNKS, COMMA_NAME).name == f"{Path(COMMA_NAME).name}.parquet", "its own name"
    assert store.manifest(VALIDATED_CHUNKS, "intl/b.pdf") is None, "not chosen, not built"

    browser.open(f"{ui.server.url}/runs/b/{backfill['id']}")
    browser.wait_for_texts([backfill["id"], "Succeeded", "2 partitions", "100% completed"])
    browser.screenshot(screenshots / "comma_03_backfill_succeeded.png")
    browser.open(f"{ui.server.url}/assets/validated_chunks?view=partitions&partition={quote(COMMA_NAME, safe='')}")
    browser.wait_for_texts([COMMA_NAME, "Materialized", "Latest materialization"])
    browser.screenshot(screenshots / "comma_04_partition_materialized.png")


def test_the_add_a_partition_box_refuses_a_name_with_a_comma(ui: Ui, browser: Browser, screenshots: Path) -> None:
    """Dagster's own limit, documented in docs/operations.md: such a PDF becomes a partition by our commands."""
    browser.open(f"{ui.server.url}/locations/pocket_assets/jobs/{JOB}")
    browser.click("//button[contains(normalize-space(.), 'Materialize')]")
    browser.click("//*[normalize-space(text())='Add a partition']")
    browser.wait_for_texts(["Partition name", "Save"])
    [name] = [box for box in browser.elements("//input") if box.is_displayed() and not box.get_attribute("value")][-1:]
    name.send_keys("fr/Autre règlement, 2025.pdf")
    browser.screenshot(screenshots / "comma_05_add_partition_refused.png")
    assert not browser.elements("//button[normalize-space()='Save']")[-1].is_enabled()


def _only_backfill(server: Webserver, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        backfills = server.graphql(BACKFILLS)["partitionBackfillsOrError"]["results"]
        if backfills:
            [backfill] = backfills
            return backfill
        time.sleep(1)
    raise WebserverError(f"no backfill launched within {timeout:.0f} s")


def _wait_for_backfill(server: Webserver, backfill_id: str, timeout: float = 480) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = server.graphql(BACKFILL, {"id": backfill_id})["partitionBackfillOrError"]
        if answer["status"] in FINISHED:
            return answer
        time.sleep(3)
    raise WebserverError(f"backfill {backfill_id} not done after {timeout:.0f} s:\n{server.log_tail()}")


BACKFILLS = "{ partitionBackfillsOrError { ... on PartitionBackfills { results { id partitionNames } } } }"

BACKFILL = """
query Backfill($id: String!) {
  partitionBackfillOrError(backfillId: $id) {
    ... on PartitionBackfill { id status runs { runId status tags { key value } } }
  }
}
"""
